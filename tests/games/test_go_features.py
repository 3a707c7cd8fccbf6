"""The "extended" Go observation (liberties, superko bans, pass-alive areas) and its plumbing.

Hand-made positions with known planes, agreement with the pure-Python reference
(azero.games.go_reference) on many seeded random positions, "basic" observations
bit-identical to the engine before the extension, and the parameter's way through
GameSpec, pickling, the registry, GameConfig and the search's leaf API.
"""

import hashlib
import pickle

import numpy as np
import pytest

from azero.games import go_reference as ref
from azero.games import make_game
from azero.games.base import NO_ACTION
from azero.games.config import GameConfig, game_from_config
from azero.games.go import FEATURES, GoGame

from gopositions import drawn_position, random_positions

BASIC = 10
OWN_1, OWN_2, OWN_3, OPP_1, OPP_2, OPP_3, KO_BAN, OWN_ALIVE, OPP_ALIVE = range(BASIC, BASIC + 9)


def position(rows, komi=7.5, features="extended"):
    """(game, states of batch 1) holding the drawn position; the caller checks the side to move."""
    return drawn_position(rows, komi, features=features)


def play(game, states, moves):
    for m in moves:
        states.apply(np.array([game.str_to_action(m)], np.int32))


def points(game, plane):
    """The GTP vertices where an [N, N] plane is set, sorted."""
    n = game.board_size
    return sorted(game.action_to_str(int(a)) for a in np.flatnonzero(plane.reshape(n * n)))


def reference_ko_bans(states, b):
    """bool [N, N]: empty points that are illegal and not suicide (the superko bans), from the
    engine's legal mask and the reference's suicide test."""
    board = states.board(b)
    n = board.shape[0]
    ban = np.zeros((n, n), bool)
    if states.terminal()[b]:
        return ban
    legal = states.legal_mask()[b]
    colour = 1 + int(states.to_play()[b])
    for a in range(n * n):
        p = divmod(a, n)
        ban[p] = board[p] == 0 and not legal[a] and not ref.suicide(board, p, colour)
    return ban


# ---------------------------------------------------------------- planes on known positions

def test_liberty_planes_count_real_liberties_from_the_mover_view():
    g, s = position(["...XO",
                     "...XO",
                     "OO...",
                     "XX...",
                     "X...O"])
    assert s.to_play()[0] == 0                          # black to move: black is "own"
    o = s.encode()[0]
    assert o.shape == (19, 5, 5)
    assert points(g, o[OWN_1]) == []
    assert points(g, o[OWN_2]) == ["A1", "A2", "B2"]    # B1 touches two of its stones: still 2 liberties
    assert points(g, o[OWN_3]) == ["D4", "D5"]
    assert points(g, o[OPP_1]) == ["E4", "E5"]
    assert points(g, o[OPP_2]) == ["E1"]
    assert points(g, o[OPP_3]) == ["A3", "B3"]
    play(g, s, ["pass"])                                # white to move: the colours swap planes
    o = s.encode()[0]
    assert points(g, o[OWN_1]) == ["E4", "E5"] and points(g, o[OWN_2]) == ["E1"]
    assert points(g, o[OPP_2]) == ["A1", "A2", "B2"] and points(g, o[OPP_3]) == ["D4", "D5"]
    assert not o[KO_BAN].any() and not o[OWN_ALIVE].any() and not o[OPP_ALIVE].any()


def test_ko_ban_marks_exactly_the_retake_point():
    # Black C4 D5 D3 around white D4; white E5 F4 E3 around E4: black E4 takes the ko.
    g, s = position(["......",
                     "...XO.",
                     "..XO.O",
                     "...XO.",
                     "......",
                     "......"], komi=0.5)
    assert s.to_play()[0] == 0
    assert not s.encode()[0, KO_BAN].any()
    play(g, s, ["E4"])                                  # black captures D4
    assert s.board(0)[2, 3] == 0
    o = s.encode()[0]
    assert points(g, o[KO_BAN]) == ["D4"]               # white may not retake at once
    assert not s.legal_mask()[0, g.str_to_action("D4")]
    play(g, s, ["A1", "F6"])                            # a ko threat and its answer
    assert not s.encode()[0, KO_BAN].any()              # now D4 may be retaken
    play(g, s, ["D4"])
    assert points(g, s.encode()[0, KO_BAN]) == ["E4"]   # and black may not retake at once


def test_ko_ban_covers_repetitions_without_a_capture():
    # 2x2: after B A2, W B2, B A1, W pass, B B1 (captures B2), W B2 (captures all three) black's
    # A2 would capture nothing and still recreate the position after move 2. The stone count
    # shortcut cannot settle it (an earlier position had more stones), so it is probed.
    g = GoGame(2, komi=0.5, features="extended")
    s = g.new_states(1)
    play(g, s, ["A2", "B2", "A1", "pass", "B1", "B2"])
    assert s.to_play()[0] == 0 and s.board(0).tolist() == [[0, 2], [0, 0]]
    o = s.encode()[0]
    assert points(g, o[KO_BAN]) == ["A2"]
    assert not s.legal_mask()[0, g.str_to_action("A2")] and s.legal_mask()[0, g.str_to_action("A1")]


