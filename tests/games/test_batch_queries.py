"""The search's per-step native calls: load_paths (copy roots and replay paths into a scratch
batch) and query (legal mask, terminal, to_play and outcome in one call) agree with the
general interface (take + apply_paths, and the four separate queries)."""

import numpy as np
import pytest

from azero.games import make_game
from azero.games.base import NO_ACTION

from statecheck import random_positions

NATIVE = ["go9x9", "connect4", "tictactoe"]


def random_paths(game, roots, index, length, seed):
    """Legal random paths of up to `length` moves from roots[index] (NO_ACTION-padded)."""
    rng = np.random.default_rng(seed)
    walk = roots.take(index)
    paths = np.full((len(index), length), NO_ACTION, np.int32)
    for j in range(length):
        legal = walk.legal_mask()
        acts = np.array([rng.choice(np.flatnonzero(r)) if r.any() else NO_ACTION for r in legal], np.int32)
        paths[:, j] = acts
        walk.apply(acts)
    return paths


@pytest.mark.parametrize("name", NATIVE)
def test_load_paths_and_query_match_the_general_interface(name):
    game = make_game(name)
    A = game.spec.num_actions
    roots = random_positions(game, 12, seed=1, max_plies=40 if name == "go9x9" else 5)
    index = np.array([0, 3, 3, 7, 11, 5, 2, 9], np.int64)
    paths = random_paths(game, roots, index, 6, seed=2)
    scratch = game.new_states(10)
    scratch.load_paths(roots, index, paths)

    expected = roots.take(index)
    expected.apply_paths(paths)
    n = len(index)
    legal = np.ones((10, A), bool)
    terminal = np.ones(10, bool)
    to_play = np.full(10, 7, np.int8)
    outcome = np.full(10, 9.0, np.float32)
    scratch.query(n, legal, terminal, to_play, outcome)
    np.testing.assert_array_equal(legal[:n], expected.legal_mask())
    np.testing.assert_array_equal(terminal[:n], expected.terminal())
    np.testing.assert_array_equal(to_play[:n], expected.to_play())
    np.testing.assert_array_equal(outcome[:n], expected.outcome())
    # Rows from n on are left alone.
    assert legal[n:].all() and terminal[n:].all() and (to_play[n:] == 7).all() and (outcome[n:] == 9).all()
    assert terminal[:n].any() or name == "go9x9"  # short games end within the paths: both kinds are covered


@pytest.mark.parametrize("name", NATIVE)
def test_query_rejects_bad_buffers(name):
    game = make_game(name)
    A = game.spec.num_actions
    states = game.new_states(4)
    ok = dict(legal=np.zeros((4, A), bool), terminal=np.zeros(4, bool), to_play=np.zeros(4, np.int8),
              outcome=np.zeros(4, np.float32))
    for key, bad in [("legal", np.zeros((4, A + 1), bool)), ("legal", np.zeros((2, A), bool)),
                     ("terminal", np.zeros(4, np.int64)), ("to_play", np.zeros(4, np.int32)),
                     ("outcome", np.zeros(4, np.float64)), ("legal", np.zeros((4, 2 * A), bool)[:, ::2])]:
        with pytest.raises(ValueError, match=f"query: {key}"):
            states.query(4, **{**ok, key: bad})
    with pytest.raises(ValueError, match="n must lie in"):
        states.query(5, **ok)
