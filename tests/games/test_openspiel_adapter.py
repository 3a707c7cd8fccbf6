"""The OpenSpiel adapter against pyspiel driven directly, plus the States contract details."""

from __future__ import annotations

import numpy as np
import pyspiel
import pytest

from azero.games import NO_ACTION, IllegalActionError, States, make_game
from azero.games.openspiel import OpenSpielGame

GAMES = ["hex(board_size=5)", "othello", "breakthrough(rows=5,columns=5)"]


def _random_actions(states, rng):
    """One uniformly random legal action per state, NO_ACTION for finished games."""
    legal = states.legal_mask()
    acts = np.full(len(states), NO_ACTION, dtype=np.int32)
    for b in range(len(states)):
        choices = np.flatnonzero(legal[b])
        if choices.size:
            acts[b] = rng.choice(choices)
    return acts


@pytest.mark.parametrize("name", GAMES)
def test_batched_games_match_pyspiel(name):
    game = OpenSpielGame(name)
    assert isinstance(game.new_states(1), States)
    batch = 5
    states = game.new_states(batch)
    ref = [pyspiel.load_game(name).new_initial_state() for _ in range(batch)]
    rng = np.random.default_rng(3)
    c = game.spec.obs_shape[0] - 1
    for step in range(game.spec.max_moves + 1):
        legal = states.legal_mask()
        term = states.terminal()
        to_play = states.to_play()
        obs = states.encode()
        assert legal.dtype == np.bool_ and term.dtype == np.bool_ and to_play.dtype == np.int8
        for b, r in enumerate(ref):
            assert term[b] == r.is_terminal()
            if r.is_terminal():
                assert not legal[b].any()
                assert states.outcome()[b] == np.sign(r.returns()[0])
            else:
                assert np.flatnonzero(legal[b]).tolist() == r.legal_actions()
                assert to_play[b] == r.current_player()
                np.testing.assert_array_equal(obs[b, :c].ravel(), np.asarray(r.observation_tensor(r.current_player())))
                assert states.outcome()[b] == 0.0
            assert obs[b, c].min() == obs[b, c].max() == to_play[b]
            assert states.num_moves()[b] == len(r.history())
        if term.all():
            break
        acts = _random_actions(states, rng)
        states.apply(acts)
        for b, a in enumerate(acts):
            if a != NO_ACTION:
                ref[b].apply_action(int(a))
    assert states.terminal().all(), "every game ends within max_moves"
    outcomes = states.outcome()
    assert outcomes.dtype == np.float32 and set(outcomes.tolist()) <= {-1.0, 0.0, 1.0}
    np.testing.assert_array_equal(outcomes, [np.sign(r.returns()[0]) for r in ref])
    # terminal to_play is the player after the last mover
    for b in range(batch):
        last = [pa.player for pa in ref[b].full_history()][-1]
        assert states.to_play()[b] == 1 - last


def test_spec_follows_the_documented_conventions():
    game = make_game("openspiel:hex(board_size=5)")
    spec = game.spec
    assert spec.name == "openspiel:hex(board_size=5)"
    assert spec.num_actions == 25 and spec.board_shape == (5, 5)
    assert spec.obs_shape == (9 + 1, 5, 5)  # OpenSpiel's 9 planes + the to-play plane
    assert spec.max_moves == 25 and spec.pass_action is None and spec.symmetry == "none"
    nim = OpenSpielGame("nim").spec  # rank-1 tensor -> features as channels of a 1x1 board
    size = pyspiel.load_game("nim").observation_tensor_shape()[0]
    assert nim.obs_shape == (size + 1, 1, 1) and nim.board_shape == (1, 1)


def test_paths_equal_stepwise_apply_and_skip_padding():
    game = OpenSpielGame("breakthrough(rows=5,columns=5)")
    rng = np.random.default_rng(5)
    stepwise = game.new_states(4)
    cols = []
    for _ in range(6):
        acts = _random_actions(stepwise, rng)
        stepwise.apply(acts)
        cols.append(acts)
    paths = np.stack(cols, axis=1)
    paths[1, 4:] = NO_ACTION  # a shorter, padded path for state 1
    stepwise_short = game.new_states(4)
    for t in range(6):
        stepwise_short.apply(paths[:, t])
    batched = game.new_states(4)
    batched.apply_paths(paths)
    np.testing.assert_array_equal(batched.encode(), stepwise_short.encode())
    np.testing.assert_array_equal(batched.num_moves(), [6, 4, 6, 6])


