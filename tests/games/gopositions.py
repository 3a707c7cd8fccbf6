"""Random Go positions shared by the engine tests."""

from __future__ import annotations

import numpy as np

from azero.games.base import NO_ACTION


def random_positions(game, batch, seed, plies, pass_weight=0.02):
    """States after up to `plies` random legal moves each (passes rare), seeded."""
    s = game.new_states(batch)
    rng = np.random.default_rng(seed)
    stop = rng.integers(plies // 4, plies + 1, size=batch)
    for ply in range(plies):
        m = s.legal_mask()
        r = rng.random(m.shape)
        r[:, -1] *= pass_weight
        a = np.where(m, r, -1).argmax(1).astype(np.int32)
        a[s.terminal() | (ply >= stop)] = NO_ACTION
        s.apply(a)
    return s
