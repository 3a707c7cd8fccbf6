"""experiments/c4_misses.py's separation statistics: the AUC and the P(draw) means it reports."""

from __future__ import annotations

import numpy as np
import pytest

from evalutil import load_experiment


@pytest.fixture(scope="module")
def misses():
    return load_experiment("c4_misses")


def brute_auc(pos, neg):
    return np.mean([1.0 if p > n else 0.5 if p == n else 0.0 for p in pos for n in neg])


def test_auc_matches_counting_pairs_with_ties(misses):
    rng = np.random.default_rng(0)
    pos, neg = rng.integers(0, 5, 40).astype(float), rng.integers(0, 4, 30).astype(float)
    assert misses.auc(pos, neg) == pytest.approx(brute_auc(pos, neg))
    assert misses.auc(np.array([2.0, 3.0]), np.array([0.0, 1.0])) == 1.0
    assert misses.auc(np.array([0.0]), np.array([1.0])) == 0.0
    assert np.isnan(misses.auc(np.array([]), np.array([1.0])))


def test_separation_reports_draw_probabilities_only_for_a_wdl_head(misses):
    value = np.array([1, 1, 0, 0, -1])
    net_value = np.array([0.9, 0.2, 0.1, 0.3, -0.8])
    plain = misses.separation(value, net_value, None)
    assert plain == {"value AUC won vs drawn": 0.75}
    probs = np.array([[0.9, 0.1, 0.0], [0.4, 0.5, 0.1], [0.3, 0.6, 0.1], [0.5, 0.4, 0.1], [0.0, 0.1, 0.9]])
    wdl = misses.separation(value, net_value, probs)
    assert wdl["P(draw) won"] == pytest.approx(0.3) and wdl["P(draw) drawn"] == pytest.approx(0.5)
    assert wdl["P(draw) AUC drawn vs won"] == 0.75


def test_q_prefers_wrong_compares_with_visited_keeping_moves_only(misses):
    visits = np.array([[500, 300, 0], [500, 300, 0], [500, 0, 0]])
    q = np.array([[0.4, 0.2, 0.9], [0.1, 0.2, 0.0], [0.4, 0.0, 0.0]])
    keeps = np.array([[False, True, True], [False, True, False], [False, True, True]])
    chosen = np.array([0, 0, 0])
    # Row 0: the unvisited keeping move's Q (0.9) does not count; row 1: a keeping move reads higher;
    # row 2: no keeping move was visited.
    assert misses.q_prefers_wrong(visits, q, keeps, chosen).tolist() == [True, False, True]
