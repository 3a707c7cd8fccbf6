"""Training of the tiny LM (supervised on generated solutions) and of its value head (on the LM's
own rollouts, labelled by the verifier), both on CPU in minutes.

LM: next-token cross-entropy on the answer tokens of `prompt + solution + <eos>` sequences, one
uniformly drawn correct solution per training problem and draw, so the model learns a
distribution over solutions rather than one canonical answer. AdamW, linear warm-up, cosine decay.

Value head: for problems of the 'value' split (never seen by the LM, like the test problems) and,
for variety, as many of the train split (value_train_share), `rollouts` answers are sampled at temperature 1 and verified; every prefix of a rollout from the
end of the prompt to its last token gets the rollout's reward (0 or 1) as label, and the head (a
small MLP on the final hidden state) is fit by binary cross-entropy. Its output is therefore an
estimate of the probability that sampling from the LM succeeds from that prefix (the value of the
sampling policy), which is what the searches back up. By default the trunk learns too, with the
LM's own loss kept in the objective (value_mode 'joint'); 'head' freezes the LM.
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
from azero.search.llm.tasks import PAD, Task
from azero.search.llm.vocab import vocab_of
from azero.train.llm.engine import LMEngine
from azero.train.llm.model import GPTConfig, TinyGPT


@dataclasses.dataclass
class TrainConfig:
    """Budget and optimiser of `azero llm train` (defaults: a few minutes on a 2-core CPU)."""

    steps: int = 1000
    """LM optimiser steps."""
    batch: int = 128
    """Sequences per LM step."""
    lr: float = 3e-3
    """Peak AdamW learning rate."""
    warmup: int = 100
    """Linear warm-up steps."""
    weight_decay: float = 0.01
    """AdamW weight decay (matrices only)."""
    value_problems: int = 2048
    """Problems (drawn from the 'value' split, repeats allowed) the value head's rollouts start from."""
    rollouts: int = 4
    """Sampled answers per value problem."""
    value_steps: int = 300
    """Value optimiser steps."""
    value_batch: int = 512
    """Prefixes per value step (about 16 per rollout sequence)."""
    value_lr: float = 1e-3
    """Peak learning rate of the value training (cosine decay)."""
    value_train_share: float = 0.5
    """Share of the value problems drawn from the LM's train split instead of the 'value' split."""
    value_mode: str = "joint"
    """'joint': trunk and head learn (value BCE + the LM's own loss); 'head': LM frozen, head only."""
    value_labels: str = "outcome"
    """'outcome': every prefix of a rollout is labelled with its reward. 'process': a wrong rollout's
    prefixes are labelled 1 up to the end of the first line that breaks the task's rules
    (Task.broken_line) and 0 from there, as a process reward model learns which step went wrong
    (tasks that cannot tell fall back to outcomes)."""
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
    return _answer_batch(seqs, prompt_lens)


def _answer_batch(seqs: list[list[int]], prompt_lens: list[int]):
    """(x, y): the sequences padded, and as targets the next token at answer positions only
    (prompt and padding ignored)."""
    x = _pad(seqs)
    y = torch.full_like(x, -100)
    for i, (s, pl) in enumerate(zip(seqs, prompt_lens)):
        y[i, pl - 1: len(s) - 1] = torch.tensor(s[pl:])
    return x, y


def _sequence_batch(seqs: list[list[int]], prompt_lens: list[int], rng: np.random.Generator, batch: int):
    """(x, y) of `batch` sequences drawn from fixed ones (_answer_batch)."""
    idx = [int(i) for i in rng.integers(len(seqs), size=batch)]
    return _answer_batch([seqs[i] for i in idx], [prompt_lens[i] for i in idx])


def greedy_accuracy(model: TinyGPT, task: Task, problems, *, batch: int = 256) -> float:
    """Fraction of `problems` the model's greedy answer solves (a fresh engine, not metered)."""
    engine = LMEngine(model)
    vocab = vocab_of(engine)
    correct = 0
    for i in range(0, len(problems), batch):
        chunk = problems[i: i + batch]
        prompts = [vocab.prompt(task, p) for p in chunk]
        gen = generate(engine, task, prompts, [len(p) for p in prompts], greedy=True)
        correct += sum(task.verify_tokens(p, t, vocab) for p, t in zip(chunk, gen.tokens))
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
    train = task.problems("train", min(20_000, cfg.steps * cfg.batch), seed=cfg.seed, distinct=False)
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


