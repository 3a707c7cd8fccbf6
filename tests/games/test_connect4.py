"""Connect four engine: known positions, the batched States contract, bad input,
random playouts, and a move-by-move differential test against OpenSpiel."""

from __future__ import annotations

import numpy as np
import pyspiel
import pytest

from azero.games import NO_ACTION, IllegalActionError, States, make_game
from azero.games.connect4 import Connect4Game

from statecheck import assert_same, exact_random_play_distribution, snapshot

# A real drawn game found by random play and checked by OpenSpiel: 42 moves, columns 1-based.
DRAWN_GAME = "472424756645422154157737216635626711335331"


def cols(moves: str) -> list[int]:
    """'1122' -> [0, 0, 1, 1]: moves in the usual 1-based column notation to actions."""
    return [int(m) - 1 for m in moves]


def mirror(moves: str) -> str:
    return "".join(str(8 - int(m)) for m in moves)


def play(moves: str, batch: int = 1):
    """States after `moves` (same game in every row), checking no row ended before the last move."""
    states = Connect4Game().new_states(batch)
    for a in cols(moves):
        assert not states.terminal().any()
        states.apply(np.full(batch, a, dtype=np.int32))
    return states


def test_spec_and_registry():
    game = make_game("connect4")
    assert isinstance(game, Connect4Game)
    spec = game.spec
    assert (spec.name, spec.num_actions, spec.obs_shape, spec.board_shape) == ("connect4", 7, (3, 6, 7), (6, 7))
    assert (spec.max_moves, spec.pass_action, spec.symmetry) == (42, None, "mirror_lr")
    states = game.new_states(5)
    assert isinstance(states, States)
    assert len(states) == 5 and states.spec is spec


def test_notation_roundtrip_and_errors():
    game = Connect4Game()
    assert [game.action_to_str(a) for a in range(7)] == list("1234567")
    assert all(game.str_to_action(game.action_to_str(a)) == a for a in range(7))
    assert game.str_to_action(" 4 ") == 3
    for bad in ["0", "8", "", "12", "a", "-1"]:
        with pytest.raises(IllegalActionError, match="column number"):
            game.str_to_action(bad)
    with pytest.raises(IllegalActionError):
        game.action_to_str(7)


def test_initial_position():
    states = Connect4Game().new_states(3)
    assert states.legal_mask().all()
    assert not states.terminal().any()
    np.testing.assert_array_equal(states.to_play(), [0, 0, 0])
    np.testing.assert_array_equal(states.num_moves(), [0, 0, 0])
    np.testing.assert_array_equal(states.outcome(), [0, 0, 0])
    assert (states.board(0) == 0).all()
    assert Connect4Game().new_states(0).legal_mask().shape == (0, 7)


# Each sequence is won by the first player on its last move and only there.
# Prefixing a move in a far column hands the same shape to the second player.
DIAG_UP = "12233434464"  # X on (col, row) (1,1) (2,2) (3,3) (4,4), rising to the right
WINS = {
    "horizontal": "1122334",
    "vertical": "1212121",
    "diagonal_up": DIAG_UP,
    "diagonal_down": mirror(DIAG_UP),
}


@pytest.mark.parametrize("direction", sorted(WINS))
@pytest.mark.parametrize("winner", [0, 1])
def test_wins_in_every_direction(direction, winner):
    moves = WINS[direction]
    if winner == 1:
        moves = ("1" if direction == "diagonal_down" else "7") + moves
    states = play(moves[:-1], batch=2)
    assert not states.terminal().any()
    states.apply(np.array([int(moves[-1]) - 1, NO_ACTION], dtype=np.int32))
    np.testing.assert_array_equal(states.terminal(), [True, False])
    np.testing.assert_array_equal(states.outcome(), [1.0 if winner == 0 else -1.0, 0.0])
    assert not states.legal_mask()[0].any() and states.legal_mask()[1].any()
    assert states.num_moves()[0] == len(moves)
    assert ("X won" if winner == 0 else "O won") in states.render(0)


