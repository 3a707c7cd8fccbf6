"""Precision and backend settings: resolution (with a forced CPU capability), config errors,
the OpenVINO backend against torch float32, hot reload, threads, and the torch fallback."""

import logging
import subprocess
import sys
import threading

import numpy as np
import pytest
import torch

from azero.config import ConfigError, load_config
from azero.games import make_game
from azero.selfplay.network_evaluator import NetworkEvaluator
from azero.train import precision as prec
from azero.train.trainer import TrainConfig, Trainer
from evalutil import scrambled_tiny_net

needs_openvino = pytest.mark.skipif(not prec.openvino_available(), reason="openvino is not installed")


@pytest.fixture(scope="module")
def go9():
    return make_game("go9x9")


def _net(spec, seed=0):
    return scrambled_tiny_net(spec, seed)


def _positions(game, batch=24, seed=0):
    from azero.bench.selfplay import midgame_observations

    return midgame_observations(game, batch, seed)


# -- resolution ---------------------------------------------------------------------------------

def test_auto_precision_follows_the_cpu_capability():
    assert prec.resolve_precision("auto", "cpu", cpu_flags_override={"avx512f", "avx512_bf16"}) == "bf16"
    assert prec.resolve_precision("auto", "cpu", cpu_flags_override={"amx_bf16"}) == "bf16"
    # a CPU without native bf16 (forced: CI runs on a bf16 machine) gets float32
    assert prec.resolve_precision("auto", "cpu", cpu_flags_override={"avx2", "avx512f"}) == "f32"
    assert prec.resolve_precision("auto", "cpu", cpu_flags_override=set()) == "f32"
    assert prec.resolve_precision("auto", "cuda") == "bf16"
    assert prec.resolve_precision("f32", "cuda") == "f32"
    assert prec.resolve_precision("bf16", "cpu", cpu_flags_override=set()) == "bf16"  # asked for explicitly


def test_unknown_precision_or_backend_names_the_allowed_values():
    with pytest.raises(ValueError, match="precision must be one of auto, f32, bf16, int8; got 'fp16'"):
        prec.resolve_precision("fp16", "cpu")
    with pytest.raises(ValueError, match="backend must be one of auto, torch, openvino; got 'onnx'"):
        prec.resolve_backend("onnx", "cpu")
    with pytest.raises(ValueError, match="CPU only"):
        prec.resolve_backend("openvino", "cuda")


def test_auto_backend_is_openvino_on_cpu_only_where_installed(monkeypatch):
    monkeypatch.setattr(prec, "openvino_available", lambda: True)
    assert prec.resolve_backend("auto", "cpu") == "openvino"
    assert prec.resolve_backend("auto", "cuda") == "torch"
    monkeypatch.setattr(prec, "openvino_available", lambda: False)
    assert prec.resolve_backend("auto", "cpu") == "torch"


@pytest.mark.parametrize("override, key", [("run.precision=fp16", "run.precision"),
                                           ("run.backend=onnx", "run.backend"),
                                           ("train.precision=half", "train.precision")])
def test_config_rejects_unknown_values_naming_the_key(override, key):
    with pytest.raises(ConfigError) as e:
        load_config(["game=tictactoe", override])
    assert key in str(e.value) and "auto, " in str(e.value)


# -- the evaluator at each precision and backend ------------------------------------------------

@pytest.mark.parametrize("backend", ["torch", pytest.param("openvino", marks=needs_openvino)])
def test_bf16_answers_stay_close_to_f32_and_float32_for_the_search(go9, backend):
    obs, legal = _positions(go9)
    ref = NetworkEvaluator(_net(go9.spec), device="cpu", backend="torch", precision="f32")
    new = NetworkEvaluator(_net(go9.spec), device="cpu", backend=backend, precision="bf16")
    assert new.describe == f"{backend} bf16"
    p0, v0 = ref.evaluate(obs, legal)
    p1, v1 = new.evaluate(obs, legal)
    assert p1.dtype == np.float32 and v1.dtype == np.float32
    live = legal.any(axis=1)  # a game ended by two passes has no legal move and an all-zero prior
    assert np.all(p1[~legal] == 0) and np.allclose(p1[live].sum(axis=1), 1, atol=1e-5)
    kl = np.where(p0 > 0, p0 * (np.log(np.maximum(p0, 1e-30)) - np.log(np.maximum(p1, 1e-30))), 0).sum(1)
    assert kl.mean() < 0.01
    assert np.abs(v0 - v1).mean() < 0.02


