"""Tic-tac-toe engine: every line wins, draws, the batched States contract, bad
input, random playouts, exhaustive minimax over all 5478 reachable positions, and
a move-by-move differential test against OpenSpiel."""

from __future__ import annotations

import itertools

import numpy as np
import pyspiel
import pytest

from azero.games import NO_ACTION, IllegalActionError, States, make_game
from azero.games.tictactoe import TicTacToeGame

from statecheck import assert_same, exact_random_play_distribution, snapshot

LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]
DRAWN_GAME = [4, 0, 2, 6, 3, 5, 1, 7, 8]  # ends O X X / X X O / O O X, nobody has a line


def ref_winner(x: int, o: int) -> int | None:
    """Independent rules: 0 / 1 if X / O has a line, 2 for a full board, None otherwise."""
    for line in LINES:
        if all(x >> c & 1 for c in line):
            return 0
        if all(o >> c & 1 for c in line):
            return 1
    return 2 if (x | o) == 0x1FF else None


def play(moves, batch: int = 1):
    states = TicTacToeGame().new_states(batch)
    for a in moves:
        assert not states.terminal().any()
        states.apply(np.full(batch, a, dtype=np.int32))
    return states


def bits_of(states) -> tuple[np.ndarray, np.ndarray]:
    """(X bits, O bits) of every state as ints, from the batched observation."""
    obs, tp = states.encode(), states.to_play()
    weights = 1 << np.arange(9)
    own = obs[:, 0].reshape(-1, 9).astype(np.int64) @ weights
    opp = obs[:, 1].reshape(-1, 9).astype(np.int64) @ weights
    return np.where(tp == 0, own, opp), np.where(tp == 0, opp, own)


def test_spec_registry_and_notation():
    game = make_game("tictactoe")
    assert isinstance(game, TicTacToeGame)
    spec = game.spec
    assert (spec.name, spec.num_actions, spec.obs_shape, spec.board_shape) == ("tictactoe", 9, (3, 3, 3), (3, 3))
    assert (spec.max_moves, spec.pass_action, spec.symmetry) == (9, None, "dihedral8")
    assert isinstance(game.new_states(2), States)
    assert [game.action_to_str(a) for a in range(9)] == list("012345678")
    assert all(game.str_to_action(game.action_to_str(a)) == a for a in range(9))
    for bad in ["9", "", "a1", "-1", "00"]:
        with pytest.raises(IllegalActionError, match="cell digit"):
            game.str_to_action(bad)
    with pytest.raises(IllegalActionError):
        game.action_to_str(9)


def winning_game(line: tuple[int, ...], winner: int) -> list[int]:
    """A legal game in which `winner` completes `line` on the last move and nobody wins earlier."""
    rest = [c for c in range(9) if c not in line]
    if winner == 0:
        loser = rest[:2]
    else:  # X needs three harmless moves off the line that do not make a line themselves
        loser = next(list(t) for t in itertools.combinations(rest, 3) if t not in LINES)
    moves = []
    for i, cell in enumerate(line):
        if winner == 1:
            moves.append(loser[i])
        moves.append(cell)
        if winner == 0 and i < 2:
            moves.append(loser[i])
    return moves


@pytest.mark.parametrize("line", LINES)
@pytest.mark.parametrize("winner", [0, 1])
def test_every_line_wins(line, winner):
    moves = winning_game(line, winner)
    states = play(moves[:-1], batch=2)
    states.apply(np.array([moves[-1], NO_ACTION], dtype=np.int32))
    np.testing.assert_array_equal(states.terminal(), [True, False])
    np.testing.assert_array_equal(states.outcome(), [1.0 if winner == 0 else -1.0, 0.0])
    assert not states.legal_mask()[0].any()
    board = states.board(0)
    assert all(board.flat[c] == winner + 1 for c in line)
    assert ("X won" if winner == 0 else "O won") in states.render(0)


def test_draw():
    states = play(DRAWN_GAME)
    assert states.terminal()[0] and states.outcome()[0] == 0.0 and states.num_moves()[0] == 9
    np.testing.assert_array_equal(states.board(0), [[2, 1, 1], [1, 1, 2], [2, 2, 1]])
    assert not states.legal_mask().any()
    assert "draw" in states.render(0)


def test_bad_actions_rejected_without_change():
    states = play([0, 1, 3, 4, 6], batch=3)  # X wins column 0
    states.reset(np.array([1, 2]))
    states.apply(np.array([NO_ACTION, 4, 4], dtype=np.int32))
    before = snapshot(states)
    with pytest.raises(IllegalActionError, match=r"action 4 at batch index 2: cell 4 \(row 1, column 1\) is occupied"):
        states.apply(np.array([NO_ACTION, 0, 4], dtype=np.int32))
    with pytest.raises(IllegalActionError, match=r"action 9 at batch index 1: out of range"):
        states.apply(np.array([NO_ACTION, 9, 0], dtype=np.int32))
    with pytest.raises(IllegalActionError, match=r"action 2 at batch index 0: the game is over"):
        states.apply(np.array([2, 0, 0], dtype=np.int32))
    with pytest.raises(ValueError, match=r"expected shape \(3,\)"):
        states.apply(np.zeros((3, 1), dtype=np.int32))
    with pytest.raises(IllegalActionError, match=r"batch index 1, path step 1: cell 0 \(row 0, column 0\) is occupied"):
        states.apply_paths(np.array([[NO_ACTION, NO_ACTION], [0, 0], [1, 2]], dtype=np.int32))
    assert_same(before, snapshot(states))


