"""The learner: one optimizer step per replay batch, and exact save / resume.

Loss (AlphaGo Zero, Silver et al. 2017, eq. 1; the L2 term lives in the optimizer):

    l = -sum_a pi_a log p_a  +  value_loss_weight * (z - v)^2

with p the network's policy renormalised over the legal actions
(masked_log_softmax), pi the search's visit distribution and z the outcome
from the player to move's view, both from the replay buffer. A net with a win / draw / loss
value head (model.wdl_head) replaces the squared error by the cross-entropy of its three
classes against the played-out outcome's class (network.wdl_target; the replay keeps the
outcome beside a z mixed with the search's value, selfplay.value_q_weight, which the head
therefore does not see).

Exact resume. A checkpoint holds everything a step depends on: weights and
BatchNorm statistics, optimizer buffers, the step (the learning rate is a pure
function of it, `lr_at`, so there is no scheduler state to drift), the numpy
generator the trainer samples replay batches with, and the torch RNG states.
On one CPU with the same thread count, N steps + save + load + M steps gives
bit-identical weights to N + M uninterrupted steps (tests/train/test_trainer.py).
On CUDA the same holds up to the nondeterminism of cuDNN kernels.

Device: CUDA when available, else CPU. Precision (`precision`, see
azero.train.precision): by default the forward pass runs under bf16 autocast where
the device computes bf16 natively (CUDA; CPUs with avx512_bf16 or AMX), since bf16
has float32's range and needs no loss scaling. Measured on a 2-core EPYC with
avx512_bf16, batch 128, one thread: 11.9 -> 20.5 steps/s for the 4x32 preset net,
3.1 -> 5.8 for 6x64 (`azero bench train`). Master weights, gradients' accumulation
into them, optimizer state and checkpoints stay float32. On CUDA tensors are also
channels_last, the layout tensor cores want.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import logging
import math
import os
from pathlib import Path
from typing import Any, Optional

import numpy as np
import torch
import torch.nn.functional as F

from azero.train.checkpoint import (
    Checkpoint,
    CheckpointError,
    load_checkpoint,
    load_model_state,
    load_optimizer_state,
    model_tensors,
    network_from_checkpoint_data as _network_from,
    network_metadata,
    optimizer_tensors,
    prune_checkpoints,
    save_checkpoint,
)
from azero.train.network import PolicyValueNet, masked_log_softmax, wdl_loss
from azero.train.precision import PRECISIONS, check_choice, resolve_precision

log = logging.getLogger(__name__)

OPTIMIZERS = ("sgd", "adamw")
LR_SCHEDULES = ("constant", "cosine", "step")


@dataclasses.dataclass
class TrainConfig:
    """Optimisation of the policy-value network."""

    batch_size: int = 256
    """Positions per training step."""
    optimizer: str = "sgd"
    """'sgd' (momentum, AlphaZero's choice) or 'adamw'."""
    lr: float = 0.02
    """Peak learning rate, reached at the end of warmup."""
    momentum: float = 0.9
    """SGD momentum."""
    nesterov: bool = False
    """SGD: use Nesterov momentum."""
    adam_beta1: float = 0.9
    """AdamW: decay of the first moment."""
    adam_beta2: float = 0.999
    """AdamW: decay of the second moment."""
    weight_decay: float = 1e-4
    """On convolution and linear weights only (coupled L2 for SGD, decoupled for AdamW)."""
    lr_schedule: str = "cosine"
    """After warmup: 'constant', 'cosine' (down to lr * lr_min_ratio at `steps`) or 'step'."""
    warmup_steps: int = 100
    """Linear warmup from lr / warmup_steps to lr over these first steps (0: none)."""
    lr_min_ratio: float = 0.05
    """'cosine': the final learning rate as a fraction of lr."""
    lr_milestones: list[int] = dataclasses.field(default_factory=list)
    """'step': steps at which the learning rate is multiplied by lr_gamma."""
    lr_gamma: float = 0.1
    """'step': factor applied at each milestone."""
    grad_clip: Optional[float] = 5.0
    """Clip the global gradient norm to this value; null disables clipping."""
    steps: int = 100_000
    """Length of the run; the cosine schedule ends here (later steps keep its final rate)."""
    checkpoint_every: int = 1_000
    """Steps between checkpoints in train_from."""
    keep_checkpoints: int = 5
    """Keep only this many newest checkpoints after each save; 0 keeps all."""
    value_loss_weight: float = 1.0
    """Weight of the value MSE against the policy cross-entropy."""
    ownership_weight: float = 1.5
    """Nets with an ownership head: weight of its loss, the mean over points of the cross-entropy
    between (1 + owner) / 2 and (1 + tanh(logit)) / 2 (KataGo: 1.5 / area on the per-point sum).
    Masked for positions of games that were not played out (resigned, old replay shards)."""
    opponent_policy_weight: float = 0.15
    """Nets with an opponent policy head: weight of its loss, the cross-entropy of the next position's
    policy target (the opponent's reply, scaled by that position's policy weight; KataGo: 0.15)."""
    score_weight: float = 0.25
    """Nets with a score head: weight of its loss, the Huber loss (delta 1) of (predicted - final
    score) / sqrt(H*W). Masked like the ownership loss."""
    seed: int = 0
    """Seed of the trainer's numpy generator (replay sampling)."""
    precision: str = "auto"
    """Forward/backward arithmetic: 'auto' (bf16 autocast where the device has native bf16: CUDA, or a
    CPU with avx512_bf16 / AMX; float32 elsewhere), 'f32' or 'bf16'. Weights and optimizer stay float32."""
    bf16: bool = True
    """Older switch kept so saved run configs load: false forces float32 whatever `precision` says."""
    channels_last: bool = True
    """On CUDA, keep weights and inputs in channels_last memory format (ignored on CPU)."""

    def __post_init__(self) -> None:
        check_choice("train.precision", self.precision, PRECISIONS)
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f"TrainConfig.optimizer must be one of {OPTIMIZERS}, got {self.optimizer!r}")
        if self.lr_schedule not in LR_SCHEDULES:
            raise ValueError(f"TrainConfig.lr_schedule must be one of {LR_SCHEDULES}, got {self.lr_schedule!r}")
        if self.batch_size < 1 or self.lr <= 0 or self.steps < 1 or self.warmup_steps < 0:
            raise ValueError("TrainConfig: need batch_size >= 1, lr > 0, steps >= 1, warmup_steps >= 0")
        if self.grad_clip is not None and self.grad_clip <= 0:
            raise ValueError(f"TrainConfig.grad_clip must be > 0 or null, got {self.grad_clip}")


