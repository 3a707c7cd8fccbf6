"""The field's evaluation protocol over `azero llm compare`: the same test problems under several
seeds, intervals that cover both problems and seeds, and accuracy per difficulty bin.

    doc = run_protocol(model, task, cfg, seeds=(0, 1, 2))     # cfg.problems, e.g. 500

Each seed reruns every method with its own random draws on the same problems (cfg.problem_seed,
default the first seed). A point's accuracy is the mean over seeds and problems; its 95%
interval is a two-stage bootstrap: problems are resampled with replacement, then seeds with
replacement, and the mean of the resampled (seed, problem) results taken, 2,000 times
(percentile interval). Problems and seeds are both sources of the spread it shows.

Difficulty, as in search-and-learn's compute-optimal analysis: a problem's difficulty is the
model's own sampled pass@1 on it (the sample pool's success rate, averaged over seeds), and the
problems are split into 5 equal-count bins, 1 the hardest. Every point gets its accuracy per bin.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Sequence

import numpy as np

from azero.llm.compare import CompareConfig, run_compare

BINS = 5
BOOTSTRAP = 2000


def bootstrap_interval(results: np.ndarray, *, seed: int = 0, draws: int = BOOTSTRAP) -> tuple[float, float]:
    """95% interval of the mean of `results` [seeds, problems] by resampling problems, then seeds."""
    r = np.asarray(results, np.float64)
    S, n = r.shape
    rng = np.random.default_rng([seed, S, n])
    probs = rng.integers(n, size=(draws, n))
    seeds = rng.integers(S, size=(draws, S))
    means = r[seeds[:, :, None], probs[:, None, :]].mean(axis=(1, 2))
    lo, hi = np.percentile(means, [2.5, 97.5])
    return float(lo), float(hi)


def difficulty_bins(pass_rate: Sequence[float], bins: int = BINS) -> np.ndarray:
    """int [n]: each problem's bin, 0 the lowest pass rate (hardest), equal counts (ties by index)."""
    rate = np.asarray(pass_rate, np.float64)
    order = np.lexsort((np.arange(len(rate)), rate))
    out = np.empty(len(rate), np.int64)
    out[order] = np.arange(len(rate)) * bins // max(len(rate), 1)
    return out


def merge_seeds(docs: Sequence[dict], seeds: Sequence[int]) -> dict:
    """One results document from run_compare's documents of the same problems under `seeds`."""
    first = docs[0]
    doc = {k: v for k, v in first.items() if k not in ("methods", "pass_rate", "kv_reuse")}
    doc["seeds"] = list(seeds)
    doc["interval"] = "two-stage bootstrap over problems and seeds, 95% percentile"
    if "kv_reuse" in first:
        doc["kv_reuse"] = first["kv_reuse"]
    bins = None
    if all("pass_rate" in d for d in docs):
        rate = np.mean([d["pass_rate"] for d in docs], axis=0)
        bins = difficulty_bins(rate)
        doc["pass_rate"] = rate.tolist()
        doc["bins"] = {"count": BINS, "problems": np.bincount(bins, minlength=BINS).tolist(),
                       "pass_rate_range": [[float(rate[bins == b].min()), float(rate[bins == b].max())]
                                           for b in range(BINS)]}
    methods = {}
    for name, entry in first["methods"].items():
        points = []
        for j, p0 in enumerate(entry["points"]):
            # the same point of every seed (a width-limited point may be missing from some)
            same = [d["methods"][name]["points"] for d in docs if name in d["methods"]]
            key = p0.get("budget")
            pts = [next((q for q in ps if q.get("budget") == key), None) if key is not None else ps[0]
                   for ps in same]
            if any(q is None for q in pts):
                continue
            r = np.array([q["rewards"] for q in pts], np.float64)
            point = {k: float(np.mean([q[k] for q in pts])) for k, v in p0.items()
                     if isinstance(v, (int, float)) and not isinstance(v, bool)}
            if key is not None:
                point["budget"] = key
            point["accuracy"] = float(r.mean())
            point["ci"] = list(bootstrap_interval(r, seed=j))
            point["seed_accuracy"] = r.mean(axis=1).tolist()
            point["rewards"] = r.mean(axis=0).tolist()
            if bins is not None:
                point["by_bin"] = [float(r[:, bins == b].mean()) for b in range(BINS)]
            points.append(point)
        methods[name] = {"points": points}
    doc["methods"] = methods
    return doc


def run_protocol(model, task, cfg: CompareConfig, seeds: Sequence[int], *,
                 log: Callable[[str], None] = print) -> dict:
    """run_compare under every seed on the same problems, merged (module docstring)."""
    seeds = list(dict.fromkeys(int(s) for s in seeds))
    if not seeds:
        raise ValueError("run_protocol: give at least one seed")
    problem_seed = cfg.problem_seed if cfg.problem_seed is not None else seeds[0]
    docs = []
    for k, s in enumerate(seeds):
        log(f"[protocol] seed {s} ({k + 1}/{len(seeds)}), problems of seed {problem_seed}")
        run = dataclasses.replace(cfg, seed=s, problem_seed=problem_seed,
                                  kv_check=cfg.kv_check and k == 0)  # the reuse check once is enough
        docs.append(run_compare(model, task, run, log=log))
    return merge_seeds(docs, seeds)
