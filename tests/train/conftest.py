"""Small games and data shared by the train tests."""

from __future__ import annotations

import numpy as np
import pytest

from azero.games.base import GameSpec

# 5x5 board plus a pass action, full dihedral symmetry: small enough for a 2-core CI box,
# big enough that every one of the 8 transforms moves points.
BOARD = 5
SPEC = GameSpec(name="test5x5", num_actions=BOARD * BOARD + 1, obs_shape=(3, BOARD, BOARD),
                board_shape=(BOARD, BOARD), max_moves=50, pass_action=BOARD * BOARD, symmetry="dihedral8")


def make_positions(rng: np.random.Generator, n: int, spec: GameSpec = SPEC) -> dict[str, np.ndarray]:
    """n positions whose observation encodes its own targets, so transforms can be checked.

    plane 0: one-hot at the point where pi is largest; plane 1: the legal points;
    plane 2: 0/1 noise. pi puts 0.5 on that point, 0.1 on pass, the rest on other legal points.
    """
    c, h, w = spec.obs_shape
    points = h * w
    legal = rng.random((n, spec.num_actions)) < 0.6
    legal[:, points] = True  # pass is always legal
    best = np.empty(n, np.int64)
    for i in range(n):
        best[i] = rng.choice(np.flatnonzero(legal[i, :points])) if legal[i, :points].any() else 0
        legal[i, best[i]] = True
    pi = rng.random((n, spec.num_actions)).astype(np.float32) * legal
    pi[np.arange(n), best] = 0.0
    pi[:, points] = 0.0
    pi *= 0.4 / pi.sum(axis=1, keepdims=True)
    pi[np.arange(n), best] = 0.5
    pi[:, points] = 0.1
    obs = np.zeros((n, c, h, w), np.float32)
    obs[np.arange(n), 0, best // w, best % w] = 1.0
    obs[:, 1] = legal[:, :points].reshape(n, h, w)
    obs[:, 2] = rng.random((n, h, w)) < 0.5
    z = rng.choice(np.array([-1.0, 0.0, 1.0], np.float32), size=n)
    return {"obs": obs, "pi": pi.astype(np.float32), "z": z, "legal": legal}


@pytest.fixture
def spec() -> GameSpec:
    return SPEC


@pytest.fixture
def positions():
    """make_positions(rng, n, spec=SPEC) as a fixture, so test modules need not import conftest."""
    return make_positions
