"""The win / draw / loss value head (model.wdl_head): its targets, its loss, what the search sees,
checkpoints, the OpenVINO export, and the played-out outcome the replay keeps for it beside a
q-mixed value target."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from azero.runs.records import stack_records
from azero.selfplay.network_evaluator import NetworkEvaluator
from azero.selfplay.worker import GameRecord
from azero.train import precision as prec
from azero.train.checkpoint import network_from_checkpoint
from azero.train.network import NetworkConfig, PolicyValueNet, wdl_loss, wdl_target
from azero.train.replay import ReplayBuffer, ReplayConfig
from azero.train.trainer import TrainConfig, Trainer

WDL = dataclasses.replace(NetworkConfig.tiny(), wdl_head=True)


def _net(spec, seed=0):
    torch.manual_seed(seed)
    return PolicyValueNet(spec, WDL)


def test_outcomes_are_one_hot_and_mixed_targets_keep_their_expectation():
    z = torch.tensor([1.0, 0.0, -1.0, 0.4, -0.3])
    t = wdl_target(z)
    np.testing.assert_allclose(t[:3].numpy(), np.eye(3)[[0, 1, 2]])
    np.testing.assert_allclose(t.sum(dim=1).numpy(), 1.0, atol=1e-6)
    assert torch.all(t >= 0)
    np.testing.assert_allclose((t[:, 0] - t[:, 2]).numpy(), z.numpy(), atol=1e-6)
    # a mixed target puts what its expectation leaves on the draw, never on the other side
    np.testing.assert_allclose(t[3].numpy(), [0.4, 0.6, 0.0], atol=1e-6)


def test_value_is_win_minus_loss_and_bounded(spec):
    net = _net(spec).eval()
    obs = torch.randn(6, *spec.obs_shape) * 50
    logits, value = net(obs)
    heads = net.heads(obs)
    assert heads["wdl"].shape == (6, 3) and heads["wdl"].dtype == torch.float32
    probs = torch.softmax(heads["wdl"], dim=1)
    torch.testing.assert_close(value, probs[:, 0] - probs[:, 2])
    assert torch.all(value.abs() <= 1.0) and logits.shape == (6, spec.num_actions)
    assert net.has_wdl and not PolicyValueNet(spec, NetworkConfig.tiny()).has_wdl
    assert PolicyValueNet(spec, NetworkConfig.tiny()).heads(obs)["wdl"] is None


def test_the_loss_is_the_cross_entropy_and_is_least_at_the_target():
    z = torch.tensor([1.0, 0.0, -1.0])
    right = torch.tensor([[9.0, 0.0, 0.0], [0.0, 9.0, 0.0], [0.0, 0.0, 9.0]])
    wrong = right[[2, 0, 1]]
    assert wdl_loss(right, z) < 1e-3 < 5.0 < wdl_loss(wrong, z)
    uniform = torch.zeros(3, 3)
    assert wdl_loss(uniform, z).item() == pytest.approx(np.log(3.0), rel=1e-6)


def test_training_learns_draws_apart_from_decisive_outcomes(spec, positions, rng):
    """Half the positions are drawn, half won (plane 2's first point says which): the head must put
    the draw mass on the drawn ones, which a scalar value of 0 could not distinguish from a coin flip."""
    torch.manual_seed(3)
    net = _net(spec, seed=3)
    d = positions(rng, 64)
    drawn = d["obs"][:, 2, 0, 0] > 0.5
    d["z"] = np.where(drawn, 0.0, 1.0).astype(np.float32)
    trainer = Trainer(net, TrainConfig(batch_size=64, warmup_steps=0, lr=0.05))
    first = trainer.train_step(d)
    for _ in range(80):
        last = trainer.train_step(d)
    assert last["value_loss"] < 0.3 * first["value_loss"]
    assert last["loss"] == pytest.approx(last["policy_loss"] + last["value_loss"], rel=1e-5)
    net.eval()
    with torch.no_grad():
        p = torch.softmax(net.heads(torch.from_numpy(d["obs"]))["wdl"], dim=1).numpy()
    assert p[drawn, 1].mean() > 0.8 and p[~drawn, 0].mean() > 0.8


def test_checkpoint_round_trip_keeps_the_head(tmp_path, spec):
    net = _net(spec)
    path = Trainer(net, TrainConfig()).save(tmp_path)
    loaded = network_from_checkpoint(path).eval()
    assert loaded.has_wdl
    obs = torch.randn(3, *spec.obs_shape)
    with torch.no_grad():
        torch.testing.assert_close(loaded(obs)[1], net.eval()(obs)[1])


@pytest.mark.skipif(not prec.openvino_available(), reason="openvino is not installed")
def test_openvino_serves_the_same_values(spec, positions, rng):
    d = positions(rng, 8)
    ref = NetworkEvaluator(_net(spec), device="cpu", backend="torch", precision="f32")
    ov = NetworkEvaluator(_net(spec), device="cpu", backend="openvino", precision="f32")
    p0, v0 = ref.evaluate(d["obs"], d["legal"])
    p1, v1 = ov.evaluate(d["obs"], d["legal"])
    np.testing.assert_allclose(p1, p0, atol=1e-4)
    np.testing.assert_allclose(v1, v0, atol=1e-4)


def _record(to_play, outcome, root_value, q_weight):
    t = len(to_play)
    return GameRecord(obs=np.zeros((t, 3, 5, 5), np.float32), policy=np.full((t, 26), 1 / 26, np.float32),
                      legal=np.ones((t, 26), bool), to_play=np.asarray(to_play, np.int8),
                      move_number=np.arange(t, dtype=np.int32), actions=[], outcome=outcome, resigned=False,
                      no_resign=False, false_resign=None, root_value=np.asarray(root_value, np.float32),
                      q_weight=q_weight)


def test_records_keep_the_outcome_beside_a_q_mixed_target():
    mixed = stack_records([_record([0, 1, 0], 1.0, [0.2, -0.6, 0.0], 0.5), _record([1, 0], 0.0, [0.4, 0.0], 0.5)], 0)
    np.testing.assert_allclose(mixed["z"], [0.6, -0.8, 0.5, 0.2, 0.0])
    np.testing.assert_array_equal(mixed["outcome"], [1, -1, 1, 0, 0])
    plain = stack_records([_record([0, 1], -1.0, [0.3, 0.1], 0.0)], 0)
    assert "outcome" not in plain  # z is the outcome: nothing to keep twice


def test_replay_round_trips_the_outcome_and_falls_back_to_z(tmp_path, spec, positions, rng):
    cfg = ReplayConfig(min_window=100, max_window=100, min_positions=1, max_samples_per_position=None)
    buf = ReplayBuffer(tmp_path, spec, cfg=cfg)
    d = positions(rng, 6)
    outcome = np.array([1, -1, 0, 1, 1, -1], np.float32)
    buf.add(**dict(d, z=0.5 * outcome), game_id=0, move=np.arange(6), outcome=outcome)
    old = positions(rng, 4)
    buf.add(**old, game_id=1, move=np.arange(4))  # no outcome given: z is the outcome
    # a shard written before the outcome was kept, its z q-mixed (not a class): loads, outcome = z
    mixed_old = positions(rng, 3)
    mixed_old["z"] = np.array([0.6, -0.2, 0.0], np.float32)
    buf.add(**mixed_old, game_id=3, move=np.arange(3))
    with pytest.raises(ValueError, match="outcome must be of shape"):
        buf.add(**d, game_id=2, move=np.arange(6), outcome=np.full(6, 0.5, np.float32))
    again = ReplayBuffer(tmp_path, spec, cfg=cfg)
    np.testing.assert_array_equal(again._shards[0].data["outcome"], outcome)
    np.testing.assert_array_equal(again._shards[1].data["outcome"], old["z"])
    np.testing.assert_array_equal(again._shards[2].data["outcome"], mixed_old["z"])
    batch = again.sample(32, np.random.default_rng(0), augment=False)
    mixed = batch["position"] < 6
    np.testing.assert_array_equal(batch["z"][mixed], 0.5 * batch["outcome"][mixed])
    np.testing.assert_array_equal(batch["z"][~mixed], batch["outcome"][~mixed])


def test_the_head_learns_the_outcome_not_the_mixed_target(spec, positions, rng):
    """Every position won, its mixed target only 0.3: the classes must learn the win."""
    net = _net(spec, seed=4)
    d = positions(rng, 32)
    d["z"] = np.full(32, 0.3, np.float32)
    d["outcome"] = np.ones(32, np.float32)
    trainer = Trainer(net, TrainConfig(batch_size=32, warmup_steps=0, lr=0.05))
    for _ in range(60):
        trainer.train_step(d)
    net.eval()
    with torch.no_grad():
        p = torch.softmax(net.heads(torch.from_numpy(d["obs"]))["wdl"], dim=1).numpy()
    assert p[:, 0].mean() > 0.9 and p[:, 1].mean() < 0.08