def finetune_lm(model: TinyGPT, seqs: list[list[int]], prompt_lens: list[int], *, steps: int, batch: int = 128,
                lr: float = 1e-3, seed: int = 0, log: Callable[[str], None] = print) -> float:
    """Fine-tune the LM on fixed sequences (prompt + answer + <eos>; the loss on answer tokens only),
    e.g. verified search traces: expert iteration's distillation step. Constant lr after a short
    warm-up (a fine-tune, not a schedule from scratch). Returns the final smoothed loss."""
    if not seqs:
        raise ValueError("finetune_lm: no sequences to train on")
    rng = np.random.default_rng([seed, 31])
    torch.manual_seed(seed + 31)
    params = [p for n, p in model.named_parameters() if not n.startswith("value_mlp")]
    opt = torch.optim.AdamW(params, lr=lr, betas=(0.9, 0.98), weight_decay=0.0)
    ema = None
    warmup = max(1, steps // 10)
    for step in range(1, steps + 1):
        for g in opt.param_groups:
            g["lr"] = lr * min(1.0, step / warmup)
        x, y = _sequence_batch(seqs, prompt_lens, rng, min(batch, len(seqs)))
        model.train()
        logits, _, _ = model(x)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1), ignore_index=-100)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        ema = loss.item() if ema is None else 0.95 * ema + 0.05 * loss.item()
        if step % 100 == 0 or step == steps:
            log(f"[distil] step {step}/{steps} loss {ema:.4f}")
    model.eval()
    return float(ema)


VALUE_LABELS = ("outcome", "process")


def label_cut(task: Task, problem, tokens: list[int], reward: float, vocab, labels: str = "outcome") -> int:
    """How many answer tokens a prefix of this rollout may hold and still be labelled 1: all of them
    (and the finished answer) when it is right; none for a wrong one under outcome labels; under
    process labels, those before the end of its first broken line (the newline closing it, or the
    whole answer for its last line)."""
    if reward > 0:
        return len(tokens) + 1
    if labels == "outcome":
        return 0
    line = task.broken_line(problem, vocab.text(tokens))
    if line is None:
        return 0
    ends = [k for k, t in enumerate(tokens) if vocab.lines([t])]  # the tokens that end a line
    return ends[line] + 1 if line < len(ends) else len(tokens)


