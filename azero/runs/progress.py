"""Live progress for long runs: one line every few seconds to the terminal and
logs/progress.log, every tick as JSON in logs/metrics.jsonl, scalars to TensorBoard."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path


def _fmt_duration(seconds: float | None) -> str:
    if seconds is None or seconds != seconds or seconds == float("inf"):
        return "?"
    seconds = int(seconds)
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


class RunLogger:
    def __init__(self, logs_dir: Path, tb_dir: Path | None, *, every_s: float, total_steps: int,
                 start_step: int = 0, echo=None):
        self.every_s = every_s
        self.total_steps = total_steps
        self.start_step = start_step
        self.t0 = time.perf_counter()
        self.last = -1e9
        self._last_state = None
        self.echo = echo or (lambda line: print(line, file=sys.stdout, flush=True))
        self.time_left = None
        """Optional callable: wall seconds until a time budget stops the run (Budget.seconds_left);
        the ETA is the sooner of that and the steps' own."""
        logs_dir.mkdir(parents=True, exist_ok=True)
        self._progress = open(logs_dir / "progress.log", "a", buffering=1)
        self._metrics = open(logs_dir / "metrics.jsonl", "a", buffering=1)
        self._tb = None
        if tb_dir is not None:
            try:
                from torch.utils.tensorboard import SummaryWriter

                self._tb = SummaryWriter(str(tb_dir))
            except ImportError:  # tensorboard is a declared dependency; tolerate its absence anyway
                self.message("tensorboard is not installed: no event files will be written")

    def elapsed(self) -> float:
        return time.perf_counter() - self.t0

    def message(self, text: str) -> None:
        self.echo(text)
        self._progress.write(text + "\n")

    def scalars(self, step: int, values: dict[str, float]) -> None:
        if self._tb is not None:
            for k, v in values.items():
                if v is not None:
                    self._tb.add_scalar(k, v, step)

    def tick(self, step: int, line_fields: dict, metrics: dict, *, force: bool = False) -> None:
        now = time.perf_counter()
        if not force and now - self.last < self.every_s:
            return
        # The closing (forced) line repeats nothing: skip it when no step, game or position came
        # since the last line (only the clock and the running evals/s figure would differ).
        state = (step, metrics.get("games"), metrics.get("positions"))
        if force and state == self._last_state:
            return
        self._last_state = state
        self.last = now
        elapsed = now - self.t0
        done = step - self.start_step
        eta = (self.total_steps - step) * elapsed / done if done > 0 else None
        budget_left = self.time_left() if self.time_left is not None else None
        if budget_left is not None:
            eta = budget_left if eta is None else min(eta, budget_left)
        fields = " | ".join(str(v) for v in line_fields.values() if v)
        self.message(f"[{_fmt_duration(elapsed)}] step {step}/{self.total_steps} | {fields} | ETA {_fmt_duration(eta)}")
        self._metrics.write(json.dumps({"time": round(elapsed, 3), "step": step, **metrics}) + "\n")

    def close(self) -> None:
        if self._tb is not None:
            self._tb.close()
        self._progress.close()
        self._metrics.close()
