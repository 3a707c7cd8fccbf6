"""Pass-alive areas (Benson's algorithm) and final ownership of the native Go engine.

Known shapes with known answers, then agreement with the pure-Python reference
(azero.games.go_reference) on many seeded random positions, and a soundness check:
pass-alive stones survive whatever the opponent plays while their owner passes.

Positions are drawn as rows of 'X' (black), 'O' (white), '.' (empty), top row
first, and reached by alternating moves with passes filling in (as in test_go.py:
adding stones only removes liberties, so any legal final position is reachable).
"""

import numpy as np
import pytest

from azero.games import go_reference as ref
from azero.games.base import NO_ACTION
from azero.games.go import GoGame

from gopositions import drawn_position, random_positions


def position(rows, komi=7.5, to_play=None, **kw):
    """(game, states of batch 1) holding the drawn position."""
    return drawn_position(rows, komi, to_play, **kw)


def area(states, index=0):
    """pass_alive() of state `index` as rows of 'B' (black's area), 'W' (white's), '.'."""
    n = states.board(index).shape[0]
    pa = states.pass_alive()[index].reshape(n, n)
    return ["".join({1: "B", -1: "W", 0: "."}[int(x)] for x in row) for row in pa]


def check_reference(states, index=0):
    """The native pass_alive agrees with the reference on this position; returns area()."""
    n = states.board(index).shape[0]
    np.testing.assert_array_equal(states.pass_alive()[index].reshape(n, n), ref.pass_alive(states.board(index)))
    return area(states, index)


# ---------------------------------------------------------------- Benson on known shapes

def test_empty_board_has_no_pass_alive_area():
    g = GoGame(9)
    s = g.new_states(2)
    assert not s.pass_alive().any()
    assert s.pass_alive().shape == (2, 81) and s.pass_alive().dtype == np.int8


def test_two_true_eyes_are_pass_alive_with_their_eyes():
    _, s = position([".X.XX",
                     "XXXXX",
                     ".....",
                     "..O..",
                     "....."])
    # The stones and both eyes; the open area below is no territory (a white group could live there).
    assert check_reference(s) == ["BBBBB",
                                  "BBBBB",
                                  ".....",
                                  ".....",
                                  "....."]


def test_two_separate_one_point_eyes_in_the_corner():
    _, s = position([".....",
                     ".....",
                     "OOOOO",
                     "XXXXO",
                     ".X.X."])
    # A1 and C1 are eyes of one black chain (B1-B2, D1-D2 join along row 2); E1 is nobody's.
    assert check_reference(s) == [".....",
                                  ".....",
                                  ".....",
                                  "BBBB.",
                                  "BBBB."]


def test_one_eye_and_a_false_eye_are_not_pass_alive():
    # C5 looks like a second eye, but white B4 cuts A5-B5 off: A5-B5 has C5 as its only vital
    # region, dies, and takes C5 with it, so the big chain keeps one eye (E5) and dies too.
    _, s = position(["XX.X.",
                     ".OXXX",
                     "OOX..",
                     ".....",
                     "....."])
    assert check_reference(s) == ["....."] * 5
    # With B4 black instead the chain is one and C5 a true eye: two eyes, pass-alive.
    _, s = position(["XX.X.",
                     ".XXXX",
                     "..X..",
                     ".....",
                     "....."])
    assert check_reference(s) == ["BBBBB",
                                  ".BBBB",
                                  "..B..",
                                  ".....",
                                  "....."]


def test_seki_is_pass_alive_for_neither_side():
    # Top two rows a seki (shared liberties A4, D4); black's lower group has two eyes.
    _, s = position([".XX.",
                     "OOOO",
                     "XXXX",
                     ".X.X"])
    assert check_reference(s) == ["....",
                                  "....",
                                  "BBBB",
                                  "BBBB"]


def test_a_big_eye_alone_is_not_pass_alive():
    # One enclosed region whose empty points are not all liberties of the chain.
    _, s = position(["...X.",
                     "...X.",
                     "XXXX.",
                     ".....",
                     "....."])
    assert check_reference(s) == ["....."] * 5
    # Nor is a single small (vital) eye: a chain needs two.
    _, s = position(["...X.",
                     "XXXX.",
                     ".....",
                     ".....",
                     "....."])
    assert check_reference(s) == ["....."] * 5


def test_dead_stones_inside_pass_alive_territory_belong_to_it():
    # White B1 sits in black's eye A1-C1 (every point of it next to black): black's area.
    _, s = position([".....",
                     ".....",
                     ".....",
                     "XXXXX",
                     ".O.X."])
    assert check_reference(s) == [".....",
                                  ".....",
                                  ".....",
                                  "BBBBB",
                                  "BBBBB"]


