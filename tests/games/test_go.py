"""Go rules on known positions, the batched States contract, and bad input.

Positions are set up by playing their stones (passes fill in for the side with
fewer stones). Any final position whose groups all have liberties can be
reached that way in any order without captures, suicide or repetition,
because adding stones only ever removes liberties.
"""

import numpy as np
import pytest

from azero.games import make_game
from azero.games.base import NO_ACTION, IllegalActionError, States
from azero.games.go import HISTORY_STEPS, GoGame

T = HISTORY_STEPS


def act(game, *moves):
    return [game.str_to_action(m) for m in moves]


def play(game, states, moves, index=0):
    """Play GTP moves one by one in state `index` (others get NO_ACTION)."""
    for a in act(game, *moves):
        actions = np.full(len(states), NO_ACTION, np.int32)
        actions[index] = a
        states.apply(actions)


def setup(game, black=(), white=(), batch=1):
    """States whose state 0 holds the given stones, reached by alternating moves and passes."""
    black, white = list(black), list(white)
    moves = []
    for i in range(max(len(black), len(white))):
        moves.append(black[i] if i < len(black) else "pass")
        moves.append(white[i] if i < len(white) else "pass")
    if moves and moves[-1] == "pass":
        moves.pop()         # never end on a pass: the caller may want to pass next
    states = game.new_states(batch)
    play(game, states, moves)
    return states


def grid(game, states, index=0):
    """Board as strings, top row first: 'X' black, 'O' white, '.' empty."""
    return ["".join(".XO"[v] for v in row) for row in states.board(index)]


def snapshot(states):
    """Everything observable about a batch, for 'unchanged' checks."""
    return [states.legal_mask(), states.terminal(), states.to_play(), states.num_moves(),
            states.outcome(), states.encode(), states.score(),
            np.stack([states.board(i) for i in range(len(states))])]


def assert_same(a, b):
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)


def legal(game, states, move, index=0):
    return bool(states.legal_mask()[index, game.str_to_action(move)])


@pytest.fixture
def g9():
    return GoGame(9)


# ---------------------------------------------------------------- spec / notation

def test_spec_and_registry():
    g = GoGame()
    s = g.spec
    assert s.name == "go9x9" and s.num_actions == 82 and s.pass_action == 81
    assert s.obs_shape == (2 * T + 2, 9, 9) and s.board_shape == (9, 9)
    assert s.max_moves == 162 and s.symmetry == "dihedral8"
    assert s.params == {"board_size": 9, "komi": 7.5, "max_moves": 162, "features": "basic"}
    g13 = make_game("go", board_size=13, komi=6.5)
    assert g13.spec.name == "go13x13" and g13.spec.num_actions == 170 and g13.spec.max_moves == 338
    assert make_game("go9x9").spec == s
    assert GoGame(5, max_moves=7).spec.max_moves == 7
    assert isinstance(g.new_states(2), States)


def test_action_notation(g9):
    assert g9.str_to_action("A9") == 0 and g9.str_to_action("a9") == 0
    assert g9.str_to_action("J1") == 80 and g9.str_to_action("j1") == 80
    assert g9.str_to_action("H1") == 79 and g9.str_to_action("E5") == 40
    assert g9.str_to_action("pass") == 81 and g9.str_to_action("PASS") == 81
    for a in range(82):
        assert g9.str_to_action(g9.action_to_str(a)) == a
    assert g9.action_to_str(0) == "A9" and g9.action_to_str(80) == "J1" and g9.action_to_str(81) == "pass"
    g19 = GoGame(19)
    assert g19.action_to_str(0) == "A19" and g19.action_to_str(360) == "T1"
    assert g19.str_to_action("t19") == 18 and g19.str_to_action("K10") == 9 * 19 + 9


@pytest.mark.parametrize("text", ["I5", "Z1", "A10", "A0", "K1", "", "pass1", "5A", "AA", "A-1", "A 9"])
def test_malformed_vertex(g9, text):
    with pytest.raises(IllegalActionError):
        g9.str_to_action(text)


def test_bad_construction():
    for n in (1, 20, 0, -3):
        with pytest.raises(ValueError, match="board_size"):
            GoGame(n)
    with pytest.raises(ValueError, match="board_size"):
        GoGame(9.5)
    with pytest.raises(ValueError, match="komi"):
        GoGame(9, komi=float("nan"))
    with pytest.raises(ValueError, match="max_moves"):
        GoGame(9, max_moves=0)
    with pytest.raises(ValueError, match="batch"):
        GoGame(9).new_states(-1)
    with pytest.raises(IllegalActionError):
        GoGame(9).action_to_str(82)


# ---------------------------------------------------------------- captures

