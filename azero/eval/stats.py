"""Confidence intervals shared by every comparison (board-game compute curves, c4 accuracy,
the LLM decoding comparison).

Wilson score interval (Wilson 1927) of a proportion p observed over n trials:
    (p + z^2/2n -+ z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n),   z = 1.96 for 95%,
which, unlike p -+ z sqrt(p(1-p)/n), stays inside [0, 1] and is sensible at p = 0 or 1.
"""

from __future__ import annotations

import math

Z95 = 1.959963984540054
"""Two-sided 95% quantile of the standard normal."""


def wilson_interval(score: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a proportion `score` observed over n trials ((0, 1) when n = 0)."""
    if n <= 0:
        return 0.0, 1.0
    p = min(max(score, 0.0), 1.0)
    z2n = z * z / n
    center = (p + z2n / 2) / (1 + z2n)
    half = z * math.sqrt(p * (1 - p) / n + z2n / (4 * n)) / (1 + z2n)
    # at p = 0 or 1 one end is exactly 0 or 1; rounding must not turn it into 1 - 1e-16 (a finite Elo)
    low = 0.0 if p == 0.0 else max(0.0, center - half)
    high = 1.0 if p == 1.0 else min(1.0, center + half)
    return low, high
