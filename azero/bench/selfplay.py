"""`azero bench selfplay`: how close self-play gets to the network's own speed.

In one run, with the default network of the chosen game on this machine:
  1. raw forward: the network alone on batches of B real observations (inference mode);
  2. self-play in-process: one SelfPlayWorker with B games, evaluations/s including search,
     game rules, batching and Python. The goal figure is (2)/(1) >= 0.9. Because this
     machine's load drifts between two measurements, the evaluator also times its own
     forward passes during (2); evaluations / forward time is the raw rate under exactly
     the same conditions, and that ratio is printed too;
  3. self-play through the InferenceServer: W worker threads x B games sharing one server;
     evaluations/s and the mean batch the server formed.
"""

from __future__ import annotations

import threading
import time

import numpy as np
import torch

from azero.config import load_config, validate
from azero.games.config import game_from_config
from azero.selfplay.inference_server import InferenceServer
from azero.selfplay.network_evaluator import NetworkEvaluator
from azero.selfplay.worker import SelfPlayWorker
from azero.train.network import PolicyValueNet


def _observations(game, batch: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Mid-game observations (20 random moves in) so the input is realistic."""
    states = game.new_states(batch)
    rng = np.random.default_rng(seed)
    for _ in range(20):
        legal = states.legal_mask()
        act = np.where(legal, rng.random(legal.shape), -1).argmax(axis=1).astype(np.int32)
        states.apply(np.where(states.terminal(), -1, act).astype(np.int32))
    return states.encode(), states.legal_mask()


def raw_forward_rate(net, obs: np.ndarray, seconds: float) -> float:
    x = torch.from_numpy(obs)
    net.eval()
    n = 0
    with torch.inference_mode():
        net(x)  # warm-up
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            net(x)
            n += len(obs)
    return n / (time.perf_counter() - t0)


def selfplay_rate(worker: SelfPlayWorker, seconds: float) -> float:
    worker.play(1)  # warm-up: trees and buffers allocated
    e0, t0 = worker.evaluations, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        worker.play(1)
    return (worker.evaluations - e0) / (time.perf_counter() - t0)


def run_selfplay_bench(game_name: str = "go9x9", *, seconds: float = 10.0, server_workers: int = 2,
                       overrides: list[str] | None = None, log=print) -> dict:
    # 200 simulations: a full 800-simulation move of 32 games takes longer than a measurement.
    cfg = validate(load_config([f"game={game_name}", "search.simulations=200", *(overrides or [])]))
    game = game_from_config(cfg.game)
    torch.manual_seed(cfg.seed)
    if cfg.run.threads:
        torch.set_num_threads(cfg.run.threads)
    net = PolicyValueNet(game.spec, cfg.model).eval()
    B = cfg.selfplay.games_in_parallel
    threads = torch.get_num_threads()
    log(f"azero bench selfplay: {game.spec.name}, net {cfg.model.blocks}x{cfg.model.channels}, B={B} games, "
        f"{cfg.search.simulations} sims (cheap {cfg.selfplay.cheap_simulations}, full p={cfg.selfplay.full_search_prob}), "
        f"torch threads={threads}, {seconds:g} s per figure")
    obs, _ = _observations(game, B, cfg.seed)
    raw = raw_forward_rate(net, obs, seconds)
    log(f"  raw forward pass, batch {B}:            {raw:10,.0f} evals/s")

    evaluator = NetworkEvaluator(net, device="cpu")
    worker = SelfPlayWorker(game, evaluator, cfg.search, cfg.selfplay, seed=cfg.seed)
    worker.play(1)  # warm-up
    e0, f0, t0 = evaluator.evaluations, evaluator.forward_seconds, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        worker.play(1)
    wall = time.perf_counter() - t0
    evals = evaluator.evaluations - e0
    sp, inner = evals / wall, evals / max(evaluator.forward_seconds - f0, 1e-9)
    mean_batch = evaluator.evaluations / max(evaluator.batches, 1)
    log(f"  self-play in-process (search+games):   {sp:10,.0f} evals/s  mean batch {mean_batch:.1f}  "
        f"ratio to (1) {sp / raw:.2f}")
    log(f"  ... its forward passes alone:          {inner:10,.0f} evals/s  "
        f"ratio {sp / inner:.2f} (goal >= 0.9; same run, same load)")

    server = InferenceServer(NetworkEvaluator(net, device="cpu"), max_batch=cfg.run.server_max_batch,
                             max_wait_ms=cfg.run.server_max_wait_ms).start()
    workers = [SelfPlayWorker(game, server, cfg.search, cfg.selfplay, seed=cfg.seed + i)
               for i in range(server_workers)]
    rates = [0.0] * server_workers
    threads_ = [threading.Thread(target=lambda i=i: rates.__setitem__(i, selfplay_rate(workers[i], seconds)))
                for i in range(server_workers)]
    for t in threads_:
        t.start()
    for t in threads_:
        t.join()
    stats = server.stats()
    server.stop()
    total = sum(rates)
    log(f"  self-play via server, {server_workers} workers:      {total:10,.0f} evals/s  mean batch "
        f"{stats['mean_batch']:.1f}  queue latency {stats['mean_queue_latency_ms']:.2f} ms  "
        f"vs in-process {total / sp:.2f}x")
    return {"raw": raw, "inprocess": sp, "ratio": sp / raw, "ratio_same_run": sp / inner, "server": total,
            "server_mean_batch": stats["mean_batch"]}