def test_single_capture_center(g9):
    s = setup(g9, black=["E5"], white=["E6", "D5", "F5"])
    assert s.to_play()[0] == 0
    play(g9, s, ["A1", "E4"])               # white closes the last liberty
    assert grid(g9, s)[3:6] == ["....O....", "...O.O...", "....O...."]
    assert (s.board(0) == 1).sum() == 1     # only A1 is left for black
    assert not legal(g9, s, "E5")           # black: suicide into white's new eye


def test_multi_stone_capture(g9):
    s = setup(g9, black=["E5", "E4"], white=["E6", "D5", "F5", "D4", "F4"])
    play(g9, s, ["A1", "E3"])
    b = s.board(0)
    assert b[4, 4] == 0 and b[5, 4] == 0        # E5, E4 removed
    assert (b == 1).sum() == 1 and (b == 2).sum() == 6


def test_corner_and_edge_captures(g9):
    s = setup(g9, black=["A9", "E9", "J5"], white=["B9", "D9", "F9", "J6"])
    play(g9, s, ["C1", "A8"])                   # corner: A9 captured
    assert s.board(0)[0, 0] == 0
    play(g9, s, ["C2", "E8"])                   # edge: E9 captured
    assert s.board(0)[0, 4] == 0
    play(g9, s, ["C3", "J4"])                   # right edge: J5 has J6, J4 and H5 as neighbours
    assert s.board(0)[4, 8] == 1                # still there: H5 is a liberty
    play(g9, s, ["C4", "H5"])
    assert s.board(0)[4, 8] == 0
    assert (s.board(0) == 1).sum() == 4 and (s.board(0) == 2).sum() == 8


def test_capture_gives_liberties_back(g9):
    # White B8 takes the last liberty of black A9-B9. The freed points become
    # liberties of the white stones around them: black can play there again, and
    # white's A8 (now with liberty A9) cannot be captured by black A7 alone.
    s = setup(g9, black=["A9", "B9"], white=["C9", "A8", "B8"])
    assert grid(g9, s)[:2] == ["..O......", "OO......."]
    assert s.num_moves()[0] == 6 and s.to_play()[0] == 0
    assert legal(g9, s, "A9") and legal(g9, s, "B9")
    play(g9, s, ["A7", "pass", "B7", "pass", "C8", "pass", "D9"])   # surround from outside
    assert (s.board(0) == 2).sum() == 3         # alive only through the freed A9, B9
    play(g9, s, ["pass", "B9"])                 # takes C9's last liberty (B9)
    assert grid(g9, s)[:2] == [".X.X.....", "OOX......"]
    play(g9, s, ["pass", "A9"])                 # and A8-B8's last one (A9)
    assert (s.board(0) == 2).sum() == 0


# ---------------------------------------------------------------- suicide

def test_suicide_single_is_illegal(g9):
    s = setup(g9, black=["E1"], white=["B9", "A8"])
    assert s.to_play()[0] == 0
    assert not legal(g9, s, "A9")
    with pytest.raises(IllegalActionError, match=r"state 0: action 0 \(A9\).*suicide"):
        s.apply(np.array([0], np.int32))


def test_multi_stone_suicide_is_illegal(g9):
    s = setup(g9, black=["A9"], white=["B9", "B8", "A7"])
    assert s.to_play()[0] == 0
    assert not legal(g9, s, "A8")               # A9 + A8 would have no liberty
    assert legal(g9, s, "C9")


def test_capture_that_looks_like_suicide_is_legal(g9):
    # White B9 and A8 each have the single liberty A9; black A9 has no liberty
    # of its own but captures both, so it is legal.
    s = setup(g9, black=["C9", "B8", "A7"], white=["B9", "A8"])
    play(g9, s, ["pass"])                       # white passes; black to move
    assert s.to_play()[0] == 0
    assert legal(g9, s, "A9")
    play(g9, s, ["A9"])
    b = s.board(0)
    assert b[0, 0] == 1 and b[0, 1] == 0 and b[1, 0] == 0
    assert (b == 2).sum() == 0


# ---------------------------------------------------------------- ko / superko

KO_SETUP = ["D6", "E6", "C5", "F5", "D4", "E4", "pass", "D5"]


def ko_position(g9):
    """Black D6 C5 D4, white E6 F5 E4 D5; black to capture at E5."""
    s = g9.new_states(1)
    play(g9, s, KO_SETUP)
    assert s.to_play()[0] == 0
    return s


