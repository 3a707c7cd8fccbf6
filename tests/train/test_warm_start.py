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
