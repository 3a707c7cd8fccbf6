"""Issue 20: would a larger, pretrained network judge TinyGPT's answers better than its own value head?

SmolLM2-135M-Instruct (the azero[llm] extra; 100x TinyGPT's parameters, pretrained on text that
holds arithmetic) reads TinyGPT's Countdown / Game24 sequences one character per token (its
tokenizer writes digits one per token too) and stays frozen. A value head (the same two-layer MLP)
is fitted on its last hidden state after each finished rollout of TinyGPT, labelled by the outcome.
Then one seed's sample pool of TinyGPT on test problems outside the protocol (501 onwards) is scored
by both judges: AUC over the samples and the value-weighted vote at `--budget` tokens.

    python experiments/llm_pretrained_judge.py docs/llm/value8x/countdown.safetensors

About 9 minutes on 2 cores with the defaults, 23 with --value-problems 6144 --problems 100, 80 with
--value-problems 8192 --rollouts 8 --problems 200 (SmolLM2's forward passes are most of it).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
import torch.nn.functional as F

from azero.llm.baselines import sample_pool
from azero.search.llm.tasks import make_task
from azero.search.llm.vocab import vocab_of
from azero.train.llm.engine import LMEngine
from azero.train.llm.hf import load_hf_model
from azero.train.llm.model import load_checkpoint
from azero.train.llm.train import TrainConfig, value_rollouts


def last_hidden(judge, seqs: list[list[int]], batch: int = 64) -> torch.Tensor:
    """The judge's final hidden state [n, d] after each whole sequence (shortest first, so a batch
    pads little; causal attention keeps the padding after a sequence out of its last position)."""
    order = np.argsort([len(s) for s in seqs], kind="stable")
    out = torch.zeros(len(seqs), judge.cfg.d_model)
    t0 = time.perf_counter()
    with torch.no_grad():
        for b in range(0, len(seqs), batch):
            idx = order[b: b + batch]
            width = max(len(seqs[i]) for i in idx)
            x = torch.tensor([seqs[i] + [seqs[i][-1]] * (width - len(seqs[i])) for i in idx])
            _, hidden, _ = judge(x)
            out[torch.as_tensor(idx)] = hidden[torch.arange(len(idx)), torch.as_tensor([len(seqs[i]) - 1 for i in idx])]
            if (b // batch) % 20 == 0:
                print(f"[judge] {b + len(idx)}/{len(seqs)} sequences {time.perf_counter() - t0:.0f}s", flush=True)
    return out


def fit_head(head: torch.nn.Module, features: torch.Tensor, labels: np.ndarray, *, steps: int, seed: int) -> None:
    """Full-batch AdamW on the BCE of the head's logit (the features are fixed: cheap)."""
    torch.manual_seed(seed)
    y = torch.as_tensor(labels, dtype=torch.float32)
    opt = torch.optim.AdamW(head.parameters(), lr=3e-3, weight_decay=1e-2)
    for _ in range(steps):
        loss = F.binary_cross_entropy_with_logits(head(features).squeeze(-1), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("ckpt", help="TinyGPT checkpoint from `azero llm train` (its LM samples, its head is the baseline)")
    ap.add_argument("--value-problems", type=int, default=1536)
    ap.add_argument("--rollouts", type=int, default=2)
    ap.add_argument("--head-steps", type=int, default=1500)
    ap.add_argument("--first-problem", type=int, default=500, help="test problems from here (the protocol's are 0-499)")
    ap.add_argument("--problems", type=int, default=50)
    ap.add_argument("--budget", type=int, default=1024)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    model, meta = load_checkpoint(args.ckpt)
    task = make_task(meta["task"])
    judge = load_hf_model("smollm2", tokens="chars", max_len=model.cfg.max_len)
    seqs, _, rewards, _, _ = value_rollouts(model, task, TrainConfig(value_problems=args.value_problems,
                                                                     rollouts=args.rollouts, seed=args.seed))
    # The rollouts' sequences end with <eos> where finished, as the pool's samples below do.
    fit_head(judge.value_mlp, last_hidden(judge, seqs), rewards, steps=args.head_steps, seed=args.seed)
    problems = task.problems("test", args.first_problem + args.problems, seed=0)[args.first_problem:]
    engine = LMEngine(model)
    pool = sample_pool(engine, task, problems, budget=args.budget, seed=args.seed)
    prompts = [list(vocab_of(engine).prompt(task, p)) for p in problems]
    firsts = [pool.count_for_budget(i, args.budget) for i in range(len(problems))]
    flat = [prompts[i] + t for i, n in enumerate(firsts) for t in pool.tokens[i][:n]]
    with torch.no_grad():
        scored = judge.value(last_hidden(judge, flat)).numpy().astype(np.float64)
    ends = np.cumsum(firsts)
    smol = [scored[e - n: e] for e, n in zip(ends, firsts)]
    print(f"{task.name}, test problems {args.first_problem}-{args.first_problem + args.problems - 1}, {args.budget} "
          f"tokens, seed {args.seed}, {len(flat)} samples; head fitted on {len(seqs)} rollouts "
          f"(success {rewards.mean():.3f})")
    for name, scores in (("TinyGPT's joint value head", [v[:n] for v, n in zip(pool.values, firsts)]),
                         ("SmolLM2-135M, frozen, with a fitted head", smol)):
        auc, vote = pool.judge(scores, args.budget)
        print(f"  {name}: AUC over the samples {auc:.3f}, "
              f"weighted vote {vote:.1f}%")


if __name__ == "__main__":
    main()
