"""A perfect connect-four solver, for measuring how well agents keep the game-theoretic value.

Positions are column sequences in the notation of `azero analyze`: '4453' (or
[4, 4, 5, 3]) means the first player played column 4, the second column 4, the
first column 5, the second column 3; columns are 1-based, the empty sequence is
the start position. Values are for the player to move:

    solve(p)          +1 win, 0 draw, -1 loss (perfect play by both sides)
    score(p)          the exact score: > 0 the mover wins with their k-th stone, score = 22 - k;
                      < 0 the opponent does; 0 draw (so the sign is solve(p))
    move_values(p)    float64 [7]: solve() of each column's move for the mover, NaN for full columns
    move_scores(p)    float64 [7]: the same with exact scores
    optimal_moves(p)  (value, keeps bool [7]): the value and the columns that keep it; cheaper
                      than move_values in won positions (it does not tell draws from losses)

A position may also be a board array as Connect4States.board(i) returns it (int [6, 7],
0 empty, 1 / 2 the first / second player's stones, row 0 on top), so the solver
reads azero States directly. Finished positions (won, or a full board), illegal
sequences and boards no game reaches raise ValueError.

The search is azero.games._c4solver (Cython, no Python per node): negamax with
alpha-beta over bitboards, threat-then-centre move ordering, a transposition
table and null-window probes; see its docstring. There is no opening book, so
cost grows steeply towards the empty board. Figures on the 2-core development
machine (shared with other jobs, so approximate; about 5-6 million nodes/s per
core), positions after uniformly random moves:

    stones   solve() median / mean / max     optimal_moves() mean per position
       8     0.1 s / 0.6 s / 2.5 s           1-2 s (a few take 10+ s)
      10     -                               0.25 s
      12     -                               0.09 s
      16     -                               0.007 s
      20     -                               0.002 s

so 8 stones and more is the practical range. With 1 to 6 stones a solve takes
from tens of seconds to many minutes (the position after '1' took 27 s: the
second player wins), and the start position is out of reach.

The module-level functions use one Solver per thread, created on first use
(a transposition table of 2**23 entries, about 50 MB), so consecutive calls in a
thread share what they learned and threads never share a table.
"""

from __future__ import annotations

import threading
from typing import Sequence

import numpy as np

from azero.games._c4solver import Solver, parse_board, parse_moves

__all__ = ["Solver", "parse_board", "parse_moves", "solve", "score", "move_values", "move_scores", "optimal_moves",
           "thread_solver", "actions_to_moves"]

Moves = str | Sequence[int] | np.ndarray  # a column sequence or a board

_local = threading.local()


def thread_solver() -> Solver:
    """This thread's Solver (made on first use; a Solver must not be shared between threads)."""
    solver = getattr(_local, "solver", None)
    if solver is None:
        solver = _local.solver = Solver()
    return solver


def solve(moves: Moves) -> int:
    """+1 / 0 / -1: the game-theoretic value of the position for the player to move."""
    return thread_solver().solve(moves)


def score(moves: Moves) -> int:
    """The exact score for the player to move (module docstring)."""
    return thread_solver().score(moves)


def move_values(moves: Moves) -> np.ndarray:
    """float64 [7]: value for the mover of playing each column (index 0 = column 1); NaN if full."""
    return thread_solver().move_values(moves)


def move_scores(moves: Moves) -> np.ndarray:
    """float64 [7]: exact score for the mover of playing each column; NaN if full."""
    return thread_solver().move_scores(moves)


def optimal_moves(moves: Moves) -> tuple[int, np.ndarray]:
    """(value, keeps): the position's value and bool [7], the columns whose move keeps it."""
    return thread_solver().optimal_moves(moves)


def actions_to_moves(actions: Sequence[int]) -> str:
    """azero actions (0-based columns, as States.apply takes them) -> the notation '4453'."""
    out = []
    for a in actions:
        if not 0 <= int(a) < 7:
            raise ValueError(f"connect-four action must be a column in [0, 7), got {a}")
        out.append(str(int(a) + 1))
    return "".join(out)
