"""Symmetries: group laws, agreement with numpy's rotations, obs/policy consistency,
and commutation with the rules of the native games on real positions."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from azero.games import NO_ACTION, GameSpec, make_game
from azero.games.symmetry import random_symmetry, symmetries


def _spec(name, board_shape, num_actions, symmetry, pass_action=None):
    h, w = board_shape
    return GameSpec(name=name, num_actions=num_actions, obs_shape=(3, h, w), board_shape=board_shape,
                    max_moves=100, pass_action=pass_action, symmetry=symmetry)


GO5 = _spec("go5", (5, 5), 26, "dihedral8", pass_action=25)
TTT = _spec("ttt", (3, 3), 9, "dihedral8")
MIRROR_POINTS = _spec("mirror4x6", (4, 6), 24, "mirror_lr")
COLUMNS = _spec("c4", (6, 7), 7, "mirror_lr")
NONE = _spec("none", (4, 5), 31, "none")
SPECS = [GO5, TTT, MIRROR_POINTS, COLUMNS, NONE]
IDS = [s.name for s in SPECS]


def _random_obs(spec, rng, batch=3):
    return rng.standard_normal((batch, *spec.obs_shape)).astype(np.float32)


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_group_sizes_and_identity_first(spec):
    syms = symmetries(spec)
    assert len(syms) == {"dihedral8": 8, "mirror_lr": 2, "none": 1}[spec.symmetry]
    ident = syms[0]
    assert ident.name == "identity"
    np.testing.assert_array_equal(ident.action_map, np.arange(spec.num_actions))
    x = _random_obs(spec, np.random.default_rng(0))
    np.testing.assert_array_equal(ident.apply_obs(x), x)


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_inverse_undoes_transform(spec):
    rng = np.random.default_rng(1)
    x = _random_obs(spec, rng)
    pi = rng.random((4, spec.num_actions))
    for s in symmetries(spec):
        np.testing.assert_array_equal(s.inverse.apply_obs(s.apply_obs(x)), x, err_msg=s.name)
        np.testing.assert_array_equal(s.apply_obs(s.inverse.apply_obs(x)), x, err_msg=s.name)
        np.testing.assert_array_equal(s.inverse.apply_policy(s.apply_policy(pi)), pi, err_msg=s.name)
        np.testing.assert_array_equal(s.inverse.action_map[s.action_map], np.arange(spec.num_actions))
        assert s.inverse.inverse is s


def test_dihedral_transforms_match_numpy_and_are_distinct():
    x = np.arange(2 * 3 * 5 * 5, dtype=np.float32).reshape(2, 3, 5, 5)
    expected = {
        "identity": x,
        "rot90": np.rot90(x, 1, axes=(-2, -1)),
        "rot180": np.rot90(x, 2, axes=(-2, -1)),
        "rot270": np.rot90(x, 3, axes=(-2, -1)),
        "flip_lr": x[..., ::-1],
        "flip_ud": x[..., ::-1, :],
        "transpose": np.swapaxes(x, -1, -2),
        "antitranspose": np.rot90(np.swapaxes(x, -1, -2), 2, axes=(-2, -1)),
    }
    syms = symmetries(GO5)
    assert [s.name for s in syms] == list(expected)
    outs = []
    for s in syms:
        y = s.apply_obs(x)
        np.testing.assert_array_equal(y, expected[s.name], err_msg=s.name)
        outs.append(y.tobytes())
    assert len(set(outs)) == 8
    assert len({s.action_map.tobytes() for s in syms}) == 8


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_group_is_closed_under_composition(spec):
    syms = symmetries(spec)
    x = np.arange(np.prod(spec.obs_shape), dtype=np.float32).reshape(1, *spec.obs_shape)
    for s in syms:
        for t in syms:
            composed_obs = t.apply_obs(s.apply_obs(x))
            composed_map = t.action_map[s.action_map]  # a -> s(a) -> t(s(a))
            matches = [u for u in syms if np.array_equal(u.apply_obs(x), composed_obs)]
            assert len(matches) == 1, (s.name, t.name)
            np.testing.assert_array_equal(matches[0].action_map, composed_map)


def test_pass_stays_pass_and_maps_are_permutations():
    for spec in SPECS:
        for s in symmetries(spec):
            assert sorted(s.action_map.tolist()) == list(range(spec.num_actions))
            if spec.pass_action is not None:
                assert s.apply_action(spec.pass_action) == spec.pass_action


@pytest.mark.parametrize("spec", [GO5, TTT, MIRROR_POINTS], ids=["go5", "ttt", "mirror4x6"])
def test_policy_index_moves_with_the_board_point(spec):
    h, w = spec.board_shape
    for s in symmetries(spec):
        for p in range(h * w):
            plane = np.zeros((1, 1, h, w), dtype=np.float32)
            plane.flat[p] = 1.0
            q_obs = int(np.argmax(s.apply_obs(plane)))
            pi = np.zeros(spec.num_actions, dtype=np.float32)
            pi[p] = 1.0
            moved = s.apply_policy(pi)
            assert moved.sum() == 1.0
            assert int(np.argmax(moved)) == q_obs == s.apply_action(p), (s.name, p)


def test_column_actions_move_with_the_board_columns():
    h, w = COLUMNS.board_shape
    mirror = symmetries(COLUMNS)[1]
    assert mirror.name == "flip_lr"
    np.testing.assert_array_equal(mirror.action_map, np.arange(w)[::-1])
    for c in range(w):
        plane = np.zeros((1, 1, h, w), dtype=np.float32)
        plane[0, 0, :, c] = 1.0  # a whole column
        moved_cols = np.flatnonzero(mirror.apply_obs(plane)[0, 0].any(axis=0))
        assert moved_cols.tolist() == [mirror.apply_action(c)]


def test_policy_accepts_any_leading_shape_and_keeps_dtype():
    s = symmetries(GO5)[1]
    rng = np.random.default_rng(2)
    mask = rng.random((2, 3, 26)) < 0.5
    out = s.apply_policy(mask)
    assert out.dtype == np.bool_ and out.shape == mask.shape
    np.testing.assert_array_equal(out[1, 2], s.apply_policy(mask[1, 2]))
    visits = rng.integers(0, 50, size=26).astype(np.int32)
    assert s.apply_policy(visits).dtype == np.int32
    assert s.apply_policy(visits).sum() == visits.sum()
    # results are new arrays: writing to them leaves the input alone
    y = s.apply_policy(visits)
    y[:] = -1
    assert visits.min() >= 0


def test_bad_specs_and_shapes_are_refused():
    with pytest.raises(ValueError, match="square"):
        symmetries(_spec("rect", (4, 5), 20, "dihedral8"))
    with pytest.raises(ValueError, match="unknown symmetry"):
        symmetries(_spec("odd", (3, 3), 9, "rot4"))
    with pytest.raises(ValueError, match="num_actions"):
        symmetries(_spec("few", (3, 3), 5, "dihedral8"))
    with pytest.raises(ValueError, match="pass_action"):
        symmetries(_spec("badpass", (3, 3), 10, "dihedral8", pass_action=4))
    s = symmetries(GO5)[1]
    with pytest.raises(ValueError, match=r"\(5, 5\)"):
        s.apply_obs(np.zeros((1, 3, 4, 4), dtype=np.float32))
    with pytest.raises(ValueError, match="26"):
        s.apply_policy(np.zeros((1, 25), dtype=np.float32))


def test_random_symmetry_is_seeded_and_covers_the_group():
    draws_a = [random_symmetry(GO5, np.random.default_rng(7)).name for _ in range(3)]
    assert len(set(draws_a)) == 1  # same seed, same draw
    rng = np.random.default_rng(8)
    seen = {random_symmetry(GO5, rng).name for _ in range(200)}
    assert seen == {s.name for s in symmetries(GO5)}


# ---------------------------------------------------------------- native games

def _native(name):
    module = {"go9x9": "azero.games.go", "tictactoe": "azero.games.tictactoe",
              "connect4": "azero.games.connect4"}[name]
    pytest.importorskip(module)
    importlib.import_module(module)
    return make_game(name)


def _random_actions(game, batch, moves, seed):
    """[batch, moves] actions of seeded random games (NO_ACTION once a game is over), and the final states."""
    rng = np.random.default_rng(seed)
    states = game.new_states(batch)
    path = np.full((batch, moves), NO_ACTION, dtype=np.int32)
    for t in range(moves):
        legal = states.legal_mask()
        for b in range(batch):
            choices = np.flatnonzero(legal[b])
            if choices.size:
                path[b, t] = rng.choice(choices)
        states.apply(path[:, t])
    return path, states


@pytest.mark.parametrize("name,batch,moves", [("tictactoe", 16, 9), ("connect4", 12, 30), ("go9x9", 8, 150)])
def test_rules_commute_with_symmetries_on_real_positions(name, batch, moves):
    game = _native(name)
    path, states = _random_actions(game, batch, moves, seed=11)
    if game.spec.pass_action is not None:
        # long random Go games: passes, captures and finished games all occur
        assert (path == game.spec.pass_action).any() and states.terminal().any()
    # also check some mid-game prefixes, where terminal positions are rarer
    prefixes = sorted({moves // 3, moves // 2, moves})
    for s in symmetries(game.spec):
        mapped = np.where(path == NO_ACTION, NO_ACTION, s.action_map[np.maximum(path, 0)]).astype(np.int32)
        orig = game.new_states(batch)
        moved = game.new_states(batch)
        done = 0
        for L in prefixes:
            orig.apply_paths(path[:, done:L])
            moved.apply_paths(mapped[:, done:L])
            done = L
            np.testing.assert_array_equal(moved.legal_mask(), s.apply_policy(orig.legal_mask()),
                                          err_msg=f"{name} {s.name} after {L} moves")
            np.testing.assert_array_equal(moved.encode(), s.apply_obs(orig.encode()),
                                          err_msg=f"{name} {s.name} after {L} moves")
            np.testing.assert_array_equal(moved.terminal(), orig.terminal())
            np.testing.assert_array_equal(moved.outcome(), orig.outcome())
            np.testing.assert_array_equal(moved.to_play(), orig.to_play())
        np.testing.assert_array_equal(orig.legal_mask(), states.legal_mask())  # replay is faithful
