"""experiments/c4_refit.py: a finished run's network continued on a chosen replay window."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from omegaconf import OmegaConf

from azero.config import AzeroConfig
from azero.games import make_game
from azero.train.checkpoint import load_checkpoint
from azero.train.network import NetworkConfig, PolicyValueNet
from azero.train.replay import ReplayBuffer
from azero.train.trainer import TrainConfig, Trainer
from evalutil import load_experiment


@pytest.fixture(scope="module")
def refit():
    return load_experiment("c4_refit")


def tiny_run(root, shards=(40, 40, 40)):
    """A connect-four run directory: its config, a replay of random positions and one checkpoint."""
    spec = make_game("connect4").spec
    cfg = OmegaConf.structured(AzeroConfig)
    cfg.game.name = "connect4"
    cfg.train.batch_size = 16
    root.mkdir()
    (root / "config.yaml").write_text(OmegaConf.to_yaml(cfg))
    rng = np.random.default_rng(0)
    replay = ReplayBuffer(root / "replay", spec)
    for game, n in enumerate(shards):
        legal = np.ones((n, spec.num_actions), bool)
        pi = rng.dirichlet(np.ones(spec.num_actions), size=n).astype(np.float32)
        replay.add(rng.integers(0, 2, (n, *spec.obs_shape)).astype(np.float32), pi,
                   rng.choice([-1.0, 0.0, 1.0], n).astype(np.float32), legal, game_id=game, move=np.arange(n))
    torch.manual_seed(0)
    trainer = Trainer(PolicyValueNet(spec, NetworkConfig.tiny()), TrainConfig(batch_size=16, steps=10), device="cpu")
    trainer.step = 700
    return trainer.save(root / "checkpoints")


def files(directory):
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


def test_refit_trains_on_the_chosen_window_and_leaves_the_run_alone(refit, tmp_path):
    ckpt = tiny_run(tmp_path / "run")
    before = {d: files(tmp_path / "run" / d) for d in ("replay", "checkpoints")}
    out = tmp_path / "out"
    assert refit.main([str(tmp_path / "run"), "--window", "50", "--steps", "3", "--lr", "0.01",
                       "--lr-end", "0.001", "--out", str(out)]) == 0
    record = json.loads((out / "refit.json").read_text())
    assert (record["positions"], record["window"], record["run_window"]) == (120, 50, 120)
    assert record["steps"] == 3 and record["from_step"] == 700 and record["from"] == str(ckpt)
    new, old = load_checkpoint(record["checkpoint"]), load_checkpoint(ckpt)
    assert new.step == 3 and new.metadata["samples_seen"] == old.metadata["samples_seen"] + 3 * 16
    weights = [k for k in old.tensors if k.endswith(".weight") and not k.startswith("optim/")]
    assert any(not torch.equal(new.tensors[k], old.tensors[k]) for k in weights)
    assert {d: files(tmp_path / "run" / d) for d in ("replay", "checkpoints")} == before


def test_the_default_window_is_the_runs_own(refit, tmp_path):
    tiny_run(tmp_path / "run")
    out = tmp_path / "out"
    assert refit.main([str(tmp_path / "run"), "--steps", "1", "--out", str(out)]) == 0
    record = json.loads((out / "refit.json").read_text())
    assert record["window"] == record["run_window"] == 120


@pytest.mark.parametrize("extra, message", [
    (["--lr", "0.001", "--lr-end", "0.01"], "need 0 < --lr-end <= --lr"),
    (["--steps", "0"], "--steps must be >= 1"),
    (["--window", "-5"], "--window must be >= 0"),
])
def test_bad_arguments_are_refused_before_anything_is_written(refit, tmp_path, capsys, extra, message):
    tiny_run(tmp_path / "run")
    with pytest.raises(SystemExit) as e:
        refit.main([str(tmp_path / "run"), "--out", str(tmp_path / "out"), *extra])
    assert e.value.code == 2 and message in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_a_folder_that_is_not_a_run_is_named(refit, tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    with pytest.raises(SystemExit) as e:
        refit.main([str(tmp_path / "empty"), "--out", str(tmp_path / "out")])
    assert e.value.code == 2 and "is not a run directory" in capsys.readouterr().err
