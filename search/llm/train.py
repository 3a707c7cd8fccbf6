"""Training of the tiny LM (supervised on generated solutions) and of its value head (on the LM's
own rollouts, labelled by the verifier), both on CPU in minutes.

LM: next-token cross-entropy on the answer tokens of `prompt + solution + <eos>` sequences, one
uniformly drawn correct solution per training problem and draw, so the model learns a
distribution over solutions rather than one canonical answer. AdamW, linear warm-up, cosine decay.

Value head: the LM is frozen. For training problems, `rollouts` answers are sampled at
temperature 1 and verified; every prefix of a rollout from the end of the prompt to its last
token gets the rollout's reward (0 or 1) as label, and the head (a small MLP on the final hidden
state) is fit by binary cross-entropy. Its output is therefore an estimate of the probability that
sampling from the LM succeeds from that prefix (the value of the sampling policy), which is what
the searches back up.
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Callable

import numpy as np
import torch
import torch.nn.functional as F

from azero.search.llm.decode import generate
from azero.search.llm.engine import LMEngine
from azero.search.llm.model import GPTConfig, TinyGPT
from azero.search.llm.tasks import PAD, Task


@dataclasses.dataclass
class TrainConfig:
    """Budget and optimiser of `azero llm train` (defaults: a few minutes on a 2-core CPU)."""

    steps: int = 1500
    """LM optimiser steps."""
    batch: int = 128
    """Sequences per LM step."""
    lr: float = 3e-3
    """Peak AdamW learning rate."""
    warmup: int = 100
    """Linear warm-up steps."""
    weight_decay: float = 0.01
    """AdamW weight decay (matrices only)."""
    value_problems: int = 1024
    """Training problems the value head's rollouts are drawn from."""
    rollouts: int = 8
    """Sampled answers per value problem."""
    value_steps: int = 400
    """Value-head optimiser steps."""
    value_batch: int = 512
    """Prefixes per value step."""
    eval_problems: int = 200
    """Test problems for the greedy accuracy printed during and after training."""
    eval_every: int = 500
    """LM steps between greedy evaluations (0: only at the end)."""
    seed: int = 0
    """Seed of data order, initialisation and rollouts."""
    threads: int = 0
    """torch CPU threads (0: leave torch's default)."""


def _pad(seqs: list[list[int]]) -> torch.Tensor:
    T = max(len(s) for s in seqs)
    out = torch.full((len(seqs), T), PAD, dtype=torch.long)
    for i, s in enumerate(seqs):
        out[i, : len(s)] = torch.tensor(s)
    return out


def _lm_batch(task: Task, problems, rng: np.random.Generator, batch: int):
    idx = rng.integers(len(problems), size=batch)
    seqs, prompt_lens = [], []
    for i in idx:
        p = problems[int(i)]
        seqs.append(task.training_sequence(p, rng))
        prompt_lens.append(len(p.prompt))
    x = _pad(seqs)
    # Targets: the next token at answer positions only (prompt and padding ignored).
    y = torch.full_like(x, -100)
    for i, (s, pl) in enumerate(zip(seqs, prompt_lens)):
        y[i, pl - 1: len(s) - 1] = torch.tensor(s[pl:])
    return x, y


def greedy_accuracy(model: TinyGPT, task: Task, problems, *, batch: int = 256) -> float:
    """Fraction of `problems` the model's greedy answer solves (a fresh engine, not metered)."""
    engine = LMEngine(model)
    correct = 0
    for i in range(0, len(problems), batch):
        chunk = problems[i: i + batch]
        gen = generate(engine, task, [p.prompt for p in chunk], [len(p.prompt) for p in chunk], greedy=True)
        correct += sum(task.verify_tokens(p, t) for p, t in zip(chunk, gen.tokens))
        engine.clear()
    return correct / max(len(problems), 1)