@pytest.mark.parametrize("method, shape, dtype", [
    ("legal_mask", (2, 9), np.bool_), ("terminal", (2,), np.bool_), ("to_play", (2,), np.int8),
    ("outcome", (2,), np.float32), ("num_moves", (2,), np.int32), ("encode", (2, 3, 3, 3), np.float32),
    ("random_playout", (2,), np.float32), ("ownership", (2, 9), np.int8),
])
def test_out_buffers(method, shape, dtype):
    states = play([4, 0], batch=2)
    call = (lambda **kw: states.random_playout(5, **kw)) if method == "random_playout" else getattr(states, method)
    for bad in (np.zeros((3,) + shape[1:], dtype=dtype), np.zeros(shape, dtype=np.float64),
                np.zeros(shape[:-1] + (shape[-1] * 2,), dtype=dtype)[..., ::2]):
        with pytest.raises(ValueError, match=method):
            call(out=bad)
    assert states.num_moves().tolist() == [2, 2]
    out = np.zeros(shape, dtype=dtype)
    assert call(out=out) is out
    np.testing.assert_array_equal(out, call())


def test_bad_indices():
    states = TicTacToeGame().new_states(3)
    for bad in (np.array([3]), np.array([-1]), np.array([[0]]), np.array([1.0])):
        with pytest.raises(ValueError, match="index"):
            states.take(bad)
        with pytest.raises(ValueError, match="index"):
            states.reset(bad)
    with pytest.raises(ValueError, match="src has 1 states but index has 2"):
        states.put(np.array([0, 1]), states.take(np.array([0])))
    with pytest.raises(IndexError, match=r"\[0, 3\)"):
        states.board(3)


def test_encode_perspective():
    states = play([4])  # X in the centre, O to move
    obs = states.encode()[0]
    assert obs[0].sum() == 0 and obs[1, 1, 1] == 1 and obs[1].sum() == 1 and (obs[2] == 0).all()
    states.apply(np.array([2], dtype=np.int32))  # O top right, X to move
    obs = states.encode()[0]
    assert obs[0, 1, 1] == 1 and obs[0].sum() == 1
    assert obs[1, 0, 2] == 1 and obs[1].sum() == 1
    assert (obs[2] == 1).all()
    # ownership stays in player 0's view whoever is to move: X +1 in the centre, O -1 top right
    np.testing.assert_array_equal(states.ownership()[0], [0, 0, -1, 0, 1, 0, 0, 0, 0])


def test_copy_take_put_reset_no_action_and_paths():
    game = TicTacToeGame()
    states = game.new_states(3)
    states.apply_paths(np.array([[4, 0], [8, NO_ACTION], [NO_ACTION, NO_ACTION]], dtype=np.int32))
    np.testing.assert_array_equal(states.num_moves(), [2, 1, 0])
    np.testing.assert_array_equal(states.to_play(), [0, 1, 0])
    before = snapshot(states)
    dup = states.copy()
    dup.apply(np.array([1, 1, 1], dtype=np.int32))
    assert_same(before, snapshot(states))
    sub = states.take(np.array([0, 0]))
    sub.apply(np.array([1, 2], dtype=np.int32))
    assert_same(before, snapshot(states))
    states.put(np.array([2]), sub.take(np.array([1])))
    np.testing.assert_array_equal(states.board(2), [[2, 0, 1], [0, 1, 0], [0, 0, 0]])
    sub.reset()
    assert states.num_moves()[2] == 3
    states.apply(np.array([NO_ACTION, NO_ACTION, 6], dtype=np.int32))  # O to move in row 2
    np.testing.assert_array_equal(states.num_moves(), [2, 1, 4])
    states.reset(np.array([0]))
    np.testing.assert_array_equal(states.num_moves(), [0, 1, 4])
    assert dup.num_moves().tolist() == [3, 2, 1]


def test_random_playout_reproducible_and_uniform():
    game = TicTacToeGame()
    z_big = game.new_states(500).random_playout(seed=77)
    z_small = game.new_states(50).random_playout(seed=77)
    np.testing.assert_array_equal(z_small, z_big[:50])
    assert not np.array_equal(game.new_states(50).random_playout(seed=78), z_small)
    # Exact distribution of random play from the empty board, by enumerating all 255168 games.
    exact = exact_random_play_distribution(game.new_states(1))
    # Known values: X wins ~58.5%, O ~28.8%, draw ~12.7% under uniformly random play.
    assert abs(exact[1.0] - 0.5849) < 1e-3 and abs(exact[-1.0] - 0.2879) < 1e-3
    n = 40000
    z = game.new_states(n).random_playout(seed=3)
    for v, p in exact.items():
        assert abs(np.mean(z == v) - p) < 4.5 * np.sqrt(p * (1 - p) / n), (v, np.mean(z == v), p)