def test_ko_immediate_recapture_illegal(g9):
    s = ko_position(g9)
    play(g9, s, ["E5"])                         # captures D5
    assert s.board(0)[4, 3] == 0
    assert not legal(g9, s, "D5")               # retaking at once repeats the position
    with pytest.raises(IllegalActionError, match=r"state 0: action 39 \(D5\).*superko"):
        s.apply(np.array([g9.str_to_action("D5")], np.int32))
    play(g9, s, ["A1", "J9"])                   # a ko threat exchange
    assert legal(g9, s, "D5")
    play(g9, s, ["D5"])
    assert s.board(0)[4, 4] == 0 and s.board(0)[4, 3] == 2      # E5 captured back
    assert not legal(g9, s, "E5")               # and now black may not retake at once


def test_positional_superko_beyond_simple_ko():
    # 3x3: after W A1 captures A2+A3, black A2 would capture A1 and recreate the
    # position after move 4 (not the previous one): simple ko allows it, positional
    # superko does not.
    g = GoGame(3, komi=0.5)
    s = g.new_states(1)
    play(g, s, ["A2", "B3", "B1", "B2"])
    after_move4 = s.board(0).copy()
    play(g, s, ["A3", "A1"])
    assert grid(g, s) == [".O.", ".O.", "OX."]
    assert s.to_play()[0] == 0
    assert not legal(g, s, "A2")
    with pytest.raises(IllegalActionError, match="superko"):
        play(g, s, ["A2"])
    # The move would capture A1 and recreate the position after move 4.
    assert grid(g, s)[2][0] == "O" and "".join(grid(g, s)).count("X") == 1
    recreated = s.board(0).copy()
    recreated[1, 0], recreated[2, 0] = 1, 0
    np.testing.assert_array_equal(recreated, after_move4)
    # Other moves stay legal, and after white plays elsewhere A2 repeats nothing.
    assert legal(g, s, "C1") and legal(g, s, "pass")
    play(g, s, ["C1", "C3"])
    assert legal(g, s, "A2")


def test_pass_is_always_legal_and_does_not_trigger_superko(g9):
    s = ko_position(g9)
    play(g9, s, ["E5", "pass", "pass"])         # repeating a position by passing is fine
    assert s.terminal()[0]


# ---------------------------------------------------------------- game end and scoring

def test_two_passes_end_the_game():
    g = GoGame(9, komi=7.5)
    s = g.new_states(2)
    s.apply(np.array([81, 81], np.int32))
    assert not s.terminal().any()
    s.apply(np.array([81, NO_ACTION], np.int32))
    np.testing.assert_array_equal(s.terminal(), [True, False])
    assert s.legal_mask()[0].sum() == 0 and s.legal_mask()[1].sum() == 82
    np.testing.assert_array_equal(s.outcome(), [-1.0, 0.0])      # empty board: W wins by komi
    np.testing.assert_array_equal(s.score(), [-7.5, -7.5])


def test_non_consecutive_passes_do_not_end():
    g = GoGame(5)
    s = g.new_states(1)
    play(g, s, ["pass", "C3", "pass", "pass"])
    assert s.terminal()[0] and s.num_moves()[0] == 4
    s = g.new_states(1)
    play(g, s, ["pass", "C3", "pass", "B2", "pass"])
    assert not s.terminal()[0]


def test_max_moves_ends_and_scores_as_it_stands():
    g = GoGame(5, komi=0.5, max_moves=3)
    s = g.new_states(1)
    play(g, s, ["C3", "pass"])
    assert not s.terminal()[0]
    play(g, s, ["B2"])
    assert s.terminal()[0] and s.num_moves()[0] == 3
    assert not s.legal_mask()[0].any()
    assert s.score()[0] == pytest.approx(25 - 0.5)         # black owns the whole board
    assert s.outcome()[0] == 1.0
    with pytest.raises(IllegalActionError, match="game is over"):
        s.apply(np.array([0], np.int32))
    with pytest.raises(IllegalActionError, match="game is over"):
        s.apply(np.array([25], np.int32))                  # even a pass


@pytest.mark.parametrize("komi, outcome", [(7.5, -1.0), (0.0, 0.0), (-1.0, 1.0)])
def test_komi_decides_the_empty_board(komi, outcome):
    g = GoGame(9, komi=komi)
    s = g.new_states(1)
    s.apply(np.array([81], np.int32))
    s.apply(np.array([81], np.int32))
    assert s.outcome()[0] == outcome
    assert s.score()[0] == -komi


