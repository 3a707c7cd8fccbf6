"""Warm start: a new network from an old one's weights, with new heads fresh and extra input planes at zero."""

from __future__ import annotations

import pytest
import torch

from azero.games.go import GoGame
from azero.train.checkpoint import CheckpointError
from azero.train.network import NetworkConfig, PolicyValueNet
from azero.train.trainer import TrainConfig, Trainer
from azero.train.warm_start import warm_start

SMALL = dict(blocks=1, channels=8, global_pool_every=0, value_hidden=8)


def _saved(tmp_path, features="basic", **cfg):
    torch.manual_seed(0)
    net = PolicyValueNet(GoGame(5, features=features).spec, NetworkConfig(**{**SMALL, **cfg}))
    return net, Trainer(net, TrainConfig()).save(tmp_path)


def test_extended_planes_and_new_heads_start_as_the_old_network(tmp_path):
    old, path = _saved(tmp_path)
    torch.manual_seed(1)
    new = PolicyValueNet(GoGame(5, features="extended").spec,
                         NetworkConfig(**SMALL, ownership_head=True, score_head=True))
    report = warm_start(new, path)
    assert report["widened"] and set(report["fresh"]) == {"ownership_conv", "score_fc"}
    basic = GoGame(5).new_states(4)
    ext = GoGame(5, features="extended").new_states(4)
    for s in (basic, ext):
        s.apply(torch.tensor([3, 3, 3, 3], dtype=torch.int32).numpy())
    old.eval(), new.eval()
    with torch.no_grad():
        a = old(torch.from_numpy(basic.encode()))
        b = new(torch.from_numpy(ext.encode()))
    torch.testing.assert_close(a[0], b[0])
    torch.testing.assert_close(a[1], b[1])


def test_a_different_tower_is_refused_naming_the_tensor(tmp_path):
    _, path = _saved(tmp_path)
    wider = PolicyValueNet(GoGame(5).spec, NetworkConfig(**{**SMALL, "channels": 16}))
    with pytest.raises(CheckpointError, match="stem_conv.weight"):
        warm_start(wider, path)


def test_a_run_warm_starts_once_and_records_it(tmp_path):
    from azero.cli import main

    _, path = _saved(tmp_path / "src")
    run = tmp_path / "run"
    args = ["selfplay", "--game", "go", "--run-dir", str(run), "game.board_size=5", "model.blocks=1",
            "model.channels=8", "model.global_pool_every=0", "model.value_hidden=8", "train.steps=2",
            "replay.min_positions=20", "selfplay.games_in_parallel=4", "search.simulations=4",
            f"run.init_from={path}", "run.workers=1"]
    assert main(args) == 0
    import json

    state = json.loads((run / "state.json").read_text())
    assert state["warm_start"]["from"] == str(path) and state["warm_start"]["copied"] > 0


def test_a_tanh_value_head_becomes_win_draw_loss_keeping_the_value(tmp_path):
    states = GoGame(5).new_states(6)
    states.apply(torch.tensor([3, 7, 12, 0, 24, 5], dtype=torch.int32).numpy())
    obs = torch.from_numpy(states.encode())
    # biases off zero put the values far from 0, where tanh and the three-class value differ most
    for bias in (0.0, 1.0, -2.5):
        torch.manual_seed(0)
        old = PolicyValueNet(GoGame(5).spec, NetworkConfig(**SMALL))
        old.value_fc2.bias.data.fill_(bias)
        path = Trainer(old, TrainConfig()).save(tmp_path / str(bias))
        torch.manual_seed(1)
        new = PolicyValueNet(GoGame(5).spec, NetworkConfig(**SMALL, wdl_head=True))
        report = warm_start(new, path)
        assert sorted(report["widened"]) == ["value_fc2.bias: tanh value -> win / draw / loss logits",
                                             "value_fc2.weight: tanh value -> win / draw / loss logits"]
        old.eval(), new.eval()
        with torch.no_grad():
            a, b, heads = old(obs), new(obs), new.heads(obs)
        torch.testing.assert_close(a[0], b[0])
        assert torch.allclose(a[1], b[1], atol=0.02), (bias, a[1], b[1])
        assert torch.equal(torch.sign(a[1]), torch.sign(b[1]))
        # the draw class is the middle logit, zero: it carries neither side's value
        torch.testing.assert_close(heads["wdl"][:, 1], torch.zeros(6))


def test_a_win_draw_loss_head_is_not_narrowed_to_tanh(tmp_path):
    _, path = _saved(tmp_path, wdl_head=True)
    tanh = PolicyValueNet(GoGame(5).spec, NetworkConfig(**SMALL))
    with pytest.raises(CheckpointError, match="model.wdl_head=true"):
        warm_start(tanh, path)
