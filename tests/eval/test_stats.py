"""The one Wilson interval of the project (azero.eval.stats), used by the board-game compute curve,
the c4 accuracy report and the LLM decoding comparison."""

import pytest

from azero.eval.stats import wilson_interval


def test_wilson_interval_known_values():
    lo, hi = wilson_interval(0.5, 100)
    assert lo == pytest.approx(0.4038, abs=1e-4) and hi == pytest.approx(0.5962, abs=1e-4)
    lo, hi = wilson_interval(1.0, 10)  # all wins: the interval stays inside [0, 1] and is not a point
    assert hi == 1.0 and lo == pytest.approx(0.7225, abs=1e-4)
    assert wilson_interval(0.0, 10)[0] == 0.0 and wilson_interval(0.0, 10)[1] > 0.0
    assert wilson_interval(0.0, 0) == (0.0, 1.0)


def test_wilson_interval_contains_the_estimate_and_narrows_with_n():
    for p in (0.0, 0.1, 0.37, 0.5, 0.9, 1.0):
        widths = []
        for n in (10, 100, 1000):
            lo, hi = wilson_interval(p, n)
            assert 0.0 <= lo <= p <= hi <= 1.0
            widths.append(hi - lo)
        assert widths == sorted(widths, reverse=True)
