"""Issue 20: how far can any rule that picks by how often an answer was sampled and how the value
head rates it go? On one seed's sample pool at a budget, per test problem:

- the value-weighted vote's answer (search-and-learn's weighted best-of-N) and the oracle (pass@N);
- the Pareto ceiling: the share of problems where some correct answer is not beaten in both count
  and mean value by another answer. A rule that scores an answer by a function increasing in both
  (the weighted vote, count x mean value; count x mean value ** a for any a > 0) picks an answer on
  that front, so on these samples it is right at most there;
- on the problems the vote gets wrong while the pool holds a correct answer: the chosen wrong
  answer's and the best correct answer's sample count and mean value, how often the correct one is
  rated higher, and (Countdown and Game24) the first rule each chosen wrong answer breaks;
- the vote with each sample weighted by value ** a instead of the value (a = 1 is the vote).

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
    powers = {a: 100 * np.mean([pool.select(i, pool.count_for_budget(i, args.budget), "weighted", power=a)[0]
                                for i in range(len(problems))]) for a in (0.25, 0.5, 1, 2, 4, 8)}
    m = np.array(misses)
    n = len(problems)
    samples = np.mean([pool.count_for_budget(i, args.budget) for i in range(n)])
    print(f"{task.name}, {n} test problems, {args.budget} tokens (about {samples:.0f} samples), seed {args.seed}")
    print(f"  weighted vote {100 * vote / n:.1f}%, Pareto ceiling of (count, value) rules {100 * ceiling / n:.1f}%, "
          f"pass@N {100 * oracle / n:.1f}%")
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


if __name__ == "__main__":
    main()