def test_minimax_over_every_reachable_position():
    """Enumerate the whole game with the engine, check terminal/outcome of each of the 5478
    reachable positions against independent rules, and solve the game by minimax."""
    game = TicTacToeGame()
    level = game.new_states(1)
    levels, keys, edges = [], [], []  # per depth: states, key per state, (parent, child) index pairs
    while len(level):
        x, o = bits_of(level)
        levels.append(level)
        keys.append(x | (o << 9))
        m = level.legal_mask()
        parent, action = np.nonzero(m)
        if not len(parent):
            edges.append((parent, parent))
            break
        children = level.take(parent)
        children.apply(action.astype(np.int32))
        cx, co = bits_of(children)
        unique_keys, first, child_of_edge = np.unique(cx | (co << 9), return_index=True, return_inverse=True)
        edges.append((parent, child_of_edge))
        level = children.take(first)

    total = sum(len(k) for k in keys)
    assert total == 5478
    counts = {0: 0, 1: 0, 2: 0}
    values = [None] * len(levels)
    for depth in reversed(range(len(levels))):
        states = levels[depth]
        term, z, tp, nm = states.terminal(), states.outcome(), states.to_play(), states.num_moves()
        assert (nm == depth).all() and (tp == depth % 2).all()
        v = np.zeros(len(states))
        if depth + 1 < len(levels):
            parent, child = edges[depth]
            child_v = values[depth + 1][child]
            best = np.full(len(states), -np.inf if depth % 2 == 0 else np.inf)
            (np.maximum if depth % 2 == 0 else np.minimum).at(best, parent, child_v)
        for i, key in enumerate(keys[depth]):
            winner = ref_winner(int(key) & 0x1FF, int(key) >> 9)
            assert term[i] == (winner is not None), (depth, key)
            if winner is not None:
                counts[winner] += 1
                assert z[i] == {0: 1.0, 1: -1.0, 2: 0.0}[winner]
                v[i] = z[i]
            else:
                assert z[i] == 0.0
                v[i] = best[i]
        values[depth] = v
    # 958 terminal positions: 626 won by X, 316 by O, 16 drawn; perfect play draws.
    assert counts == {0: 626, 1: 316, 2: 16}
    assert values[0][0] == 0.0
    # After X centre, O on an edge loses; O in a corner holds the draw.
    first = dict(zip(keys[1].tolist(), values[1]))
    second = dict(zip(keys[2].tolist(), values[2]))
    assert second[(1 << 4) | ((1 << 1) << 9)] == 1.0
    assert second[(1 << 4) | ((1 << 0) << 9)] == 0.0
    assert set(first.values()) == {0.0}  # every first move draws with best play
    print(f"tictactoe minimax: {total} positions, {sum(counts.values())} terminal")


def test_differential_against_openspiel():
    """Seeded random games compared move by move with OpenSpiel's tic_tac_toe.

    OpenSpiel numbers cells r * 3 + c with row 0 at the top as we do; player 0 ('x')
    moves first; its observation planes are [empty, o, x].
    """
    os_game = pyspiel.load_game("tic_tac_toe")
    n_games = 3000
    rng = np.random.default_rng(99)
    ours = TicTacToeGame().new_states(n_games)
    theirs = [os_game.new_initial_state() for _ in range(n_games)]
    moves = positions = 0
    while True:
        mask, term, tp, z = ours.legal_mask(), ours.terminal(), ours.to_play(), ours.outcome()
        x_bits, o_bits = bits_of(ours)
        for b, s in enumerate(theirs):
            assert s.is_terminal() == term[b], b
            if term[b]:
                assert s.returns() == [z[b], -z[b]], b
                continue
            positions += 1
            assert s.current_player() == tp[b], b
            assert np.flatnonzero(mask[b]).tolist() == s.legal_actions(), b
            planes = np.asarray(s.observation_tensor(0)).reshape(3, 9)
            assert int(planes[2] @ (1 << np.arange(9))) == x_bits[b]
            assert int(planes[1] @ (1 << np.arange(9))) == o_bits[b]
        if term.all():
            break
        actions = np.where(term, NO_ACTION, (rng.random(mask.shape) * mask).argmax(1)).astype(np.int32)
        ours.apply(actions)
        for b in np.flatnonzero(actions != NO_ACTION):
            theirs[b].apply_action(int(actions[b]))
            moves += 1
    results = ours.outcome()
    print(f"tictactoe vs OpenSpiel: {n_games} games, {moves} moves, {positions} positions compared; "
          f"X wins {np.mean(results == 1):.3f}, O wins {np.mean(results == -1):.3f}, draws {np.mean(results == 0):.3f}")
    assert moves > 7 * n_games and {1.0, 0.0, -1.0} <= set(results.tolist())