def value_rollouts(model: TinyGPT, task: Task, cfg: TrainConfig, *, log: Callable[[str], None] = print,
                   features: list | None = None):
    """Verified samples of the LM on 'value' (and train) problems: (sequences, prompt lengths, rewards,
    keys, label cuts: label_cut of each under cfg.value_labels).

    features: a list that receives, per sample, the final hidden states (float32 [n, d_model]) of its
    answer prefixes (lengths pl .. len, the positions prefix_batch masks), read from the engine's
    memo as the samples are drawn: a frozen LM's head is then fitted without running the LM again."""
    rng = np.random.default_rng(cfg.seed + 7)
    problems = task.problems("value", cfg.value_problems, seed=cfg.seed + 7, distinct=False)
    if cfg.value_train_share > 0:
        # Train-split problems widen the value data (the 'value' split alone is small enough for the
        # head to memorise); the LM's success rate on them is close to that on unseen problems.
        n_train = int(round(cfg.value_problems * cfg.value_train_share))
        extra = task.problems("train", n_train, seed=cfg.seed + 8, distinct=False)
        problems = [p for pair in zip(problems, extra) for p in pair] + problems[len(extra):]
        problems = problems[: cfg.value_problems]
    engine = LMEngine(model, keep_hidden=features is not None)
    vocab = vocab_of(engine)
    if cfg.value_labels not in VALUE_LABELS:
        raise ValueError(f"value_labels must be one of {VALUE_LABELS}, got {cfg.value_labels!r}")
    seqs, prompt_lens, rewards, keys, cuts = [], [], [], [], []
    chunk = max(1, 512 // cfg.rollouts)
    for i in range(0, len(problems), chunk):
        batch = [p for p in problems[i: i + chunk] for _ in range(cfg.rollouts)]
        prompts = [list(vocab.prompt(task, p)) for p in batch]
        gen = generate(engine, task, prompts, [len(p) for p in prompts], rng=rng)
        for p, prompt, t, node in zip(batch, prompts, gen.tokens, gen.nodes):
            seqs.append(prompt + t)
            prompt_lens.append(len(prompt))
            rewards.append(task.verify_tokens(p, t, vocab))
            cuts.append(label_cut(task, p, t, rewards[-1], vocab, cfg.value_labels))
            keys.append(p.key)
            if features is not None:
                features.append(engine.hidden_of(engine.path(int(node))[len(prompt) - 1:]))
        engine.clear()
    log(f"[value] {len(problems)} problems x {cfg.rollouts} rollouts: sampled success rate {np.mean(rewards):.3f}")
    return seqs, np.array(prompt_lens), np.array(rewards, np.float32), keys, np.array(cuts, np.int64)


def _prefix_labels(cut: int, n: int) -> np.ndarray:
    """The labels of a rollout's n answer prefixes (0 .. n - 1 answer tokens and so on): 1 below `cut`."""
    return (np.arange(n) < cut).astype(np.float32)


def prefix_batch(seqs, prompt_lens, cuts, idx):
    """Padded sequences [B, T], the mask of their answer prefixes (positions pl-1 .. len-1) and labels."""
    x = _pad([seqs[i] for i in idx])
    mask = torch.zeros(x.shape, dtype=torch.bool)
    labels = torch.zeros(x.shape, dtype=torch.float32)
    for j, i in enumerate(idx):
        start, end = prompt_lens[i] - 1, len(seqs[i])
        mask[j, start:end] = True
        labels[j, start:end] = torch.from_numpy(_prefix_labels(cuts[i], end - start))
    return x, mask, labels


def roc_auc(scores: np.ndarray, labels: np.ndarray) -> float:
    """Probability that a correct answer scores above a wrong one (ties count half)."""
    from sklearn.metrics import roc_auc_score

    labels, scores = np.asarray(labels), np.asarray(scores)
    known = (labels == 1) | (labels == 0)
    if not (labels == 1).any() or not (labels == 0).any():
        return float("nan")
    return float(roc_auc_score(labels[known] == 1, scores[known]))


def train_value(model: TinyGPT, task: Task, cfg: TrainConfig, *, log: Callable[[str], None] = print,
                lm_sequences: tuple[list[list[int]], list[int]] | None = None) -> dict:
    """Fit the value head on verified rollouts of 'value' problems; returns a summary dict.

    mode 'joint' (default): the whole network learns, value BCE on rollout prefixes plus the LM's
    own cross-entropy on train sequences (so the policy stays what it was while the shared trunk
    learns features of correctness, as AlphaZero's policy-value network does): the task's
    ground-truth solutions of train problems, or `lm_sequences` (sequences, prompt lengths; loss on
    the answer tokens) where given, e.g. expert iteration's verified search traces. mode 'head': the
    LM is frozen and only the head's MLP is fit. A fifth of the value problems is held out: the
    summary reports the head's BCE and AUC (correct vs wrong finished answers) on them.
    """
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    torch.manual_seed(cfg.seed + 11)
    rng = np.random.default_rng(cfg.seed + 11)
    t0 = time.perf_counter()
    if cfg.value_mode not in ("joint", "head"):
        raise ValueError(f"value_mode must be 'joint' or 'head', got {cfg.value_mode!r}")
    joint = cfg.value_mode == "joint"
    # A frozen LM's hidden states never change: take them from the rollouts' own forward passes.
    feats: list | None = None if joint else []
    seqs, prompt_lens, rewards, keys, cuts = value_rollouts(model, task, cfg, log=log, features=feats)
    held = np.array([_held_out(k) for k in keys])
    fit_idx, held_idx = np.flatnonzero(~held), np.flatnonzero(held)

    def head_batch(idx):
        """(hidden [n, d], labels [n]) of every answer prefix of the samples idx (head mode)."""
        h = torch.from_numpy(np.concatenate([feats[i] for i in idx]))
        y = torch.from_numpy(np.concatenate([_prefix_labels(cuts[i], len(feats[i])) for i in idx]))
        return h, y

    params = list(model.parameters()) if joint else list(model.value_mlp.parameters())
    opt = torch.optim.AdamW(params, lr=cfg.value_lr, weight_decay=0.0)
    train = task.problems("train", min(20_000, cfg.value_steps * cfg.batch), seed=cfg.seed + 5, distinct=False) \
        if joint and lm_sequences is None else None
    if lm_sequences is not None and not lm_sequences[0]:
        raise ValueError("train_value: lm_sequences holds no sequence")
    ema = None
    seq_batch = max(1, cfg.value_batch // 16)  # sequences per step (about 16 prefixes each)
    for step in range(1, cfg.value_steps + 1):
        for g in opt.param_groups:
            g["lr"] = cfg.value_lr * 0.5 * (1 + math.cos(math.pi * step / cfg.value_steps))
        model.train()
        idx = rng.choice(fit_idx, size=seq_batch)
        if joint:
            x, mask, labels = prefix_batch(seqs, prompt_lens, cuts, idx)
            _, hidden, _ = model(x)
            bce = F.binary_cross_entropy_with_logits(model.value_logit(hidden)[mask], labels[mask])
        else:
            hidden, labels = head_batch(idx)
            bce = F.binary_cross_entropy_with_logits(model.value_logit(hidden), labels)
        loss = bce
        if joint:
            xl, yl = _lm_batch(task, train, rng, cfg.batch // 2) if lm_sequences is None else \
                _sequence_batch(*lm_sequences, rng, cfg.batch // 2)
            logits, _, _ = model(xl)
            loss = loss + F.cross_entropy(logits.reshape(-1, logits.shape[-1]), yl.reshape(-1), ignore_index=-100)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        ema = bce.item() if ema is None else 0.95 * ema + 0.05 * bce.item()
        if step % 100 == 0 or step == cfg.value_steps:
            log(f"[value] step {step} bce {ema:.4f} ({cfg.value_mode})")
    model.eval()
    summary = {"rollout_success": float(rewards.mean()), "mode": cfg.value_mode, "labels": cfg.value_labels,
               "train_bce": float(ema or 0.0)}
    if held_idx.size:
        with torch.no_grad():
            finals, bces = [], []
            for i in range(0, held_idx.size, 256):
                idx = held_idx[i: i + 256]
                if joint:
                    x, mask, labels = prefix_batch(seqs, prompt_lens, cuts, idx)
                    _, hidden, _ = model(x)
                    vl = model.value_logit(hidden)
                    bces.append(F.binary_cross_entropy_with_logits(vl[mask], labels[mask], reduction="sum").item())
                    last = torch.as_tensor([len(seqs[j]) - 1 for j in idx])
                    finals.append(torch.sigmoid(vl[torch.arange(len(idx)), last]).numpy())
                else:
                    hidden, labels = head_batch(idx)
                    vl = model.value_logit(hidden)
                    bces.append(F.binary_cross_entropy_with_logits(vl, labels, reduction="sum").item())
                    ends = np.cumsum([len(feats[j]) for j in idx]) - 1
                    finals.append(torch.sigmoid(vl[torch.as_tensor(ends)]).numpy())
            n_pos = sum(len(seqs[j]) - prompt_lens[j] + 1 for j in held_idx)
            summary["heldout_bce"] = float(sum(bces) / n_pos)
            summary["heldout_auc_final"] = roc_auc(np.concatenate(finals), rewards[held_idx])
    log(f"[value] done in {time.perf_counter() - t0:.0f}s: " + ", ".join(
        f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in summary.items()))
    return summary


def _held_out(key: str) -> bool:
    """Whether a value problem is held out from the head's fit (a fifth of them, by hash)."""
    import hashlib

    return int.from_bytes(hashlib.blake2b(key.encode(), digest_size=4).digest(), "little") % 5 == 0