def test_white_pass_alive_area_is_negative():
    _, s = position(["O.OO.",
                     "OOOOO",
                     ".....",
                     ".....",
                     "X...."])
    assert check_reference(s) == ["WWWWW",
                                  "WWWWW",
                                  ".....",
                                  ".....",
                                  "....."]


def test_a_region_with_two_inner_points_is_not_territory():
    # The chain is pass-alive (eyes A7, C7, E7, G7), but the 5x3 pocket inside it has three points
    # (C4, D4, E4) next to no black stone: no territory, though only the alive chain borders it.
    # Row 1 is: each of its points touches row 2.
    _, s = position([".X.X.X.",
                     "XXXXXXX",
                     "X.....X",
                     "X.....X",
                     "X.....X",
                     "XXXXXXX",
                     "......."])
    assert check_reference(s) == ["BBBBBBB",
                                  "BBBBBBB",
                                  "B.....B",
                                  "B.....B",
                                  "B.....B",
                                  "BBBBBBB",
                                  "BBBBBBB"]


def test_a_region_with_one_inner_point_is_territory():
    # The pocket D6 / C5-E5 / D4 (a plus shape around D5) has one point, D5, next to no black stone;
    # rows 1-2 below have seven (row 1), so they are no territory.
    _, s = position([".X.X.X.",
                     "XXX.XXX",
                     "XX...XX",
                     "XXX.XXX",
                     "XXXXXXX",
                     ".......",
                     "......."])
    got = check_reference(s)
    assert got[:5] == ["BBBBBBB"] * 5 and got[5:] == ["......."] * 2


# ---------------------------------------------------------------- Benson on random positions

@pytest.mark.parametrize("n, seed", [(5, 1), (7, 2), (9, 3), (13, 4)])
def test_pass_alive_matches_the_reference_on_random_positions(n, seed):
    g = GoGame(n, max_moves=3 * n * n)
    s = random_positions(g, 32, seed, 2 * n * n)
    finished = s.copy()
    finished.random_playout(seed)           # played out: most groups have their eyes, many are pass-alive
    marked = 0
    for states in (s, finished):
        pa = states.pass_alive()
        for b in range(len(states)):
            board = states.board(b)
            black = ref.pass_alive_area(board, ref.BLACK)
            white = ref.pass_alive_area(board, ref.WHITE)
            assert not black & white            # the two areas never overlap
            np.testing.assert_array_equal(pa[b].reshape(n, n), ref.pass_alive(board))
            marked += len(black) + len(white)
    assert marked > 0


def test_pass_alive_stones_survive_while_their_owner_passes():
    # Benson's guarantee: whatever the opponent plays, a pass-alive chain is never captured and
    # pass-alive territory stays the owner's area (it can only grow).
    n = 7
    g = GoGame(n, max_moves=400)
    start = random_positions(g, 24, seed=5, plies=90)
    rng = np.random.default_rng(6)
    for owner in (0, 1):
        s = start.copy()
        sign = 1 if owner == 0 else -1
        before = s.pass_alive() == sign
        stones = np.stack([s.board(b).reshape(-1) for b in range(len(s))])
        own_stones = before & (stones == 1 + owner)
        for _ in range(60):
            live = ~s.terminal()
            if not live.any():
                break
            m = s.legal_mask()
            m[:, -1] = False                     # the opponent never passes while it has a move
            r = np.where(m, rng.random(m.shape), -1)
            a = np.where(m.any(1), r.argmax(1), g.spec.pass_action).astype(np.int32)
            a[s.to_play() == owner] = g.spec.pass_action
            a[~live] = NO_ACTION
            s.apply(a)
            now = np.stack([s.board(b).reshape(-1) for b in range(len(s))])
            assert (now[own_stones] == 1 + owner).all()
            assert (s.pass_alive()[before] == sign).all()
        assert own_stones.any()


# ---------------------------------------------------------------- ownership and score

def test_ownership_of_a_seki_and_its_eyes():
    g, s = position([".XX.",
                     "OOOO",
                     "XXXX",
                     ".X.X"], komi=0.5)
    own = s.ownership()[0].reshape(4, 4)
    np.testing.assert_array_equal(own, [[0, 1, 1, 0],          # the seki liberties A4, D4 are neutral
                                        [-1, -1, -1, -1],
                                        [1, 1, 1, 1],
                                        [1, 1, 1, 1]])         # the eyes A1, C1 are black's
    assert s.score()[0] == own.sum() - 0.5 == pytest.approx(10 - 4 - 0.5)


