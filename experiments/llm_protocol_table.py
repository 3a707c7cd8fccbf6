"""The README's table of issue 20's protocol: accuracy % [95% interval] (generated tokens per
problem) at 1024 and 4096 tokens for each method, from the merged compare.json of each task.

    python experiments/llm_protocol_table.py [runs/llm]      (default: docs/llm, the shipped runs)
    python experiments/llm_protocol_table.py docs/llm/value8x   (the refitted value heads' protocol)

Each task's results are read from <folder>/protocol-<task> or, failing that, <folder>/compare-<task>;
a method neither task ran is left out.
"""

import json
import sys
from pathlib import Path

ROWS = [("greedy", "greedy"), ("bon-majority", "majority vote"), ("bon-weighted", "value-weighted vote"),
        ("step-beam-weighted", "step beam, weighted vote"), ("dvts-weighted", "DVTS, weighted vote"),
        ("bon-value", "best-of-N by value"), ("step-beam", "step beam, best by value"),
        ("dvts", "DVTS, best by value"), ("puct-step", "MCTS PUCT, step"), ("gumbel-step", "MCTS Gumbel, step"),
        ("rebase-weighted", "REBASE, weighted vote"), ("rebase", "REBASE, best by value"),
        ("oracle", "pass@N (oracle, not a method)")]
BUDGETS = (1024, 4096)


def cell(point: dict | None) -> str:
    if point is None:
        return "-"
    lo, hi = point["ci"]
    return f"{100 * point['accuracy']:.1f} [{100 * lo:.1f}, {100 * hi:.1f}] ({point['generated_tokens']:.0f})"


def main() -> None:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/llm")
    docs = {}
    for t in ("countdown", "game24"):
        folder = next((root / f"{kind}-{t}" for kind in ("protocol", "compare") if (root / f"{kind}-{t}").is_dir()),
                      root / f"protocol-{t}")
        docs[t] = json.loads((folder / "compare.json").read_text())
    head = [f"{doc['task']} @{b}" for doc in docs.values() for b in BUDGETS]
    print("| method | " + " | ".join(head) + " |")
    print("|---" * (len(head) + 1) + "|")
    for name, label in ROWS:
        if not any(name in doc["methods"] for doc in docs.values()):
            continue
        cells = []
        for doc in docs.values():
            pts = doc["methods"].get(name, {}).get("points", [])
            for b in BUDGETS:
                p = pts[0] if pts and "budget" not in pts[0] else next((q for q in pts if q.get("budget") == b), None)
                cells.append(cell(p))
        print(f"| {label} | " + " | ".join(cells) + " |")
    print()
    print("seeds: " + ", ".join(f"{doc['task']} {doc.get('seeds')}" for doc in docs.values()))


if __name__ == "__main__":
    main()
