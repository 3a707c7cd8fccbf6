"""`azero bench llm`: a transformers LM's forward through azero's adapter, with the output layer's rows
of the task's tokens only (what the searches read) vs the LM's own forward over its whole vocabulary.

Both heads run in one process on the same model (HFCausalLM.logits_head: 'task', the default where
it reproduces the LM's forward, or 'full', transformers' own forward and the peer here):

- prefill: whole sequences of task characters, `--batch` rows of `--length` tokens in one forward
  (what a judge scoring finished samples, or a value-head fit, runs), tokens/s;
- sampling: `sample_pool` on `--problems` problems of `--task` at `--budget` generated tokens each
  through LMEngine (cached decoding, the weighted vote's pool), generated tokens/s. Both heads
  draw the same samples from the same seed (printed), so the figures time the same work.

On a CPU with native bf16 instructions a third arm runs the task head with the LM in bfloat16
(`--hf-precision bf16`); its samples may differ from float32's where two tokens' probabilities
round alike, so how many problems drew the same ones is printed beside it.

The arms alternate for --rounds rounds (the machine's drift hits all alike) and each figure is
the median. The last lines are `task head over full vocabulary: N.NNx` per measurement (and
`bf16 task head over float32 task head`).
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
    from azero.train.precision import cpu_has_native_bf16

    if min(batch, length, problems, budget, rounds, threads) < 1:
        raise ValueError(f"batch, length, problems, budget, rounds and threads must be >= 1, got {batch}, {length}, "
                         f"{problems}, {budget}, {rounds}, {threads}")
    torch.set_num_threads(threads)
    model = load_hf_model(model_path, tokens=tokens, max_len=max(length, 256))
    if model.logits_head != "task":
        raise SystemExit(f"{model_path}: its logits are not a plain linear head of its decoder (scaled or soft-capped), "
                         f"so azero runs its own forward and there is nothing to compare")
    bf16 = load_hf_model(model_path, tokens=tokens, max_len=max(length, 256), precision="bf16") \
        if cpu_has_native_bf16() else None
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
    arms = [("full", model), ("task", model)] + ([("bf16", bf16)] if bf16 is not None else [])
    for _ in range(rounds):
        for arm, m in arms:
            m.logits_head = "full" if arm == "full" else "task"
            rates["prefill"].setdefault(arm, []).append(_prefill_rate(m, seqs))
            rate, keys = _sampling_rate(m, task, work, budget, seed)
            rates["sampling"].setdefault(arm, []).append(rate)
            samples[arm] = keys
    model.logits_head = "task"
    # The heads compute the same logits up to float rounding, so the seeded samples should agree.
    same = sum(a == b for a, b in zip(samples["full"], samples["task"]))
    print(f"the same samples from the same seed on {same} of {len(work)} problems")
    out = {"same_samples": same}
    for what, unit in (("prefill", "tokens/s"), ("sampling", "generated tokens/s")):
        full, task_ = (statistics.median(rates[what][h]) for h in ("full", "task"))
        out[what] = {"full": full, "task": task_, "ratio": task_ / full}
        print(f"{what:9s} full vocabulary (transformers' forward) {full:9.1f} {unit}   task head {task_:9.1f} {unit}")
    if bf16 is not None:
        same16 = sum(a == b for a, b in zip(samples["task"], samples["bf16"]))
        for what, unit in (("prefill", "tokens/s"), ("sampling", "generated tokens/s")):
            out[what]["bf16"] = statistics.median(rates[what]["bf16"])
            out[what]["bf16_ratio"] = out[what]["bf16"] / out[what]["task"]
            print(f"{what:9s} task head, bf16 {out[what]['bf16']:9.1f} {unit}")
        print(f"bf16 drew float32's samples on {same16} of {len(work)} problems")
        out["bf16_same_samples"] = same16
    else:
        print("no bf16 arm: this CPU has no native bf16 instructions")
    for what in ("prefill", "sampling"):
        print(f"{what}: task head over full vocabulary: {out[what]['ratio']:.2f}x")
        if bf16 is not None:
            print(f"{what}: bf16 task head over float32 task head: {out[what]['bf16_ratio']:.2f}x")
    return out