def test_no_win_across_column_boundary():
    # X on rows 4-6 of column 1 plus row 1 of column 2 would be four consecutive bits
    # (3, 4, 5, 7 -> 3, 4, 5, 6) without the sentinel row; it must not count as a win.
    states = play("7171611716172")
    board = states.board(0)
    assert list(board[:, 0]) == [1, 1, 1, 2, 2, 2]  # top to bottom: three X above three O
    assert board[5, 1] == 1
    assert not states.terminal()[0]


def test_full_board_draw():
    assert len(DRAWN_GAME) == 42
    states = play(DRAWN_GAME)
    assert states.terminal()[0]
    assert states.outcome()[0] == 0.0
    assert states.num_moves()[0] == 42
    assert not states.legal_mask().any()
    assert (states.board(0) != 0).all()
    assert "draw" in states.render(0)


def test_full_column_is_illegal_and_changes_nothing():
    states = play("111111", batch=3)
    assert not states.terminal().any()
    np.testing.assert_array_equal(states.legal_mask()[0], [False] + [True] * 6)
    before = snapshot(states)
    with pytest.raises(IllegalActionError, match=r"action 0 at batch index 2: column 1 is full"):
        states.apply(np.array([3, NO_ACTION, 0], dtype=np.int32))
    assert_same(before, snapshot(states))


def test_bad_actions_rejected_without_change():
    states = play("1212121", batch=2)  # row 0 and 1 both won by X
    states.reset(np.array([1]))
    before = snapshot(states)
    with pytest.raises(IllegalActionError, match=r"action 7 at batch index 1: out of range"):
        states.apply(np.array([NO_ACTION, 7], dtype=np.int32))
    with pytest.raises(IllegalActionError, match=r"action -2 at batch index 1: out of range"):
        states.apply(np.array([NO_ACTION, -2], dtype=np.int32))
    with pytest.raises(IllegalActionError, match=r"action 3 at batch index 0: the game is over"):
        states.apply(np.array([3, 3], dtype=np.int32))
    with pytest.raises(ValueError, match=r"expected shape \(2,\)"):
        states.apply(np.array([3], dtype=np.int32))
    with pytest.raises(ValueError, match="integer"):
        states.apply(np.array([3.0, 3.0]))
    assert_same(before, snapshot(states))
    states.apply(np.array([NO_ACTION, 3], dtype=np.int64))  # any integer dtype is accepted
    np.testing.assert_array_equal(states.num_moves(), [7, 1])


@pytest.mark.parametrize("method, shape, dtype", [
    ("legal_mask", (4, 7), np.bool_), ("terminal", (4,), np.bool_), ("to_play", (4,), np.int8),
    ("outcome", (4,), np.float32), ("num_moves", (4,), np.int32), ("encode", (4, 3, 6, 7), np.float32),
    ("ownership", (4, 42), np.int8),
])
def test_out_buffers(method, shape, dtype):
    states = play("4433", batch=4)
    fresh = getattr(states, method)()
    assert fresh.shape == shape and fresh.dtype == dtype
    out = np.full(shape, 7, dtype=dtype)
    assert getattr(states, method)(out=out) is out
    np.testing.assert_array_equal(out, fresh)
    wrong_shape = np.zeros((5,) + shape[1:], dtype=dtype)
    wrong_dtype = np.zeros(shape, dtype=np.float64)
    strided = np.zeros(shape[:-1] + (shape[-1] * 2,), dtype=dtype)[..., ::2]
    for bad in (wrong_shape, wrong_dtype, strided, list(fresh)):
        with pytest.raises(ValueError, match=method):
            getattr(states, method)(out=bad)


def test_random_playout_out_buffer():
    states = Connect4Game().new_states(4)
    with pytest.raises(ValueError, match=r"random_playout.*\(4,\)"):
        states.random_playout(0, out=np.zeros(4, dtype=np.float64))
    assert states.num_moves().sum() == 0  # the rejected call did not play
    out = np.zeros(4, dtype=np.float32)
    assert states.random_playout(0, out=out) is out
    np.testing.assert_array_equal(out, states.outcome())


