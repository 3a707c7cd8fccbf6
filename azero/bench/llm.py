"""`azero bench llm`: a transformers LM's forward through azero's adapter, with the output layer's rows
of the task's tokens only (what the searches read) vs the LM's own forward over its whole vocabulary.

Both heads run in one process on the same model (HFCausalLM.logits_head: 'task', the default where
it reproduces the LM's forward, or 'full', transformers' own forward and the peer here):

- prefill: whole sequences of task characters, `--batch` rows of `--length` tokens in one forward
  (what a judge scoring finished samples, or a value-head fit, runs), tokens/s;
- sampling: `sample_pool` on `--problems` problems of `--task` at `--budget` generated tokens each
  through LMEngine (cached decoding, the weighted vote's pool), generated tokens/s. Both heads
  draw the same samples from the same seed (printed), so the figures time the same work.

The heads alternate for --rounds rounds (the machine's drift hits both alike) and each figure is
the median. The last lines are `task head over full vocabulary: N.NNx` per measurement.
"""

from __future__ import annotations

import statistics
import time

import numpy as np
import torch


def _prefill_rate(model, tokens: torch.Tensor) -> float:
    t0 = time.perf_counter()
    with torch.no_grad():
        model(tokens)
    return tokens.numel() / (time.perf_counter() - t0)


def _sampling_rate(model, task, problems, budget: int, seed: int) -> tuple[float, list]:
    from azero.llm.baselines import sample_pool
    from azero.train.llm.engine import LMEngine

    t0 = time.perf_counter()
    pool = sample_pool(LMEngine(model), task, problems, budget=budget, seed=seed, temperature=0.7)
    generated = sum(int(n.sum()) for n in pool.lengths)
    return generated / (time.perf_counter() - t0), pool.keys


def run_llm_bench(model_path: str = "smollm2", *, task_name: str = "sum3", tokens: str = "auto", batch: int = 32,
                  length: int = 64, problems: int = 4, budget: int = 64, rounds: int = 3, threads: int = 2,
                  seed: int = 0) -> dict:
    from azero.search.llm.tasks import make_task
    from azero.train.llm.hf import load_hf_model

    if min(batch, length, problems, budget, rounds, threads) < 1:
        raise ValueError(f"batch, length, problems, budget, rounds and threads must be >= 1, got {batch}, {length}, "
                         f"{problems}, {budget}, {rounds}, {threads}")
    torch.set_num_threads(threads)
    model = load_hf_model(model_path, tokens=tokens, max_len=max(length, 256))
    if model.logits_head != "task":
        raise SystemExit(f"{model_path}: its logits are not a plain linear head of its decoder (scaled or soft-capped), "
                         f"so azero runs its own forward and there is nothing to compare")
    task = make_task(task_name)
    chars = np.flatnonzero(model.vocab.generatable)
    rng = np.random.default_rng(seed)
    seqs = torch.as_tensor(rng.choice(chars, size=(batch, length)))
    work = task.problems("test", problems, seed=seed)
    print(f"{model_path} ({model.num_params() / 1e6:.0f}M parameters, {model.cfg.model_vocab_size} tokens, "
          f"{model.vocab.size} task tokens), {threads} threads; prefill {batch} x {length} tokens; sampling "
          f"{problems} {task.name} problems x {budget} tokens; {rounds} alternating rounds, medians")
    rates: dict[str, dict[str, list[float]]] = {"prefill": {}, "sampling": {}}
    samples: dict[str, list] = {}
    for _ in range(rounds):
        for head in ("full", "task"):
            model.logits_head = head
            rates["prefill"].setdefault(head, []).append(_prefill_rate(model, seqs))
            rate, keys = _sampling_rate(model, task, work, budget, seed)
            rates["sampling"].setdefault(head, []).append(rate)
            samples[head] = keys
    model.logits_head = "task"
    # The heads compute the same logits up to float rounding, so the seeded samples should agree.
    same = sum(a == b for a, b in zip(samples["full"], samples["task"]))
    print(f"the same samples from the same seed on {same} of {len(work)} problems")
    out = {"same_samples": same}
    for what, unit in (("prefill", "tokens/s"), ("sampling", "generated tokens/s")):
        full, task_ = (statistics.median(rates[what][h]) for h in ("full", "task"))
        out[what] = {"full": full, "task": task_, "ratio": task_ / full}
        print(f"{what:9s} full vocabulary (transformers' forward) {full:9.1f} {unit}   task head {task_:9.1f} {unit}")
    for what in ("prefill", "sampling"):
        print(f"{what}: task head over full vocabulary: {out[what]['ratio']:.2f}x")
    return out
