import os
import re
from pathlib import Path

import pytest
import torch

from azero.train import checkpoint as ckpt_mod
from azero.train.checkpoint import (
    CheckpointError,
    latest_checkpoint,
    list_checkpoints,
    load_checkpoint,
    load_model_state,
    model_tensors,
    network_from_checkpoint,
    network_metadata,
    prune_checkpoints,
    save_checkpoint,
)
from azero.train.network import NetworkConfig, PolicyValueNet

TRAIN_DIR = Path(__file__).resolve().parents[2] / "train"


def _tensors():
    g = torch.Generator().manual_seed(0)
    return {
        "a/f32": torch.randn(3, 4, generator=g),
        "a/i64": torch.arange(5, dtype=torch.int64),
        "b/bool": torch.tensor([True, False, True]),
        "b/bf16": torch.randn(2, 2, generator=g).to(torch.bfloat16),
        "scalar": torch.tensor(2.5),
        "view": torch.arange(10.0)[2:6],  # a view of a larger storage must still save
    }


def _net(spec, seed=0, **overrides):
    torch.manual_seed(seed)
    cfg = NetworkConfig.tiny()
    for k, v in overrides.items():
        setattr(cfg, k, v)
    return PolicyValueNet(spec, cfg)


def test_round_trip(tmp_path):
    tensors = _tensors()
    meta = {"config": {"lr": 0.1, "milestones": [1, 2]}, "note": "x", "big": 2**70}
    path = save_checkpoint(tmp_path, step=42, tensors=tensors, metadata=meta)
    assert path.name == "ckpt_000000042.safetensors"
    assert os.listdir(tmp_path) == [path.name]  # no temp file left
    ck = load_checkpoint(path)
    assert ck.step == 42 and ck.path == path
    assert ck.tensors.keys() == tensors.keys()
    for k, t in tensors.items():
        assert ck.tensors[k].dtype == t.dtype and torch.equal(ck.tensors[k], t), k
    assert {k: ck.metadata[k] for k in meta} == meta


def test_reserved_metadata_keys(tmp_path):
    with pytest.raises(ValueError, match="reserved"):
        save_checkpoint(tmp_path, step=1, tensors={}, metadata={"step": 3})


def test_latest_checkpoint_ignores_temp_files(tmp_path):
    assert latest_checkpoint(tmp_path) is None
    assert latest_checkpoint(tmp_path / "missing") is None
    for step in (5, 100, 20):
        save_checkpoint(tmp_path, step=step, tensors={"x": torch.zeros(1)}, metadata={})
    (tmp_path / ".tmp-ckpt_000000999.safetensors.1.abcd.tmp").write_bytes(b"half")
    (tmp_path / "notes.txt").write_text("hi")
    assert latest_checkpoint(tmp_path).name == "ckpt_000000100.safetensors"
    assert [p.name for p in list_checkpoints(tmp_path)] == [
        "ckpt_000000005.safetensors", "ckpt_000000020.safetensors", "ckpt_000000100.safetensors"]
    removed = prune_checkpoints(tmp_path, keep=2)
    assert [p.name for p in removed] == ["ckpt_000000005.safetensors"]
    assert len(list_checkpoints(tmp_path)) == 2


def test_failed_write_keeps_the_previous_file(tmp_path, monkeypatch):
    save_checkpoint(tmp_path, step=1, tensors={"x": torch.ones(3)}, metadata={})

    def broken_replace(src, dst):
        raise OSError("simulated crash before the rename")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="simulated crash"):
        save_checkpoint(tmp_path, step=1, tensors={"x": torch.zeros(3)}, metadata={})
    monkeypatch.undo()
    assert os.listdir(tmp_path) == ["ckpt_000000001.safetensors"]
    assert torch.equal(load_checkpoint(tmp_path / "ckpt_000000001.safetensors").tensors["x"], torch.ones(3))


def _saved(tmp_path) -> Path:
    return save_checkpoint(tmp_path, step=7, tensors=_tensors(), metadata={"k": 1})


def test_flipped_data_byte_is_caught(tmp_path):
    path = _saved(tmp_path)
    raw = bytearray(path.read_bytes())
    raw[-3] ^= 0x01  # inside the last tensor's bytes
    path.write_bytes(bytes(raw))
    with pytest.raises(CheckpointError, match=re.escape(path.name) + ".*SHA-256") as e:
        load_checkpoint(path)
    assert e.value.path == path


