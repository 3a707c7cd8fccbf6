"""Elo learning curve: a tournament's ratings of one run's checkpoints, placed on the run's
self-play positions and wall clock (azero/runs/clock.py).

The players that count are search players `mcts:<run>/checkpoints/ckpt_<step>...@SIMS`
(one curve per simulation budget); every other player of the tournament (random, a raw
network, GNU Go) is drawn as a horizontal reference line with its interval.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from azero.runs.clock import at_step, run_clock

_CKPT_PLAYER = re.compile(r"^mcts:(?P<path>.*ckpt_(?P<step>\d+)\.safetensors)@(?P<sims>\d+)(?::.*)?$")


class EloCurveError(ValueError):
    """A tournament or run directory that cannot give a curve; the message names it."""


def load_ratings(tournament_dir: Path) -> dict:
    path = Path(tournament_dir) / "elo.json"
    if not path.is_file():
        raise EloCurveError(f"{path} does not exist: run `azero tournament --out {tournament_dir}` first")
    try:
        doc = json.loads(path.read_text())
        players = doc["players"]
    except (ValueError, KeyError, TypeError) as e:
        raise EloCurveError(f"{path}: not an azero Elo table ({type(e).__name__}: {e})") from e
    return {"anchor": doc.get("anchor"), "players": players}


def elo_curve(tournament_dir: str | Path, run_dir: str | Path) -> dict:
    """{'curves': {sims: [{step, positions, hours, elo, low, high, games}]}, 'references': [...]}."""
    ratings = load_ratings(Path(tournament_dir))
    metrics = Path(run_dir) / "logs" / "metrics.jsonl"
    clock = run_clock(metrics)
    if not clock:
        raise EloCurveError(f"{metrics}: no training records, so checkpoints cannot be placed in time")
    curves: dict[int, list[dict]] = {}
    references = []
    for p in ratings["players"]:
        m = _CKPT_PLAYER.match(p["name"])
        if m is None:
            references.append({k: p.get(k) for k in ("name", "elo", "low", "high", "games")})
            continue
        step = int(m["step"])
        seconds, positions = at_step(clock, step)
        curves.setdefault(int(m["sims"]), []).append({
            "step": step, "positions": positions, "hours": None if seconds is None else seconds / 3600,
            "elo": p["elo"], "low": p.get("low"), "high": p.get("high"), "games": p.get("games")})
    if not curves:
        raise EloCurveError(f"{tournament_dir}: no player of the form mcts:.../ckpt_<step>.safetensors@SIMS")
    for pts in curves.values():
        pts.sort(key=lambda r: r["step"])
    return {"tournament": str(tournament_dir), "run_dir": str(run_dir), "anchor": ratings["anchor"],
            "curves": {str(s): pts for s, pts in sorted(curves.items())}, "references": references}


def plot_elo_curve(curve: dict, path: Path, *, title: str | None = None) -> None:
    from azero.eval.training_plot import CurvePoint, Reference, Series, plot_over_training

    series = [Series(f"network + {sims} simulations",
                     [CurvePoint(p["positions"], p["hours"], p["elo"], p["low"], p["high"]) for p in pts])
              for sims, pts in curve["curves"].items()]
    refs = [Reference(r["name"], r["elo"], r.get("low"), r.get("high")) for r in curve["references"]]
    plot_over_training(series, path, ylabel=f"Elo ({curve['anchor'] or 'anchor'} = 0), 95% CI", references=refs,
                       title=title or f"Elo over training: {curve['tournament']}", legend_loc="upper left")


def format_curve(curve: dict) -> str:
    lines = [f"{'sims':>5} {'step':>7} {'positions':>10} {'hours':>6} {'Elo':>6}  95% CI"]
    for sims, pts in curve["curves"].items():
        for p in pts:
            hours = f"{p['hours']:.2f}" if p["hours"] is not None else "?"
            ci = f"[{p['low']:.0f}, {p['high']:.0f}]" if p["low"] is not None else "(anchor)"
            positions = f"{p['positions']:,}" if p["positions"] is not None else "?"
            lines.append(f"{sims:>5} {p['step']:>7} {positions:>10} {hours:>6} {p['elo']:>6.0f}  {ci}")
    for ref in curve["references"]:
        ci = f"[{ref['low']:.0f}, {ref['high']:.0f}]" if ref.get("low") is not None else "(anchor)"
        lines.append(f"  reference {ref['name']}: {ref['elo']:.0f} {ci}")
    return "\n".join(lines)


def run_elo_curve(tournament_dir: str | Path, run_dir: str | Path, *, out: str | Path | None = None,
                  title: str | None = None, stdout=None) -> dict:
    curve = elo_curve(tournament_dir, run_dir)
    out_png = Path(out) if out else Path(tournament_dir) / "elo_curve.png"
    out_png.parent.mkdir(parents=True, exist_ok=True)
    plot_elo_curve(curve, out_png, title=title)
    out_png.with_suffix(".json").write_text(json.dumps(curve, indent=1) + "\n")
    print(format_curve(curve), file=stdout or sys.stdout)
    print(f"azero elo-curve: wrote {out_png} and {out_png.with_suffix('.json')}", file=sys.stderr)
    return curve
