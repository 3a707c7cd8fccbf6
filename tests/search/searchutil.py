"""Helpers shared by the search tests (a plain module: test files import it by name)."""

from __future__ import annotations

import numpy as np


def random_roots(game, batch: int, *, seed: int, max_plies: int, allow_terminal: bool = False):
    """A batch of positions reached by 0..max_plies uniformly random moves (non-terminal unless allowed)."""
    rng = np.random.default_rng(seed)
    states = game.new_states(batch)
    plies = rng.integers(0, max_plies + 1, size=batch)
    for step in range(max_plies):
        legal = states.legal_mask()
        terminal = states.terminal()
        actions = np.full(batch, -1, np.int32)
        for b in range(batch):
            if step < plies[b] and not terminal[b]:
                choices = np.flatnonzero(legal[b])
                candidate = int(rng.choice(choices))
                probe = states.take(np.array([b]))
                probe.apply(np.array([candidate], np.int32))
                if allow_terminal or not probe.terminal()[0]:
                    actions[b] = candidate
        states.apply(actions)
    return states


def assert_same(fast, slow):
    """Two SearchResults agree: counts, moves and priors exactly, float statistics to float32 rounding."""
    np.testing.assert_array_equal(fast.visits, slow.visits)
    np.testing.assert_array_equal(fast.action, slow.action)
    np.testing.assert_array_equal(fast.simulations, slow.simulations)
    np.testing.assert_array_equal(fast.prior, slow.prior)
    np.testing.assert_allclose(fast.policy, slow.policy, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(fast.q, slow.q, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(fast.value, slow.value, rtol=1e-6, atol=1e-7)