def test_seki_and_eyes_scoring():
    # 4x4, top two rows a seki: black B4-C4 and white A3-D3 share the liberties
    # A4 and D4 and neither can approach. Black's lower group has eyes A1, C1.
    #     A B C D
    #   4 . X X .
    #   3 O O O O
    #   2 X X X X
    #   1 . X . X
    g = GoGame(4, komi=0.5)
    s = setup(g, black=["B4", "C4", "A2", "B2", "C2", "D2", "B1", "D1"], white=["A3", "B3", "C3", "D3"])
    assert grid(g, s) == [".XX.", "OOOO", "XXXX", ".X.X"]
    # black: 8 stones + eyes A1, C1; white: 4 stones; seki liberties A4, D4 neutral
    assert s.score()[0] == pytest.approx(10 - 4 - 0.5)
    # Neither side can profit from approaching: each approach is self-atari and gets captured.
    t = s.copy()
    if t.to_play()[0] == 1:
        play(g, t, ["pass"])
    play(g, t, ["A4", "D4"])                       # black approaches, white captures three stones
    assert grid(g, t)[0] == "...O"
    u = s.copy()
    if u.to_play()[0] == 0:
        play(g, u, ["pass"])
    play(g, u, ["A4", "D4"])                       # white approaches, black captures the white wall
    assert grid(g, u)[:2] == [".XXX", "...."]
    # White may not play in black's eyes (suicide), so the lower group lives.
    assert s.to_play()[0] == 1
    assert not legal(g, s, "A1") and not legal(g, s, "C1")
    assert legal(g, s, "A4") and legal(g, s, "D4")


def test_score_counts_regions_reaching_both_colours_as_neutral():
    # A neutral region must not be counted for either side, however it is traversed
    # (OpenSpiel < 1.5 stopped marking a region once it reached both colours and
    # could count the rest as territory).
    g = GoGame(9, komi=7.5)
    s = setup(g, black=["B2", "B3", "A4"], white=["A3"])
    assert s.score()[0] == pytest.approx(3 - 1 - 7.5)
    play(g, s, ["pass", "pass"])
    assert s.outcome()[0] == -1.0


# ---------------------------------------------------------------- observations

def test_encode_planes_and_side_to_move():
    g = GoGame(9)
    s = g.new_states(1)
    obs = s.encode()
    assert obs.shape == (1, 2 * T + 2, 9, 9) and obs.dtype == np.float32
    assert obs[0, :2 * T].sum() == 0
    assert (obs[0, 2 * T] == 1).all() and (obs[0, 2 * T + 1] == 1).all()

    play(g, s, ["E5"])              # black played; white to move
    o = s.encode()[0]
    e5 = (4, 4)
    assert o[1][e5] == 1 and o[0].sum() == 0 and o[1].sum() == 1        # opponent = black
    assert o[2:2 * T].sum() == 0                                       # t=1 is the empty board
    assert (o[2 * T] == 0).all() and (o[2 * T + 1] == 1).all()

    play(g, s, ["D4", "pass"])      # white to move again
    o = s.encode()[0]
    d4 = (5, 3)
    assert o[0][d4] == 1 and o[0].sum() == 1 and o[1][e5] == 1 and o[1].sum() == 1   # t=0
    np.testing.assert_array_equal(o[2:4], o[0:2])                      # t=1: before the pass
    assert o[4].sum() == 0 and o[5][e5] == 1 and o[5].sum() == 1       # t=2: only E5
    assert o[6:8].sum() == 0                                            # t=3: empty board
    assert (o[2 * T] == 0).all()

    play(g, s, ["A1"])              # black to move: planes flip to black's view
    o = s.encode()[0]
    assert o[0][e5] == 1 and o[1][d4] == 1 and o[1][8, 0] == 1
    assert (o[2 * T] == 1).all()


def test_encode_history_restores_captured_stones(g9):
    s = setup(g9, black=["E5"], white=["E6", "D5", "F5"])
    play(g9, s, ["A1", "E4"])       # white captures E5; black to move
    o = s.encode()[0]
    e5 = (4, 4)
    assert o[0][e5] == 0 and o[1][e5] == 0        # t=0: E5 empty
    assert o[2][e5] == 1                          # t=1 (before E4): black E5 was there
    assert o[3][5, 4] == 0 and o[1][5, 4] == 1    # white E4 only at t=0


def test_encode_matches_board_history_long_games():
    # Check the undo-log history planes against boards recorded move by move.
    g = GoGame(7, max_moves=200)
    B = 16
    s = g.new_states(B)
    rng = np.random.default_rng(3)
    boards = [[np.zeros((7, 7), np.int8)] for _ in range(B)]
    for _ in range(120):
        m = s.legal_mask()
        if not m.any(axis=1).any():
            break
        r = rng.random(m.shape)
        r[:, -1] *= 0.02                          # rarely pass: long games, many captures
        a = np.where(m, r, -1).argmax(1).astype(np.int32)
        a[s.terminal()] = NO_ACTION
        s.apply(a)
        for b in range(B):
            if a[b] != NO_ACTION:
                boards[b].append(s.board(b))
        obs = s.encode()
        tp = s.to_play()
        for b in range(B):
            me, op = 1 + tp[b], 2 - tp[b]
            for t in range(T):
                hist = boards[b][-1 - t] if t < len(boards[b]) else np.zeros((7, 7), np.int8)
                np.testing.assert_array_equal(obs[b, 2 * t], hist == me)
                np.testing.assert_array_equal(obs[b, 2 * t + 1], hist == op)


