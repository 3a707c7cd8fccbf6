"""A run's clock: wall-clock seconds and self-play positions at each trainer step.

The logger's `time` restarts at 0 when a run is resumed, so the clock is continued across
resumes: a record whose time is below the previous one starts a new segment, offset by the
time the previous segment had reached. Learning curves (solver accuracy, Elo) use it to
place checkpoints on a wall-clock axis.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable

Clock = list[tuple[int, float, int]]
"""(step, elapsed seconds, positions) per metrics record, in log order."""


def clock_from_records(records: Iterable[dict]) -> Clock:
    rows, offset, last = [], 0.0, 0.0
    for rec in records:
        if "step" not in rec or "time" not in rec:
            continue
        t = float(rec["time"])
        if t < last:  # the logger restarted its clock: a resumed run
            offset += last
        last = t
        rows.append((int(rec["step"]), offset + t, int(rec.get("positions", 0))))
    return rows


def run_clock(metrics_path: Path) -> Clock:
    """The clock of RUN_DIR/logs/metrics.jsonl (empty when the file is missing)."""
    if not metrics_path.is_file():
        return []
    records = []
    for line in metrics_path.read_text().splitlines():
        try:
            records.append(json.loads(line))
        except ValueError:
            continue  # a line cut short by a crash
    return clock_from_records(records)


def at_step(clock: Clock, step: int) -> tuple[float | None, int | None]:
    """(seconds, positions) of the first record at or after `step` (None if the log stops before)."""
    for s, t, n in clock:
        if s >= step:
            return t, n
    return None, None
