"""The connect-four learning curve: solver accuracy of every checkpoint of a run.

    azero c4-curve RUN_DIR [--sims 100] [--positions 250] [--out DIR]

For each RUN_DIR/checkpoints/ckpt_<step>.safetensors, the raw network and network +
search are scored by azero.eval.c4accuracy on the same seeded, solved test positions;
each point is placed at the trainer step, the self-play positions and the wall-clock
time the run had reached at that step (from RUN_DIR/logs/metrics.jsonl; a resumed run's
clock continues where it stopped). Writes curve.json and curve.png (accuracy with 95%
Wilson intervals against wall-clock hours and against self-play positions).
"""

from __future__ import annotations

import io
import json
import re
import sys
from pathlib import Path
from typing import IO, Sequence

from azero.runs.clock import at_step, run_clock

_CKPT = re.compile(r"^ckpt_(\d+)\.safetensors$")
CURVE_FORMAT = "azero-c4-curve-1"


def checkpoints(run_dir: Path) -> list[tuple[int, Path]]:
    folder = run_dir / "checkpoints"
    found = [(int(m.group(1)), p) for p in folder.glob("ckpt_*.safetensors") if (m := _CKPT.match(p.name))]
    if not found:
        raise FileNotFoundError(f"no checkpoints (ckpt_<step>.safetensors) in {folder}")
    return sorted(found)


def run_c4_curve(run_dir: str | Path, *, simulations: Sequence[int] = (100,), positions: int = 250,
                 depths: Sequence[int] = (8, 12, 16, 20), seed: int = 0, every: int = 1,
                 out: str | Path | None = None, threads: int | None = 1, cache_dir: str | Path | None = None,
                 device: str = "auto", precision: str = "auto", backend: str = "auto",
                 stdout: IO[str] | None = None, stderr: IO[str] | None = None) -> dict:
    from azero.eval.c4accuracy import run_c4_accuracy

    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    run_dir = Path(run_dir)
    out_dir = Path(out) if out is not None else run_dir / "eval" / "c4curve"
    clock = run_clock(run_dir / "logs" / "metrics.jsonl")
    points = []
    ckpts = checkpoints(run_dir)[::max(1, every)]
    for i, (step, path) in enumerate(ckpts):
        print(f"azero c4-curve: checkpoint {i + 1}/{len(ckpts)} (step {step})", file=stderr, flush=True)
        doc = run_c4_accuracy(checkpoint=str(path), simulations=simulations, positions=positions, depths=depths,
                              seed=seed, threads=threads, cache_dir=cache_dir, device=device,
                              precision=precision, backend=backend, stdout=io.StringIO(),
                              stderr=stderr)
        seconds, seen = at_step(clock, step)
        agents = {r["name"]: r["overall"] for r in doc["agents"]}
        points.append({"step": step, "checkpoint": str(path), "seconds": seconds, "positions": seen,
                       "agents": agents})
        line = "  ".join(f"{k} {100 * v['accuracy']:.1f}%" for k, v in agents.items() if k != "random")
        hours = f"{seconds / 3600:.2f} h" if seconds is not None else "? h"
        print(f"step {step:>6}  {hours:>7}  positions {seen if seen is not None else '?':>8}  {line}",
              file=stdout, flush=True)
    curve = {"format": CURVE_FORMAT, "run_dir": str(run_dir), "seed": seed, "positions_per_depth": positions,
             "depths": list(depths), "simulations": list(simulations), "points": points}
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "curve.json").write_text(json.dumps(curve, indent=1) + "\n")
    plot_curve(curve, out_dir / "curve.png")
    print(f"azero c4-curve: wrote {out_dir / 'curve.json'} and {out_dir / 'curve.png'}", file=stderr, flush=True)
    return curve


def plot_curve(curve: dict, path: Path) -> None:
    from azero.eval.training_plot import CurvePoint, Reference, Series, plot_over_training

    points = curve["points"]
    names = [n for n in points[0]["agents"] if n != "random"] if points else []
    series = []
    for name in names:
        pts = []
        for p in points:
            t = p["agents"][name]
            hours = p["seconds"] / 3600 if p["seconds"] is not None else None
            pts.append(CurvePoint(p["positions"], hours, 100 * t["accuracy"], 100 * t["ci95"][0], 100 * t["ci95"][1]))
        series.append(Series(name, pts))
    refs = [Reference("random", 100 * points[0]["agents"]["random"]["accuracy"])] if points else []
    plot_over_training(series, path, ylabel="moves keeping the solved value (%)", references=refs,
                       title=f"connect four vs the solver: {curve['positions_per_depth']} positions per depth "
                             f"{curve['depths']}, 95% CIs")