def test_ownership_counts_dame_and_the_empty_board_as_neutral():
    g, s = position(["X.O",
                     "X.O",
                     "X.O"], komi=0.5)
    np.testing.assert_array_equal(s.ownership()[0].reshape(3, 3), [[1, 0, -1]] * 3)
    assert s.score()[0] == -0.5
    e = GoGame(5).new_states(3)
    assert not e.ownership().any() and e.ownership().shape == (3, 25) and e.ownership().dtype == np.int8
    # Black alone on the board owns every empty point.
    g, s = position(["...", ".X.", "..."], komi=0.5)
    np.testing.assert_array_equal(s.ownership()[0], np.ones(9, np.int8))


@pytest.mark.parametrize("n, komi", [(5, 0.5), (9, 7.5), (13, 6.0), (19, 7.5)])
def test_score_is_ownership_sum_minus_komi_on_finished_games(n, komi):
    g = GoGame(n, komi=komi)
    s = g.new_states(16)
    s.random_playout(n)
    assert s.terminal().all()
    own = s.ownership()
    np.testing.assert_array_equal(s.score(), (own.sum(1) - np.float32(komi)).astype(np.float32))
    np.testing.assert_array_equal(s.final_score(), s.score())
    np.testing.assert_array_equal(s.outcome(), np.sign(s.score()))
    for b in range(4):
        np.testing.assert_array_equal(own[b].reshape(n, n), ref.ownership(s.board(b)))


def test_ownership_matches_the_reference_mid_game():
    g = GoGame(9, max_moves=300)
    s = random_positions(g, 32, seed=7, plies=120)
    own = s.ownership()
    np.testing.assert_array_equal(s.score(), own.sum(1) - np.float32(7.5))
    for b in range(len(s)):
        np.testing.assert_array_equal(own[b].reshape(9, 9), ref.ownership(s.board(b)))


def test_final_score_is_zero_until_the_game_is_over():
    g = GoGame(5, komi=0.5)
    s = g.new_states(2)
    s.apply(np.array([12, 25], np.int32))           # C3 in state 0; a pass in state 1
    assert not s.terminal().any()
    np.testing.assert_array_equal(s.final_score(), [0.0, 0.0])
    assert s.score()[0] == 24.5                     # score() is the position as it stands
    s.apply(np.array([25, 25], np.int32))
    s.apply(np.array([25, NO_ACTION], np.int32))
    np.testing.assert_array_equal(s.terminal(), [True, True])
    np.testing.assert_array_equal(s.final_score(), [24.5, -0.5])


def test_out_buffers_are_checked_and_filled():
    g = GoGame(5)
    s = g.new_states(2)
    out = np.full((2, 25), 9, np.int8)
    assert s.ownership(out) is out and not out.any()
    out[:] = 9
    assert s.pass_alive(out) is out and not out.any()
    for method in (s.ownership, s.pass_alive):
        with pytest.raises(ValueError, match=r"\(2, 25\)"):
            method(np.zeros((2, 26), np.int8))
        with pytest.raises(ValueError, match="int8"):
            method(np.zeros((2, 25), np.int16))
    with pytest.raises(ValueError, match="final_score"):
        s.final_score(np.zeros(3, np.float32))
    empty = g.new_states(0)
    assert empty.ownership().shape == (0, 25) and empty.pass_alive().shape == (0, 25)
    assert empty.final_score().shape == (0,)


def test_chains_agree_with_a_flood_fill_on_random_positions():
    # GoStates.chains (the engine's group lists, exact liberties) against a plain flood fill
    n = 7
    states = random_positions(GoGame(n), 24, seed=5, plies=60)
    for k in range(len(states)):
        flat = states.board(k).reshape(-1)
        chain, liberties = states.chains(k)
        for p in range(n * n):
            if flat[p] == 0:
                assert chain[p] == -1 and not liberties[p].any()
                continue
            group, stack, libs = {p}, [p], set()
            while stack:
                q = stack.pop()
                r, c = divmod(q, n)
                for nb, ok in ((q - n, r > 0), (q + n, r < n - 1), (q - 1, c > 0), (q + 1, c < n - 1)):
                    if not ok:
                        continue
                    if flat[nb] == 0:
                        libs.add(nb)
                    elif flat[nb] == flat[p] and nb not in group:
                        group.add(nb)
                        stack.append(nb)
            assert {int(a) for a in np.flatnonzero(chain == chain[p])} == group
            assert chain[p] in group and set(np.flatnonzero(liberties[p]).tolist()) == libs
