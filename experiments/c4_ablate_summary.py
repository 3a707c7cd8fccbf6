"""Table of the lever ablations: equal wall clock, one lever changed per run (runs/c4-ablate/*)."""
import json
import sys
from pathlib import Path

root = Path(sys.argv[1] if len(sys.argv) > 1 else "runs/c4-ablate")
print(f"{'run':<12} {'steps':>6} {'games':>7} {'positions':>10} {'raw':>22} {'puct@100':>22}")
for run in sorted(p for p in root.iterdir() if (p / "acc.json").is_file()):
    acc = {a["name"]: a["overall"] for a in json.loads((run / "acc.json").read_text())["agents"]}
    state = json.loads((run / "state.json").read_text())
    metrics = [json.loads(l) for l in (run / "logs" / "metrics.jsonl").read_text().splitlines() if l.strip()]
    last = metrics[-1]
    cell = lambda a: f"{100 * a['accuracy']:.1f}% [{100 * a['ci95'][0]:.1f}, {100 * a['ci95'][1]:.1f}]"
    print(f"{run.name:<12} {int(last.get('step', 0)):>6} {state['games_total']:>7} {int(last.get('positions', 0)):>10,} "
          f"{cell(acc['raw']):>22} {cell(acc['puct@100']):>22}")
