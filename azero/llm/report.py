"""The LLM decoding comparison (compare.run_compare's document) as a text table, JSON and a PNG of
accuracy against measured generated tokens, with each point's 95% Wilson interval."""

from __future__ import annotations

import json
from pathlib import Path

LABELS = {"greedy": "greedy", "sample": "sampling pass@1", "bon-value": "best-of-N (value head)",
          "bon-majority": "best-of-N (majority vote)", "bon-weighted": "weighted vote (value head)",
          "step-beam": "step beam (value head)", "dvts": "DVTS (value head)",
          "step-beam-weighted": "step beam (weighted vote)", "dvts-weighted": "DVTS (weighted vote)",
          "rebase": "REBASE (value head)", "rebase-weighted": "REBASE (weighted vote)",
          "oracle": "pass@N (oracle, verifier)",
          "beam": "beam search", "puct-token": "MCTS PUCT, token", "gumbel-token": "MCTS Gumbel, token",
          "puct-step": "MCTS PUCT, step", "gumbel-step": "MCTS Gumbel, step",
          "puct-step-weighted": "MCTS PUCT, step (weighted vote)",
          "gumbel-step-weighted": "MCTS Gumbel, step (weighted vote)"}
"""Table and legend name of each method."""


def format_table(doc: dict) -> str:
    """Accuracy (and generated tokens per problem) of every method at every budget, as text."""
    budgets = doc["budgets"]
    head = f"{'method':<28}" + "".join(f"{b:>14}" for b in budgets)
    lines = [f"task {doc['task']}, {doc['problems']} test problems; accuracy % [95% CI] (generated tokens/problem)",
             head]
    for name, entry in doc["methods"].items():
        pts = entry["points"]
        label = LABELS.get(name, name)
        if len(pts) == 1 and "budget" not in pts[0]:
            p = pts[0]
            lines.append(f"{label:<28}{100 * p['accuracy']:>6.1f} [{100 * p['ci'][0]:.0f}-{100 * p['ci'][1]:.0f}] "
                         f"({p['generated_tokens']:.0f} tokens, any budget)")
            continue
        by_b = {p["budget"]: p for p in pts}
        row = f"{label:<28}"
        for b in budgets:
            p = by_b.get(b)
            row += f"{'-':>14}" if p is None else f"{100 * p['accuracy']:>6.1f} ({p['generated_tokens']:>5.0f})"
        lines.append(row)
    reuse = []
    for name, entry in doc["methods"].items():
        p = entry["points"][-1]
        if p.get("forward_tokens"):
            reuse.append(f"{name} {p['forward_tokens_uncached'] / p['forward_tokens']:.1f}x")
    if reuse:
        lines.append("prefix cache, forward tokens re-encoding / with reuse (each method's largest budget): "
                     + ", ".join(reuse))
    if "kv_reuse" in doc:
        lines += kv_reuse_lines(doc["kv_reuse"])
    lines += interval_lines(doc)
    lines += bin_lines(doc)
    return "\n".join(lines)


def interval_lines(doc: dict) -> list[str]:
    """Each budget-point's 95% interval (and per-seed accuracies when there are several seeds)."""
    seeds = doc.get("seeds")
    lines = [f"95% intervals ({doc.get('interval', 'Wilson, over problems')})"
             + (f", seeds {', '.join(map(str, seeds))}:" if seeds else ":")]
    for name, entry in doc["methods"].items():
        cells = []
        for p in entry["points"]:
            at = f"{p['budget']}: " if "budget" in p else ""
            per_seed = (" (" + "/".join(f"{100 * a:.1f}" for a in p["seed_accuracy"]) + ")"
                        if "seed_accuracy" in p and len(p["seed_accuracy"]) > 1 else "")
            cells.append(f"{at}{100 * p['ci'][0]:.1f}-{100 * p['ci'][1]:.1f}{per_seed}")
        lines.append(f"  {LABELS.get(name, name)}: " + "; ".join(cells))
    return lines


