"""Turning a GTP clock into a simulation budget.

GTP's clock is Canadian byo-yomi (spec 4.2 and the time_settings command):
`main_time` seconds, then periods of `byo_yomi_time` seconds in which
`byo_yomi_stones` moves must be played. `byo_yomi_time > 0` with
`byo_yomi_stones = 0` means no time limit; `byo_yomi_time = 0` means absolute
time (main time only). `time_left colour t s` reports the clock: s = 0 while in
main time, otherwise the stones still to play in the current period.

Seconds for the next move:

    in byo-yomi:  t / s                          (the period's time spread over its stones)
    in main time: t / moves_left (+ byo_yomi_time / byo_yomi_stones when byo-yomi follows)
    moves_left  = max(MIN_MOVES_LEFT, (expected_length - moves_played) / 2)
    expected_length = 0.75 * N^2 + 40            (about 100 moves on 9x9, 310 on 19x19)

then at most the time left in the period minus a safety margin for transport
and start-up, times USABLE_FRACTION. MIN_MOVES_LEFT keeps a reserve for games
longer than expected (absolute time has nothing after it).

Seconds become simulations through a measured rate: an exponential moving
average of simulations per second over the searches run so far (a probe
search measures it before the first timed move). Search trees are rebuilt per
move, so the budget has to be fixed before a search starts.

When the controller never sends time_left, the clock is kept here from the
measured think times (wall time of each genmove), so an engine told
`time_settings` alone still runs out of neither main time nor byo-yomi.
"""

from __future__ import annotations

import dataclasses
import math

MIN_MOVES_LEFT = 8
USABLE_FRACTION = 0.9
SAFETY_SECONDS = 0.3
RATE_SMOOTHING = 0.3
"""Weight of the newest measurement in the moving average of simulations per second."""


@dataclasses.dataclass
class ClockState:
    """One colour's clock as last reported (or as kept here)."""

    seconds: float
    """Time left: in main time the main time left, in byo-yomi the time left in the period."""
    stones: int
    """0 in main time; else moves still to play in the current byo-yomi period."""


class TimeManager:
    """Clock bookkeeping plus the simulations-per-second estimate."""

    def __init__(self, *, time_per_move: float | None = None):
        if time_per_move is not None and not (time_per_move > 0 and math.isfinite(time_per_move)):
            raise ValueError(f"time_per_move must be a positive number of seconds, got {time_per_move!r}")
        self.time_per_move = time_per_move
        self.main_time = 0.0
        self.byo_time = 0.0
        self.byo_stones = 0
        self.limited = False
        """True once time_settings announced a clock that can run out."""
        self.clocks: dict[int, ClockState] = {}
        self.rate: float | None = None
        """Simulations per second (moving average); None until the first measurement."""

    # ------------------------------------------------------------------ GTP commands
    def set_settings(self, main_time: float, byo_time: float, byo_stones: int) -> None:
        """time_settings: a new clock for both colours."""
        self.main_time, self.byo_time, self.byo_stones = float(main_time), float(byo_time), int(byo_stones)
        self.limited = not (byo_time > 0 and byo_stones == 0)
        self.reset_clocks()

    def reset_clocks(self) -> None:
        """Both colours back to the start of the clock (time_settings, clear_board)."""
        if not self.limited:
            self.clocks = {}
        elif self.main_time > 0:
            self.clocks = {c: ClockState(self.main_time, 0) for c in (0, 1)}
        else:
            self.clocks = {c: ClockState(self.byo_time, self.byo_stones) for c in (0, 1)}

    def set_time_left(self, colour: int, seconds: float, stones: int) -> None:
        """time_left: the controller's clock overrides ours."""
        self.clocks[colour] = ClockState(max(0.0, float(seconds)), max(0, int(stones)))

    # ------------------------------------------------------------------ budgeting
    def move_seconds(self, colour: int, moves_played: int, board_size: int) -> float | None:
        """Seconds to think about the next move of `colour`; None means no limit applies."""
        budget = self.time_per_move
        clock = self.clocks.get(colour) if self.limited else None
        if clock is None:
            return budget
        if clock.stones > 0:
            per_move = clock.seconds / clock.stones
        else:
            expected = 0.75 * board_size * board_size + 40
            moves_left = max(MIN_MOVES_LEFT, (expected - moves_played) / 2)
            per_move = clock.seconds / moves_left
            if self.byo_time > 0 and self.byo_stones > 0:
                per_move += self.byo_time / self.byo_stones
        per_move = min(per_move, clock.seconds - SAFETY_SECONDS) * USABLE_FRACTION
        per_move = max(per_move, 0.0)
        return per_move if budget is None else min(budget, per_move)

    def simulations(self, seconds: float | None, cap: int) -> int:
        """Simulations for a move: `cap` when no time limit applies, else what fits in `seconds` at the
        measured rate, at most `cap` and at least 1 (one simulation: the prior's favourite checked
        once). The caller measures the rate (a probe search) before the first timed move."""
        if seconds is None or self.rate is None:
            return max(1, cap)
        fits = self.rate * seconds  # inf for a clock like time_settings 1e308: int() of it would raise
        return max(1, cap if not math.isfinite(fits) or fits >= cap else int(fits))

    def record_search(self, simulations: int, seconds: float) -> None:
        """Fold one search's speed into the rate estimate.

        Every search counts, however fast: skipping those under a millisecond (as this once did)
        left the rate unmeasured on a fast machine, and an unmeasured rate means the full budget
        even with 0.05 s on the clock. A zero reading (a coarse clock) counts as one microsecond."""
        if simulations < 1:
            return
        rate = simulations / max(seconds, 1e-6)
        self.rate = rate if self.rate is None else (1 - RATE_SMOOTHING) * self.rate + RATE_SMOOTHING * rate

    def spend(self, colour: int, seconds: float) -> None:
        """Charge a move's think time to our own clock (until the controller's next time_left)."""
        clock = self.clocks.get(colour) if self.limited else None
        if clock is None:
            return
        clock.seconds -= seconds
        if clock.stones == 0:
            if clock.seconds > 0:
                return
            # Main time is over: byo-yomi begins with what was overspent charged to the first period.
            if self.byo_time > 0 and self.byo_stones > 0:
                clock.seconds += self.byo_time
                clock.stones = self.byo_stones
            clock.seconds = max(clock.seconds, 0.0)
            return
        clock.stones -= 1
        if clock.stones == 0:
            clock.seconds, clock.stones = self.byo_time, self.byo_stones  # a new period
        clock.seconds = max(clock.seconds, 0.0)
