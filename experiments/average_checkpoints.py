"""Average the weights of several checkpoints of one run into one network (the SWA lever).

    python experiments/average_checkpoints.py OUT.safetensors CKPT CKPT [CKPT ...]

Late in a run the learning rate is small and consecutive checkpoints sit near one another;
the mean of their weights (stochastic weight averaging; KataGo exports a moving average of its
weights) can be a better network than any one of them. The averaging is torch's own
AveragedModel, with the BatchNorm statistics averaged along with the weights (use_buffers):
the checkpoints are close enough that recomputing them over replay data would change little.

The output is a model-only checkpoint like a shipped network's (no optimiser state: it is for
evaluating and playing, not for resuming) with the newest input's step and network description,
plus the steps it averaged.
Every input must hold the same network; the output must not exist yet.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from torch.optim.swa_utils import AveragedModel

from azero.models.export import KEEP_METADATA
from azero.train.checkpoint import (CheckpointError, load_checkpoint, load_model_state, model_tensors,
                                    network_from_checkpoint_data, save_checkpoint)


def average(paths: list[Path], out: Path) -> Path:
    """Write the weight average of `paths` (oldest step first in the metadata) to `out`."""
    if len(paths) < 2:
        raise ValueError(f"give at least two checkpoints to average, got {len(paths)}")
    if out.exists():
        raise FileExistsError(f"{out} exists; choose another output path")
    ckpts = sorted((load_checkpoint(p) for p in paths), key=lambda c: c.step)
    first = ckpts[0]
    for c in ckpts[1:]:
        if c.metadata.get("network") != first.metadata.get("network"):
            raise CheckpointError(c.path, f"holds a different network from {first.path}; "
                                          "only checkpoints of one network can be averaged")
    net = network_from_checkpoint_data(first)
    averaged = AveragedModel(net, use_buffers=True)
    for c in ckpts:
        load_model_state(net, c)
        averaged.update_parameters(net)
    newest = ckpts[-1]
    meta = {k: newest.metadata[k] for k in KEEP_METADATA if k in newest.metadata}  # what a shipped network keeps
    meta["averaged_steps"] = [c.step for c in ckpts]
    return save_checkpoint(out.parent, step=newest.step, tensors=model_tensors(averaged.module), metadata=meta,
                           filename=out.name)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path, help="the averaged checkpoint to write (a .safetensors file)")
    ap.add_argument("checkpoints", type=Path, nargs="+", help="checkpoints of one run to average")
    args = ap.parse_args(argv)
    try:
        path = average(args.checkpoints, args.out)
    except (ValueError, FileExistsError, CheckpointError) as e:
        ap.error(str(e))
    print(f"wrote {path}: the mean of {len(args.checkpoints)} checkpoints")
    return 0


if __name__ == "__main__":
    sys.exit(main())
