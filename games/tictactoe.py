"""Tic-tac-toe on 3x3: three in a row wins, a full board is a draw.

Action r * 3 + c marks row r (0 = top) and column c (0 = left):

    0 1 2
    3 4 5
    6 7 8

Its notation is that same digit, '0'..'8' (OpenSpiel numbers the cells the same
way). Observations are [3, 3, 3] float32 from the view of the player to move:
own marks, opponent marks, and a plane of ones when player 0 (X, who moves
first) is to move. The rules run in Cython on bitboards (azero.games._tictactoe).
"""

from __future__ import annotations

from azero.games._tictactoe import TicTacToeStates
from azero.games.base import DigitGame, GameSpec

__all__ = ["TicTacToeGame", "TicTacToeStates"]

_CELLS = 9


class TicTacToeGame(DigitGame):
    """The tic-tac-toe rules (no parameters); implements azero.games.base.Game."""

    states = TicTacToeStates
    bad_action = "tic-tac-toe action must be a cell"
    bad_move = "tic-tac-toe move must be a cell digit '0'..'8' (r * 3 + c)"

    def __init__(self) -> None:
        self.spec = GameSpec(
            name="tictactoe",
            num_actions=_CELLS,
            obs_shape=(3, 3, 3),
            board_shape=(3, 3),
            max_moves=_CELLS,
            pass_action=None,
            symmetry="dihedral8",
            params={},
        )

    move_hint = "a cell digit 0-8 (as numbered next to the board)"
    """How a person types a move (the human game's help)."""
