"""`azero bench run`: whole self-play training runs, one per placement, at equal wall clock.

`azero bench selfplay` times the self-play workers alone; a run also trains, stores shards and
reloads weights, and how those share the cores is what a placement changes. So each arm here is a
real `azero selfplay` of the game's preset (plus the overrides given) from zero with the same seed,
in a process of its own, stopped by run.max_minutes; arms alternate over `rounds` rounds and the
medians are compared with the first arm (the peer):

    threads, pinned     the placement before: worker threads sharing one evaluator, OpenVINO's
                        threads pinned to cores (run.cpu_pinning=true)
    threads             worker threads, nothing pinned
    processes           a process per worker, the learner training beside them (run.worker_processes)

Figures from the run's own records: recorded positions and trainer steps per second of the run's
clock (the main loop's: start-up is not counted), and cores busy = the run's CPU seconds (its
worker processes' included) per wall second.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from azero.runs.clock import run_clock

ARMS = {
    "threads, pinned": ["run.worker_processes=false", "run.cpu_pinning=true"],
    "threads": ["run.worker_processes=false", "run.cpu_pinning=false"],
    "processes": ["run.worker_processes=true", "run.cpu_pinning=false"],
}


def run_arm(game: str, overrides: list[str], run_dir: Path, *, minutes: float, timeout_s: float) -> dict:
    """One self-play run of `minutes`; its positions/s, steps/s and cores busy."""
    cmd = [sys.executable, "-m", "azero.cli", "selfplay", "--game", game, "--run-dir", str(run_dir),
           f"run.max_minutes={minutes}", "train.steps=100000000", "run.log_every_s=2", *overrides]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
    if r.returncode != 0:
        raise RuntimeError(f"bench run: `{' '.join(cmd[3:])}` failed (rc {r.returncode}):\n{r.stderr[-2000:]}")
    clock = json.loads((run_dir / "state.json").read_text())["clock"]
    steps, _, positions = (run_clock(run_dir / "logs" / "metrics.jsonl") or [(0, 0.0, 0)])[-1]
    wall = max(float(clock["wall_s"]), 1e-9)
    return {"positions_per_s": positions / wall, "steps_per_s": steps / wall, "cores": float(clock["cpu_s"]) / wall,
            "positions": positions, "steps": steps, "wall_s": wall}


def run_run_bench(game: str = "connect4", *, minutes: float = 3.0, rounds: int = 1, arms: list[str] | None = None,
                  overrides: list[str] | None = None, log=print) -> dict:
    names = list(arms or ARMS)
    unknown = [a for a in names if a not in ARMS]
    if unknown:
        raise ValueError(f"bench run: unknown arm(s) {', '.join(unknown)}; choose from {', '.join(ARMS)}")
    if minutes <= 0 or rounds < 1:
        raise ValueError("bench run: need minutes > 0 and rounds >= 1")
    extra = list(overrides or [])
    log(f"azero bench run: {game} preset{' + ' + ' '.join(extra) if extra else ''}, {minutes:g} min per run from "
        f"zero, {rounds} round(s) alternating {', '.join(names)}; the first arm is the peer")
    results: dict[str, list[dict]] = {a: [] for a in names}
    with tempfile.TemporaryDirectory(prefix="azero-bench-run-") as tmp:
        for rnd in range(rounds):
            for a in names:
                res = run_arm(game, [*extra, *ARMS[a]], Path(tmp) / f"{rnd}-{len(results[a])}-{a.replace(', ', '-')}",
                              minutes=minutes, timeout_s=60 * minutes + 600)
                results[a].append(res)
                log(f"  round {rnd + 1}, {a:<16} {res['positions']:>9,} positions {res['steps']:>7,} steps "
                    f"in {res['wall_s']:.0f} s, {res['cores']:.2f} cores busy")
    med = {a: {k: statistics.median(r[k] for r in results[a]) for k in ("positions_per_s", "steps_per_s", "cores")}
           for a in names}
    peer = med[names[0]]
    log("  medians:")
    for a in names:
        m = med[a]
        log(f"    {a:<16} {m['positions_per_s']:8.1f} positions/s ({m['positions_per_s'] / max(peer['positions_per_s'], 1e-9):.2f}x)"
            f"   {m['steps_per_s']:6.2f} steps/s ({m['steps_per_s'] / max(peer['steps_per_s'], 1e-9):.2f}x)"
            f"   {m['cores']:.2f} cores busy")
    return {"game": game, "minutes": minutes, "rounds": rounds, "arms": names, "medians": med, "runs": results}
