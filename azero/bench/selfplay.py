"""`azero bench selfplay`: self-play evaluations/s with the default inference against float32
eager torch, and against the network's own speed, in one run.

With the game's preset (what `azero selfplay --game G` runs), on this machine:
  1. raw forward: the network alone on a batch of B real observations, f32 eager torch and the
     default (run.backend / run.precision = auto), in alternating rounds;
  2. self-play in-process: one SelfPlayWorker with B games per variant, evaluations/s including
     search, game rules, batching and Python, in alternating rounds (medians; the machine's load
     drifts between two long windows). The evaluator also times its own forward passes, so
     evaluations / forward time is the raw rate under exactly the same conditions;
  3. configurations: the default inference with W workers in-process, or behind one inference
     server, and other games per worker: total self-play evaluations/s of each (what picks the
     run.workers / run.evaluator / selfplay.games_in_parallel defaults).
"""

from __future__ import annotations

import dataclasses
import statistics
import threading
import time

import numpy as np
import torch

from azero.selfplay.inference_server import InferenceServer
from azero.selfplay.network_evaluator import NetworkEvaluator
from azero.selfplay.worker import SelfPlayWorker
from azero.train.network import PolicyValueNet

F32_EAGER = {"backend": "torch", "precision": "f32"}


def midgame_observations(game, batch: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Mid-game observations (20 random moves in) so the input is realistic."""
    states = game.new_states(batch)
    rng = np.random.default_rng(seed)
    for _ in range(20):
        legal = states.legal_mask()
        act = np.where(legal, rng.random(legal.shape), -1).argmax(axis=1).astype(np.int32)
        states.apply(np.where(states.terminal(), -1, act).astype(np.int32))
    return states.encode(), states.legal_mask()


def selfplay_rate(worker: SelfPlayWorker, seconds: float) -> float:
    e0, t0 = worker.evaluations, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        worker.play(1)
    return (worker.evaluations - e0) / (time.perf_counter() - t0)


def parallel_rate(workers: list[SelfPlayWorker], seconds: float) -> float:
    """Total evaluations/s of workers playing at once, one thread each."""
    rates = [0.0] * len(workers)
    threads = [threading.Thread(target=lambda i=i: rates.__setitem__(i, selfplay_rate(workers[i], seconds)))
               for i in range(len(workers))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(rates)


def _configuration_rate(game, net, cfg, *, workers: int, games: int, server: bool, seconds: float) -> float:
    run = cfg.run
    kw = {"device": "cpu", "threads": run.threads, "precision": run.precision, "backend": run.backend}
    sp = dataclasses.replace(cfg.selfplay, games_in_parallel=games)
    evaluator = NetworkEvaluator(net, streams=1 if server else workers, **kw)
    evaluator.calibrate(midgame_observations(game, 512, cfg.seed + 1)[0])  # int8: quantized before timing
    srv = InferenceServer(evaluator, max_batch=run.server_max_batch, max_wait_ms=run.server_max_wait_ms).start() \
        if server else None
    try:
        ws = [SelfPlayWorker(game, srv or evaluator, cfg.search, sp, seed=cfg.seed + i) for i in range(workers)]
        for w in ws:
            w.play(1)  # warm-up: trees and buffers allocated
        return parallel_rate(ws, seconds)
    finally:
        if srv is not None:
            srv.stop()


def run_selfplay_bench(game_name: str = "go9x9", *, seconds: float = 5.0, rounds: int = 3, server_workers: int = 2,
                       overrides: list[str] | None = None, configurations: bool = True, log=print) -> dict:
    from azero.runs.launch import compose_new
    from azero.config import validate
    from azero.games.config import game_from_config

    if rounds < 1 or seconds <= 0 or server_workers < 1:
        raise ValueError("bench selfplay: need rounds >= 1, seconds > 0 and workers >= 1")
    cfg = validate(compose_new(list(overrides or []), game_name))
    game = game_from_config(cfg.game)
    torch.manual_seed(cfg.seed)
    if cfg.run.threads:
        torch.set_num_threads(cfg.run.threads)
    net = PolicyValueNet(game.spec, cfg.model).eval()
    B = cfg.selfplay.games_in_parallel
    default = {"backend": cfg.run.backend, "precision": cfg.run.precision}
    evaluators = {"f32 eager": NetworkEvaluator(net, device="cpu", threads=cfg.run.threads, **F32_EAGER),
                  "default": NetworkEvaluator(net, device="cpu", threads=cfg.run.threads, **default)}
    evaluators["default"].calibrate(midgame_observations(game, 512, cfg.seed + 1)[0])  # int8: quantized before timing
    log(f"azero bench selfplay: {game.spec.name}, net {cfg.model.blocks}x{cfg.model.channels}, B={B} games, "
        f"{cfg.search.simulations} sims (cheap {cfg.selfplay.cheap_simulations}, full p={cfg.selfplay.full_search_prob}), "
        f"threads={cfg.run.threads}; default inference = {evaluators['default'].describe} "
        f"(run.backend={cfg.run.backend}, run.precision={cfg.run.precision}); "
        f"{rounds} alternating rounds of {seconds:g} s, medians")

    from azero.bench.inference import forward_rate

    obs, _ = midgame_observations(game, B, cfg.seed)
    raw = {k: statistics.median([forward_rate(e, obs, seconds / 2) for _ in range(rounds)])
           for k, e in evaluators.items()}
    log(f"  1. raw forward pass, batch {B}:  f32 eager {raw['f32 eager']:9,.0f} evals/s   "
        f"default {raw['default']:9,.0f} evals/s   ratio {raw['default'] / raw['f32 eager']:.2f}x")

    workers = {k: SelfPlayWorker(game, e, cfg.search, cfg.selfplay, seed=cfg.seed) for k, e in evaluators.items()}
    for w in workers.values():
        w.play(1)  # warm-up
    sp = {k: [] for k in workers}
    inner = {k: [] for k in workers}
    for _ in range(rounds):
        for k, w in workers.items():
            e = evaluators[k]
            e0, f0 = e.evaluations, e.forward_seconds
            sp[k].append(selfplay_rate(w, seconds))
            inner[k].append((e.evaluations - e0) / max(e.forward_seconds - f0, 1e-9))
    med = {k: statistics.median(v) for k, v in sp.items()}
    for k in workers:
        fw = statistics.median(inner[k])
        log(f"  2. self-play in-process, {k:>9}: {med[k]:9,.0f} evals/s   its forward passes alone {fw:9,.0f} "
            f"evals/s (search, games and Python take {100 * (1 - med[k] / fw):.0f}% of the time)")
    ratio = med["default"] / med["f32 eager"]
    log(f"  self-play speedup of the default over f32 eager: {ratio:.2f}x")
    out = {"raw": raw, "selfplay": med, "speedup": ratio}

    if configurations:
        rows = [(1, B, False), (server_workers, B, False), (server_workers, B, True), (1, 2 * B, False),
                (1, max(B // 2, 1), False)]
        log(f"  3. configurations (default inference, {seconds:g} s each):")
        out["configurations"] = []
        for workers_, games, server in rows:
            rate = _configuration_rate(game, net, cfg, workers=workers_, games=games, server=server, seconds=seconds)
            label = f"{workers_} worker(s) x {games} games, {'inference server' if server else 'in-process'}"
            log(f"     {label:<48} {rate:9,.0f} evals/s")
            out["configurations"].append({"workers": workers_, "games": games, "server": server, "evals_per_s": rate})
    return out