# ---------------------------------------------------------------- batch plumbing

def test_copy_take_put_reset_independence(g9):
    s = g9.new_states(3)
    play(g9, s, ["E5", "D4"], index=1)
    c = s.copy()
    play(g9, s, ["C3"], index=1)
    assert c.num_moves()[1] == 2 and s.num_moves()[1] == 3
    assert c.board(1)[6, 2] == 0 and s.board(1)[6, 2] == 1

    t = s.take(np.array([1, 1, 0]))
    assert len(t) == 3
    np.testing.assert_array_equal(t.num_moves(), [3, 3, 0])
    play(g9, t, ["A1"], index=0)
    assert t.num_moves()[1] == 3 and s.num_moves()[1] == 3           # rows independent

    s.put(np.array([2]), t.take(np.array([0])))
    np.testing.assert_array_equal(s.num_moves(), [0, 3, 4])
    np.testing.assert_array_equal(s.board(2), t.board(0))
    play(g9, t, ["B1"], index=0)
    assert s.num_moves()[2] == 4                                       # put copied, not aliased

    s.put(np.array([0, 2]), s.take(np.array([2, 0])))                  # swap via self
    np.testing.assert_array_equal(s.num_moves(), [4, 3, 0])

    s.reset(np.array([0]))
    np.testing.assert_array_equal(s.num_moves(), [0, 3, 0])
    assert s.board(0).sum() == 0 and s.legal_mask()[0].all()
    s.reset()
    assert (s.num_moves() == 0).all() and s.legal_mask().all()
    # reset clears the superko history too: replaying the same positions is legal
    k = ko_position(g9)
    play(g9, k, ["E5"])
    k.reset()
    assert_same(snapshot(k), snapshot(g9.new_states(1)))
    play(g9, k, KO_SETUP + ["E5"])
    assert not legal(g9, k, "D5")


def test_apply_no_action_and_batch_mixing(g9):
    s = g9.new_states(3)
    before = snapshot(s)
    s.apply(np.full(3, NO_ACTION, np.int32))
    assert_same(before, snapshot(s))
    s.apply(np.array([40, NO_ACTION, 81], np.int64))          # any integer dtype
    np.testing.assert_array_equal(s.num_moves(), [1, 0, 1])
    np.testing.assert_array_equal(s.to_play(), [1, 0, 1])


def test_apply_paths(g9):
    s = g9.new_states(3)
    paths = np.array([[40, 30, NO_ACTION], [NO_ACTION, NO_ACTION, NO_ACTION], [81, 81, NO_ACTION]], np.int32)
    s.apply_paths(paths)
    np.testing.assert_array_equal(s.num_moves(), [2, 0, 2])
    np.testing.assert_array_equal(s.terminal(), [False, False, True])
    s.apply_paths(np.zeros((3, 0), np.int32))
    np.testing.assert_array_equal(s.num_moves(), [2, 0, 2])
    # equivalent to applying column by column
    r = g9.new_states(3)
    for j in range(paths.shape[1]):
        r.apply(paths[:, j])
    assert_same(snapshot(r), snapshot(s))


def test_apply_paths_rejects_atomically(g9):
    s = g9.new_states(3)
    play(g9, s, ["E5"], index=2)
    before = snapshot(s)
    paths = np.array([[40, 41], [10, 10], [0, 1]], np.int32)     # state 1 plays onto its own stone
    with pytest.raises(IllegalActionError, match=r"state 1, path step 1: action 10 \(B8\).*occupied"):
        s.apply_paths(paths)
    assert_same(before, snapshot(s))
    with pytest.raises(IllegalActionError, match="game is over"):
        s.apply_paths(np.array([[81, 81, 5], [NO_ACTION] * 3, [NO_ACTION] * 3], np.int32))
    assert_same(before, snapshot(s))
    with pytest.raises(ValueError, match="paths"):
        s.apply_paths(np.zeros((2, 2), np.int32))
    with pytest.raises(ValueError, match="paths"):
        s.apply_paths(np.zeros((3, 2), np.float32))


