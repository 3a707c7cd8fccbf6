"""Tic-tac-toe: with random rollouts and enough simulations, the search plays minimax-optimal moves
in every reachable non-terminal position where not every move is optimal."""

from __future__ import annotations

import functools

import numpy as np

from azero.search.config import SearchConfig
from azero.search.evaluators import RandomRolloutEvaluator
from azero.search.mcts import MCTS

LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]


def won(board) -> bool:
    return any(board[a] and board[a] == board[b] == board[c] for a, b, c in LINES)


def mover(board) -> int:
    return 1 if sum(1 for x in board if x) % 2 == 0 else 2


@functools.lru_cache(maxsize=None)
def value(board: tuple) -> int:
    """Minimax value for the player to move: +1 win, 0 draw, -1 loss."""
    if won(board):
        return -1  # the previous player just completed a line
    if all(board):
        return 0
    me = mover(board)
    return max(-value(board[:i] + (me,) + board[i + 1:]) for i in range(9) if not board[i])


def positions_with_a_wrong_move():
    """(move sequence, optimal moves) for every reachable non-terminal position with a suboptimal move."""
    seen: dict[tuple, list[int]] = {}

    def walk(board, path):
        if won(board) or all(board) or board in seen:
            return
        seen[board] = path
        for i in range(9):
            if not board[i]:
                walk(board[:i] + (mover(board),) + board[i + 1:], path + [i])

    walk((0,) * 9, [])
    cases = []
    for board, path in seen.items():
        me = mover(board)
        values = {i: -value(board[:i] + (me,) + board[i + 1:]) for i in range(9) if not board[i]}
        best = max(values.values())
        optimal = {i for i, v in values.items() if v == best}
        if len(optimal) < len(values):
            cases.append((path, optimal))
    return len(seen), cases


def test_minimax_solver_sanity():
    reachable, cases = positions_with_a_wrong_move()
    assert reachable == 4520  # the known count of reachable non-terminal positions
    assert value((0,) * 9) == 0
    assert 3000 < len(cases) < reachable


def test_search_is_minimax_optimal_everywhere(tictactoe):
    _, cases = positions_with_a_wrong_move()
    paths = np.full((len(cases), 9), -1, np.int32)
    for i, (path, _) in enumerate(cases):
        paths[i, : len(path)] = path
    roots = tictactoe.new_states(len(cases))
    roots.apply_paths(paths)
    assert not roots.terminal().any()

    # Random rollouts are noisy, optimistic value estimates: a deep forced win (e.g. X at 3, O at 2: only
    # the corner 0 wins) shows only once the tree has covered the line. A wider search than AlphaZero's
    # c_init = 1.25 (which assumes a trained prior) finds every such line within 2000 simulations.
    config = SearchConfig(simulations=2000, c_init=3.0, dirichlet_weight=0.0, seed=0)
    chunk = 640  # bounds the trees' memory: 640 games x 2001 nodes x 9 actions x 20 bytes
    actions = np.zeros(len(cases), np.int32)
    for start in range(0, len(cases), chunk):
        index = np.arange(start, min(len(cases), start + chunk))
        search = MCTS(tictactoe.spec, RandomRolloutEvaluator(rollouts=4, seed=start), config, batch_size=len(index))
        result = search.run(roots.take(index))
        assert (result.simulations == 2000).all()
        actions[index] = result.action
    wrong = [(cases[i][0], int(actions[i]), sorted(cases[i][1]))
             for i in range(len(cases)) if actions[i] not in cases[i][1]]
    assert not wrong, f"{len(wrong)} positions with a non-optimal choice, e.g. (moves, chosen, optimal): {wrong[:5]}"
