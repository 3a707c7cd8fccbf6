"""azero games and their OpenSpiel twins: the OpenSpiel load string of the same rules, and the
action numbering between the two. The one place that says which azero game is which OpenSpiel game
(`azero bench games`, `azero bench mcts` and the `openspiel-mcts:` player all read it).

    connect4          connect_four            same actions (column 0..6)
    tictactoe         tic_tac_toe             same actions (cell r*3 + c)
    go9x9 / goNxN     go(board_size=N,komi=K,max_game_length=M), from the game's parameters.
                      azero's action r*N + c counts rows from the TOP (r = 0), OpenSpiel's
                      row*N + col from the BOTTOM ('a1' = 0); pass is N*N in both. One rule
                      differs: OpenSpiel's legality knows only simple ko, so a move that repeats
                      an earlier whole-board position is legal there (and ends the game at once as
                      a draw) where azero forbids it (positional superko): OpenSpiel's legal set is
                      azero's plus such moves (tests/games/test_go_openspiel.py).
    openspiel:LOAD    LOAD itself (the adapter uses OpenSpiel's own action ids).

Nothing here imports pyspiel.
"""

from __future__ import annotations

import dataclasses

import numpy as np

def go_load_string(board_size: int, komi: float, max_moves: int) -> str:
    """OpenSpiel's `go` with azero's rules parameters (komi always written as a float: OpenSpiel
    refuses 'komi=6', an int, for its double parameter)."""
    return f"go(board_size={int(board_size)},komi={float(komi)!r},max_game_length={int(max_moves)})"


# The same rules in OpenSpiel, by azero game name (default parameters).
OPENSPIEL_NAMES = {
    "go9x9": go_load_string(9, 7.5, 2 * 9 * 9),
    "connect4": "connect_four",
    "tictactoe": "tic_tac_toe",
}

TWIN_GAMES = "connect4, tictactoe, go9x9 (and goNxN), openspiel:LOAD"
"""The games that have a twin, for error messages."""


class NoOpenSpielTwinError(ValueError):
    """An azero game with no OpenSpiel twin (the message names it and lists those that have one)."""


@dataclasses.dataclass(frozen=True, eq=False)
class OpenSpielTwin:
    """One azero game's twin in OpenSpiel."""

    game_name: str
    """azero's GameSpec.name."""
    load: str
    """pyspiel.load_game string of the same rules."""
    perm: np.ndarray | None = None
    """int64 [A]: perm[a] = OpenSpiel's action for azero action a; None = the same numbering.
    Every permutation here is its own inverse (Go's row flip)."""
    superko: bool = False
    """Go: OpenSpiel also allows moves that repeat a whole-board position (see the module docstring)."""

    def to_openspiel(self, action: int) -> int:
        return int(action) if self.perm is None else int(self.perm[int(action)])

    def from_openspiel(self, action: int) -> int:
        return int(action) if self.perm is None else int(self.perm[int(action)])


def go_action_perm(n: int) -> np.ndarray:
    """perm[a] = OpenSpiel's action for azero's Go action a on an NxN board (rows flipped; pass kept)."""
    a = np.arange(n * n)
    return np.concatenate([(n - 1 - a // n) * n + a % n, [n * n]]).astype(np.int64)


def openspiel_twin(game) -> OpenSpielTwin:
    """The twin of `game` (a Game or its GameSpec); NoOpenSpielTwinError if it has none."""
    spec = getattr(game, "spec", game)
    name = spec.name
    if name in ("connect4", "tictactoe"):
        return OpenSpielTwin(name, OPENSPIEL_NAMES[name])
    if name.startswith("openspiel:"):
        return OpenSpielTwin(name, name.split(":", 1)[1])
    params = getattr(spec, "params", {}) or {}
    if getattr(spec, "area_scoring", False) and {"board_size", "komi", "max_moves"} <= set(params):
        n = int(params["board_size"])
        return OpenSpielTwin(name, go_load_string(n, params["komi"], params["max_moves"]), perm=go_action_perm(n),
                             superko=True)
    raise NoOpenSpielTwinError(f"game {name!r} has no OpenSpiel twin; games with one: {TWIN_GAMES}")
