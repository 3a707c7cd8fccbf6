"""Issue 20: how far can any rule that picks by how often an answer was sampled and how the value
head rates it go? On one seed's sample pool at a budget, per test problem:

- the value-weighted vote's answer (search-and-learn's weighted best-of-N) and the oracle (pass@N);
- the Pareto ceiling: the share of problems where some correct answer is not beaten in both count
  and mean value by another answer. A rule that scores an answer by a function increasing in both
  (the weighted vote, count x mean value; count x mean value ** a for any a > 0) picks an answer on
  that front, so on these samples it is right at most there;
- on the problems the vote gets wrong while the pool holds a correct answer: the chosen wrong
  answer's and the best correct answer's sample count and mean value, how often the correct one is
  rated higher, and (Countdown and Game24) the first rule each chosen wrong answer breaks and how
  sure the LM was of the line that breaks it;
- the vote with each sample weighted by value ** a instead of the value (a = 1 is the vote);
- the generator's own confidence as the judge (DeepConf's offline vote, Fu et al. 2025, with a
  sample's confidence the probability of its least likely token): its AUC beside the value head's,
  and the vote weighted by it and by value x confidence.

    python experiments/llm_vote_ceiling.py docs/llm/value8x/countdown.safetensors --problems 500
"""

from __future__ import annotations

import argparse
from collections import Counter

import numpy as np

from azero.llm.baselines import sample_pool
from azero.search.llm.tasks import make_task
from azero.train.llm.engine import LMEngine
from azero.train.llm.model import load_checkpoint


def answer_groups(keys, values, rewards):
    """{answer key: (count, mean value, correct)} of one problem's samples (unparsable ones left out)."""
    groups: dict[str, list[int]] = {}
    for j, k in enumerate(keys):
        if k:
            groups.setdefault(k, []).append(j)
    return {k: (len(ix), float(np.mean(values[ix])), bool(rewards[ix[0]] > 0)) for k, ix in groups.items()}


def on_front(groups, key) -> bool:
    """Whether no other answer has at least the count and the mean value of `key`, one of them more."""
    c, v, _ = groups[key]
    return not any((c2 >= c and v2 >= v) and (c2 > c or v2 > v) for k2, (c2, v2, _) in groups.items() if k2 != key)


def line_confidence(task, problem, text: str, token_logprobs: np.ndarray) -> float:
    """The probability the LM gave the least likely token of the line where `text` breaks the task's
    rules (one token per character: TinyGPT's vocabulary); nan when no line is broken."""
    line = task.broken_line(problem, text)
    if line is None:
        return float("nan")
    lines = text.split("\n")
    start = sum(len(x) + 1 for x in lines[:line])
    span = token_logprobs[start: start + len(lines[line])]
    return float(np.exp(span.min())) if span.size else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("ckpt")
    ap.add_argument("--problems", type=int, default=500)
    ap.add_argument("--budget", type=int, default=1024)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    model, meta = load_checkpoint(args.ckpt)
    task = make_task(meta["task"])
    problems = task.problems("test", args.problems, seed=0)
    pool = sample_pool(LMEngine(model), task, problems, budget=args.budget, seed=args.seed)
    vote = ceiling = oracle = 0
    misses = []
    errors: Counter[str] = Counter()
    slip_confidence: list[float] = []
    for i in range(len(problems)):
        n = pool.count_for_budget(i, args.budget)
        rewards, values, keys = pool.rewards[i][:n], pool.values[i][:n], pool.keys[i][:n]
        right = pool.select(i, n, "weighted")[0] > 0
        vote += right
        oracle += rewards.max() > 0
        groups = answer_groups(keys, values, rewards)
        correct = [k for k, g in groups.items() if g[2]]
        ceiling += any(on_front(groups, k) for k in correct)
        if not right and correct:
            weight = {k: c * v for k, (c, v, _) in groups.items()}
            chosen = max(weight, key=weight.get)
            best = max(correct, key=lambda k: weight[k])
            misses.append((*groups[chosen][:2], *groups[best][:2]))
            if hasattr(task, "first_error"):
                j = keys.index(chosen)
                errors[task.first_error(problems[i], pool.texts[i][j])] += 1
                slip_confidence.append(line_confidence(task, problems[i], pool.texts[i][j], pool.token_logprobs[i][j]))
    powers = {a: 100 * np.mean([pool.select(i, pool.count_for_budget(i, args.budget), "weighted", power=a)[0]
                                for i in range(len(problems))]) for a in (0.25, 0.5, 1, 2, 4, 8)}
    # A slip the LM itself doubts would show as one unlikely token; the confidence is that token's p.
    confidence = [np.array([np.exp(lp.min()) if lp.size else 0.0 for lp in row]) for row in pool.token_logprobs]
    judges = {"value": pool.values, "confidence": confidence,
              "value x confidence": [v * c for v, c in zip(pool.values, confidence)]}
    judged = {name: pool.judge(scores, args.budget) for name, scores in judges.items()}
    m = np.array(misses)
    n = len(problems)
    samples = np.mean([pool.count_for_budget(i, args.budget) for i in range(n)])
    print(f"{task.name}, {n} test problems, {args.budget} tokens (about {samples:.0f} samples), seed {args.seed}")
    print(f"  weighted vote {100 * vote / n:.1f}%, Pareto ceiling of (count, value) rules {100 * ceiling / n:.1f}%, "
          f"pass@N {100 * oracle / n:.1f}%")
    print("  judge (AUC over samples, weighted vote): " + "; ".join(
        f"{k} {auc:.3f}, {acc:.1f}%" for k, (auc, acc) in judged.items()))
    print("  vote weighted by value ** a: " + ", ".join(f"a = {a:g}: {acc:.1f}%" for a, acc in powers.items()))
    if not len(m):
        print("  the vote is wrong nowhere a sample is right")
        return
    print(f"  vote wrong with a correct sample: {len(m)} problems; the chosen wrong answer: "
          f"{m[:, 0].mean():.1f} samples, mean value {m[:, 1].mean():.2f}; the best correct one: {m[:, 2].mean():.1f} samples, mean value "
          f"{m[:, 3].mean():.2f}; correct rated higher in {100 * np.mean(m[:, 3] > m[:, 1]):.0f}%, "
          f"sampled more in {100 * np.mean(m[:, 2] > m[:, 0]):.0f}%")
    if errors:
        print("  the chosen wrong answers break: " + ", ".join(f"{k} {v}" for k, v in errors.most_common()))
        slips = np.array([c for c in slip_confidence if np.isfinite(c)])
        if slips.size:
            print(f"  the LM wrote the broken line's least likely token at p {np.median(slips):.2f} (median); "
                  f"every token of it above 0.9 in {100 * np.mean(slips > 0.9):.0f}% of them")


if __name__ == "__main__":
    main()
