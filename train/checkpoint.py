"""Checkpoints: one safetensors file per training step, nothing in it can execute code.

    <dir>/ckpt_<step:09d>.safetensors

Tensors are namespaced by their owner ("model/<state_dict key>",
"optim/<param id>/<state key>", "rng/torch", "rng/cuda/<i>"). Everything that is
not a tensor (step, configs, optimizer hyper-parameters, the numpy generator
state) is one JSON document in the safetensors header under the key "azero".
safetensors stores no checksum, so the JSON also carries the SHA-256 of every
tensor's name, dtype, shape and bytes; a flipped bit anywhere in the file is
caught on load rather than silently trained on.

Files are written atomically (atomic.py), so `latest_checkpoint` never returns
a half-written file even if the trainer died while saving. Every failure to use
a file (unreadable, truncated, corrupt, wrong format, wrong shapes for the
network) raises CheckpointError naming the file and the problem.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import struct
from pathlib import Path
from typing import Any

import safetensors.torch
import torch
from safetensors import SafetensorError

from azero.train.atomic import write_atomic
from azero.train.network import NetworkConfig, PolicyValueNet, Shapes

FORMAT = "azero-checkpoint-1"
CHECKPOINT_NAME = "ckpt_{step:09d}.safetensors"
_CHECKPOINT_RE = re.compile(r"^ckpt_(\d{9,})\.safetensors$")
_META_KEY = "azero"
MODEL_PREFIX = "model/"


class CheckpointError(Exception):
    """A checkpoint file that cannot be loaded or does not fit what it is loaded into."""

    def __init__(self, path: str | os.PathLike, problem: str):
        self.path = Path(path)
        self.problem = problem
        super().__init__(f"checkpoint {self.path}: {problem}")


@dataclasses.dataclass(frozen=True)
class Checkpoint:
    """The decoded content of one checkpoint file (tensors on the CPU)."""

    path: Path
    step: int
    tensors: dict[str, torch.Tensor]
    metadata: dict[str, Any]
    """The JSON document: 'format', 'step', 'sha256' and whatever the saver added."""


def _content_hash(tensors: dict[str, torch.Tensor]) -> str:
    h = hashlib.sha256()
    for name in sorted(tensors):
        t = tensors[name]
        h.update(f"{name}|{t.dtype}|{tuple(t.shape)}|".encode())
        # viewing as bytes works for every dtype, bf16 included, which numpy lacks
        h.update(t.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes())
    return h.hexdigest()


def save_checkpoint(directory: str | os.PathLike, *, step: int, tensors: dict[str, torch.Tensor],
                    metadata: dict[str, Any], filename: str | None = None) -> Path:
    """Atomically write <directory>/ckpt_<step>.safetensors (or `filename`); metadata must be JSON-serialisable."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    # safetensors refuses tensors that share storage or live off the CPU; copies sidestep both
    cpu = {k: v.detach().to("cpu", copy=True).contiguous() for k, v in tensors.items()}
    for reserved in ("format", "step", "sha256"):
        if reserved in metadata:
            raise ValueError(f"save_checkpoint: metadata key {reserved!r} is reserved")
    doc = dict(metadata, format=FORMAT, step=int(step), sha256=_content_hash(cpu))
    blob = safetensors.torch.save(cpu, metadata={_META_KEY: json.dumps(doc)})
    name = filename if filename is not None else CHECKPOINT_NAME.format(step=step)
    return write_atomic(directory / name, lambda f: f.write(blob))


def load_checkpoint(path: str | os.PathLike) -> Checkpoint:
    """Read, verify and decode one checkpoint file; CheckpointError on any problem."""
    path = Path(path)
    try:
        blob = path.read_bytes()
    except OSError as e:
        raise CheckpointError(path, f"cannot read ({e.strerror or e})") from e
    if len(blob) < 8:
        raise CheckpointError(path, f"truncated: {len(blob)} bytes, not even a header length")
    if blob[8:9] != b"{":  # a safetensors file is a length, then its JSON header
        kind = ("a pickle or torch.save file" if blob[:1] == b"\x80" or blob[:2] == b"PK" else "something else")
        raise CheckpointError(path, f"not a safetensors file (it looks like {kind}; azero loads only safetensors "
                                    "and never unpickles)")
    (header_len,) = struct.unpack("<Q", blob[:8])
    if 8 + header_len > len(blob):
        raise CheckpointError(path, f"truncated: header claims {header_len} bytes, file has {len(blob) - 8} after the length")
    try:
        header = json.loads(blob[8 : 8 + header_len])
        doc = json.loads(header["__metadata__"][_META_KEY])
    except (ValueError, KeyError, TypeError) as e:
        raise CheckpointError(path, f"corrupt header or not an azero checkpoint ({type(e).__name__}: {e})") from e
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        found = doc.get("format") if isinstance(doc, dict) else None
        raise CheckpointError(path, f"format {found!r}, expected {FORMAT!r}")
    try:
        tensors = safetensors.torch.load(blob)
    except (SafetensorError, ValueError, RuntimeError) as e:
        raise CheckpointError(path, f"corrupt or truncated tensor data ({e})") from e
    if _content_hash(tensors) != doc.get("sha256"):
        raise CheckpointError(path, "tensor data does not match its SHA-256 (corrupted on disk)")
    step = doc.get("step")
    if not isinstance(step, int):
        raise CheckpointError(path, f"step {step!r} is not an integer")
    m = _CHECKPOINT_RE.match(path.name)
    if m and int(m.group(1)) != step:
        raise CheckpointError(path, f"file name says step {int(m.group(1))} but the content says {step}")
    return Checkpoint(path=path, step=step, tensors=tensors, metadata=doc)