def lr_at(step: int, cfg: TrainConfig) -> float:
    """The learning rate of (0-based) step `step`."""
    if step < cfg.warmup_steps:
        return cfg.lr * (step + 1) / cfg.warmup_steps
    if cfg.lr_schedule == "constant":
        return cfg.lr
    if cfg.lr_schedule == "step":
        return cfg.lr * cfg.lr_gamma ** sum(1 for m in cfg.lr_milestones if step >= m)
    progress = min(1.0, (step - cfg.warmup_steps) / max(1, cfg.steps - cfg.warmup_steps))
    low = cfg.lr * cfg.lr_min_ratio
    return low + (cfg.lr - low) * 0.5 * (1.0 + math.cos(math.pi * progress))


def select_device(device: str | torch.device | None = None) -> torch.device:
    """The given device, or CUDA when available and else the CPU ('auto' or None)."""
    if device is None or device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)


def _build_optimizer(net: torch.nn.Module, cfg: TrainConfig) -> torch.optim.Optimizer:
    # Decay only conv / linear weights: biases and BatchNorm scales set the scale of
    # activations, and shrinking them fights the normalisation rather than regularising.
    decay = [p for p in net.parameters() if p.ndim >= 2]
    no_decay = [p for p in net.parameters() if p.ndim < 2]
    groups = [{"params": decay, "weight_decay": cfg.weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    if cfg.optimizer == "sgd":
        return torch.optim.SGD(groups, lr=cfg.lr, momentum=cfg.momentum, nesterov=cfg.nesterov)
    return torch.optim.AdamW(groups, lr=cfg.lr, betas=(cfg.adam_beta1, cfg.adam_beta2))


class Trainer:
    """Owns the network's training: optimizer, step counter, sampling generator and checkpoints."""

    def __init__(self, net: PolicyValueNet, cfg: TrainConfig | None = None, *,
                 device: str | torch.device | None = None):
        self.cfg = cfg if cfg is not None else TrainConfig()
        self.device = select_device(device)
        self.on_cuda = self.device.type == "cuda"
        self.precision = resolve_precision(self.cfg.precision, self.device.type) if self.cfg.bf16 else "f32"
        self.net = net.to(self.device)
        if self.on_cuda and self.cfg.channels_last:
            self.net = self.net.to(memory_format=torch.channels_last)
        self.optimizer = _build_optimizer(self.net, self.cfg)
        self.step = 0
        """Optimizer steps taken (the next step has index `step`)."""
        self.samples_seen = 0
        """Positions trained on; pass it as ReplayBuffer(samples_drawn=...) after a restart."""
        self.rng = np.random.default_rng(self.cfg.seed)
        """The generator replay batches are sampled with (saved in checkpoints)."""

    # ------------------------------------------------------------------ training

    def _autocast(self):
        if self.precision == "bf16":
            return torch.autocast(device_type=self.device.type, dtype=torch.bfloat16)
        return contextlib.nullcontext()

    def _tensor(self, batch: dict[str, Any], key: str, dtype: torch.dtype = torch.float32) -> torch.Tensor:
        """batch[key] (numpy or torch) on the training device as dtype."""
        return torch.as_tensor(batch[key]).to(self.device, dtype=dtype, non_blocking=True)

    def _to_device(self, batch: dict[str, Any]) -> tuple[torch.Tensor, ...]:
        get = functools.partial(self._tensor, batch)
        obs = get("obs", torch.float32)
        if self.on_cuda and self.cfg.channels_last:
            obs = obs.contiguous(memory_format=torch.channels_last)
        return obs, get("pi", torch.float32), get("z", torch.float32), get("legal", torch.bool)

    def train_step(self, batch: dict[str, Any]) -> dict[str, float]:
        """One optimizer step on a batch (numpy or torch: obs [B,C,H,W], pi [B,A], z [B], legal [B,A]).

        Returns floats: loss, policy_loss (cross-entropy), value_loss (MSE; the win / draw / loss
        cross-entropy for a net with model.wdl_head),
        policy_kl (cross-entropy minus the target's entropy: 0 when the net
        matches the search exactly), policy_entropy (of the net's legal policy),
        policy_top1 (net's best move == search's most visited), value_error
        (mean |v - z|), lr, grad_norm (before clipping), step (after the update).
        """
        obs, pi, z, legal = self._to_device(batch)
        if obs.shape[0] != pi.shape[0] or obs.shape[0] != z.shape[0]:
            raise ValueError(f"train_step: batch sizes differ: obs {obs.shape[0]}, pi {pi.shape[0]}, z {z.shape[0]}")
        lr = lr_at(self.step, self.cfg)
        for group in self.optimizer.param_groups:
            group["lr"] = lr

        self.net.train()
        with self._autocast():
            heads = self.net.heads(obs)
        logits, value = heads["logits"], heads["value"]
        logp = masked_log_softmax(logits, legal)                 # [B, A] float32
        ce = -(pi * logp).sum(dim=1)                             # [B]
        if "policy_weight" in batch:  # cheap searches recorded at a lower weight (selfplay.cheap_target_weight)
            ce = ce * self._tensor(batch, "policy_weight")
        policy_loss = ce.mean()
        if heads.get("wdl") is not None:
            # the classes learn the played-out outcome; a q-mixed z would put the search's doubt on the draw
            outcome = self._tensor(batch, "outcome") \
                if "outcome" in batch else z
            value_loss = wdl_loss(heads["wdl"], outcome)
        else:
            value_loss = F.mse_loss(value, z)
        loss = policy_loss + self.cfg.value_loss_weight * value_loss
        aux = {**self._final_losses(heads, batch), **self._opponent_loss(heads, batch)}
        for name, term in aux.items():
            loss = loss + getattr(self.cfg, name.replace("_loss", "_weight")) * term
        if not torch.isfinite(loss):
            # fail loudly: stepping on a NaN would poison every weight and every later checkpoint
            raise FloatingPointError(f"train_step {self.step}: non-finite loss "
                                     f"(policy {policy_loss.item()}, value {value_loss.item()})")

        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        max_norm = self.cfg.grad_clip if self.cfg.grad_clip is not None else math.inf
        grad_norm = torch.nn.utils.clip_grad_norm_(self.net.parameters(), max_norm)
        self.optimizer.step()
        self.step += 1
        self.samples_seen += int(obs.shape[0])

        with torch.no_grad():
            p = logp.exp()
            entropy = -(p * logp).sum(dim=1).mean()
            target_entropy = -(pi * torch.log(pi.clamp_min(1e-30))).sum(dim=1).mean()
            top1 = (logp.argmax(dim=1) == pi.argmax(dim=1)).float().mean()
            value_error = (value - z).abs().mean()
            # one device->host transfer for all metrics instead of one sync each
            vals = torch.stack([loss, policy_loss, value_loss, policy_loss - target_entropy, entropy, top1,
                                value_error, grad_norm.to(loss.device), *aux.values()]).tolist()
        names = ("loss", "policy_loss", "value_loss", "policy_kl", "policy_entropy", "policy_top1",
                 "value_error", "grad_norm", *aux)
        return dict(zip(names, vals), lr=lr, step=float(self.step))

    def _final_losses(self, heads: dict, batch: dict[str, Any]) -> dict[str, torch.Tensor]:
        """ownership_loss / score_loss of the heads the net has, over the played-out positions only
        (has_final; a batch without any gives 0, so the terms and their metrics are always there)."""
        if heads["ownership"] is None and heads["score"] is None:
            return {}
        if "has_final" in batch:
            mask = self._tensor(batch, "has_final")
        else:
            mask = torch.zeros(heads["value"].shape[0], device=self.device)
        count = mask.sum().clamp_min(1.0)
        out = {}
        if heads["ownership"] is not None:
            target = self._tensor(batch, "ownership") if "ownership" in batch \
                else torch.zeros_like(heads["ownership"])
            # tanh(x) = 2 sigmoid(2x) - 1: the cross-entropy of owner probabilities (1 + o) / 2
            per_point = F.binary_cross_entropy_with_logits(2.0 * heads["ownership"], (1.0 + target) / 2.0,
                                                           reduction="none")
            out["ownership_loss"] = (per_point.mean(dim=1) * mask).sum() / count
        if heads["score"] is not None:
            target = self._tensor(batch, "score") if "score" in batch \
                else torch.zeros_like(heads["score"])
            scale = self.net.score_scale
            per_row = F.huber_loss(heads["score"] / scale, target / scale, reduction="none", delta=1.0)
            out["score_loss"] = (per_row * mask).sum() / count
        return out

    def _opponent_loss(self, heads: dict, batch: dict[str, Any]) -> dict[str, torch.Tensor]:
        """opponent_policy_loss of a net with the head: the cross-entropy of the reply's policy target
        (ReplayBuffer.sample's pi_next), weighted by next_weight (0 where the reply was not recorded)
        and averaged over the rows that have one (0 in a batch without any)."""
        if heads.get("opponent") is None:
            return {}
        logits = heads["opponent"]
        if "pi_next" not in batch:
            return {"opponent_policy_loss": logits.sum() * 0.0}
        weight = self._tensor(batch, "next_weight")
        logp = masked_log_softmax(logits, self._tensor(batch, "legal_next", torch.bool))
        ce = -(self._tensor(batch, "pi_next") * logp).sum(dim=1)
        return {"opponent_policy_loss": (ce * weight).sum() / (weight > 0).sum().clamp_min(1)}

    def train_from(self, buffer, *, max_steps: int, checkpoint_dir: str | os.PathLike | None = None
                   ) -> list[dict[str, float]]:
        """Train on batches sampled from `buffer` (a ReplayBuffer) with self.rng.

        Stops after max_steps steps or as soon as buffer.can_sample says the
        window is too small or the sample budget is used up (wait for self-play,
        then call again). Saves a checkpoint every cfg.checkpoint_every steps
        when checkpoint_dir is given. Returns the metrics of each step.
        """
        history = []
        for _ in range(max_steps):
            if not buffer.can_sample(self.cfg.batch_size):
                break
            history.append(self.train_step(buffer.sample(self.cfg.batch_size, self.rng)))
            if checkpoint_dir is not None and self.step % self.cfg.checkpoint_every == 0:
                self.save(checkpoint_dir)
        return history

    # ------------------------------------------------------------------ checkpoints

    def save(self, directory: str | os.PathLike) -> Path:
        """Write ckpt_<step>.safetensors with everything exact resume needs; returns its path."""
        tensors = model_tensors(self.net)
        opt_tensors, opt_meta = optimizer_tensors(self.optimizer)
        tensors.update(opt_tensors)
        tensors["rng/torch"] = torch.get_rng_state()
        if torch.cuda.is_available():
            for i, state in enumerate(torch.cuda.get_rng_state_all()):
                tensors[f"rng/cuda/{i}"] = state
        metadata = {
            "samples_seen": self.samples_seen,
            "network": network_metadata(self.net),
            "train_config": dataclasses.asdict(self.cfg),
            "optimizer": dict(opt_meta, kind=self.cfg.optimizer),
            "numpy_rng": self.rng.bit_generator.state,
        }
        path = save_checkpoint(directory, step=self.step, tensors=tensors, metadata=metadata)
        if self.cfg.keep_checkpoints > 0:
            prune_checkpoints(directory, keep=self.cfg.keep_checkpoints)
        return path

    def load(self, path: str | os.PathLike) -> None:
        """Restore model, optimizer, step, samples_seen and RNG states from a checkpoint.

        The trainer keeps its own TrainConfig (so a resumed run may, say, change
        the learning rate), but the optimizer kind must match the checkpoint's.
        """
        self._load(load_checkpoint(path))

    def _load(self, ckpt: Checkpoint) -> None:
        meta = ckpt.metadata
        # decode the trainer's own state first, so a bad file fails before anything is modified
        try:
            opt_meta = meta["optimizer"]
            kind = opt_meta["kind"]
            samples_seen = int(meta["samples_seen"])
            rng = np.random.default_rng()
            rng.bit_generator.state = meta["numpy_rng"]
            torch_state = ckpt.tensors["rng/torch"]
        except (KeyError, TypeError, ValueError) as e:
            raise CheckpointError(ckpt.path, f"missing or unusable trainer state ({type(e).__name__}: {e})") from e
        if kind != self.cfg.optimizer:
            raise CheckpointError(ckpt.path, f"saved with optimizer {kind!r}, this trainer uses {self.cfg.optimizer!r}")
        # Both loaders validate before they modify. A model that fits has the same parameters,
        # hence the same optimizer groups, so the optimizer cannot then fail halfway through.
        load_model_state(self.net, ckpt)
        load_optimizer_state(self.optimizer, ckpt, opt_meta)
        torch.set_rng_state(torch_state)
        if self.on_cuda:
            cuda_states = [ckpt.tensors[f"rng/cuda/{i}"] for i in range(torch.cuda.device_count())
                           if f"rng/cuda/{i}" in ckpt.tensors]
            if len(cuda_states) == torch.cuda.device_count():
                torch.cuda.set_rng_state_all(cuda_states)
            else:
                log.warning("%s: no CUDA RNG state for %d device(s); CUDA RNG not restored",
                            ckpt.path, torch.cuda.device_count())
        self.rng = rng
        self.step = ckpt.step
        self.samples_seen = samples_seen

    @classmethod
    def restore(cls, path: str | os.PathLike, cfg: TrainConfig | None = None, *,
                device: str | torch.device | None = None) -> "Trainer":
        """A trainer rebuilt from a checkpoint alone: network from its description, and
        the saved TrainConfig unless `cfg` is given."""
        ckpt = load_checkpoint(path)
        net = _network_from(ckpt)
        if cfg is None:
            try:
                cfg = TrainConfig(**ckpt.metadata["train_config"])
            except (KeyError, TypeError, ValueError) as e:
                raise CheckpointError(ckpt.path, f"unusable train_config ({type(e).__name__}: {e})") from e
        trainer = cls(net, cfg, device=device)
        trainer._load(ckpt)
        return trainer
