"""Checks shared by the native engines' tests."""

from __future__ import annotations

import numpy as np


def snapshot(states) -> tuple:
    """Everything observable about a batch, to compare before/after a call."""
    return (states.encode().copy(), states.num_moves().copy(), states.to_play().copy(),
            states.terminal().copy(), states.outcome().copy(), states.legal_mask().copy())


def assert_same(a: tuple, b: tuple) -> None:
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


def exact_random_play_distribution(states) -> dict[float, float]:
    """P(outcome) when both players pick uniformly among legal moves, by enumerating every line."""
    probs = np.ones(len(states))
    dist = {1.0: 0.0, 0.0: 0.0, -1.0: 0.0}
    while len(states):
        m = states.legal_mask()
        b, a = np.nonzero(m)
        children = states.take(b)
        children.apply(a.astype(np.int32))
        p = probs[b] / m.sum(1)[b]
        done, z = children.terminal(), children.outcome()
        for v in dist:
            dist[v] += p[done & (z == v)].sum()
        keep = np.flatnonzero(~done)
        states, probs = children.take(keep), p[keep]
    return dist