def test_random_playout_reproducible_and_batch_independent():
    g = GoGame(9)
    a = g.new_states(8)
    out_a = a.random_playout(seed=123)
    b = g.new_states(3)
    out_b = b.random_playout(seed=123)
    np.testing.assert_array_equal(out_a[:3], out_b)
    for i in range(3):
        np.testing.assert_array_equal(a.board(i), b.board(i))
    assert a.terminal().all()
    np.testing.assert_array_equal(out_a, a.outcome())
    np.testing.assert_array_equal(np.sign(a.score()), out_a)
    c = g.new_states(8)
    c.random_playout(seed=7)
    assert any(not np.array_equal(a.board(i), c.board(i)) for i in range(8))
    # in place from a mid-game position, with out=
    d = g.new_states(2)
    play(g, d, ["E5", "D4"], index=0)
    out = np.empty(2, np.float32)
    res = d.random_playout(seed=1, out=out)
    assert res is out and d.terminal().all() and d.num_moves()[0] >= 2
    # Random games mostly end by max_moves; both kinds of ending occur.
    many = g.new_states(64)
    many.random_playout(seed=5)
    assert (many.num_moves() == 162).any() and (many.num_moves() < 162).any()


def test_random_playout_on_finished_games_is_a_no_op():
    g = GoGame(5)
    s = g.new_states(2)
    s.apply(np.array([25, 25], np.int32))
    s.apply(np.array([25, 25], np.int32))
    before = snapshot(s)
    s.random_playout(seed=0)
    assert_same(before, snapshot(s))


def test_pickle_round_trip(g9):
    import pickle
    s = setup(g9, black=["D6", "C5", "D4"], white=["E6", "F5", "E4", "D5"], batch=2)
    play(g9, s, ["E5"])
    g2 = pickle.loads(pickle.dumps(g9))
    assert g2.spec == g9.spec
    s2 = pickle.loads(pickle.dumps(s))
    assert_same(snapshot(s), snapshot(s2))
    assert not legal(g2, s2, "D5")              # superko history travels too
    s2.put(np.array([1]), g2.new_states(1))     # compatible with batches of the unpickled game


def test_empty_batch():
    g = GoGame(9)
    s = g.new_states(0)
    assert len(s) == 0
    assert s.legal_mask().shape == (0, 82) and s.encode().shape == (0, 10, 9, 9)
    s.apply(np.zeros(0, np.int32))
    s.apply_paths(np.zeros((0, 3), np.int32))
    assert s.random_playout(0).shape == (0,)
    assert len(s.take(np.zeros(0, np.int64))) == 0


# ---------------------------------------------------------------- bad input

def test_illegal_apply_leaves_every_state_unchanged(g9):
    s = g9.new_states(4)
    play(g9, s, ["E5"], index=1)
    before = snapshot(s)
    for bad, pattern in [
        ([0, 40, 1, 2], r"state 1: action 40 \(E5\).*occupied"),
        ([0, 1, 2, 82], r"state 3: action 82 is out of range \[0, 82\)"),
        ([0, 1, -2, 3], r"state 2: action -2 is out of range"),
        ([0, 1, 2, 1000], r"state 3: action 1000"),
    ]:
        with pytest.raises(IllegalActionError, match=pattern):
            s.apply(np.array(bad, np.int32))
        assert_same(before, snapshot(s))


def test_bad_shapes_and_out_buffers(g9):
    s = g9.new_states(2)
    with pytest.raises(ValueError, match=r"actions: expected shape \(2,\)"):
        s.apply(np.zeros(3, np.int32))
    with pytest.raises(ValueError, match="integer"):
        s.apply(np.zeros(2, np.float64))
    checks = [
        (s.legal_mask, (2, 82), np.bool_),
        (s.terminal, (2,), np.bool_),
        (s.to_play, (2,), np.int8),
        (s.outcome, (2,), np.float32),
        (s.num_moves, (2,), np.int32),
        (s.score, (2,), np.float32),
        (s.encode, (2, 10, 9, 9), np.float32),
    ]
    for fn, shape, dtype in checks:
        with pytest.raises(ValueError, match=r"shape"):
            fn(out=np.zeros((3,) + shape[1:], dtype))
        with pytest.raises(ValueError, match=r"dtype"):
            fn(out=np.zeros(shape, np.float64 if dtype != np.float64 else np.int8))
        with pytest.raises(ValueError, match="not C-contiguous"):
            fn(out=np.zeros(shape[::-1], dtype).T if len(shape) > 1 else np.zeros(shape[0] * 2, dtype)[::2])
        out = np.zeros(shape, dtype)
        assert fn(out=out) is out
    with pytest.raises(ValueError, match="random_playout"):
        s.random_playout(0, out=np.zeros(2, np.float64))
    with pytest.raises(ValueError, match="index"):
        s.take(np.array([2]))
    with pytest.raises(ValueError, match="index"):
        s.take(np.array([[0]]))
    with pytest.raises(ValueError, match="index"):
        s.reset(np.array([-1]))
    with pytest.raises(ValueError, match="len"):
        s.put(np.array([0, 1]), s.take(np.array([0])))
    with pytest.raises(ValueError, match="go5x5"):
        s.put(np.array([0]), GoGame(5).new_states(1))
    with pytest.raises(ValueError, match="params"):
        s.put(np.array([0]), GoGame(9, komi=6.5).new_states(1))
    with pytest.raises(TypeError):
        s.put(np.array([0]), "not states")
    with pytest.raises(IndexError, match=r"out of range \[0, 2\)"):
        s.board(2)
    with pytest.raises(IndexError):
        s.render(-1)


