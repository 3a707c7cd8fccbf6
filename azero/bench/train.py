"""`azero bench train`: trainer steps/s with float32 and with bf16 autocast, side by side.

For the game's preset network and a 6x64 network, on a fixed synthetic batch (random
observations, a softmax policy target and outcomes in [-1, 1]: the arithmetic of a step does
not depend on the values), alternating rounds of Trainer.train_step at each precision; the
figures are medians, printed with the bf16 / f32 ratio. TrainConfig.precision='auto' uses bf16
on a CPU with native bf16 because of what this prints.
"""

from __future__ import annotations

import statistics
import time

import numpy as np
import torch

from azero.bench.inference import bench_nets
from azero.config import load_config, validate
from azero.games.config import game_from_config
from azero.train.network import PolicyValueNet
from azero.train.precision import cpu_has_native_bf16
from azero.train.trainer import TrainConfig, Trainer


def _batch(spec, batch: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    logits = rng.standard_normal((batch, spec.num_actions)).astype(np.float32)
    pi = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    return {"obs": rng.standard_normal((batch, *spec.obs_shape)).astype(np.float32), "pi": pi.astype(np.float32),
            "z": rng.uniform(-1, 1, batch).astype(np.float32), "legal": np.ones((batch, spec.num_actions), bool)}


def steps_rate(trainer: Trainer, batch: dict, seconds: float) -> float:
    trainer.train_step(batch)  # warm-up
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        trainer.train_step(batch)
        n += 1
    return n / (time.perf_counter() - t0)


def run_train_bench(game_name: str = "go9x9", *, batch: int = 128, seconds: float = 1.5, rounds: int = 3,
                    threads: int = 1, seed: int = 0, log=print) -> dict:
    if rounds < 1 or seconds <= 0 or batch < 1:
        raise ValueError("bench train: need rounds >= 1, seconds > 0 and batch >= 1")
    torch.set_num_threads(threads)
    game = game_from_config(validate(load_config([f"game={game_name}"])).game)
    log(f"azero bench train: {game.spec.name}, batch {batch}, {threads} thread(s), native bf16 on this CPU: "
        f"{'yes' if cpu_has_native_bf16() else 'no'}; {rounds} alternating rounds of {seconds:g} s, median steps/s")
    data = _batch(game.spec, batch, seed)
    out = {}
    for label, mcfg in bench_nets(game_name):
        trainers = {}
        for precision in ("f32", "bf16"):
            torch.manual_seed(seed)
            trainers[precision] = Trainer(PolicyValueNet(game.spec, mcfg), TrainConfig(precision=precision),
                                          device="cpu")
        rates = {p: [] for p in trainers}
        for _ in range(rounds):
            for p, t in trainers.items():
                rates[p].append(steps_rate(t, data, seconds))
        med = {p: statistics.median(r) for p, r in rates.items()}
        log(f"  net {label}: f32 {med['f32']:6.1f} steps/s   bf16 {med['bf16']:6.1f} steps/s   "
            f"ratio {med['bf16'] / med['f32']:.2f}x")
        out[label] = med
    return out