def test_illegal_actions_name_the_state_and_modify_nothing():
    game = OpenSpielGame("othello")
    states = game.new_states(3)
    before = states.encode().copy()
    legal0 = int(np.flatnonzero(states.legal_mask()[0])[0])
    for acts, pattern in [
        ([legal0, 0, legal0], r"batch index 1.*action 0 is illegal"),
        ([legal0, legal0, 65], r"batch index 2.*action 65 out of range"),
        ([legal0, -7, legal0], r"batch index 1.*action -7 out of range"),
    ]:
        with pytest.raises(IllegalActionError, match=pattern):
            states.apply(np.array(acts, dtype=np.int32))
        np.testing.assert_array_equal(states.encode(), before)
        np.testing.assert_array_equal(states.num_moves(), [0, 0, 0])
    paths = np.array([[legal0, NO_ACTION], [legal0, NO_ACTION], [legal0, legal0]], dtype=np.int32)
    with pytest.raises(IllegalActionError, match=r"batch index 2 \(path step 1\)"):
        states.apply_paths(paths)  # the second move of path 2 is the first player's move again
    np.testing.assert_array_equal(states.num_moves(), [0, 0, 0])
    finished = game.new_states(2)
    finished.random_playout(seed=0)
    with pytest.raises(IllegalActionError, match="batch index 0.*finished game"):
        finished.apply(np.array([0, NO_ACTION], dtype=np.int32))
    finished.apply(np.array([NO_ACTION, NO_ACTION], dtype=np.int32))  # NO_ACTION is always fine
    with pytest.raises(ValueError, match=r"expected shape \(3,\)"):
        states.apply(np.zeros(2, dtype=np.int32))
    with pytest.raises(ValueError, match="integer"):
        states.apply(np.zeros(3, dtype=np.float32))


def test_copy_take_put_reset_are_independent():
    game = OpenSpielGame("hex(board_size=5)")
    rng = np.random.default_rng(9)
    states = game.new_states(4)
    for _ in range(3):
        states.apply(_random_actions(states, rng))
    snapshot = states.encode().copy()

    dup = states.copy()
    dup.apply(_random_actions(dup, rng))
    np.testing.assert_array_equal(states.encode(), snapshot)

    taken = states.take(np.array([2, 2, 0]))
    assert len(taken) == 3
    np.testing.assert_array_equal(taken.encode(), snapshot[[2, 2, 0]])
    taken.apply(np.array([int(np.flatnonzero(taken.legal_mask()[0])[0]), NO_ACTION, NO_ACTION], dtype=np.int32))
    np.testing.assert_array_equal(taken.encode()[1], snapshot[2])  # repeated index, separate state
    np.testing.assert_array_equal(states.encode(), snapshot)

    states.put(np.array([1, 3]), taken.take(np.array([0, 2])))
    after_put = states.encode().copy()
    np.testing.assert_array_equal(after_put[3], snapshot[0])
    assert states.num_moves()[1] == 4
    taken.reset()
    np.testing.assert_array_equal(states.encode(), after_put)  # put copied, did not alias
    np.testing.assert_array_equal(taken.num_moves(), [0, 0, 0])

    states.put(np.array([0, 1]), states.take(np.array([1, 0])))  # swap through self
    np.testing.assert_array_equal(states.encode()[[0, 1]], after_put[[1, 0]])
    states.reset(np.array([2]))
    assert states.num_moves().tolist()[2] == 0 and states.legal_mask()[2].all()
    with pytest.raises(ValueError, match="len"):
        states.put(np.array([0]), taken)
    with pytest.raises(ValueError, match=r"\[0, 4\)"):
        states.take(np.array([4]))