def test_corrupt_header_is_caught(tmp_path):
    path = _saved(tmp_path)
    raw = bytearray(path.read_bytes())
    raw[9] = ord("#")  # the header's JSON starts at byte 8
    path.write_bytes(bytes(raw))
    with pytest.raises(CheckpointError, match=re.escape(path.name) + ".*corrupt header"):
        load_checkpoint(path)


@pytest.mark.parametrize("keep", [0, 5, 60, -10])
def test_truncated_file_is_caught(tmp_path, keep):
    path = _saved(tmp_path)
    raw = path.read_bytes()
    path.write_bytes(raw[:keep] if keep >= 0 else raw[:keep])
    with pytest.raises(CheckpointError, match=re.escape(path.name) + ".*truncated"):
        load_checkpoint(path)


def test_foreign_files_are_caught(tmp_path):
    other = tmp_path / "plain.safetensors"
    import safetensors.torch

    safetensors.torch.save_file({"x": torch.zeros(2)}, other)
    with pytest.raises(CheckpointError, match="not an azero checkpoint"):
        load_checkpoint(other)
    with pytest.raises(CheckpointError, match="cannot read"):
        load_checkpoint(tmp_path / "nope.safetensors")
    renamed = tmp_path / "ckpt_000000003.safetensors"
    renamed.write_bytes(_saved(tmp_path).read_bytes())
    with pytest.raises(CheckpointError, match="step 3 but the content says 7"):
        load_checkpoint(renamed)


def test_network_round_trip(tmp_path, spec):
    net = _net(spec).eval()
    for block in net.tower:
        torch.nn.init.normal_(block.bn2.weight)
    path = save_checkpoint(tmp_path, step=3, tensors=model_tensors(net), metadata={"network": network_metadata(net)})
    clone = network_from_checkpoint(path)
    assert not clone.training
    obs = torch.randn(5, *spec.obs_shape)
    for a, b in zip(net(obs), clone(obs)):
        assert torch.equal(a, b)


def test_mismatched_network_is_caught(tmp_path, spec):
    path = save_checkpoint(tmp_path, step=3, tensors=model_tensors(_net(spec)), metadata={})
    ck = load_checkpoint(path)
    wider = _net(spec, channels=24)
    before = {k: v.clone() for k, v in wider.state_dict().items()}
    with pytest.raises(CheckpointError, match=re.escape(path.name) + r": does not fit this network: \d+ shape "
                                              r"mismatch\(es\), e.g. \S+: checkpoint \(.*16.*\) vs network \(.*24.*\)"):
        load_model_state(wider, ck)
    assert all(torch.equal(before[k], v) for k, v in wider.state_dict().items())  # left untouched
    deeper = _net(spec, blocks=3)
    with pytest.raises(CheckpointError, match=r"missing \d+ tensor\(s\) the network has, e.g. \['tower\.2\."):
        load_model_state(deeper, ck)
    with pytest.raises(CheckpointError, match="no usable network description"):
        network_from_checkpoint(path)


def test_nothing_is_ever_unpickled():
    # the no-pickle rule of DESIGN.md, checked on the source: only safetensors and
    # allow_pickle=False loaders are allowed in train/
    for src in TRAIN_DIR.glob("*.py"):
        text = src.read_text()
        assert not re.search(r"(?<!safetensors\.)torch\.load\(", text), src
        assert "allow_pickle=True" not in text, src
        assert "import pickle" not in text, src
    assert "allow_pickle=False" in (TRAIN_DIR / "replay.py").read_text()
    assert ckpt_mod.FORMAT.startswith("azero-checkpoint")


@pytest.mark.parametrize("writer", ["torch.save", "pickle"])
def test_a_pickle_is_named_as_not_a_safetensors_file(tmp_path, writer):
    import pickle

    path = tmp_path / "model.safetensors"  # the name says safetensors; the bytes do not
    if writer == "torch.save":
        torch.save({"w": torch.zeros(3)}, path)
    else:
        path.write_bytes(pickle.dumps({"w": [0.0] * 3}))
    with pytest.raises(CheckpointError, match="not a safetensors file.*never unpickles"):
        load_checkpoint(path)
