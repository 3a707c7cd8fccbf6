"""Warm start: a new run's network initialised from another network's weights.

A run directory lives on one machine. When it is lost, a campaign continues from the newest
shipped network instead of from zero (run.init_from). The new network may differ from the old
one where that is safe:

- a head the old network lacks (ownership, score) starts from its fresh initialisation;
- an input layer with more planes (Go's extended features after basic ones, which they extend)
  keeps the old weights on the old planes and zeros on the new ones, so the warm network
  computes exactly what the old one did until training finds a use for the new planes;
- a tanh value head (one output) into a win / draw / loss head (model.wdl_head, three logits):
  the old pre-activation x becomes the logits (1.5 x, 0, -1.5 x), so the warm network's value
  P(win) - P(loss) = 2 sinh(1.5 x) / (2 cosh(1.5 x) + 1) has tanh(x)'s sign, order, slope at 0
  and limits (within 0.02 of it everywhere) and the search starts where the old network left it;
  the draw class starts at 1/3 in balanced positions and learns from the outcomes. The reverse
  (three classes into one tanh) has no such map and is refused.

Any other difference in a tensor's shape (tower width, depth, board size) is an error naming it.
Only the weights move: the step, optimizer state and replay buffer start fresh.
"""

from __future__ import annotations

import os

import torch

from azero.train.checkpoint import MODEL_PREFIX, CheckpointError, load_checkpoint

STEM = "stem_conv.weight"
VALUE_OUT = ("value_fc2.weight", "value_fc2.bias")
WDL_SLOPE = 1.5
"""(x, 0, -x) logits give a value with slope 2/3 at 0; scaling x by 1.5 matches tanh's slope there."""


def warm_start(net: torch.nn.Module, path: str | os.PathLike) -> dict:
    """Copy the weights of checkpoint `path` into `net` (see the module docstring); returns a report:
    {"from": path, "step": its step, "copied": n, "widened": [...], "fresh": [...]}."""
    ckpt = load_checkpoint(path)
    saved = {k[len(MODEL_PREFIX):]: v for k, v in ckpt.tensors.items() if k.startswith(MODEL_PREFIX)}
    own = net.state_dict()
    unknown = sorted(set(saved) - set(own))
    if unknown:
        raise CheckpointError(ckpt.path, f"cannot warm-start this network: it has no tensors {unknown[:3]} "
                                         f"(a different architecture)")
    new_state, widened, fresh = {}, [], []
    for name, target in own.items():
        if name not in saved:
            fresh.append(name)
            continue
        source = saved[name].to(target.dtype)
        if source.shape == target.shape:
            new_state[name] = source
        elif (name == STEM and source.dim() == 4 and source.shape[0] == target.shape[0]
              and source.shape[2:] == target.shape[2:] and source.shape[1] < target.shape[1]):
            grown = torch.zeros_like(target)
            grown[:, : source.shape[1]] = source
            new_state[name] = grown
            widened.append(f"{name}: {source.shape[1]} -> {target.shape[1]} input planes")
        elif name in VALUE_OUT and source.shape[0] == 1 and target.shape[0] == 3 and source.shape[1:] == target.shape[1:]:
            new_state[name] = torch.cat([WDL_SLOPE * source, torch.zeros_like(source), -WDL_SLOPE * source])
            widened.append(f"{name}: tanh value -> win / draw / loss logits")
        elif name in VALUE_OUT and source.shape[0] == 3 and target.shape[0] == 1:
            raise CheckpointError(ckpt.path, "cannot warm-start this network: the checkpoint has a win / draw / loss "
                                             "value head (model.wdl_head=true) and this network a tanh one; "
                                             "set model.wdl_head=true")
        else:
            raise CheckpointError(ckpt.path, f"cannot warm-start this network: {name} is {tuple(source.shape)} in "
                                             f"the checkpoint but {tuple(target.shape)} here")
    net.load_state_dict({**own, **new_state}, strict=True)
    return {"from": str(ckpt.path), "step": ckpt.step, "copied": len(new_state) - len(widened),
            "widened": widened, "fresh": sorted({n.split(".")[0] for n in fresh})}