def test_render(g9):
    s = setup(g9, black=["A9"], white=["J1"])
    text = s.render(0)
    lines = text.splitlines()
    assert lines[0].split() == list("ABCDEFGHJ")
    assert lines[1].split()[:2] == ["9", "X"] and lines[9].split()[-2:] == ["O", "1"]
    assert "Black" in text and "2 moves" in text
    play(g9, s, ["pass", "pass"])
    assert "W+" in s.render(0)


def test_other_board_sizes_play_to_the_end():
    for n in (2, 3, 13, 19):
        g = GoGame(n)
        s = g.new_states(4)
        out = s.random_playout(seed=n)
        assert s.terminal().all() and (s.num_moves() <= 2 * n * n).all()
        np.testing.assert_array_equal(out, np.sign(s.score()))
        assert s.encode().shape == (4, 10, n, n)


# ---------------------------------------------------------------- internals vs a slow reference

def _groups(board):
    """(stones, liberties) of every group of an int8 [N, N] board, by flood fill."""
    n = board.shape[0]
    seen = np.zeros_like(board, bool)
    out = []
    for r0 in range(n):
        for c0 in range(n):
            if board[r0, c0] == 0 or seen[r0, c0]:
                continue
            col, stack, stones, libs = board[r0, c0], [(r0, c0)], [], set()
            seen[r0, c0] = True
            while stack:
                r, c = stack.pop()
                stones.append((r, c))
                for rr, cc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
                    if 0 <= rr < n and 0 <= cc < n:
                        if board[rr, cc] == 0:
                            libs.add((rr, cc))
                        elif board[rr, cc] == col and not seen[rr, cc]:
                            seen[rr, cc] = True
                            stack.append((rr, cc))
            out.append((stones, libs))
    return out


def _group_at(board, r0, c0):
    """(stones, liberties) of the group on (r0, c0), by flood fill."""
    n, col = board.shape[0], board[r0, c0]
    stack, stones, libs = [(r0, c0)], {(r0, c0)}, set()
    while stack:
        r, c = stack.pop()
        for rr, cc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
            if 0 <= rr < n and 0 <= cc < n and (rr, cc) not in stones:
                if board[rr, cc] == 0:
                    libs.add((rr, cc))
                elif board[rr, cc] == col:
                    stones.add((rr, cc))
                    stack.append((rr, cc))
    return stones, libs


def _reference_legal(board, colour, history):
    """Legal on-board moves of `colour` (1 black, 2 white) by brute force: place, capture,
    no suicide, no repetition of any board in `history` (a set of bytes)."""
    n = board.shape[0]
    legal = np.zeros(n * n, bool)
    for a in range(n * n):
        r, c = divmod(a, n)
        if board[r, c]:
            continue
        b = board.copy()
        b[r, c] = colour
        for rr, cc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
            if 0 <= rr < n and 0 <= cc < n and b[rr, cc] == 3 - colour:
                stones, libs = _group_at(b, rr, cc)
                if not libs:
                    for st in stones:
                        b[st] = 0
        if not _group_at(b, r, c)[1]:
            continue        # suicide: the own group has no liberty left
        legal[a] = b.tobytes() not in history
    return legal


def _random_games(n, batch, moves, seed, pass_prob=0.03):
    """Yield (states, actions just played) after each step of random games with few passes."""
    g = GoGame(n, max_moves=moves)
    s = g.new_states(batch)
    rng = np.random.default_rng(seed)
    for _ in range(moves):
        m = s.legal_mask()
        r = rng.random(m.shape)
        r[:, -1] = pass_prob
        a = np.where(m, r, -1).argmax(1).astype(np.int32)
        a[s.terminal()] = NO_ACTION
        if (a == NO_ACTION).all():
            break
        s.apply(a)
        yield s, a


