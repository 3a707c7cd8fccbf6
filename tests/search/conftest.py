"""Shared helpers of the search tests."""

from __future__ import annotations

import numpy as np
import pytest

from azero.games import make_game


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


@pytest.fixture(scope="session")
def tictactoe():
    return make_game("tictactoe")


@pytest.fixture(scope="session")
def connect4():
    return make_game("connect4")


@pytest.fixture(scope="session")
def go9():
    return make_game("go9x9")
