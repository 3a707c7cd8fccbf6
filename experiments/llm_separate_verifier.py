"""Issue 20: is the judge limited by sharing its trunk with the LM? A separate verifier network
against the shipped joint value head, on the same samples.

The protocol's value head shares the LM's trunk and is fitted jointly (value BCE plus the LM's own
loss, so the policy stays what it was). search-and-learn's verifier is a model of its own. This
script copies the checkpoint and trains the copy on the value BCE alone (no LM loss: the whole
trunk may turn to judging), on `--value-problems` x 8 rollouts of the LM with outcome labels on
every answer prefix plus a second BCE term on the finished answer (the position the vote reads).
Then it draws one seed's sample pool of the original LM on test problems outside the protocol
(501 to 1,000 by default) and scores every sample with both heads: AUC over the samples and the
value-weighted vote at `--budget` tokens.

    python experiments/llm_separate_verifier.py docs/llm/value8x/countdown.safetensors --out /tmp/verifier.safetensors

About 30 minutes on 2 cores with the defaults (6 of them rollouts).
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
import torch
import torch.nn.functional as F

from azero.llm.baselines import sample_pool
from azero.search.llm.tasks import make_task
from azero.search.llm.vocab import vocab_of
from azero.train.llm.engine import LMEngine
from azero.train.llm.model import load_checkpoint, save_checkpoint
from azero.train.llm.train import TrainConfig, prefix_batch, value_rollouts


def train_verifier(model, task, *, value_problems: int, steps: int, lr: float, seed: int) -> None:
    """Fit the whole network on the value BCE (prefixes + finished answers), in place."""
    cfg = TrainConfig(value_problems=value_problems, rollouts=8, seed=seed)
    seqs, prompt_lens, rewards, _, cuts = value_rollouts(model, task, cfg)
    rng = np.random.default_rng(seed + 1)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    t0, ema = time.perf_counter(), None
    for step in range(1, steps + 1):
        for g in opt.param_groups:
            g["lr"] = lr * 0.5 * (1 + math.cos(math.pi * step / steps))
        model.train()
        idx = rng.choice(len(seqs), size=cfg.value_batch // 16)
        x, mask, labels = prefix_batch(seqs, prompt_lens, cuts, idx)
        _, hidden, _ = model(x)
        logits = model.value_logit(hidden)
        last = torch.as_tensor([len(seqs[i]) - 1 for i in idx])
        loss = F.binary_cross_entropy_with_logits(logits[mask], labels[mask]) + \
            F.binary_cross_entropy_with_logits(logits[torch.arange(len(idx)), last], torch.as_tensor(rewards[idx]))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        ema = loss.item() if ema is None else 0.95 * ema + 0.05 * loss.item()
        if step % 500 == 0 or step == steps:
            print(f"[verifier] step {step}/{steps} bce {ema:.4f} {time.perf_counter() - t0:.0f}s", flush=True)
    model.eval()


def verifier_scores(verifier, pool, prompts) -> list[np.ndarray]:
    """The verifier's P(correct) of every pooled sample, read where the pool's value was read:
    after the prompt and the sample's tokens."""
    engine = LMEngine(verifier)
    out = []
    for i, samples in enumerate(pool.tokens):
        seqs = [list(prompts[i]) + t for t in samples]
        out.append(np.asarray(engine.values(engine.extend(seqs, [len(prompts[i])] * len(seqs))), np.float64))
        engine.clear()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("ckpt", help="checkpoint from `azero llm train` (its LM draws the samples, its head is the baseline)")
    ap.add_argument("--out", required=True, help="where the verifier network is written (safetensors)")
    ap.add_argument("--value-problems", type=int, default=32768)
    ap.add_argument("--steps", type=int, default=10000)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--first-problem", type=int, default=500, help="test problems from here (the protocol's are 0-499)")
    ap.add_argument("--problems", type=int, default=500)
    ap.add_argument("--budget", type=int, default=1024)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    model, meta = load_checkpoint(args.ckpt)
    task = make_task(meta["task"])
    verifier, _ = load_checkpoint(args.ckpt)
    train_verifier(verifier, task, value_problems=args.value_problems, steps=args.steps, lr=args.lr, seed=args.seed)
    save_checkpoint(args.out, verifier, task=meta["task"], info={"separate_verifier": vars(args)})
    problems = task.problems("test", args.first_problem + args.problems, seed=0)[args.first_problem:]
    engine = LMEngine(model)
    pool = sample_pool(engine, task, problems, budget=args.budget, seed=args.seed)
    prompts = [vocab_of(engine).prompt(task, p) for p in problems]
    firsts = [pool.count_for_budget(i, args.budget) for i in range(len(problems))]
    print(f"{task.name}, test problems {args.first_problem}-{args.first_problem + args.problems - 1}, "
          f"{args.budget} tokens, seed {args.seed}: pass@N {100 * np.mean([pool.rewards[i][:n].max() for i, n in enumerate(firsts)]):.1f}%")
    for name, scores in (("joint value head", pool.values), ("separate verifier", verifier_scores(verifier, pool, prompts))):
        auc, vote = pool.judge(scores, args.budget)
        print(f"  {name}: AUC over the samples {auc:.3f}, weighted vote {vote:.1f}%")


if __name__ == "__main__":
    main()
