"""Connect four: 7 columns x 6 rows, four in a row wins, a full board is a draw.

Actions are columns 0..6 (left to right); their notation is the usual 1-based
column number '1'..'7'. Observations are float32 from the view of the player
to move, row 0 the top of the board, in one of two feature sets:

- "basic" [3, 6, 7]: own stones, opponent stones, and a plane of ones when
  player 0 (the first player, X) is to move;
- "threats" [5, 6, 7]: those, then the empty cells where a disc of the player
  to move, and of the opponent, would complete four in a row, playable yet or
  not. Connect-four strategy turns on where these cells lie (which row, below
  which other threat: Allis 1988); a network can learn them from the stones,
  but handing them over is KataGo's lever of input features (its liberties and
  ladders) for this game.

The rules run in Cython on bitboards (azero.games._connect4).
"""

from __future__ import annotations

from azero.games._connect4 import FEATURES, Connect4States
from azero.games.base import DigitGame, GameSpec

__all__ = ["Connect4Game", "Connect4States", "FEATURES"]

_WIDTH = 7


class Connect4Game(DigitGame):
    """The connect-four rules; `features` picks the observation planes ("basic" or "threats").
    Implements azero.games.base.Game."""

    states = Connect4States
    first_digit = 1
    bad_action = "connect four action must be a column"
    bad_move = f"connect four move must be a column number '1'..'{_WIDTH}'"

    def __init__(self, features: str = "basic") -> None:
        if not isinstance(features, str) or features not in FEATURES:
            raise ValueError(f"connect four features must be one of {', '.join(repr(f) for f in FEATURES)}, "
                             f"got {features!r}")
        self.features = features
        self.spec = GameSpec(
            name="connect4",
            num_actions=_WIDTH,
            obs_shape=(FEATURES[features], 6, _WIDTH),
            board_shape=(6, _WIDTH),
            max_moves=42,
            pass_action=None,
            symmetry="mirror_lr",
            params={} if features == "basic" else {"features": features},
        )

    def __repr__(self) -> str:
        return f"Connect4Game(features={self.features!r})"

    def __reduce__(self):
        return (Connect4Game, (self.features,))

    def with_planes(self, planes: int) -> "Connect4Game":
        """The same game with the feature set whose observations have `planes` planes."""
        for name, count in FEATURES.items():
            if count == planes:
                return Connect4Game(name)
        raise ValueError(f"no connect-four feature set has {planes} observation planes "
                         f"({', '.join(f'{k}: {v}' for k, v in FEATURES.items())})")

    def planes_prefix_ok(self, planes: int) -> bool:
        """Whether a network reading `planes` planes can be fed this game's leading planes (basic is
        the first 3 planes of threats)."""
        return planes in FEATURES.values() and planes <= FEATURES[self.features]

    move_hint = "a column number 1-7"
    """How a person types a move (the human game's help)."""
