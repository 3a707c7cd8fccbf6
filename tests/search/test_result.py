"""Move choice from visit counts."""

from __future__ import annotations

import numpy as np

from azero.search.result import most_visited, sample_by_visits, visit_policy


def test_most_visited_breaks_ties_by_lowest_action():
    visits = np.array([[1, 5, 5, 0], [0, 0, 0, 0], [0, 0, 0, 3]], np.int32)
    assert most_visited(visits).tolist() == [1, -1, 3]
    assert sample_by_visits(visits, 0.0, np.random.default_rng(0)).tolist() == [1, -1, 3]
    np.testing.assert_allclose(visit_policy(visits)[0], [1 / 11, 5 / 11, 5 / 11, 0])
    assert (visit_policy(visits)[1] == 0).all()


def test_sampling_follows_visits_to_the_power_one_over_t():
    rng = np.random.default_rng(1)
    visits = np.tile(np.array([[0, 10, 30, 60]], np.int32), (20000, 1))
    for t, expected in [(1.0, [0, 0.1, 0.3, 0.6]), (0.5, np.array([0, 100, 900, 3600]) / 4600)]:
        counts = np.bincount(sample_by_visits(visits, t, rng), minlength=4) / len(visits)
        np.testing.assert_allclose(counts, expected, atol=0.015)
    # Tiny temperatures do not overflow: they approach the argmax.
    assert (sample_by_visits(visits[:100], 0.01, rng) == 3).all()