def test_ko_ban_ignores_suicide_and_finished_games():
    g, s = position([".X.", "X.X", ".X."], komi=0.5)
    assert s.to_play()[0] == 1
    assert not s.legal_mask()[0, g.str_to_action("B2")]         # suicide, not a ban
    assert not s.encode()[0, KO_BAN].any()
    play(g, s, ["pass", "pass"])
    assert s.terminal()[0] and not s.encode()[0, KO_BAN].any()


def test_pass_alive_planes_follow_the_mover():
    g, s = position([".X.XX",
                     "XXXXX",
                     ".....",
                     "OOOOO",
                     "O.O.O"])
    assert s.to_play()[0] == 0
    o = s.encode()[0]
    top = ["A4", "A5", "B4", "B5", "C4", "C5", "D4", "D5", "E4", "E5"]
    bottom = ["A1", "A2", "B1", "B2", "C1", "C2", "D1", "D2", "E1", "E2"]
    assert points(g, o[OWN_ALIVE]) == top and points(g, o[OPP_ALIVE]) == bottom
    play(g, s, ["pass"])
    o = s.encode()[0]
    assert points(g, o[OWN_ALIVE]) == bottom and points(g, o[OPP_ALIVE]) == top
    np.testing.assert_array_equal(s.pass_alive()[0].reshape(5, 5)[[0, 1, 2, 3, 4], 0], [1, 1, 0, -1, -1])


# ---------------------------------------------------------------- agreement and invariants

@pytest.mark.parametrize("n, seed", [(5, 11), (7, 12), (9, 13), (13, 14)])
def test_extended_planes_match_the_reference_on_random_positions(n, seed):
    g = GoGame(n, max_moves=3 * n * n, features="extended")
    s = random_positions(g, 24, seed, 2 * n * n)
    late = s.copy()
    late.random_playout(seed)
    marked = np.zeros(9, np.int64)
    for states in (s, late):
        obs = states.encode()
        assert obs.shape == (24, 19, n, n)
        to_play = states.to_play()
        for b in range(len(states)):
            want = ref.extended_planes(states.board(b), int(to_play[b]), reference_ko_bans(states, b))
            np.testing.assert_array_equal(obs[b, BASIC:], want)
        marked += obs[:, BASIC:].sum(axis=(0, 2, 3)).astype(np.int64)
    assert (marked[[0, 1, 2, 3, 4, 5, 7, 8]] > 0).all()        # every plane but the rare ko bans was exercised


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_ko_ban_plane_matches_legality_along_random_games(n):
    # After every ply: the plane is exactly the empty points that are illegal but not suicide.
    g = GoGame(n, komi=0.5, max_moves=6 * n * n, features="extended")
    s = g.new_states(64)
    rng = np.random.default_rng(n)
    bans = with_capture = 0
    for _ in range(6 * n * n):
        m = s.legal_mask()
        r = rng.random(m.shape)
        r[:, -1] *= 0.05
        a = np.where(m, r, -1).argmax(1).astype(np.int32)
        a[s.terminal()] = NO_ACTION
        s.apply(a)
        plane = s.encode()[:, KO_BAN].reshape(len(s), -1).astype(bool)
        boards = np.stack([s.board(b).reshape(-1) for b in range(len(s))])
        legal = s.legal_mask()[:, :-1]
        candidates = (boards == 0) & ~legal & ~s.terminal()[:, None]
        assert not (plane & ~candidates).any()
        for b, x in zip(*np.nonzero(candidates)):
            p = divmod(int(x), n)
            board = boards[b].reshape(n, n)
            want = not ref.suicide(board, p, 1 + int(s.to_play()[b]))
            assert plane[b, x] == want
            if want:
                bans += 1
                libs = ref.liberties(board)
                with_capture += any(board[q] == 2 - s.to_play()[b] and libs[q] == 1 for q in ref.neighbours(n, p))
    assert bans > 0
    if n <= 3:
        assert bans > with_capture          # capture-free repetitions occur on tiny boards


