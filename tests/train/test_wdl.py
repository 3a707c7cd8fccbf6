"""The win / draw / loss value head (model.wdl_head): its targets, its loss, what the search sees,
checkpoints, and the OpenVINO export."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from azero.selfplay.network_evaluator import NetworkEvaluator
from azero.train import precision as prec
from azero.train.checkpoint import network_from_checkpoint
from azero.train.network import NetworkConfig, PolicyValueNet, wdl_loss, wdl_target
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
