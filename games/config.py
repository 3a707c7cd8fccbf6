"""Typed configuration of the `game` group (registered with hydra in azero.config)."""

from __future__ import annotations

import dataclasses
from typing import Optional

from azero.games.base import Game
from azero.games.registry import make_game


@dataclasses.dataclass
class GameConfig:
    """Which game to play and its rule parameters; unset (null) fields take the game's defaults."""

    name: str = "go9x9"
    """Registered game name: go9x9, go, connect4, tictactoe, openspiel (see `azero games`)."""
    board_size: Optional[int] = None
    """Go only: board side N, 2 <= N <= 19."""
    komi: Optional[float] = None
    """Go only: points added to White's area score."""
    max_moves: Optional[int] = None
    """Go only: the game ends and is scored after this many moves (default 2*N*N)."""
    features: Optional[str] = None
    """Observation planes. Go: 'basic' (10: stones of the last 4 positions, side to move, ones) or
    'extended' (19: those, then liberties 1/2/3+ of own and opponent groups, superko bans and both
    pass-alive areas). Connect four: 'basic' (3: own, opponent, side to move) or 'threats' (5:
    those, then the cells where each side's disc would complete four). Default 'basic'."""
    load: Optional[str] = None
    """openspiel only: the OpenSpiel load string, e.g. 'hex(board_size=7)'."""


def game_from_config(cfg) -> Game:
    """Build the game a GameConfig (or an omegaconf node with its fields) describes."""
    params = {
        "board_size": cfg.board_size,
        "komi": cfg.komi,
        "max_moves": cfg.max_moves,
        "features": getattr(cfg, "features", None),
        "load": cfg.load,
    }
    return make_game(cfg.name, **{k: v for k, v in params.items() if v is not None})
