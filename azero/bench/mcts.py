"""`azero bench mcts`: azero's batched MCTS against OpenSpiel's C++ MCTSBot and
against azero's own pure-Python twin, in one run, with ratios.

  (a) trivial evaluator (uniform prior, value 0): azero with B games searched
      in lockstep vs MCTSBot with the same evaluator written in C++, vs the twin;
  (b) one random rollout per leaf: azero vs MCTSBot + RandomRolloutEvaluator(1);
  (c) thread scaling: one MCTS object of B games per thread, 1 thread vs 2
      threads running at once (weak scaling: total simulations/s of the process).

Every figure is simulations per second on one core unless it says threads.
Each side plays real games move after move (restarting finished ones), so the
tree shapes are those of self-play, not of a single opening position. azero's
figures are steady state: one untimed search first touches the tree's memory
(tens of MB; first-touch page faults cost ~6 ms/MB on these VMs, which made the
2-thread figure mostly a measure of the kernel), as MCTSBot's allocator reuses
its memory after its first move.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import numpy as np

from azero.games import make_game
from azero.games.openspiel_twin import OPENSPIEL_NAMES
from azero.search.config import SearchConfig
from azero.search.evaluators import RandomRolloutEvaluator, UniformEvaluator
from azero.search.mcts import MCTS


@dataclass
class Rate:
    sims: int
    seconds: float

    @property
    def per_s(self) -> float:
        return self.sims / max(self.seconds, 1e-12)


def _azero_cfg(simulations: int, seed: int) -> SearchConfig:
    # Plain PUCT at the paper's constants, no root noise: the same work per simulation as MCTSBot.
    return SearchConfig(simulations=simulations, dirichlet_weight=0.0, seed=seed)


def azero_rate(game, evaluator, *, batch: int, simulations: int, seconds: float, seed: int = 0,
               ready: threading.Barrier | None = None) -> Rate:
    """Search B positions per move, play the chosen moves, repeat for `seconds` (steady state).

    One untimed search first: it touches the tree's memory for the first time (tens of MB,
    page faults at ~6 ms/MB on these VMs), a one-off cost a long search or self-play run never
    pays again, as the peer's allocator reuses its tree memory after its first move. `ready`
    (threads): wait there after the warm-up so all timed windows overlap.
    """
    search = MCTS(game.spec, evaluator, _azero_cfg(simulations, seed), batch_size=batch)
    states = game.new_states(batch)
    result = search.run(states)
    states.apply(search.choose_actions(result, temperature=1.0))
    if ready is not None:
        ready.wait()
    sims = 0
    spent = 0.0
    while spent < seconds:
        t0 = time.perf_counter()
        result = search.run(states)
        spent += time.perf_counter() - t0
        sims += int(result.simulations.sum())
        # Sample the move from the visits so games diverge as in self-play.
        states.apply(search.choose_actions(result, temperature=1.0))
        done = np.flatnonzero(states.terminal())
        if done.size:
            states.reset(done)
    return Rate(sims, spent)


def twin_rate(game, evaluator, *, batch: int, simulations: int, seconds: float, seed: int = 0) -> Rate:
    from azero.search.reference import ReferenceMCTS

    search = ReferenceMCTS(game.spec, evaluator, _azero_cfg(simulations, seed), batch_size=batch)
    states = game.new_states(batch)
    sims, spent = 0, 0.0
    while spent < seconds:
        t0 = time.perf_counter()
        result = search.run(states)
        spent += time.perf_counter() - t0
        sims += int(result.simulations.sum())
        states.apply(result.action)
        done = np.flatnonzero(states.terminal())
        if done.size:
            states.reset(done)
    return Rate(sims, spent)


def threaded_rate(game, make_evaluator, *, batch: int, threads: int, simulations: int, seconds: float) -> Rate:
    """Total sims/s of `threads` MCTS objects, each with `batch` games, run concurrently."""
    per = batch
    results: list[Rate] = [None] * threads  # type: ignore[list-item]
    ready = threading.Barrier(threads)

    def work(i):
        results[i] = azero_rate(game, make_evaluator(i), batch=per, simulations=simulations,
                                seconds=seconds, seed=i, ready=ready)

    ts = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    # The windows start together (after every thread's warm-up) and run about `seconds` each.
    return Rate(sum(r.sims for r in results), max(r.seconds for r in results))


def openspiel_rate(peer, name: str, *, simulations: int, seconds: float, evaluator: int) -> Rate:
    # Calibrate the number of moves to the time budget with one short probe.
    sims, secs = peer.run(name, simulations=simulations, moves=2, evaluator=evaluator)
    moves = max(2, int(seconds / max(secs / 2, 1e-6)))
    sims, secs = peer.run(name, simulations=simulations, moves=moves, evaluator=evaluator)
    return Rate(sims, secs)


def run_mcts_bench(games: list[str], *, batch: int = 64, simulations: int = 800, seconds: float = 5.0,
                   twin_seconds: float = 3.0, threads: int = 2, thread_batch: int = 256, log=print) -> dict:
    from azero.bench.openspiel_mcts import RANDOM_ROLLOUT, TRIVIAL, OpenSpielMCTS

    peer = OpenSpielMCTS()
    out = {}
    log(f"azero bench mcts: {simulations} simulations per move, azero B={batch} games, {seconds:g} s per figure")
    log(f"{'game':<9} {'case':<22} {'azero sims/s':>13} {'peer':<18} {'peer sims/s':>12} {'ratio':>8}")

    def row(game, case, a: Rate, peer_name, p: Rate):
        ratio = a.per_s / p.per_s
        log(f"{game:<9} {case:<22} {a.per_s:13,.0f} {peer_name:<18} {p.per_s:12,.0f} {ratio:7.2f}x")
        return ratio

    for name in games:
        game = make_game(name)
        os_name = OPENSPIEL_NAMES[name]
        res = {}
        a = azero_rate(game, UniformEvaluator(), batch=batch, simulations=simulations, seconds=seconds)
        p = openspiel_rate(peer, os_name, simulations=simulations, seconds=seconds, evaluator=TRIVIAL)
        res["trivial_vs_openspiel"] = row(name, "(a) trivial", a, "OpenSpiel C++", p)
        tw = twin_rate(game, UniformEvaluator(), batch=min(batch, 8), simulations=simulations, seconds=twin_seconds)
        res["trivial_vs_twin"] = row(name, "(a) trivial", a, "Python twin", tw)
        a = azero_rate(game, RandomRolloutEvaluator(rollouts=1, seed=0), batch=batch, simulations=simulations,
                       seconds=seconds)
        p = openspiel_rate(peer, os_name, simulations=simulations, seconds=seconds, evaluator=RANDOM_ROLLOUT)
        res["rollout_vs_openspiel"] = row(name, "(b) 1 random rollout", a, "OpenSpiel C++", p)
        # Per-thread batches are larger than in (a): each batch step then spends more of its
        # time in GIL-free native code, which is what lets threads run side by side.
        one = threaded_rate(game, lambda i: UniformEvaluator(), batch=thread_batch, threads=1,
                            simulations=simulations, seconds=seconds)
        many = threaded_rate(game, lambda i: UniformEvaluator(), batch=thread_batch, threads=threads,
                             simulations=simulations, seconds=seconds)
        res["thread_scaling"] = row(name, f"(c) {threads}x{thread_batch} games", many,
                                    f"1x{thread_batch} games", one)
        out[name] = res
    log("ratio = azero / peer. Goals: (a),(b) >= 2x OpenSpiel per core; (c) >= 1.8x from 1 to 2 threads.")
    return out
