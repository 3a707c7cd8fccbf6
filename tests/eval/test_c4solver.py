"""The connect-four solver: exact against brute force on endgames, known benchmark values, consistency."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from azero.games import c4solver
from azero.games.c4solver import Solver, actions_to_moves, parse_board, parse_moves
from azero.games.connect4 import Connect4Game

# Scores published with J. Pons' connect-four benchmark sets (Test_L1_R1 "begin easy",
# Test_L1_R2 "begin medium", Test_L3_R1 "end easy" and others), quoted by many solvers' tests:
# > 0 the player to move wins with their k-th stone, score = 22 - k; < 0 the opponent does.
KNOWN_SCORES = {
    "2252576253462244111563365343671351441": -1,
    "74425337641465475671176741236615215533": 0,
    "34441157374153736716346556774311552222": 0,
    "23163416124767223154467471272416755633": 0,
    "7172212567451542223676134464437761515": 0,
    "43745416472735": -13,
    "427631264721": 10,
    "32164625": 11,
    "6146": 18,
    "243335424257": 12,
    "5512243243536": 13,
    "22144426444": 15,
    "265756512": -12,
    "65444437612": 13,
    "17516442226766": 8,
    "51756773145177": -10,
    "165746146225": -11,
    "42434653771434": 9,
    "35544262": 12,
    "33375546411": -12,
    "7234472553": 10,
    "4737": 18,
    "335662333565": -2,
    "157564142155": -5,
    "266674777": 4,
}


# ---------------------------------------------------------------------- a brute-force twin

def _wins(cols: list[list[int]], c: int, player: int) -> bool:
    """Whether the stone just dropped in column c completes four for `player` (plain grid scan)."""
    r = len(cols[c]) - 1

    def at(cc: int, rr: int) -> int | None:
        return cols[cc][rr] if 0 <= cc < 7 and 0 <= rr < len(cols[cc]) else None

    for dc, dr in ((1, 0), (0, 1), (1, 1), (1, -1)):
        run = 1
        for sign in (1, -1):
            k = 1
            while at(c + sign * k * dc, r + sign * k * dr) == player:
                run += 1
                k += 1
        if run >= 4:
            return True
    return False


def brute_score(cols: list[list[int]], n: int, memo: dict) -> int:
    """Exact score by full minimax (no pruning): the mover winning with their k-th stone scores 22 - k."""
    key = tuple(tuple(c) for c in cols)
    if key in memo:
        return memo[key]
    player = n % 2
    best = -100
    for c in range(7):
        if len(cols[c]) == 6:
            continue
        cols[c].append(player)
        if _wins(cols, c, player):
            v = 22 - (n // 2 + 1)
        elif n + 1 == 42:
            v = 0
        else:
            v = -brute_score(cols, n + 1, memo)
        cols[c].pop()
        best = max(best, v)
    memo[key] = best
    return best


def brute_move_scores(moves: str) -> np.ndarray:
    cols: list[list[int]] = [[] for _ in range(7)]
    for i, ch in enumerate(moves):
        cols[int(ch) - 1].append(i % 2)
    n = len(moves)
    out = np.full(7, np.nan)
    memo: dict = {}
    for c in range(7):
        if len(cols[c]) == 6:
            continue
        cols[c].append(n % 2)
        if _wins(cols, c, n % 2):
            out[c] = 22 - (n // 2 + 1)
        elif n + 1 == 42:
            out[c] = 0
        else:
            out[c] = -brute_score(cols, n + 1, memo)
        cols[c].pop()
    return out


def random_positions(seed: int, stones: int, count: int) -> list[str]:
    """Non-terminal positions after `stones` uniformly random moves (Python grid, not the engine)."""
    rng = np.random.default_rng(seed)
    found: list[str] = []
    while len(found) < count:
        cols: list[list[int]] = [[] for _ in range(7)]
        moves = ""
        for i in range(stones):
            c = int(rng.choice([c for c in range(7) if len(cols[c]) < 6]))
            cols[c].append(i % 2)
            moves += str(c + 1)
            if _wins(cols, c, i % 2):
                break
        else:
            if stones < 42:
                found.append(moves)
    return found


@pytest.fixture(scope="module")
def solver() -> Solver:
    return Solver(1 << 20)


# ---------------------------------------------------------------------- tests

@pytest.mark.parametrize("stones", [30, 32, 34, 36])
def test_exact_scores_match_brute_force_on_endgames(solver, stones):
    for moves in random_positions(seed=stones, stones=stones, count=10):
        want = brute_move_scores(moves)
        best = np.nanmax(want)
        np.testing.assert_array_equal(solver.move_scores(moves), want, err_msg=moves)
        np.testing.assert_array_equal(solver.move_values(moves), np.sign(want), err_msg=moves)
        assert solver.score(moves) == best, moves
        assert solver.solve(moves) == np.sign(best), moves
        value, keeps = solver.optimal_moves(moves)
        assert value == np.sign(best)
        np.testing.assert_array_equal(keeps, np.sign(want) == np.sign(best), err_msg=moves)


def test_brute_force_endgames_cover_wins_draws_and_losses():
    values = {np.sign(np.nanmax(brute_move_scores(m))) for m in random_positions(seed=34, stones=34, count=10)}
    values |= {np.sign(np.nanmax(brute_move_scores(m))) for m in random_positions(seed=36, stones=36, count=10)}
    assert values == {-1.0, 0.0, 1.0}  # the comparison above is not one-sided


@pytest.mark.parametrize("moves,want", sorted(KNOWN_SCORES.items(), key=lambda kv: -len(kv[0])))
def test_known_benchmark_scores(solver, moves, want):
    assert solver.score(moves) == want
    assert solver.solve(moves) == np.sign(want)


def test_rules_level_positions(solver):
    # First player has three in column 1, second three in column 2, one each in column 3; first to move.
    scores = solver.move_scores("12121233")
    assert scores[0] == 22 - 5                    # wins at once with the 5th stone
    np.testing.assert_array_equal(scores[2:], -(22 - 5))  # anything but 1 or 2: the opponent wins at once
    assert solver.score("12121233") == 17 and solver.solve("12121233") == 1
    # A full column is NaN and never "keeps" the value.
    values = solver.move_values("4444443")
    assert np.isnan(values[3]) and not np.isnan(values).sum() > 1
    assert not solver.optimal_moves("4444443")[1][3]


def test_bellman_consistency_in_the_middle_game(solver):
    for moves in random_positions(seed=5, stones=14, count=6):
        scores = solver.move_scores(moves)
        assert solver.score(moves) == np.nanmax(scores)
        assert solver.solve(moves) == np.sign(np.nanmax(scores))
        np.testing.assert_array_equal(solver.move_values(moves), np.sign(scores))
        for c in range(7):
            if np.isnan(scores[c]) or scores[c] == (43 - len(moves)) // 2:
                continue  # full, or an immediate win (the child would be finished)
            assert scores[c] == -solver.score(moves + str(c + 1))


def test_board_input_matches_move_input(solver):
    game = Connect4Game()
    moves = random_positions(seed=9, stones=20, count=8)
    states = game.new_states(len(moves))
    paths = np.array([[int(ch) - 1 for ch in m] for m in moves], np.int32)
    states.apply_paths(paths)
    for b, m in enumerate(moves):
        board = states.board(b)
        assert parse_board(board) == parse_moves(m)
        np.testing.assert_array_equal(solver.move_values(board), solver.move_values(m))
    assert actions_to_moves(paths[0]) == moves[0]


def test_sequences_as_lists_and_module_functions():
    moves = "4453"
    assert parse_moves([4, 4, 5, 3]) == parse_moves(moves) == parse_moves(" 4 4 5 3 ")
    assert c4solver.score("427631264721") == 10
    assert c4solver.solve([4, 2, 7, 6, 3, 1, 2, 6, 4, 7, 2, 1]) == 1
    np.testing.assert_array_equal(c4solver.move_values("427631264721"), Solver(1 << 18).move_values("427631264721"))


@pytest.mark.parametrize("bad,why", [
    ("1212121", "game is over"),       # the first player completed column 1 on move 7
    ("12121212", "already won"),
    ("4444444", "full"),
    ("48", "not a column"),
    ("4x", "not a column"),
    ([0], "not a column"),             # list entries are 1-based columns, like the string form
    ("1111112222223333334444445555556666667777", "won"),
])
def test_invalid_sequences_raise(solver, bad, why):
    with pytest.raises(ValueError, match=why):
        solver.solve(bad)


def test_invalid_boards_raise(solver):
    board = np.zeros((6, 7), np.int8)
    board[0, 0] = 1                       # a stone floating in the top row
    with pytest.raises(ValueError, match="above an empty cell"):
        solver.solve(board)
    board = np.zeros((6, 7), np.int8)
    board[5, 0] = board[5, 1] = 2         # two second-player stones, none of the first player's
    with pytest.raises(ValueError, match="no game reaches"):
        solver.solve(board)
    with pytest.raises(ValueError, match="shape"):
        solver.solve(np.zeros((7, 6), np.int8))


def test_search_is_deterministic_and_threads_are_independent():
    positions = random_positions(seed=11, stones=16, count=4)
    a, b = Solver(1 << 18), Solver(1 << 18)
    first = [a.move_values(p) for p in positions]
    second = [b.move_values(p) for p in positions]
    assert a.nodes == b.nodes > 0             # same table size, same calls: the same search
    results: dict[int, list] = {}

    def work(k: int) -> None:
        results[k] = [c4solver.move_values(p) for p in positions]

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for got in (second, results[0], results[1]):
        for x, y in zip(first, got):
            np.testing.assert_array_equal(x, y)