def test_out_buffers_are_validated_and_filled():
    game = OpenSpielGame("othello")
    states = game.new_states(2)
    spec = game.spec
    good = {
        "legal_mask": np.ones((2, spec.num_actions), dtype=np.bool_),
        "terminal": np.ones(2, dtype=np.bool_),
        "to_play": np.full(2, 5, dtype=np.int8),
        "outcome": np.full(2, 9, dtype=np.float32),
        "num_moves": np.full(2, 9, dtype=np.int32),
        "encode": np.full((2, *spec.obs_shape), 9, dtype=np.float32),
    }
    for method, buf in good.items():
        result = getattr(states, method)(out=buf)
        assert result is buf
        np.testing.assert_array_equal(buf, getattr(states, method)())
    bad = {
        "legal_mask": np.zeros((2, spec.num_actions), dtype=np.int8),
        "terminal": np.zeros(3, dtype=np.bool_),
        "to_play": np.zeros(2, dtype=np.int32),
        "outcome": np.zeros(2, dtype=np.float64),
        "num_moves": np.zeros((2, 1), dtype=np.int32),
        "encode": np.zeros((2, *spec.obs_shape), dtype=np.float32)[:, :, ::-1],
    }
    for method, buf in bad.items():
        with pytest.raises(ValueError, match=method):
            getattr(states, method)(out=buf)
    with pytest.raises(ValueError, match="random_playout"):
        states.random_playout(seed=0, out=np.zeros(2, dtype=np.float64))


def test_random_playout_is_seeded_per_state():
    game = OpenSpielGame("breakthrough(rows=5,columns=5)")
    a = game.new_states(6)
    za = a.random_playout(seed=42)
    b = game.new_states(3)
    zb = b.random_playout(seed=42)
    np.testing.assert_array_equal(za[:3], zb)  # independent of the batch size
    np.testing.assert_array_equal(a.encode()[:3], b.encode())
    assert a.terminal().all() and set(za.tolist()) <= {-1.0, 1.0}
    c = game.new_states(6)
    c.random_playout(seed=43)
    assert not np.array_equal(c.num_moves(), a.num_moves()) or not np.array_equal(c.encode(), a.encode())


def test_action_strings_round_trip():
    game = OpenSpielGame("hex(board_size=5)")
    ref = pyspiel.load_game("hex(board_size=5)").new_initial_state()
    for a in range(25):
        text = game.action_to_str(a)
        assert text == ref.action_to_string(0, a)
        assert game.str_to_action(text) == a
        assert game.str_to_action(str(a)) == a
    othello = OpenSpielGame("othello")
    states = othello.new_states(1)
    assert othello.action_to_str(0) == "0"  # not legal initially, so the id is used
    legal = np.flatnonzero(states.legal_mask()[0])
    for a in legal:
        name = states.action_to_str(0, int(a))
        assert states.str_to_action(0, name) == a
        assert states.str_to_action(0, name.upper()) == a
    with pytest.raises(IllegalActionError, match="cannot parse"):
        othello.str_to_action("z9")
    with pytest.raises(IllegalActionError, match="out of range"):
        othello.str_to_action("65")
    with pytest.raises(IllegalActionError, match="illegal"):
        states.action_to_str(0, 0)
    assert "x" in states.render(0).lower() or "o" in states.render(0).lower()
    with pytest.raises(IndexError):
        states.render(1)


@pytest.mark.parametrize("name,reason", [
    ("kuhn_poker", "not perfect information"),
    ("leduc_poker", "chance nodes"),
    ("backgammon", "chance nodes"),
    ("catch", "1 player"),
    ("morpion_solitaire", "1 player.*not zero-sum"),
    ("goofspiel", "not sequential"),
    ("othelo", "unknown OpenSpiel game 'othelo'.*did you mean othello"),
    ("totally_unknown_game", "unknown OpenSpiel game.*examples of supported games: hex"),
    ("hex(board_sz=5)", "cannot load OpenSpiel game.*board_sz"),
    ("", "non-empty"),
])
def test_unsupported_games_are_refused_clearly(name, reason):
    with pytest.raises(ValueError, match=reason) as info:
        OpenSpielGame(name)
    if name:
        assert repr(name.split("(")[0]) in str(info.value) or name in str(info.value)
