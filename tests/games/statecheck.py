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


def random_positions(game, n, seed, max_plies):
    """`n` positions of `game` after up to `max_plies` uniformly random moves (seeded); a row whose
    game ends stays where it ended."""
    from azero.games.base import NO_ACTION

    rng = np.random.default_rng(seed)
    states = game.new_states(n)
    for _ in range(max_plies):
        legal = states.legal_mask()
        if not legal.any():
            break
        acts = np.array([rng.choice(np.flatnonzero(row)) if row.any() else NO_ACTION for row in legal],
                        dtype=np.int32)
        states.apply(acts)
    return states
