"""Go on an NxN board (2 <= N <= 19): Tromp-Taylor area scoring, positional superko.

The rules, the action layout and the observation planes are documented in
azero.games._go, which implements the batched states natively. This module
holds the parameters, the GameSpec and the GTP-style action notation.

Observations come in two feature sets: "basic" (10 planes: stone history, side
to move, ones) and "extended" (19 planes: the basic ones, then liberty counts,
superko bans and pass-alive areas, KataGo-style).

Actions: a = r * N + c with r = 0 the TOP row (GTP row N) and c = 0 the left
column (GTP letter 'A'; letters skip 'I'); a = N * N is pass. On 9x9, 'A9' = 0,
'J1' = 80, 'pass' = 81.
"""

from __future__ import annotations

import math
import numbers

from azero.games._go import FEATURES, HISTORY_STEPS, Geometry, GoStates, check_features
from azero.games.base import GameSpec, IllegalActionError
from azero.games.go_notation import parse_vertex, vertex

__all__ = ["FEATURES", "GoGame", "GoStates", "HISTORY_STEPS", "features_for"]


class GoGame:
    """Rules plus parameters of NxN Go; a factory of batched `GoStates`.

    `features` picks the observation planes encode() writes: "basic" or "extended"
    (FEATURES maps each to its plane count; the layout is in azero.games._go).
    """

    def __init__(self, board_size: int = 9, komi: float = 7.5, max_moves: int | None = None,
                 features: str = "basic"):
        if isinstance(board_size, bool) or not isinstance(board_size, numbers.Integral):
            raise ValueError(f"board_size must be an integer in [2, 19], got {board_size!r}")
        n = int(board_size)
        if not 2 <= n <= 19:
            raise ValueError(f"board_size must be in [2, 19], got {n}")
        if isinstance(komi, bool) or not isinstance(komi, numbers.Real) or not math.isfinite(komi):
            raise ValueError(f"komi must be a finite number, got {komi!r}")
        if max_moves is None:
            max_moves = 2 * n * n
        if isinstance(max_moves, bool) or not isinstance(max_moves, numbers.Integral) or max_moves < 1:
            raise ValueError(f"max_moves must be a positive integer or None, got {max_moves!r}")
        check_features(features)
        self.board_size = n
        self.komi = float(komi)
        self.max_moves = int(max_moves)
        self.features = features
        planes = FEATURES[features]
        self.spec = GameSpec(
            name="go9x9" if n == 9 else f"go{n}x{n}",
            num_actions=n * n + 1,
            obs_shape=(planes, n, n),
            board_shape=(n, n),
            max_moves=self.max_moves,
            pass_action=n * n,
            symmetry="dihedral8",
            params={"board_size": n, "komi": self.komi, "max_moves": self.max_moves, "features": features},
            area_scoring=True,
            sgf=True,
            colour_names=("Black", "White"),
        )
        self._geometry = Geometry(n, self.komi, self.max_moves, self.spec, features)

    def __repr__(self) -> str:
        return (f"GoGame(board_size={self.board_size}, komi={self.komi:g}, max_moves={self.max_moves}, "
                f"features={self.features!r})")

    def __reduce__(self):
        return (GoGame, (self.board_size, self.komi, self.max_moves, self.features))

    def with_planes(self, planes: int) -> "GoGame":
        """The same game with the feature set whose observations have `planes` planes."""
        return GoGame(self.board_size, self.komi, self.max_moves, features=features_for((planes,)))

    def planes_prefix_ok(self, planes: int) -> bool:
        """Whether a network reading `planes` planes can be fed this game's leading planes: the
        feature sets extend one another (basic = the first 10 planes of extended)."""
        return planes in FEATURES.values() and planes <= FEATURES[self.features]

    def new_states(self, batch: int) -> GoStates:
        """A batch of `batch` empty boards, Black to move."""
        if isinstance(batch, bool) or not isinstance(batch, numbers.Integral) or batch < 0:
            raise ValueError(f"batch must be a non-negative integer, got {batch!r}")
        return GoStates(self._geometry, int(batch))

    def action_to_str(self, action: int) -> str:
        """GTP vertex of an action: 'A9' (top-left on 9x9), 'J1' (bottom-right), 'pass'."""
        n = self.board_size
        if isinstance(action, bool) or not isinstance(action, numbers.Integral) or not 0 <= action <= n * n:
            raise IllegalActionError(f"action {action!r} is out of range [0, {n * n}]")
        return vertex(int(action), n)

    def str_to_action(self, text: str) -> int:
        """Inverse of action_to_str, case-insensitive ('a9', 'PASS'); malformed or off-board text raises
        IllegalActionError (games.go_notation)."""
        return parse_vertex(text, self.board_size)

    @property
    def move_hint(self) -> str:
        """How a person types a move (the human game's help)."""
        n = self.board_size
        return f"a point like {self.action_to_str((n - min(4, n)) * n + min(3, n - 1))} or 'pass'"


def features_for(obs_shape) -> str:
    """The feature set ('basic', 'extended') whose observations have obs_shape[0] planes; a network
    input of any other size raises ValueError naming the sizes that exist."""
    planes = int(obs_shape[0])
    for name, count in FEATURES.items():
        if count == planes:
            return name
    raise ValueError(f"no Go feature set has {planes} observation planes "
                     f"({', '.join(f'{k}: {v}' for k, v in FEATURES.items())})")
