"""The CUDA code paths (bf16 autocast, channels_last, the inference server, CUDA RNG in
checkpoints, a self-play run on the GPU) against their CPU twins.

CI has no GPU, so these skip there; experiments/gpu_burst.sh runs them first on a lent GPU.
"""

import subprocess
import sys
import threading

import numpy as np
import pytest
import torch

from azero.games import make_game
from azero.selfplay.inference_server import InferenceServer
from azero.selfplay.network_evaluator import NetworkEvaluator
from azero.train.checkpoint import load_checkpoint
from azero.train.network import NetworkConfig, PolicyValueNet
from azero.train.trainer import Trainer, TrainConfig

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU (none on this machine)")


def _go_batch(n, seed=0):
    """Observations and legal masks of real Go positions after 0-29 random moves."""
    game = make_game("go9x9")
    rng = np.random.default_rng(seed)
    states = game.new_states(n)
    stop = rng.integers(0, 30, size=n)
    for k in range(30):
        legal = states.legal_mask()
        actions = np.full(n, -1, dtype=np.int32)
        legal[:, game.spec.pass_action] = False  # stones only, so no game ends early
        for b in np.flatnonzero((k < stop) & legal.any(axis=1)):
            actions[b] = rng.choice(np.flatnonzero(legal[b]))
        states.apply(actions)
    return game, states.encode().astype(np.float32), states.legal_mask()


def _net(game, seed=0):
    torch.manual_seed(seed)
    net = PolicyValueNet(game.spec, NetworkConfig(blocks=2, channels=32))
    # Random BN statistics, so the comparison is not of an all-zero residual tower.
    for m in net.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 1.5)
            m.weight.data.uniform_(0.5, 1.5)
    return net


def test_cuda_evaluator_matches_cpu_within_bf16():
    game, obs, legal = _go_batch(64)
    net = _net(game)
    cpu = NetworkEvaluator(_net(game), device="cpu")
    gpu = NetworkEvaluator(net, device="cuda")
    p_cpu, v_cpu = cpu.evaluate(obs, legal)
    p_gpu, v_gpu = gpu.evaluate(obs, legal)
    assert p_gpu.dtype == np.float32 and v_gpu.dtype == np.float32
    assert np.all(p_gpu[~legal] == 0.0)
    np.testing.assert_allclose(p_gpu.sum(axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(p_gpu, p_cpu, atol=0.02)
    np.testing.assert_allclose(v_gpu, v_cpu, atol=0.05)


def test_inference_server_on_cuda_serves_concurrent_workers():
    game, obs, legal = _go_batch(48, seed=1)
    direct = NetworkEvaluator(_net(game), device="cuda")
    expected = direct.evaluate(obs, legal)
    results = {}
    with InferenceServer(NetworkEvaluator(_net(game), device="cuda"), max_batch=256, max_wait_ms=20) as server:
        def worker(i):
            sl = slice(6 * i, 6 * i + 6)
            results[i] = server.evaluate(obs[sl], legal[sl])
        threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        stats = server.stats()
    priors = np.concatenate([results[i][0] for i in range(8)])
    values = np.concatenate([results[i][1] for i in range(8)])
    # Batch composition changes bf16 kernels' rounding, not the answer.
    np.testing.assert_allclose(priors, expected[0], atol=0.02)
    np.testing.assert_allclose(values, expected[1], atol=0.05)
    assert stats["evaluations"] == 48


def test_cuda_trainer_learns_and_its_checkpoint_resumes_on_cpu(tmp_path):
    game, obs, legal = _go_batch(128, seed=2)
    rng = np.random.default_rng(0)
    pi = rng.random(legal.shape).astype(np.float32) * legal
    pi /= pi.sum(axis=1, keepdims=True)
    z = rng.choice([-1.0, 1.0], size=len(obs)).astype(np.float32)
    batch = {"obs": obs, "pi": pi, "z": z, "legal": legal}
    cfg = TrainConfig(batch_size=128, lr=0.05, warmup_steps=0, steps=60, lr_schedule="constant")
    trainer = Trainer(_net(game), cfg, device="cuda")
    first = trainer.train_step(batch)["loss"]
    for _ in range(59):
        last = trainer.train_step(batch)["loss"]
    assert np.isfinite(last) and last < first * 0.8
    path = trainer.save(tmp_path)
    ckpt = load_checkpoint(path)
    assert "rng/cuda/0" in ckpt.tensors
    resumed = Trainer(_net(game, seed=5), cfg, device="cpu")
    resumed.load(path)
    assert resumed.step == 60
    for (name, a), b in zip(trainer.net.state_dict().items(), resumed.net.state_dict().values()):
        torch.testing.assert_close(a.float().cpu(), b.float(), msg=name)
    # The CPU copy of the trained net gives the CUDA net's answers (bf16 tolerance).
    p_cuda, _ = NetworkEvaluator(trainer.net, device="cuda").evaluate(obs[:16], legal[:16])
    p_cpu, _ = NetworkEvaluator(resumed.net, device="cpu").evaluate(obs[:16], legal[:16])
    np.testing.assert_allclose(p_cuda, p_cpu, atol=0.03)


def test_selfplay_run_on_cuda_uses_the_server(tmp_path):
    run = tmp_path / "run"
    r = subprocess.run(
        [sys.executable, "-m", "azero.cli", "selfplay", "--game", "connect4", "--run-dir", str(run),
         "train.steps=30", "run.workers=2", "run.device=cuda", "model.blocks=1", "model.channels=16",
         "search.simulations=16", "selfplay.games_in_parallel=32", "replay.min_positions=300"],
        capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "evaluator server on cuda" in r.stdout + r.stderr
    assert "done: 30 train steps" in r.stdout
