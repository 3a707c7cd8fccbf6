"""Game rules behind one batched interface (see azero.games.base)."""

from azero.games.base import NO_ACTION, Game, GameSpec, IllegalActionError, States, value_for_player_to_move
from azero.games.registry import UnknownGameError, available_games, make_game

__all__ = [
    "NO_ACTION", "Game", "GameSpec", "IllegalActionError", "States", "UnknownGameError",
    "available_games", "make_game", "value_for_player_to_move",
]