def train_lm(task: Task, cfg: TrainConfig, *, model_cfg: GPTConfig | None = None,
             log: Callable[[str], None] = print) -> TinyGPT:
    """Supervised training of a fresh TinyGPT on `task`'s train split."""
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    torch.manual_seed(cfg.seed)
    rng = np.random.default_rng(cfg.seed)
    model_cfg = model_cfg or GPTConfig()
    model = TinyGPT(model_cfg)
    # The train split is sampled with repetition: a stream of problems drawn like the test ones.
    train = task.problems("train", 20_000, seed=cfg.seed, distinct=False)
    test = task.problems("test", cfg.eval_problems, seed=cfg.seed + 1)
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2 and not n.startswith("value_mlp")]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2 and not n.startswith("value_mlp")]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": cfg.weight_decay},
                             {"params": no_decay, "weight_decay": 0.0}], lr=cfg.lr, betas=(0.9, 0.98))
    log(f"[lm] task={task.name} params={model.num_params():,} steps={cfg.steps} batch={cfg.batch}")
    t0 = time.perf_counter()
    ema = None
    for step in range(1, cfg.steps + 1):
        lr = cfg.lr * min(1.0, step / max(cfg.warmup, 1))
        lr *= 0.5 * (1 + math.cos(math.pi * min(1.0, step / cfg.steps))) if step > cfg.warmup else 1.0
        for g in opt.param_groups:
            g["lr"] = lr
        model.train()
        x, y = _lm_batch(task, train, rng, cfg.batch)
        logits, _, _ = model(x)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1), ignore_index=-100)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        ema = loss.item() if ema is None else 0.95 * ema + 0.05 * loss.item()
        if step % 100 == 0 or step == cfg.steps:
            log(f"[lm] step {step} loss {ema:.4f} lr {lr:.2e} {time.perf_counter() - t0:.0f}s")
        if cfg.eval_every and step % cfg.eval_every == 0 and step < cfg.steps:
            model.eval()
            log(f"[lm] step {step} greedy test accuracy {greedy_accuracy(model, task, test):.3f}")
    model.eval()
    log(f"[lm] done in {time.perf_counter() - t0:.0f}s; greedy test accuracy "
        f"{greedy_accuracy(model, task, test):.3f} on {len(test)} problems")
    return model


def value_dataset(model: TinyGPT, task: Task, cfg: TrainConfig, *, log: Callable[[str], None] = print):
    """(hidden states float32 [n, d], labels float32 [n]) from verified rollouts on train problems."""
    rng = np.random.default_rng(cfg.seed + 7)
    problems = task.problems("train", cfg.value_problems, seed=cfg.seed + 7)
    engine = LMEngine(model)
    feats, labels, solved = [], [], []
    chunk = max(1, 512 // cfg.rollouts)
    for i in range(0, len(problems), chunk):
        batch = [p for p in problems[i: i + chunk] for _ in range(cfg.rollouts)]
        gen = generate(engine, task, [p.prompt for p in batch], [len(p.prompt) for p in batch], rng=rng)
        rewards = np.array([task.verify_tokens(p, t) for p, t in zip(batch, gen.tokens)], np.float32)
        solved.append(rewards)
        seqs = [list(p.prompt) + t for p, t in zip(batch, gen.tokens)]
        with torch.no_grad():
            x = _pad(seqs)
            _, hidden, _ = model(x)
        for j, (p, s) in enumerate(zip(batch, seqs)):
            pl = len(p.prompt)
            feats.append(hidden[j, pl - 1: len(s)])
            labels.append(torch.full((len(s) - pl + 1,), float(rewards[j])))
        engine.clear()
    rate = float(np.concatenate(solved).mean())
    log(f"[value] {len(problems)} problems x {cfg.rollouts} rollouts: sampled success rate {rate:.3f}")
    return torch.cat(feats), torch.cat(labels), rate


def train_value(model: TinyGPT, task: Task, cfg: TrainConfig, *, log: Callable[[str], None] = print) -> dict:
    """Fit the value head (LM frozen) on verified rollouts; returns {'rollout_success', 'final_bce'}."""
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    torch.manual_seed(cfg.seed + 11)
    t0 = time.perf_counter()
    feats, labels, rate = value_dataset(model, task, cfg, log=log)
    for p in model.value_mlp.parameters():
        p.requires_grad_(True)
    opt = torch.optim.AdamW(model.value_mlp.parameters(), lr=3e-3, weight_decay=0.0)
    gen = torch.Generator().manual_seed(cfg.seed + 13)
    ema = None
    for step in range(1, cfg.value_steps + 1):
        idx = torch.randint(len(feats), (cfg.value_batch,), generator=gen)
        loss = F.binary_cross_entropy_with_logits(model.value_logit(feats[idx]), labels[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        ema = loss.item() if ema is None else 0.95 * ema + 0.05 * loss.item()
        if step % 100 == 0 or step == cfg.value_steps:
            log(f"[value] step {step} bce {ema:.4f}")
    model.eval()
    log(f"[value] done in {time.perf_counter() - t0:.0f}s on {len(feats):,} prefixes")
    return {"rollout_success": rate, "final_bce": float(ema if ema is not None else float("nan"))}