def test_bad_indices():
    states = Connect4Game().new_states(4)
    for bad in (np.array([4]), np.array([-1]), np.array([[0]]), np.array([0.5]), [0, 9]):
        with pytest.raises(ValueError, match="index"):
            states.take(bad)
        with pytest.raises(ValueError, match="index"):
            states.reset(bad)
        with pytest.raises(ValueError, match="index"):
            states.put(bad, states.take(np.zeros(np.asarray(bad).size, dtype=np.int64)))
    with pytest.raises(ValueError, match="src has 2 states but index has 1"):
        states.put(np.array([0]), states.take(np.array([0, 1])))
    with pytest.raises(TypeError):
        states.put(np.array([0]), make_game("tictactoe").new_states(1))
    for bad in (4, -1, 1.0, "0"):
        with pytest.raises(IndexError, match=r"\[0, 4\)"):
            states.board(bad)
        with pytest.raises(IndexError, match=r"\[0, 4\)"):
            states.render(bad)


def test_encode_perspective():
    game = Connect4Game()
    states = game.new_states(3)
    states.apply(np.array([3, 3, NO_ACTION], dtype=np.int32))  # X in column 4 (rows 0, 1)
    states.apply(np.array([3, 0, NO_ACTION], dtype=np.int32))  # O on top of it / in column 1
    obs = states.encode()
    # Row 0: X (to move) owns the bottom of column 4, O the cell above; plane 2 is ones (X to move).
    expected = np.zeros((3, 6, 7), np.float32)
    expected[0, 5, 3] = 1
    expected[1, 4, 3] = 1
    expected[2] = 1
    np.testing.assert_array_equal(obs[0], expected)
    # After one more X stone the same stones appear with the planes swapped and plane 2 zero.
    states.apply(np.array([0, NO_ACTION, NO_ACTION], dtype=np.int32))
    obs = states.encode()
    flipped = np.zeros((3, 6, 7), np.float32)
    flipped[1, 5, 3] = flipped[1, 5, 0] = 1
    flipped[0, 4, 3] = 1
    np.testing.assert_array_equal(obs[0], flipped)
    np.testing.assert_array_equal(obs[2], np.concatenate([np.zeros((2, 6, 7)), np.ones((1, 6, 7))]))
    np.testing.assert_array_equal(states.to_play(), [1, 0, 0])


def test_encode_matches_board_everywhere():
    states = Connect4Game().new_states(64)
    rng = np.random.default_rng(1)
    for _ in range(30):
        m = states.legal_mask()
        a = np.where(m.any(1), (rng.random(m.shape) * m).argmax(1), NO_ACTION).astype(np.int32)
        states.apply(a)
        obs, tp = states.encode(), states.to_play()
        for b in range(0, 64, 7):
            board = states.board(b)
            own, opp = (1, 2) if tp[b] == 0 else (2, 1)
            np.testing.assert_array_equal(obs[b, 0], board == own)
            np.testing.assert_array_equal(obs[b, 1], board == opp)
            assert (obs[b, 2] == (1.0 if tp[b] == 0 else 0.0)).all()
            # ownership: the same cells in player 0's view (+1 X, -1 O), row-major like the planes
            np.testing.assert_array_equal(states.ownership()[b].reshape(6, 7),
                                          (board == 1).astype(np.int8) - (board == 2))


