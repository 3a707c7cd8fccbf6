"""The resignation threshold, set from the no-resign games (AlphaGo Zero's automatic v_resign).

A fixed threshold is only as good as the value head's calibration in the low tail, and that
changes as the network trains: a Go 9x9 run warm-started from a trained network, at -0.9,
resigned 76-78% of its games, while in its first minutes 10-25% of the would-be resigners in
its no-resign games went on to win (7% over its 1.4 hours), and every such game teaches the
value head the wrong outcome. AlphaGo Zero instead picks v_resign so that
fewer than 5% of would-be resignations are false, measured on the 10% of games that never
resign.

Each no-resign game reports, per player, its *bleakest* value b: the lowest value v such that
the player's root value stayed below any threshold above v for `resign_consecutive` of its own
moves in a row (after resign_min_moves), i.e. the minimum over those windows of the window's
maximum. At threshold t that player would have resigned iff b < t, falsely iff it then did
not lose. The calibrator keeps the last `window` such (b, lost) pairs and returns the highest
threshold, at most the configured one, whose would-be resignations in the window are false
at most `target` of the time. It never resigns more eagerly than the configured threshold:
that stays the user's bound, and until `min_samples` pairs are in it is the threshold used.
"""

from __future__ import annotations

import math
from collections import deque

import numpy as np


def bleakest(values: list[float], consecutive: int) -> float:
    """The lowest threshold-crossing level of one player's own-move root values: min over every run
    of `consecutive` values of the run's max (inf when there are fewer values than that). A player
    resigns at threshold t iff this is below t."""
    if len(values) < consecutive:
        return math.inf
    v = np.asarray(values, np.float64)
    windows = np.lib.stride_tricks.sliding_window_view(v, consecutive)
    return float(windows.max(axis=1).min())


class ResignCalibrator:
    """The threshold from the recent no-resign games' (bleakest value, lost) pairs; see the module."""

    def __init__(self, threshold: float, target: float, window: int, *, min_samples: int = 50,
                 pairs: list | None = None):
        self.configured = float(threshold)
        self.target = float(target)
        self.min_samples = int(min_samples)
        self.pairs: deque[tuple[float, bool]] = deque(maxlen=int(window))
        for b, lost in pairs or ():
            self.pairs.append((float(b), bool(lost)))
        self._threshold = self._compute()

    def add(self, records) -> None:
        """Take the pairs of the finished games in `records` (GameRecords; only no-resign games have them)."""
        added = False
        for r in records:
            for b, lost in getattr(r, "bleakest", None) or ():
                if math.isfinite(b):
                    self.pairs.append((b, lost))
                    added = True
        if added:
            self._threshold = self._compute()

    @property
    def threshold(self) -> float:
        return self._threshold

    def false_rate(self, threshold: float | None = None) -> tuple[int, int]:
        """(false, would): in the window, the players below `threshold` (default: the current one) and
        how many of them did not lose."""
        t = self._threshold if threshold is None else threshold
        would = [lost for b, lost in self.pairs if b < t]
        return sum(not lost for lost in would), len(would)

    def _compute(self) -> float:
        if len(self.pairs) < self.min_samples:
            return self.configured
        pairs = np.array(sorted(self.pairs))  # [n, 2]: bleakest value, lost; by value
        b, false = pairs[:, 0], np.cumsum(pairs[:, 1] == 0)  # false[j-1]: among the j lowest
        # Resigning below t makes the j lowest resign for t in (b[j-1], b[j]] (b[n] = inf): each
        # interval's top, capped at the configured threshold, is a candidate. Tied values resign
        # together, so an interval that would split them is empty.
        top = np.append(b[1:], np.inf)
        j = np.arange(1, len(b) + 1)
        ok = (b < self.configured) & (top > b) & (false <= self.target * j)
        if not ok.any():
            return float(min(b[0], self.configured))  # j = 0: no one in the window would have resigned
        return float(min(top[ok][-1], self.configured))

    def state(self) -> dict:
        """What state.json keeps, so a resumed run starts from the same window."""
        return {"threshold": self._threshold, "pairs": [[round(b, 5), lost] for b, lost in self.pairs]}
