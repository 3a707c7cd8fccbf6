"""Precision int8: OpenVINO runs a copy quantized by NNCF on the positions it has evaluated."""

import logging

import numpy as np
import pytest

from azero.config import ConfigError, load_config
from azero.games import make_game
from azero.selfplay.network_evaluator import NetworkEvaluator
from azero.train import openvino_backend as ob
from azero.train import precision as prec
from evalutil import save_tiny, scrambled_tiny_net

needs_int8 = pytest.mark.skipif(not (prec.openvino_available() and prec.nncf_available()),
                                reason="openvino or nncf is not installed")


@pytest.fixture(scope="module")
def c4():
    return make_game("connect4")


def _net(spec, seed=0):
    return scrambled_tiny_net(spec, seed)


def _batches(game, n, batch=64, seed=0):
    """n batches of positions 2..16 random moves deep (what a search evaluates, roughly)."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        states = game.new_states(batch)
        for _ in range(2 + (2 * i) % 15):
            legal = states.legal_mask()
            act = np.where(legal, rng.random(legal.shape), -1).argmax(axis=1).astype(np.int32)
            states.apply(np.where(states.terminal(), -1, act).astype(np.int32))
        out.append((states.encode(), states.legal_mask()))
    return out


def _kl(p, q):
    return np.where(p > 0, p * (np.log(np.maximum(p, 1e-30)) - np.log(np.maximum(q, 1e-30))), 0).sum(1)


# -- settings ------------------------------------------------------------------------------------

def test_int8_is_an_inference_precision_only():
    assert load_config(["game=tictactoe", "run.precision=int8"]).run.precision == "int8"
    with pytest.raises(ConfigError, match="train.precision must be one of auto, f32, bf16; got 'int8'"):
        load_config(["game=tictactoe", "train.precision=int8"])
    assert prec.resolve_precision("int8", "cpu") == "int8"
    with pytest.raises(ValueError, match="precision must be one of auto, f32, bf16, int8; got 'int4'"):
        prec.resolve_precision("int4", "cpu")


def test_int8_on_torch_names_the_backend_it_needs(c4):
    with pytest.raises(ValueError, match="int8 runs on the OpenVINO backend"):
        NetworkEvaluator(_net(c4.spec), device="cpu", backend="torch", precision="int8")


@needs_int8
def test_missing_nncf_falls_back_to_torch_f32_with_one_warning(c4, monkeypatch, caplog):
    def no_nncf():
        raise ImportError("No module named 'nncf'")

    monkeypatch.setattr(ob, "import_nncf", no_nncf)
    with caplog.at_level(logging.WARNING):
        ev = NetworkEvaluator(_net(c4.spec), device="cpu", backend="openvino", precision="int8")
    assert ev.describe == "torch f32"
    warnings = [r.getMessage() for r in caplog.records if "OpenVINO backend unavailable" in r.getMessage()]
    assert len(warnings) == 1 and "int8 needs nncf" in warnings[0]


# -- calibration and quantization ----------------------------------------------------------------

@needs_int8
def test_int8_runs_float32_until_calibrated_then_a_close_quantized_copy(c4, capfd):
    batches = _batches(c4, 6)
    ref = NetworkEvaluator(_net(c4.spec), device="cpu", backend="openvino", precision="f32")
    ev = NetworkEvaluator(_net(c4.spec), device="cpu", backend="openvino", precision="int8", async_reload=False)
    assert ev.describe == "openvino int8" and not ev.openvino.quantized
    needed = -(-ob.CALIBRATION_ROWS // len(batches[0][0]))  # batches of 64 until the record is full enough
    for i, (obs, legal) in enumerate(batches):
        was_quantized = ev.openvino.quantized
        p, v = ev.evaluate(obs, legal)
        p0, v0 = ref.evaluate(obs, legal)
        assert p.dtype == np.float32 and v.dtype == np.float32
        live = legal.any(axis=1)
        assert np.all(p[~legal] == 0) and np.allclose(p[live].sum(axis=1), 1, atol=1e-5)
        if not was_quantized:  # the float32 model, exactly OpenVINO f32's answers
            np.testing.assert_allclose(p, p0, atol=1e-5)
            np.testing.assert_allclose(v, v0, atol=1e-5)
        else:  # quantized: close to float32, not equal to it
            assert _kl(p0[live], p[live]).mean() < 0.02
            assert 0 < np.abs(v - v0).mean() < 0.05
        assert ev.openvino.quantized == (i + 1 >= needed)
    assert ev.openvino.version == 1 and ev.openvino.quantize_seconds > 0
    # NNCF's progress bars would land on standard output, GTP's protocol channel
    assert capfd.readouterr().out == ""


@needs_int8
@pytest.mark.parametrize("async_reload", [False, True])
def test_int8_reloads_quantize_the_new_weights(c4, async_reload):
    batches = _batches(c4, 5)
    ev = NetworkEvaluator(_net(c4.spec, seed=0), device="cpu", backend="openvino", precision="int8",
                          async_reload=async_reload)
    for obs, legal in batches[:4]:
        ev.evaluate(obs, legal)
    ev.wait_reload()
    assert ev.openvino.quantized
    new = _net(c4.spec, seed=1)
    obs, legal = batches[4]
    old_p, _ = NetworkEvaluator(_net(c4.spec, seed=0), device="cpu", backend="torch", precision="f32").evaluate(obs, legal)
    new_p, new_v = NetworkEvaluator(new, device="cpu", backend="torch", precision="f32").evaluate(obs, legal)
    ev.load_state_dict(new.state_dict())
    ev.wait_reload()
    p, v = ev.evaluate(obs, legal)
    assert ev.openvino.quantized and ev.openvino.version == 2
    live = legal.any(axis=1)
    assert _kl(new_p[live], p[live]).mean() < 0.02 < _kl(old_p[live], p[live]).mean()
    assert np.abs(v - new_v).mean() < 0.05


@needs_int8
def test_the_calibration_record_keeps_the_newest_rows_within_its_bound(c4):
    ev = NetworkEvaluator(_net(c4.spec), device="cpu", backend="openvino", precision="int8", async_reload=False)
    net = ev.openvino
    big = np.zeros((256, *c4.spec.obs_shape), np.float32)  # a big batch keeps CALIBRATION_BATCH_ROWS of its rows
    net._record(big)
    assert net._calibration_rows == ob.CALIBRATION_BATCH_ROWS
    rng = np.random.default_rng(0)
    for k in range(ob.CALIBRATION_EVERY * 40):
        net._record(rng.random((3, *c4.spec.obs_shape), dtype=np.float32) + k)
    assert net._calibration_rows < ob.CALIBRATION_MAX_ROWS + ob.CALIBRATION_BATCH_ROWS  # one batch over at most
    assert net._calibration_rows == sum(len(c) for c in net._calibration)
    record = net._calibration_record()
    assert record and all(len(b) <= ob.CALIBRATION_BATCH_ROWS for b in record)
    # the all-zero batch recorded first has been replaced by newer rows
    assert min(float(b.max()) for b in net._calibration) > 0


@needs_int8
def test_a_loaded_int8_network_is_quantized_before_its_first_position(c4, tmp_path):
    """Play, GTP, arenas and c4-accuracy load networks through load_evaluator: with the game known, it
    calibrates on random-play positions, so even the first evaluation (one big batch) runs int8."""
    from azero.agents.checkpoints import load_evaluator

    path = save_tiny(tmp_path, "connect4", 10, seed=0)
    loaded = load_evaluator(path, game=c4, device="cpu", precision="int8")
    assert "openvino int8" in loaded.description and loaded.evaluator.openvino.quantized
    obs, legal = _batches(c4, 1)[0]
    p, v = loaded.evaluator.evaluate(obs, legal)
    p0, v0 = load_evaluator(path, game=c4, device="cpu", precision="f32").evaluator.evaluate(obs, legal)
    assert not np.array_equal(v, v0) and np.abs(v - v0).mean() < 0.05
    with pytest.raises(ValueError, match="fewer than the 256 int8 needs"):
        loaded.evaluator.calibrate(obs[:10])


@needs_int8
def test_gtp_quantizes_at_load(tmp_path):
    """`azero gtp` loads without naming the game (its feature set comes from the net) and quantizes
    once it has built the game, before the first move."""
    from azero.agents.checkpoints import load_evaluator
    from azero.gtp.engine import GtpEngine

    path = save_tiny(tmp_path, "go9x9", 10, seed=0)
    loaded = load_evaluator(path, device="cpu", precision="int8")
    assert not loaded.evaluator.openvino.quantized
    GtpEngine(loaded, board_size=9, simulations=4)
    assert loaded.evaluator.openvino.quantized


@needs_int8
def test_play_quantizes_before_its_first_move(tmp_path, monkeypatch):
    """run_play builds its player on an evaluator already quantized: the first move is int8's."""
    import io

    import azero.play as play

    seen = []

    class Spy(play.MctsPlayer):
        def __init__(self, spec, evaluator, config):
            seen.append(evaluator.openvino.quantized)
            super().__init__(spec, evaluator, config)

    monkeypatch.setattr(play, "MctsPlayer", Spy)
    path = save_tiny(tmp_path, "go9x9", 10, seed=0)
    out = io.StringIO()
    assert play.run_play(game="go9x9", checkpoint=str(path), simulations=4, device="cpu", precision="int8",
                         inp=io.StringIO("quit\n"), out=out) == 0
    assert seen == [True]