@pytest.mark.parametrize("n", [2, 3, 4, 5, 7, 8, 9, 11, 13, 19])
def test_bitboards_and_stone_counts_agree_with_the_board(n):
    # The bitboards, the ATARI bits behind one of them and the stone counts are kept
    # incrementally; recompute them from the board after every move.
    moves = min(3 * n * n, 300)
    most = None
    for s, _ in _random_games(n, 4, moves, seed=n):
        if most is None:
            most = np.zeros(len(s), int)
        for b in range(len(s)):
            board = s.board(b)
            bits, clear, nstones, max_stones = s._internals(b)
            atari = np.zeros_like(board, bool)
            for stones, libs in _groups(board):
                if len(libs) == 1:
                    for st in stones:
                        atari[st] = True
            np.testing.assert_array_equal(bits[0], board == 0)
            np.testing.assert_array_equal(bits[1], board == 1)
            np.testing.assert_array_equal(bits[2], board == 2)
            np.testing.assert_array_equal(bits[3], atari)
            assert clear
            assert nstones == np.count_nonzero(board)
            most[b] = max(most[b], nstones)
            assert max_stones == most[b]


@pytest.mark.parametrize("n, seed", [(3, 0), (4, 1), (5, 2), (6, 3), (9, 4), (19, 5)])
def test_legal_mask_matches_brute_force_with_superko(n, seed):
    # Long random games on small boards capture a lot and run into repetitions, so
    # the stone-count shortcut, the bitboard classification and the bloom filter all
    # face positions where they must (and must not) report superko.
    batch = 6 if n <= 6 else 2 if n <= 9 else 1
    history = [{np.zeros((n, n), np.int8).tobytes()} for _ in range(batch)]
    repetitions = 0
    for s, a in _random_games(n, batch, min(4 * n * n, 240), seed):
        mask = s.legal_mask()
        term, tp = s.terminal(), s.to_play()
        for b in range(batch):
            board = s.board(b)
            if a[b] != NO_ACTION:
                history[b].add(board.tobytes())
            if term[b]:
                assert not mask[b].any()
                continue
            ref = _reference_legal(board, 1 + tp[b], history[b])
            repetitions += np.count_nonzero(ref != _reference_legal(board, 1 + tp[b], set()))
            np.testing.assert_array_equal(mask[b, :-1], ref)
            assert mask[b, -1]
        # apply's own check agrees with the mask: each illegal empty point is refused.
        for b in range(batch):
            if term[b]:
                continue
            probe = s.take(np.array([b]))
            for bad in np.flatnonzero(~mask[b, :-1] & (s.board(b).ravel() == 0)):
                with pytest.raises(IllegalActionError):
                    probe.apply(np.array([bad], np.int32))
    if n <= 5:
        assert repetitions > 0      # the games did exercise superko


def test_argument_fast_paths_agree_with_the_general_checks(g9):
    # load_paths / query / legal_mask / terminal / apply take the search's own buffers
    # (exact ndarrays of the native dtype) without the Python checks; anything else goes
    # through them and must give the same results or the same errors.
    roots = setup(g9, black=["C3", "D4"], white=["E5"], batch=3)
    index, paths = np.array([0, 2], np.int64), np.array([[0, 1], [NO_ACTION, 8]], np.int32)
    fast, general = g9.new_states(2), g9.new_states(2)
    fast.load_paths(roots, index, paths)
    general.load_paths(roots, [0, 2], paths.astype(np.int64).tolist())
    assert_same(snapshot(fast), snapshot(general))
    with pytest.raises(ValueError, match="index"):
        fast.load_paths(roots, np.array([0, 3], np.int64), paths)
    with pytest.raises(ValueError, match="paths"):
        fast.load_paths(roots, index, paths[:1])
    with pytest.raises(IllegalActionError, match="state 1, path step 1"):
        fast.load_paths(roots, index, np.array([[0, 1], [8, 8]], np.int32))

    bufs = [np.zeros((2, 82), bool), np.zeros(2, bool), np.zeros(2, np.int8), np.zeros(2, np.float32)]
    fast.query(2, *bufs)
    for legal, terminal in [(np.zeros((2, 82), np.uint8), np.zeros(2, np.uint8)),
                            (np.zeros((3, 82), bool), np.zeros(3, bool))]:
        rest = [np.zeros(len(terminal), np.int8), np.zeros(len(terminal), np.float32)]
        general.query(2, legal, terminal, *rest)
        np.testing.assert_array_equal(legal[:2].astype(bool), bufs[0])
        np.testing.assert_array_equal(terminal[:2].astype(bool), bufs[1])
    np.testing.assert_array_equal(fast.legal_mask(), bufs[0])

    read_only = np.zeros((2, 82), bool)
    read_only.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        fast.legal_mask(out=read_only)
    with pytest.raises(ValueError, match="read-only"):
        fast.query(2, read_only, *bufs[1:])
    with pytest.raises(ValueError, match="read-only"):
        fast.terminal(out=read_only[0, :2])
    fast.apply(np.array([NO_ACTION, 72], np.int32))
    general.apply([NO_ACTION, 72])
    assert_same(snapshot(fast), snapshot(general))