def test_copy_take_put_reset_are_independent():
    game = Connect4Game()
    states = game.new_states(4)
    states.apply_paths(np.array([cols("44"), [0, NO_ACTION], cols("77"), cols("12")], dtype=np.int32))
    before = snapshot(states)

    dup = states.copy()
    dup.apply(np.array([0, 0, 0, 0], dtype=np.int32))
    assert_same(before, snapshot(states))

    sub = states.take(np.array([2, 2, 0], dtype=np.int64))
    assert len(sub) == 3
    np.testing.assert_array_equal(sub.board(0), states.board(2))
    np.testing.assert_array_equal(sub.board(2), states.board(0))
    sub.apply(np.array([6, 5, NO_ACTION], dtype=np.int32))
    assert_same(before, snapshot(states))
    assert sub.board(0)[3, 6] == 1 and sub.board(1)[3, 6] == 0  # the two copies of row 2 diverged

    target = game.new_states(4)
    target.put(np.array([3, 1]), sub.take(np.array([0, 2])))
    np.testing.assert_array_equal(target.board(3), sub.board(0))
    np.testing.assert_array_equal(target.board(1), states.board(0))
    assert (target.board(0) == 0).all() and (target.board(2) == 0).all()
    sub.apply(np.array([5, 6, 0], dtype=np.int32))  # put copied, it does not alias
    assert sub.board(0)[5, 5] == 2 and target.board(3)[5, 5] == 0

    swapped = states.copy()
    swapped.put(np.array([0, 1]), swapped.take(np.array([1, 0])))
    np.testing.assert_array_equal(swapped.board(0), states.board(1))
    np.testing.assert_array_equal(swapped.board(1), states.board(0))
    swapped.put(np.array([1, 0, 2, 3]), swapped)  # self-put reads the states as they were: swaps back
    np.testing.assert_array_equal(swapped.board(0), states.board(0))
    np.testing.assert_array_equal(swapped.board(1), states.board(1))

    states.reset(np.array([0, 3]))
    np.testing.assert_array_equal(states.num_moves(), [0, 1, 2, 0])
    assert dup.num_moves()[0] == 3
    states.reset()
    np.testing.assert_array_equal(states.num_moves(), [0, 0, 0, 0])
    assert states.legal_mask().all() and not states.terminal().any()
    assert len(states.take(np.array([], dtype=np.int64))) == 0


def test_apply_with_no_action_leaves_rows_alone():
    states = Connect4Game().new_states(3)
    states.apply(np.array([NO_ACTION, 2, NO_ACTION], dtype=np.int32))
    np.testing.assert_array_equal(states.num_moves(), [0, 1, 0])
    np.testing.assert_array_equal(states.to_play(), [0, 1, 0])
    states.apply(np.full(3, NO_ACTION, dtype=np.int32))
    np.testing.assert_array_equal(states.num_moves(), [0, 1, 0])


def test_apply_paths_equals_sequential_apply():
    rng = np.random.default_rng(7)
    game = Connect4Game()
    B, L = 50, 12
    seq = game.new_states(B)
    paths = np.full((B, L), NO_ACTION, dtype=np.int32)
    for j in range(L):
        m = seq.legal_mask()
        a = np.where(m.any(1) & (rng.random(B) < 0.8), (rng.random(m.shape) * m).argmax(1), NO_ACTION)
        paths[:, j] = a
        seq.apply(a.astype(np.int32))
    by_paths = game.new_states(B)
    by_paths.apply_paths(paths)
    assert_same(snapshot(seq), snapshot(by_paths))
    empty = seq.copy()
    empty.apply_paths(np.zeros((B, 0), dtype=np.int32))
    assert_same(snapshot(seq), snapshot(empty))


def test_apply_paths_is_all_or_nothing():
    states = play("4", batch=3)
    before = snapshot(states)
    paths = np.array([cols("12"), cols("33"), [1, 7]], dtype=np.int32)
    with pytest.raises(IllegalActionError, match=r"action 7 at batch index 2, path step 1: out of range"):
        states.apply_paths(paths)
    assert_same(before, snapshot(states))
    with pytest.raises(IllegalActionError, match=r"batch index 0, path step 6: column 1 is full"):
        states.apply_paths(np.array([cols("1111111")] * 3, dtype=np.int32))
    with pytest.raises(IllegalActionError, match=r"batch index 1, path step 7: the game is over"):
        states.apply_paths(np.array([cols("55") + [NO_ACTION] * 6, cols("1212121") + [5], [NO_ACTION] * 8],
                                    dtype=np.int32))
    with pytest.raises(ValueError, match=r"paths: expected an integer array of shape \(3, L\)"):
        states.apply_paths(np.zeros(3, dtype=np.int32))
    assert_same(before, snapshot(states))