def list_checkpoints(directory: str | os.PathLike) -> list[Path]:
    """Checkpoint files of `directory`, oldest step first (temp files of unfinished writes excluded)."""
    directory = Path(directory)
    if not directory.is_dir():
        return []
    found = [(int(m.group(1)), directory / name)
             for name in os.listdir(directory) if (m := _CHECKPOINT_RE.match(name))]
    return [p for _, p in sorted(found)]


def latest_checkpoint(directory: str | os.PathLike) -> Path | None:
    """The checkpoint with the highest step in `directory`, or None."""
    ckpts = list_checkpoints(directory)
    return ckpts[-1] if ckpts else None


def prune_checkpoints(directory: str | os.PathLike, *, keep: int) -> list[Path]:
    """Delete all but the `keep` newest checkpoints (keep <= 0 keeps all); returns the deleted paths."""
    ckpts = list_checkpoints(directory)
    doomed = ckpts[:-keep] if keep > 0 else []
    for p in doomed:
        p.unlink(missing_ok=True)
    return doomed


# ---------------------------------------------------------------------- the network


def network_metadata(net: PolicyValueNet) -> dict[str, Any]:
    """What it takes to rebuild `net` without its game: shapes and NetworkConfig."""
    return {"obs_shape": list(net.obs_shape), "num_actions": net.num_actions,
            "config": dataclasses.asdict(net.cfg)}


def model_tensors(net: torch.nn.Module) -> dict[str, torch.Tensor]:
    """The network's state_dict (weights and BatchNorm statistics) under MODEL_PREFIX."""
    return {MODEL_PREFIX + k: v for k, v in net.state_dict().items()}


def load_model_state(net: torch.nn.Module, ckpt: Checkpoint) -> None:
    """Copy the checkpoint's weights into `net`; CheckpointError unless names and shapes match exactly."""
    saved = {k[len(MODEL_PREFIX):]: v for k, v in ckpt.tensors.items() if k.startswith(MODEL_PREFIX)}
    own = net.state_dict()
    problems = []
    missing = sorted(set(own) - set(saved))
    unexpected = sorted(set(saved) - set(own))
    if missing:
        problems.append(f"missing {len(missing)} tensor(s) the network has, e.g. {missing[:3]}")
    if unexpected:
        problems.append(f"{len(unexpected)} tensor(s) the network lacks, e.g. {unexpected[:3]}")
    shapes = [f"{k}: checkpoint {tuple(saved[k].shape)} vs network {tuple(own[k].shape)}"
              for k in sorted(set(own) & set(saved)) if saved[k].shape != own[k].shape]
    if shapes:
        problems.append(f"{len(shapes)} shape mismatch(es), e.g. " + "; ".join(shapes[:3]))
    if problems:
        raise CheckpointError(ckpt.path, "does not fit this network: " + "; ".join(problems))
    net.load_state_dict(saved, strict=True)


def network_from_checkpoint(path: str | os.PathLike, *, device: str | torch.device = "cpu") -> PolicyValueNet:
    """Rebuild the network a checkpoint was saved from and load its weights (in eval mode)."""
    return network_from_checkpoint_data(load_checkpoint(path)).to(device).eval()


def network_from_checkpoint_data(ckpt: Checkpoint) -> PolicyValueNet:
    """network_from_checkpoint for an already decoded Checkpoint (on the CPU, in train mode)."""
    try:
        meta = ckpt.metadata["network"]
        net = PolicyValueNet(Shapes(tuple(meta["obs_shape"]), int(meta["num_actions"])),
                             NetworkConfig(**meta["config"]))
    except (KeyError, TypeError, ValueError) as e:
        raise CheckpointError(ckpt.path, f"no usable network description ({type(e).__name__}: {e})") from e
    load_model_state(net, ckpt)
    return net


# ---------------------------------------------------------------------- optimizer state


def optimizer_tensors(opt: torch.optim.Optimizer) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """Split opt.state_dict() into tensors ('optim/<param id>/<key>') and a JSON-able rest."""
    sd = opt.state_dict()
    tensors: dict[str, torch.Tensor] = {}
    plain: dict[str, dict[str, Any]] = {}
    for pid, state in sd["state"].items():
        for key, value in state.items():
            if torch.is_tensor(value):
                tensors[f"optim/{pid}/{key}"] = value
            else:  # e.g. SGD's momentum_buffer=None before its first step
                plain.setdefault(str(pid), {})[key] = value
    return tensors, {"param_groups": sd["param_groups"], "state": plain}


def load_optimizer_state(opt: torch.optim.Optimizer, ckpt: Checkpoint, meta: dict[str, Any]) -> None:
    """Inverse of optimizer_tensors; CheckpointError when it does not fit `opt`."""
    state: dict[int, dict[str, Any]] = {}
    for name, t in ckpt.tensors.items():
        if name.startswith("optim/"):
            _, pid, key = name.split("/", 2)
            state.setdefault(int(pid), {})[key] = t
    for pid, entries in meta.get("state", {}).items():
        state.setdefault(int(pid), {}).update(entries)
    try:
        opt.load_state_dict({"state": state, "param_groups": meta["param_groups"]})
    except (KeyError, ValueError, TypeError, RuntimeError) as e:
        raise CheckpointError(ckpt.path, f"optimizer state does not fit this optimizer ({type(e).__name__}: {e})") from e
