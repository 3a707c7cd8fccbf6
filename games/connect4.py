"""Connect four: 7 columns x 6 rows, four in a row wins, a full board is a draw.

Actions are columns 0..6 (left to right); their notation is the usual 1-based
column number '1'..'7'. Observations are [3, 6, 7] float32 from the view of
the player to move: own stones, opponent stones, and a plane of ones when
player 0 (the first player, X) is to move; row 0 is the top of the board.
The rules run in Cython on bitboards (azero.games._connect4).
"""

from __future__ import annotations

from azero.games._connect4 import Connect4States
from azero.games.base import DigitGame, GameSpec

__all__ = ["Connect4Game", "Connect4States"]

_WIDTH = 7


class Connect4Game(DigitGame):
    """The connect-four rules (no parameters); implements azero.games.base.Game."""

    states = Connect4States
    first_digit = 1
    bad_action = "connect four action must be a column"
    bad_move = f"connect four move must be a column number '1'..'{_WIDTH}'"

    def __init__(self) -> None:
        self.spec = GameSpec(
            name="connect4",
            num_actions=_WIDTH,
            obs_shape=(3, 6, _WIDTH),
            board_shape=(6, _WIDTH),
            max_moves=42,
            pass_action=None,
            symmetry="mirror_lr",
            params={},
        )

    move_hint = "a column number 1-7"
    """How a person types a move (the human game's help)."""