@needs_openvino
def test_converting_a_network_sends_no_openvino_telemetry():
    """OpenVINO's converter forks a process per telemetry event from a thread pool; those children
    deadlocked and hung a test run. A fresh interpreter (the telemetry package is chosen at first
    import) converts a network: the converter holds its no-op stub and nothing was forked."""
    code = """
import multiprocessing, sys
from azero.games import make_game
from azero.selfplay.network_evaluator import NetworkEvaluator
from azero.train.network import NetworkConfig, PolicyValueNet
net = PolicyValueNet(make_game("tictactoe").spec, NetworkConfig.tiny()).eval()
NetworkEvaluator(net, device="cpu", backend="openvino", precision="f32")
import openvino.tools.ovc.convert_impl as convert
print(sys.modules["openvino_telemetry"], convert.tm.__name__, multiprocessing.active_children())
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["None", "openvino.tools.ovc.telemetry_stub", "[]"]


@needs_openvino
def test_openvino_f32_matches_torch_f32(go9):
    obs, legal = _positions(go9)
    p0, v0 = NetworkEvaluator(_net(go9.spec), device="cpu", backend="torch", precision="f32").evaluate(obs, legal)
    ov = NetworkEvaluator(_net(go9.spec), device="cpu", backend="openvino", precision="f32")
    assert ov.describe == "openvino f32"
    p1, v1 = ov.evaluate(obs, legal)
    np.testing.assert_allclose(p1, p0, atol=1e-4)
    np.testing.assert_allclose(v1, v0, atol=1e-4)
    # any batch size: the compiled model has a dynamic batch dimension
    p2, _ = ov.evaluate(obs[:1], legal[:1])
    np.testing.assert_allclose(p2, p0[:1], atol=1e-4)


@needs_openvino
@pytest.mark.parametrize("async_reload", [False, True])
def test_openvino_hot_reload_serves_the_new_weights(go9, async_reload):
    obs, legal = _positions(go9)
    ev = NetworkEvaluator(_net(go9.spec, seed=0), device="cpu", backend="openvino", precision="f32",
                          async_reload=async_reload)
    before, _ = ev.evaluate(obs, legal)
    new = _net(go9.spec, seed=1)
    expected, expected_v = NetworkEvaluator(new, device="cpu", backend="torch", precision="f32").evaluate(obs, legal)
    ev.load_state_dict(new.state_dict())
    if async_reload:
        during, _ = ev.evaluate(obs, legal)  # old or new weights, never a mix and never an error
        assert np.allclose(during, before, atol=1e-4) or np.allclose(during, expected, atol=1e-4)
        ev.wait_reload()
    after, after_v = ev.evaluate(obs, legal)
    np.testing.assert_allclose(after, expected, atol=1e-4)
    np.testing.assert_allclose(after_v, expected_v, atol=1e-4)
    assert ev.openvino.reloads == 1 and ev.openvino.version == 1
    # the torch copy follows too (the fallback and reload_checkpoint read it)
    np.testing.assert_array_equal(ev.net.state_dict()["policy_fc.weight"], new.state_dict()["policy_fc.weight"])


@needs_openvino
def test_openvino_threads_each_get_their_own_request(go9):
    obs, legal = _positions(go9, batch=16)
    ev = NetworkEvaluator(_net(go9.spec), device="cpu", backend="openvino", precision="f32", streams=2)
    expected, _ = ev.evaluate(obs, legal)
    results, errors = {}, []

    def call(i):
        try:
            for _ in range(20):
                results[i] = ev.evaluate(obs[i::2], legal[i::2])[0]
        except Exception as e:  # pragma: no cover - the assertion below reports it
            errors.append(e)

    threads = [threading.Thread(target=call, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for i in range(2):
        np.testing.assert_allclose(results[i], expected[i::2], atol=1e-5)


# -- fallback to torch -------------------------------------------------------------------------

def test_missing_openvino_falls_back_to_torch_with_one_warning(go9, monkeypatch, caplog):
    import builtins

    real_import = builtins.__import__

    def no_openvino(name, *args, **kwargs):
        if name == "openvino" or name.startswith("openvino."):
            raise ImportError("No module named 'openvino'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_openvino)
    obs, legal = _positions(go9)
    with caplog.at_level(logging.WARNING):
        ev = NetworkEvaluator(_net(go9.spec), device="cpu", backend="openvino", precision="f32")
    assert ev.describe == "torch f32"
    warnings = [r for r in caplog.records if "OpenVINO backend unavailable" in r.getMessage()]
    assert len(warnings) == 1 and "not importable" in warnings[0].getMessage()
    p, _ = ev.evaluate(obs, legal)
    p0, _ = NetworkEvaluator(_net(go9.spec), device="cpu", backend="torch", precision="f32").evaluate(obs, legal)
    np.testing.assert_allclose(p, p0, atol=1e-6)


@needs_openvino
def test_a_failing_compiled_model_falls_back_mid_run(go9, caplog):
    from azero.train.openvino_backend import OpenVinoError

    obs, legal = _positions(go9)
    ev = NetworkEvaluator(_net(go9.spec), device="cpu", backend="openvino", precision="f32")

    def broken(_obs):
        raise OpenVinoError("simulated failure")

    ev.openvino.infer = broken
    with caplog.at_level(logging.WARNING):
        p, v = ev.evaluate(obs, legal)
        ev.evaluate(obs, legal)
    assert ev.describe == "torch f32"
    assert sum("OpenVINO backend unavailable" in r.getMessage() for r in caplog.records) == 1
    p0, v0 = NetworkEvaluator(_net(go9.spec), device="cpu", backend="torch", precision="f32").evaluate(obs, legal)
    np.testing.assert_allclose(p, p0, atol=1e-6)


@needs_openvino
def test_a_reload_that_fails_to_compile_falls_back_to_the_new_weights_in_torch(go9, caplog):
    obs, legal = _positions(go9)
    ev = NetworkEvaluator(_net(go9.spec, seed=0), device="cpu", backend="openvino", precision="f32",
                          async_reload=False)

    def broken():
        raise RuntimeError("simulated compile failure")

    ev.openvino._compile = broken
    new = _net(go9.spec, seed=1)
    ev.load_state_dict(new.state_dict())
    with caplog.at_level(logging.WARNING):
        p, _ = ev.evaluate(obs, legal)
    assert ev.describe == "torch f32"
    expected, _ = NetworkEvaluator(new, device="cpu", backend="torch", precision="f32").evaluate(obs, legal)
    np.testing.assert_allclose(p, expected, atol=1e-6)


# -- training ----------------------------------------------------------------------------------

def test_bf16_training_keeps_float32_weights_and_learns(go9):
    obs, legal = _positions(go9, batch=32)
    rng = np.random.default_rng(0)
    pi = legal / legal.sum(axis=1, keepdims=True)
    batch = {"obs": obs, "pi": pi.astype(np.float32), "z": rng.uniform(-1, 1, 32).astype(np.float32),
             "legal": legal}
    trainer = Trainer(_net(go9.spec), TrainConfig(precision="bf16", lr=0.01, warmup_steps=0), device="cpu")
    assert trainer.precision == "bf16"
    first = trainer.train_step(batch)["loss"]
    for _ in range(30):
        last = trainer.train_step(batch)["loss"]
    assert last < first
    assert all(p.dtype == torch.float32 for p in trainer.net.parameters())
    assert Trainer(_net(go9.spec), TrainConfig(precision="auto", bf16=False), device="cpu").precision == "f32"
