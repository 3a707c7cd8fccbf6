"""`azero bench inference`: the network's raw forward pass per backend and precision.

In one run, for the game's preset network and a 6x64 network, at each batch size: evaluations/s
of torch float32 eager (the reference), torch bf16 autocast, OpenVINO float32, OpenVINO bf16 and
OpenVINO int8 (quantized by NNCF on other mid-game positions first; where OpenVINO and NNCF are
installed), measured in alternating rounds so that the machine's drift hits
every variant alike; each figure is the median over the rounds and is printed with its ratio to
torch float32 eager. Then what a hot reload costs with OpenVINO (a new trace + compile of new
weights, which self-play pays once per training round, in a background thread by default).
The last line is `best speedup over torch f32 eager: N.NNx (BACKEND PRECISION, batch B)`.
"""

from __future__ import annotations

import statistics
import time

import torch

from azero.bench.selfplay import midgame_observations
from azero.config import load_config, validate
from azero.games.config import game_from_config
from azero.selfplay.network_evaluator import NetworkEvaluator
from azero.train.network import NetworkConfig, PolicyValueNet
from azero.train.precision import cpu_has_native_bf16, nncf_available, openvino_available

VARIANTS = (("torch", "f32"), ("torch", "bf16"), ("openvino", "f32"), ("openvino", "bf16"), ("openvino", "int8"))


def forward_rate(evaluator: NetworkEvaluator, obs, seconds: float) -> float:
    """Evaluations/s of the raw forward pass (no masking, no softmax) on `obs`."""
    evaluator.forward(obs)  # warm-up: first-call allocations and kernel selection
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        evaluator.forward(obs)
        n += len(obs)
    return n / (time.perf_counter() - t0)


def bench_nets(game_name: str) -> list[tuple[str, NetworkConfig]]:
    """The game's preset network (what `azero selfplay --game G` trains) and a 6x64 tower."""
    from azero.runs.launch import compose_new

    preset = validate(compose_new([], game_name)).model
    big = NetworkConfig(blocks=6, channels=64)
    nets = [(f"{preset.blocks}x{preset.channels} (preset)", preset)]
    if (preset.blocks, preset.channels) != (big.blocks, big.channels):
        nets.append(("6x64", big))
    return nets


def reload_seconds(evaluator: NetworkEvaluator, net: PolicyValueNet, reloads: int = 3) -> float:
    """Median seconds from new weights to their compiled model being in use (OpenVINO)."""
    times = []
    for _ in range(reloads):
        state = {k: v.clone() for k, v in net.state_dict().items()}
        t0 = time.perf_counter()
        evaluator.load_state_dict(state)
        evaluator.wait_reload()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def run_inference_bench(game_name: str = "go9x9", *, batches=(16, 32, 64, 128, 256), seconds: float = 0.5,
                        rounds: int = 3, threads: int = 1, seed: int = 0, log=print) -> dict:
    if rounds < 1 or seconds <= 0 or not batches or min(batches) < 1:
        raise ValueError("bench inference: need rounds >= 1, seconds > 0 and batch sizes >= 1")
    torch.set_num_threads(threads)
    game = game_from_config(validate(load_config([f"game={game_name}"])).game)
    variants = [v for v in VARIANTS if v[0] == "torch" or (openvino_available() and (v[1] != "int8" or nncf_available()))]
    log(f"azero bench inference: {game.spec.name}, obs {tuple(game.spec.obs_shape)}, {threads} thread(s), "
        f"native bf16 on this CPU: {'yes' if cpu_has_native_bf16() else 'no'}, "
        f"openvino: {'installed' if openvino_available() else 'not installed'}; "
        f"{rounds} alternating rounds of {seconds:g} s, median evals/s (ratio to torch f32 eager)")
    results: dict = {"game": game.spec.name, "nets": {}}
    best = (0.0, "", "", 0)
    for label, mcfg in bench_nets(game_name):
        torch.manual_seed(seed)
        net = PolicyValueNet(game.spec, mcfg).eval()
        evaluators = {v: NetworkEvaluator(net, device="cpu", threads=threads, backend=v[0], precision=v[1],
                                          async_reload=False) for v in variants}
        for e in evaluators.values():  # int8: quantized before timing, on positions like the timed ones
            if e.precision == "int8":
                e.calibrate(midgame_observations(game, 512, seed + 1)[0])
        ran = {v: e.describe == f"{v[0]} {v[1]}" for v, e in evaluators.items()}  # False: fell back to torch
        log(f"\n  net {label}, {net.num_parameters():,} parameters")
        log("  " + f"{'batch':>6}" + "".join(f"{b + ' ' + p:>22}" for b, p in variants))
        per_net = {}
        for batch in batches:
            obs, _ = midgame_observations(game, batch, seed)
            rates = {v: [] for v in variants}
            for _ in range(rounds):
                for v in variants:
                    rates[v].append(forward_rate(evaluators[v], obs, seconds))
            med = {v: statistics.median(r) for v, r in rates.items()}
            ref = med[("torch", "f32")]
            log("  " + f"{batch:>6}" + "".join(f"{med[v]:>12,.0f} ({med[v] / ref:4.2f}x)" for v in variants))
            per_net[batch] = {f"{b} {p}": med[v] for v, (b, p) in zip(variants, variants)}
            for v in variants:
                if ran[v] and med[v] / ref > best[0]:
                    best = (med[v] / ref, v[0], v[1], batch)
        entry = {"evals_per_s": per_net}
        ov = evaluators.get(("openvino", "bf16"))
        if ov is not None and ov.openvino is not None:
            entry["reload_s"] = reload_seconds(ov, net)
            log(f"  OpenVINO hot reload (trace + compile of new weights): {entry['reload_s']:.2f} s median "
                f"(self-play compiles in a background thread: run.async_reload=true)")
        q = evaluators.get(("openvino", "int8"))
        if q is not None and q.openvino is not None and ran[("openvino", "int8")]:
            entry["reload_int8_s"] = reload_seconds(q, net)
            log(f"  OpenVINO int8 hot reload (quantize + compile of new weights): {entry['reload_int8_s']:.2f} s "
                f"median (in the background too, spaced to a quarter of one core: run.async_reload=true)")
        results["nets"][label] = entry
    log(f"\nbest speedup over torch f32 eager: {best[0]:.2f}x ({best[1]} {best[2]}, batch {best[3]})")
    results["best"] = {"speedup": best[0], "backend": best[1], "precision": best[2], "batch": best[3]}
    return results
