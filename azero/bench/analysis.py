"""`azero bench analysis`: one query for a whole game against one query per turn, in one run.

The JSON analysis engine (azero/analysis/engine.py) searches every waiting turn as a row of one
batch. This measures what that buys: the same network, engine and visits per position analyse
the positions of one TURNS-move game

- batched: one query with analyzeTurns 1..TURNS, searched as TURNS rows at once (in --workers
  parallel parts, one core each: a single position cannot be split that way);
- one at a time: TURNS one-turn queries, each sent when the previous answer came back (what a
  client of a one-position engine, or GTP analysis, gets).

The game is played by the network's own policy (sampled, seeded), so the positions are the kind
an analysis client sends. The two modes alternate for --rounds rounds (the machine's drift hits
both alike); each figure is the median. The last line is
`batched over one at a time: N.NNx positions/s`.
"""

from __future__ import annotations

import json
import statistics
import time

import numpy as np

from azero.analysis.engine import AnalysisEngine
from azero.analysis.katago import Limits
from azero.games.go_notation import vertex


def policy_game(game, evaluator, turns: int, seed: int) -> list[list[str]]:
    """[["B", "E5"], ...]: `turns` moves sampled from the network's priors (no passes while another
    move is legal)."""
    rng = np.random.default_rng(seed)
    states = game.new_states(1)
    n, moves = game.board_size, []
    for k in range(turns):
        if states.terminal()[0]:
            break
        legal = states.legal_mask()
        legal[0, n * n] = not legal[0, : n * n].any()
        priors, _ = evaluator.evaluate(states.encode(), legal)
        p = priors[0].astype(np.float64) * legal[0]
        action = int(rng.choice(len(p), p=p / p.sum()))
        moves.append(["BW"[k % 2], vertex(action, n)])
        states.apply(np.array([action], np.int32))
    return moves


def _time(engine: AnalysisEngine, queries: list[dict], *, one_at_a_time: bool) -> float:
    t0 = time.perf_counter()
    if one_at_a_time:
        for q in queries:
            engine.submit(json.dumps(q))
            engine.drain()
    else:
        for q in queries:
            engine.submit(json.dumps(q))
        engine.drain()
    return time.perf_counter() - t0


def run_analysis_bench(checkpoint: str | None, *, turns: int = 60, visits: int = 100, rows: int = 64,
                       workers: int | None = None, rounds: int = 3, seed: int = 0, threads: int = 1, device: str = "auto") -> dict:
    from azero.agents.checkpoints import checkpoint_planes, game_for, load_evaluator, resolve_checkpoint
    from azero.analysis.engine import default_workers
    from azero.games.go import features_for

    if turns < 1 or visits < 1 or rounds < 1:
        raise ValueError(f"turns, visits and rounds must be >= 1, got {turns}, {visits}, {rounds}")
    workers = workers or default_workers()
    path = resolve_checkpoint(checkpoint, "go9x9")
    game = game_for("go9x9", [] if path is None else [checkpoint_planes(path)])
    # Each mode at its best: the batched engine with its parallel parts (one OpenVINO stream each),
    # the one-at-a-time engine with one part on one stream (a second stream only slows one request).
    loaded = load_evaluator(path, game=game, threads=threads, device=device, no_network="uniform",
                            streams=workers)
    alone = load_evaluator(path, game=game, threads=threads, device=device, no_network="uniform")
    moves = policy_game(game, loaded.evaluator, turns, seed)
    base = {"moves": moves, "rules": "tromp-taylor", "komi": 7.5, "boardXSize": 9, "boardYSize": 9,
            "maxVisits": visits}
    whole = [{**base, "id": "game", "analyzeTurns": list(range(1, len(moves) + 1))}]
    single = [{**base, "id": f"turn{t}", "analyzeTurns": [t]} for t in range(1, len(moves) + 1)]
    answers: list[str] = []
    limits = Limits(9, features_for(game.spec.obs_shape), visits, max(visits, 1), "BLACK", 7.5)
    engines = {"batched": AnalysisEngine(loaded.evaluator, limits, rows=rows, workers=workers, seed=seed,
                                         write=answers.append),
               "one at a time": AnalysisEngine(alone.evaluator, limits, rows=rows, workers=1, seed=seed,
                                               write=answers.append)}
    print(f"azero bench analysis: {loaded.description}; a {len(moves)}-move game sampled from its policy, "
          f"{visits} visits per position; batched: {rows} rows in {workers} parallel parts; one at a time: one "
          f"part, one stream; {rounds} alternating rounds", flush=True)
    for engine in engines.values():  # warm-up: tree allocation, first forward passes
        _time(engine, whole, one_at_a_time=False)
    times: dict[str, list[float]] = {"batched": [], "one at a time": []}
    for r in range(rounds):
        for mode in (("batched", "one at a time") if r % 2 == 0 else ("one at a time", "batched")):
            answers.clear()
            seconds = _time(engines[mode], whole if mode == "batched" else single, one_at_a_time=mode != "batched")
            finals = [a for a in map(json.loads, answers) if a.get("isDuringSearch") is False]
            if len(finals) != len(moves):
                raise RuntimeError(f"{mode}: expected {len(moves)} answers, got {len(finals)}: {answers[:2]}")
            times[mode].append(seconds)
            print(f"  round {r + 1} {mode:>13}: {seconds:7.2f} s  {len(moves) / seconds:8.1f} positions/s",
                  flush=True)
    rate = {mode: len(moves) / statistics.median(t) for mode, t in times.items()}
    ratio = rate["batched"] / rate["one at a time"]
    for mode, r in rate.items():
        print(f"{mode:>13}: {r:8.1f} positions/s ({r * visits:,.0f} visits/s), median of {rounds}")
    print(f"batched over one at a time: {ratio:.2f}x positions/s")
    for engine in engines.values():
        engine.shutdown()
    return {"positions_per_s": rate, "ratio": ratio, "turns": len(moves), "visits": visits}