def bin_lines(doc: dict, budget: int = 1024) -> list[str]:
    """Accuracy per difficulty bin (azero.llm.evaluation) at `budget` (or the nearest budget run)."""
    if "bins" not in doc:
        return []
    budgets = doc["budgets"]
    at = min(budgets, key=lambda b: (abs(b - budget), b))
    ranges = doc["bins"]["pass_rate_range"]
    head = "".join(f"{f'{k + 1} ({100 * lo:.0f}-{100 * hi:.0f}%)':>14}" for k, (lo, hi) in enumerate(ranges))
    lines = [f"accuracy % by difficulty bin at {at} tokens (bin: sampled pass@1 range, 1 = hardest; "
             f"{', '.join(map(str, doc['bins']['problems']))} problems)", f"{'method':<28}{head}"]
    for name, entry in doc["methods"].items():
        pts = [p for p in entry["points"] if p.get("budget", at) == at and "by_bin" in p]
        if pts:
            lines.append(f"{LABELS.get(name, name):<28}" + "".join(f"{100 * a:>14.1f}" for a in pts[0]["by_bin"]))
    return lines


def kv_reuse_lines(k: dict) -> list[str]:
    """The KV reuse check (kv_reuse_check's result) as text lines."""
    lines = [f"KV reuse (token PUCT, budget {k['budget']}): {k['forward_tokens_uncached']} forward tokens "
             f"re-encoding vs {k['forward_tokens_cached']} cached = {k['ratio']:.1f}x; "
             f"same answers: {k['same_answers']}"]
    if k.get("bounded"):
        kb = k["bounded"]
        lines.append(f"  holding at most {kb['kv_budget']} of the {k['kv_peak']} positions the cache peaks at: "
                     f"{kb['forward_tokens']} forward tokens ({kb['recomputed_tokens']} recomputed after "
                     f"eviction) = {kb['ratio']:.1f}x; same answers: {kb['same_answers']}")
    return lines


def write_outputs(doc: dict, out_dir: str | Path, *, stem: str = "compare") -> tuple[Path, Path]:
    """<out_dir>/<stem>.json (the document) and <stem>.png (accuracy vs generated tokens, 95% CIs)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path = out_dir / f"{stem}.json"
    json_path.write_text(json.dumps(doc, indent=1))
    fig, ax = plt.subplots(figsize=(11, 5.5))
    # tab20 and a marker cycle: the comparison draws more methods than the default 10 colours
    colours = iter(plt.get_cmap("tab20").colors)
    markers = "os^Dv<>ph*"
    for k, (name, entry) in enumerate(doc["methods"].items()):
        pts = entry["points"]
        label = LABELS.get(name, name)
        if len(pts) == 1 and "budget" not in pts[0]:
            p = pts[0]
            ax.axhline(100 * p["accuracy"], ls="--", lw=1, color="gray" if name == "greedy" else "tan", label=label)
            continue
        x = [p["generated_tokens"] for p in pts]
        y = [100 * p["accuracy"] for p in pts]
        lo = [100 * (p["accuracy"] - p["ci"][0]) for p in pts]
        hi = [100 * (p["ci"][1] - p["accuracy"]) for p in pts]
        style = {"ls": ":", "color": "black"} if name == "oracle" else {"color": next(colours)}
        ax.errorbar(x, y, yerr=[lo, hi], marker=markers[k % len(markers)], ms=4, capsize=3, label=label, **style)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("generated tokens per problem (measured)")
    ax.set_ylabel("test accuracy (%)")
    seeds = f", {len(doc['seeds'])} seeds" if doc.get("seeds") else ""
    ax.set_title(f"{doc['task']}: accuracy vs compute ({doc['problems']} test problems{seeds}, 95% intervals)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # beside the plot: no point hidden
    fig.tight_layout()
    png_path = out_dir / f"{stem}.png"
    fig.savefig(png_path, dpi=120)
    plt.close(fig)
    return json_path, png_path
