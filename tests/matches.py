"""A match between two players: the arena's games, summarised as player A's wins, draws and losses.

A thin view over azero.eval.arena.play_games (colours alternate, game pairs share
a random opening of `opening_moves` moves); use the arena directly for per-game
records, SGF files and engine score cross-checks.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from azero.eval.arena import ArenaSummary, play_games
from azero.games.base import Game


@dataclasses.dataclass
class MatchResult:
    wins: int
    draws: int
    losses: int
    games: int
    moves: list = dataclasses.field(default_factory=list)
    """Per game: every action played, the opening included."""
    a_player: np.ndarray | None = None
    """Per game: player A's index (0 moves first)."""

    @property
    def score(self) -> float:
        """Points per game for player A: win 1, draw 1/2."""
        return (self.wins + 0.5 * self.draws) / max(self.games, 1)


def play_match(game: Game, a, b, *, games: int, opening_moves: int = 0, seed: int = 0) -> MatchResult:
    """Games 0..games-1 of A vs B in one batch; A moves first in even-numbered games."""
    records = play_games(game, a, b, range(games), seed=seed, opening_moves=opening_moves)
    s = ArenaSummary.of(records)
    return MatchResult(s.wins, s.draws, s.losses, len(records), moves=[r.moves for r in records],
                       a_player=np.array([0 if r.a_first else 1 for r in records], np.int8))