def test_the_first_planes_are_the_basic_observation():
    for n in (5, 9, 19):
        ext = random_positions(GoGame(n, max_moves=3 * n * n, features="extended"), 16, n, 3 * n * n // 2)
        basic = random_positions(GoGame(n, max_moves=3 * n * n), 16, n, 3 * n * n // 2)
        for b in range(16):
            np.testing.assert_array_equal(ext.board(b), basic.board(b))      # same games
        np.testing.assert_array_equal(ext.encode()[:, :BASIC], basic.encode())


def test_basic_observations_are_unchanged_by_the_extension():
    # sha256 of these observations from the engine before the extended features existed (its
    # random_playout is its own seeded generator, so the positions do not depend on numpy).
    h = hashlib.sha256()
    for n, moves in ((5, 30), (7, 60), (9, 100), (13, 200), (19, 300)):
        s = GoGame(n, komi=7.5, max_moves=moves).new_states(8)
        s.random_playout(n)
        obs = s.encode()
        assert obs.shape == (8, 10, n, n)
        h.update(obs.tobytes())
    assert h.hexdigest()[:32] == "2c73c63e01effe379999eb4ccb432f0b"


def test_encode_into_a_given_buffer():
    g = GoGame(9, features="extended")
    s = random_positions(g, 4, 3, 60)
    out = np.full((4, 19, 9, 9), 7.0, np.float32)
    assert s.encode(out) is out
    np.testing.assert_array_equal(out, s.encode())
    with pytest.raises(ValueError, match=r"\(4, 19, 9, 9\)"):
        s.encode(np.zeros((4, 10, 9, 9), np.float32))
    assert g.new_states(0).encode().shape == (0, 19, 9, 9)


# ---------------------------------------------------------------- the parameter's plumbing

def test_spec_params_repr_and_pickle():
    assert FEATURES == {"basic": 10, "extended": 19}
    basic, ext = GoGame(9), GoGame(9, features="extended")
    assert basic.spec.obs_shape == (10, 9, 9) and ext.spec.obs_shape == (19, 9, 9)
    assert basic.spec.params["features"] == "basic" and ext.spec.params["features"] == "extended"
    assert ext.spec.name == basic.spec.name == "go9x9"
    assert repr(ext) == "GoGame(board_size=9, komi=7.5, max_moves=162, features='extended')"
    back = pickle.loads(pickle.dumps(ext))
    assert back.spec == ext.spec and back.features == "extended"
    s = random_positions(ext, 3, 1, 40)
    t = pickle.loads(pickle.dumps(s))
    np.testing.assert_array_equal(t.encode(), s.encode())


@pytest.mark.parametrize("bad", ["full", "", None, 19, "Basic"])
def test_bad_features_name_the_allowed_values(bad):
    with pytest.raises(ValueError, match="features must be one of 'basic', 'extended'"):
        GoGame(9, features=bad)


def test_registry_and_config_pass_features_through():
    assert make_game("go9x9").spec.params["features"] == "basic"
    assert make_game("go9x9", features="extended").spec.obs_shape == (19, 9, 9)
    assert make_game("go", board_size=7, features="extended").spec.obs_shape == (19, 7, 7)
    game = game_from_config(GameConfig(name="go", board_size=5, komi=0.5, features="extended"))
    assert game.spec.obs_shape == (19, 5, 5) and game.spec.params["komi"] == 0.5
    assert game_from_config(GameConfig(name="go9x9")).spec.obs_shape == (10, 9, 9)
    with pytest.raises(ValueError, match="features"):
        make_game("connect4", features="extended")
    with pytest.raises(ValueError, match="features must be one of"):
        make_game("go9x9", features="nope")


def test_batches_with_other_features_do_not_mix():
    basic, ext = GoGame(9), GoGame(9, features="extended")
    a, b = basic.new_states(2), ext.new_states(2)
    with pytest.raises(ValueError, match="params"):
        b.put(np.arange(2), a)
    with pytest.raises(ValueError, match="params"):
        b.load_paths(a, np.arange(2), np.full((2, 1), NO_ACTION, np.int32))


def test_the_search_leaf_step_encodes_extended_observations():
    # The leaf API's obs_size follows the feature set: the fused leaf step writes the 19 planes.
    from azero.search._mcts import SearchTree

    game = GoGame(9, features="extended")
    A = game.spec.num_actions
    roots = random_positions(game, 2, 4, 30)
    tree = SearchTree(2, 32, A, game.spec.max_moves)
    bufs = dict(legal=np.zeros((2, A), bool), terminal=np.zeros(2, bool), to_play=np.zeros(2, np.int8),
                outcome=np.zeros(2, np.float32), query=np.zeros((2, A), bool),
                obs=np.zeros((2, 19, 9, 9), np.float32))
    leaves = game.new_states(2)
    tree.bind_leaves(leaves, roots, **bufs)
    tree.begin_search(np.full(2, 4, np.int32))
    running, m, _ = tree.leaf_step()
    steps = 0
    while running:
        if m:
            np.testing.assert_array_equal(bufs["obs"][:m], leaves.take(np.arange(m)).encode())
            steps += 1
            running, m, _ = tree.leaf_step(bufs["legal"][:m].astype(np.float32), np.zeros(m, np.float32))
        else:
            running, m, _ = tree.leaf_step()
    assert steps > 0
