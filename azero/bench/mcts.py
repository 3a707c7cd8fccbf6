"""`azero bench mcts`: azero's batched MCTS against OpenSpiel's C++ MCTSBot and
against azero's own pure-Python twin, in one run, with ratios.

  (a) trivial evaluator (uniform prior, value 0): azero with B games searched
      in lockstep vs MCTSBot with the same evaluator written in C++, vs the twin;
  (b) one random rollout per leaf: azero vs MCTSBot + RandomRolloutEvaluator(1);
  (c) thread scaling: one MCTS object of B games per thread, 1 thread vs 2
      threads running at once (weak scaling: total simulations/s of the process),
      in alternating windows; the ratio is the median over the rounds.

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


def azero_rate(game, evaluator, *, batch: int, simulations: int, seconds: float, seed: int = 0) -> Rate:
    """Search B positions per move, play the chosen moves, repeat for `seconds` (steady state).

    One untimed search first: it touches the tree's memory for the first time (tens of MB,
    page faults at ~6 ms/MB on these VMs), a one-off cost a long search or self-play run never
    pays again, as the peer's allocator reuses its tree memory after its first move.
    """
    search = MCTS(game.spec, evaluator, _azero_cfg(simulations, seed), batch_size=batch)
    states = game.new_states(batch)
    result = search.run(states)
    states.apply(search.choose_actions(result, temperature=1.0))
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


class _Lane:
    """One thread's searcher and games for the scaling figure: built and warmed up once (see
    azero_rate on the first search's page faults), then timed in several windows."""

    def __init__(self, game, evaluator, *, batch: int, simulations: int, seed: int):
        self.search = MCTS(game.spec, evaluator, _azero_cfg(simulations, seed), batch_size=batch)
        self.states = game.new_states(batch)
        self._move()

    def _move(self) -> tuple[int, float]:
        """Search every game, play the sampled moves (restarting finished games); (sims, search seconds)."""
        t0 = time.perf_counter()
        result = self.search.run(self.states)
        spent = time.perf_counter() - t0
        self.states.apply(self.search.choose_actions(result, temperature=1.0))
        done = np.flatnonzero(self.states.terminal())
        if done.size:
            self.states.reset(done)
        return int(result.simulations.sum()), spent

    def play(self, seconds: float) -> Rate:
        sims, spent = 0, 0.0
        while spent < seconds:
            n, dt = self._move()
            sims += n
            spent += dt
        return Rate(sims, spent)


def _window(lanes: list[_Lane], seconds: float) -> Rate:
    """Total sims/s of `lanes` searching at once, one thread each, for about `seconds`."""
    results: list[Rate] = [None] * len(lanes)  # type: ignore[list-item]
    ready = threading.Barrier(len(lanes))

    def work(i):
        ready.wait()
        results[i] = lanes[i].play(seconds)

    ts = [threading.Thread(target=work, args=(i,)) for i in range(len(lanes))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    # The windows start together and run about `seconds` each.
    return Rate(sum(r.sims for r in results), max(r.seconds for r in results))


def thread_scaling(game, make_evaluator, *, batch: int, threads: int, simulations: int, seconds: float,
                   rounds: int = 4) -> tuple[Rate, Rate, float]:
    """(1-thread rate, `threads`-thread rate, median ratio) over `rounds` alternating windows.

    These VMs' speed drifts by tens of percent over seconds, so one long window of each kind
    would compare two different machines; alternating short windows and taking the median of
    the per-round ratios compares like with like.
    """
    lanes = [_Lane(game, make_evaluator(i), batch=batch, simulations=simulations, seed=i) for i in range(threads)]
    one, many, ratios = Rate(0, 0.0), Rate(0, 0.0), []
    for _ in range(rounds):
        a = _window(lanes[:1], seconds / rounds)
        b = _window(lanes, seconds / rounds)
        one, many = Rate(one.sims + a.sims, one.seconds + a.seconds), Rate(many.sims + b.sims, many.seconds + b.seconds)
        ratios.append(b.per_s / a.per_s)
    return one, many, float(np.median(ratios))


def openspiel_rate(peer, name: str, *, simulations: int, seconds: float, evaluator: int) -> Rate:
    # Calibrate the number of moves to the time budget with one short probe.
    sims, secs = peer.run(name, simulations=simulations, moves=2, evaluator=evaluator)
    moves = max(2, int(seconds / max(secs / 2, 1e-6)))
    sims, secs = peer.run(name, simulations=simulations, moves=moves, evaluator=evaluator)
    return Rate(sims, secs)


def run_mcts_bench(games: list[str], *, batch: int = 64, simulations: int = 800, seconds: float = 5.0,
                   twin_seconds: float = 3.0, threads: int = 2, thread_batch: int = 256, log=print) -> dict:
    from azero.bench.openspiel_mcts import RANDOM_ROLLOUT, TRIVIAL, OpenSpielMCTS, PeerUnavailable

    out = {}
    log(f"azero bench mcts: {simulations} simulations per move, azero B={batch} games, {seconds:g} s per figure")
    try:
        peer = OpenSpielMCTS()
    except PeerUnavailable as e:
        peer = None
        log(f"OpenSpiel C++ peer unavailable, its rows are left out: {e}")
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
        if peer is not None:
            p = openspiel_rate(peer, os_name, simulations=simulations, seconds=seconds, evaluator=TRIVIAL)
            res["trivial_vs_openspiel"] = row(name, "(a) trivial", a, "OpenSpiel C++", p)
        tw = twin_rate(game, UniformEvaluator(), batch=min(batch, 8), simulations=simulations, seconds=twin_seconds)
        res["trivial_vs_twin"] = row(name, "(a) trivial", a, "Python twin", tw)
        if peer is not None:
            a = azero_rate(game, RandomRolloutEvaluator(rollouts=1, seed=0), batch=batch, simulations=simulations,
                           seconds=seconds)
            p = openspiel_rate(peer, os_name, simulations=simulations, seconds=seconds, evaluator=RANDOM_ROLLOUT)
            res["rollout_vs_openspiel"] = row(name, "(b) 1 random rollout", a, "OpenSpiel C++", p)
        # Per-thread batches are larger than in (a): each batch step then spends more of its
        # time in GIL-free native code, which is what lets threads run side by side.
        one, many, median = thread_scaling(game, lambda i: UniformEvaluator(), batch=thread_batch, threads=threads,
                                           simulations=simulations, seconds=2 * seconds)
        row(name, f"(c) {threads}x{thread_batch} games", many, f"1x{thread_batch} games", one)
        log(f"{'':<9} {'(c) median of rounds':<22} {'':>13} {'':<18} {'':>12} {median:7.2f}x")
        res["thread_scaling"] = median
        out[name] = res
    log("ratio = azero / peer. Goals: (a),(b) >= 2x OpenSpiel per core; (c) >= 1.8x from 1 to 2 threads.")
    return out