def test_random_playout_reproducible_and_batch_independent():
    game = Connect4Game()
    big = game.new_states(200)
    big.apply(np.full(200, 3, dtype=np.int32))
    z_big = big.random_playout(seed=12345)
    assert big.terminal().all()
    np.testing.assert_array_equal(z_big, big.outcome())
    small = game.new_states(20)
    small.apply(np.full(20, 3, dtype=np.int32))
    z_small = small.random_playout(seed=12345)
    np.testing.assert_array_equal(z_small, z_big[:20])
    for b in range(20):
        np.testing.assert_array_equal(small.board(b), big.board(b))
    assert len({big.board(b).tobytes() for b in range(200)}) == 200  # rows draw different streams
    other = game.new_states(20)
    other.apply(np.full(20, 3, dtype=np.int32))
    other.random_playout(seed=12346)
    assert any((other.board(b) != small.board(b)).any() for b in range(20))
    again = small.random_playout(seed=999)  # finished games stay as they are
    np.testing.assert_array_equal(again, z_small)
    game.new_states(2).random_playout(seed=-1)  # any int is a seed
    game.new_states(2).random_playout(seed=2**70)


def test_random_playout_is_uniform():
    # 12 empty cells left in the drawn game: all three results have sizeable probability.
    start = play(DRAWN_GAME[:30])
    exact = exact_random_play_distribution(start.copy())
    assert abs(sum(exact.values()) - 1.0) < 1e-12 and min(exact.values()) > 0.05
    n = 20000
    many = start.take(np.zeros(n, dtype=np.int64))
    z = many.random_playout(seed=2024)
    for v, p in exact.items():
        freq = np.mean(z == v)
        assert abs(freq - p) < 4.5 * np.sqrt(p * (1 - p) / n), (v, freq, p)


def test_differential_against_openspiel():
    """Thousands of seeded random games, compared move by move with OpenSpiel's connect_four.

    OpenSpiel numbers actions by column 0..6 as we do, player 0 ('x') moves first, and its
    observation planes are [x stones, o stones, empty] with row 0 at the BOTTOM.
    """
    os_game = pyspiel.load_game("connect_four")
    n_games = 3000
    rng = np.random.default_rng(20240531)
    ours = Connect4Game().new_states(n_games)
    theirs = [os_game.new_initial_state() for _ in range(n_games)]
    moves = positions = 0
    while True:
        mask, term, tp, z = ours.legal_mask(), ours.terminal(), ours.to_play(), ours.outcome()
        obs = ours.encode()
        x_plane = np.where((tp == 0)[:, None, None], obs[:, 0], obs[:, 1])
        o_plane = np.where((tp == 0)[:, None, None], obs[:, 1], obs[:, 0])
        for b, s in enumerate(theirs):
            assert s.is_terminal() == term[b], b
            if term[b]:
                assert s.returns()[0] == z[b], b
                continue
            positions += 1
            assert s.current_player() == tp[b], b
            assert np.flatnonzero(mask[b]).tolist() == s.legal_actions(), b
            planes = np.asarray(s.observation_tensor(0), dtype=np.float32).reshape(3, 6, 7)[:, ::-1]
            np.testing.assert_array_equal(planes[0], x_plane[b])
            np.testing.assert_array_equal(planes[1], o_plane[b])
        if term.all():
            break
        actions = np.where(term, NO_ACTION, (rng.random(mask.shape) * mask).argmax(1)).astype(np.int32)
        ours.apply(actions)
        for b in np.flatnonzero(actions != NO_ACTION):
            theirs[b].apply_action(int(actions[b]))
            moves += 1
    results = ours.outcome()
    print(f"connect4 vs OpenSpiel: {n_games} games, {moves} moves, {positions} positions compared; "
          f"X wins {np.mean(results == 1):.3f}, O wins {np.mean(results == -1):.3f}, draws {np.mean(results == 0):.4f}")
    assert moves > 15 * n_games
    assert (results == 1).any() and (results == -1).any()
