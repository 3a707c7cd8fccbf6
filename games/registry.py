"""Games by name: `make_game('go9x9')`, `make_game('go13x13')` (any 'goNxN'),
`make_game('go', board_size=13)`, `make_game('openspiel', load='hex(board_size=7)')`.

Implementations are imported lazily so that listing games, or using one, never
requires the others' dependencies to load.
"""

from __future__ import annotations

import dataclasses
import importlib
from typing import Any, Callable

from azero.games.base import Game


@dataclasses.dataclass(frozen=True)
class GameEntry:
    """One registered game name."""

    name: str
    """Name accepted by make_game and `--game`."""
    description: str
    """One line for `azero games`."""
    factory: str
    """'module:Class' of the implementation, imported on first use."""
    defaults: dict[str, Any]
    """Parameters and their defaults; make_game accepts exactly these keywords."""
    rename: dict[str, str] = dataclasses.field(default_factory=dict)
    """Parameter name -> keyword of the implementation, where the two differ."""


_REGISTRY: dict[str, GameEntry] = {}


def register(entry: GameEntry) -> None:
    _REGISTRY[entry.name] = entry


register(GameEntry("go9x9", "Go on 9x9, Tromp-Taylor area scoring, positional superko (native)",
                   "azero.games.go:GoGame", {"komi": 7.5, "max_moves": None, "features": "basic"}))
register(GameEntry("go", "Go NxN for 2 <= N <= 19, same rules as go9x9 (native)",
                   "azero.games.go:GoGame", {"board_size": 9, "komi": 7.5, "max_moves": None, "features": "basic"}))
register(GameEntry("connect4", "Connect four on 7 columns x 6 rows, bitboards (native)",
                   "azero.games.connect4:Connect4Game", {"features": "basic"}))
register(GameEntry("tictactoe", "Tic-tac-toe on 3x3 (native)",
                   "azero.games.tictactoe:TicTacToeGame", {}))
register(GameEntry("openspiel", "Any 2-player zero-sum perfect-information OpenSpiel game by its load string",
                   "azero.games.openspiel:OpenSpielGame", {"load": "hex(board_size=7)"},
                   rename={"load": "name"}))


def available_games() -> list[GameEntry]:
    return list(_REGISTRY.values())


class UnknownGameError(ValueError):
    """A game name that is not registered; the message lists the available ones."""


def _resolve(factory: str) -> Callable[..., Game]:
    module, _, attr = factory.partition(":")
    return getattr(importlib.import_module(module), attr)


def make_game(name: str, **params: Any) -> Game:
    """Build a game by registered name. 'openspiel:<load string>' is shorthand for
    make_game('openspiel', load='<load string>'), and 'goNxN' for make_game('go', board_size=N) (the
    name GoGame's spec carries). Unknown names or parameters raise a ValueError that names them and
    lists what is accepted."""
    if name.startswith("openspiel:"):
        params = {"load": name.split(":", 1)[1], **params}
        name = "openspiel"
    entry = _REGISTRY.get(name)
    if entry is None and "board_size" not in params:
        from azero.games.go_notation import board_size_of

        size = board_size_of(name)
        if size is not None:
            name, params, entry = "go", {"board_size": size, **params}, _REGISTRY["go"]
    if entry is None:
        raise UnknownGameError(
            f"unknown game {name!r}; available games: {', '.join(sorted(_REGISTRY))}"
        )
    unknown = sorted(set(params) - set(entry.defaults))
    if unknown:
        accepted = ", ".join(sorted(entry.defaults)) or "none"
        raise ValueError(f"game {name!r} has no parameter(s) {', '.join(unknown)}; accepted: {accepted}")
    kwargs = {**entry.defaults, **{k: v for k, v in params.items() if v is not None}}
    kwargs = {entry.rename.get(k, k): v for k, v in kwargs.items()}
    return _resolve(entry.factory)(**kwargs)
