"""The field's evaluation protocol over `azero llm compare`: the same test problems under several
seeds, intervals that cover both problems and seeds, and accuracy per difficulty bin.

    doc = run_protocol(model, task, cfg, seeds=(0, 1, 2))     # cfg.problems, e.g. 500

Each seed reruns every method with its own random draws on the same problems (cfg.problem_seed,
default the first seed). A point's accuracy is the mean over seeds and problems; its 95%
interval is a two-stage bootstrap: problems are resampled with replacement, then seeds with
replacement, and the mean of the resampled (seed, problem) results taken, 2,000 times
(percentile interval). Problems and seeds are both sources of the spread it shows.

With `parts` (a folder; `azero llm compare --seeds` uses <out>/parts) every seed's methods are
run in groups (greedy with the sample-pool methods, then each other method alone) and each group's
result is written there as it finishes, so a protocol of hours that is stopped resumes at the
group it was in. A part is reused only if it was run with the same task, problems and budgets.

Difficulty, as in search-and-learn's compute-optimal analysis: a problem's difficulty is the
model's own sampled pass@1 on it (the sample pool's success rate, averaged over seeds), and the
problems are split into 5 equal-count bins, 1 the hardest. Every point gets its accuracy per bin.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from azero.llm.compare import SEARCH_METHODS, CompareConfig, run_compare

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


POOL_METHODS = ("greedy", "sample", "bon-value", "bon-majority", "bon-weighted", "oracle")
"""Methods that share one run: greedy and everything read off the one sample pool."""


def method_groups(methods: Sequence[str]) -> list[tuple[str, ...]]:
    """`methods` split into the groups run_protocol runs and saves one at a time: the pool methods
    together, a step baseline with its weighted-vote twin (one run answers both), the rest alone."""
    pool = tuple(m for m in methods if m in POOL_METHODS)
    groups = [pool] if pool else []
    for m in methods:
        if m in POOL_METHODS:
            continue
        base = m.removesuffix("-weighted")
        j = next((k for k, g in enumerate(groups) if g[0].removesuffix("-weighted") == base), None)
        if base in ("step-beam", "dvts", "rebase") and j is not None:
            groups[j] += (m,)
        else:
            groups.append((m,))
    return groups


def _part_key(task, cfg: CompareConfig, seed: int, model_id: str) -> dict:
    """What a saved part must match to be reused: everything that changes its numbers but the methods."""
    key = dataclasses.asdict(dataclasses.replace(cfg, seed=seed, methods=(), kv_check=False))
    key["task"] = task.name
    key["model"] = model_id
    return json.loads(json.dumps(key))  # tuples as lists, as they come back from disk


def _same_key(saved: dict, key: dict) -> bool:
    """Whether a saved part's key matches: a setting the saved key lacks (a field added to
    CompareConfig since) counts as its default, so older parts stay valid for unchanged settings."""
    defaults = json.loads(json.dumps(dataclasses.asdict(CompareConfig())))
    return set(saved) <= set(key) and all(saved.get(k, defaults.get(k)) == v for k, v in key.items())


def _merge_groups(docs: Sequence[dict]) -> dict:
    """One run_compare document from the documents of its method groups (same seed and problems)."""
    doc = dict(docs[0])
    doc["methods"] = {}
    for d in docs:
        doc["methods"].update(d["methods"])
        for k in ("pass_rate", "kv_reuse"):
            if k in d:
                doc[k] = d[k]
    return doc


def run_protocol(model, task, cfg: CompareConfig, seeds: Sequence[int], *,
                 log: Callable[[str], None] = print, parts: Path | None = None, model_id: str = "") -> dict:
    """run_compare under every seed on the same problems, merged (module docstring). `model_id` names
    the model (and value head) in the saved parts' key, so another model's parts are not reused."""
    seeds = list(dict.fromkeys(int(s) for s in seeds))
    if not seeds:
        raise ValueError("run_protocol: give at least one seed")
    problem_seed = cfg.problem_seed if cfg.problem_seed is not None else seeds[0]
    if parts is not None:
        parts = Path(parts)
        parts.mkdir(parents=True, exist_ok=True)
    docs = []
    for k, s in enumerate(seeds):
        log(f"[protocol] seed {s} ({k + 1}/{len(seeds)}), problems of seed {problem_seed}")
        run = dataclasses.replace(cfg, seed=s, problem_seed=problem_seed)
        groups = method_groups(cfg.methods) if parts is not None else [tuple(cfg.methods)]
        # the KV reuse check once is enough: with the first seed's first group holding a search
        check_group = next((g for g in groups if any(m in SEARCH_METHODS for m in g)), None)
        key = _part_key(task, run, s, model_id)
        group_docs = []
        for group in groups:
            path = parts / f"seed{s}-{'+'.join(group)}.json" if parts is not None else None
            if path is not None and path.exists():
                saved = json.loads(path.read_text())
                if _same_key(saved.get("key", {}), key):
                    log(f"[protocol] seed {s}: {', '.join(group)} done before ({path.name})")
                    group_docs.append(saved["doc"])
                    continue
                log(f"[protocol] {path.name} was run with other settings: running it again")
            doc = run_compare(model, task, dataclasses.replace(
                run, methods=group, kv_check=cfg.kv_check and k == 0 and group == check_group), log=log)
            if path is not None:
                tmp = path.with_suffix(".tmp")
                tmp.write_text(json.dumps({"key": key, "doc": doc}))
                tmp.replace(path)  # a stop mid-write never leaves a truncated part
            group_docs.append(doc)
        docs.append(_merge_groups(group_docs))
    return merge_seeds(docs, seeds)
