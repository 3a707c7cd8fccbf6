"""experiments/average_checkpoints.py: the weight mean of one network's checkpoints, refused for mixed networks."""

from __future__ import annotations

import pytest
import torch

from azero.train.checkpoint import CheckpointError, load_checkpoint, network_from_checkpoint
from evalutil import load_experiment, save_tiny


@pytest.fixture(scope="module")
def avg():
    return load_experiment("average_checkpoints")


def test_average_is_the_mean_of_the_weights_and_keeps_the_newest_step(avg, tmp_path):
    paths = [save_tiny(tmp_path, "connect4", step, seed) for step, seed in ((300, 1), (100, 2), (200, 3))]
    out = avg.average(paths, tmp_path / "avg.safetensors")
    got = load_checkpoint(out)
    inputs = [load_checkpoint(p).tensors for p in paths]
    assert got.step == 300 and got.metadata["averaged_steps"] == [100, 200, 300]
    floats = [k for k, v in got.tensors.items() if v.is_floating_point()]
    assert any("running_var" in k for k in floats)  # BatchNorm statistics are averaged too
    for k in floats:
        torch.testing.assert_close(got.tensors[k], torch.stack([t[k] for t in inputs]).mean(0))
    assert not any(k.startswith("optim/") for k in got.tensors)
    net = network_from_checkpoint(out)  # loads as an ordinary network
    assert sum(p.numel() for p in net.parameters()) > 0


def test_checkpoints_of_different_networks_are_refused(avg, tmp_path):
    c4 = save_tiny(tmp_path / "a", "connect4", 100, 1)
    ttt = save_tiny(tmp_path / "b", "tictactoe", 200, 1)
    with pytest.raises(CheckpointError, match="different network"):
        avg.average([c4, ttt], tmp_path / "avg.safetensors")
    assert not (tmp_path / "avg.safetensors").exists()


def test_an_existing_output_is_not_overwritten(avg, tmp_path, capsys):
    paths = [save_tiny(tmp_path, "connect4", step, step) for step in (1, 2)]
    out = tmp_path / "keep.safetensors"
    out.write_bytes(b"precious")
    with pytest.raises(SystemExit) as e:
        avg.main([str(out), *map(str, paths)])
    assert e.value.code == 2 and "exists" in capsys.readouterr().err
    assert out.read_bytes() == b"precious"


def test_one_checkpoint_is_not_an_average(avg, tmp_path, capsys):
    path = save_tiny(tmp_path, "connect4", 1, 1)
    with pytest.raises(SystemExit) as e:
        avg.main([str(tmp_path / "avg.safetensors"), str(path)])
    assert e.value.code == 2 and "at least two" in capsys.readouterr().err
