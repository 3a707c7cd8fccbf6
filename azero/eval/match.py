"""Play many games between two players at once, colours alternating."""

from __future__ import annotations

import dataclasses

import numpy as np

from azero.games.base import Game


@dataclasses.dataclass
class MatchResult:
    wins: int
    draws: int
    losses: int
    games: int

    @property
    def score(self) -> float:
        """Points per game for the first player of the match: win 1, draw 1/2."""
        return (self.wins + 0.5 * self.draws) / max(self.games, 1)


def play_match(game: Game, a, b, *, games: int, opening_moves: int = 0, seed: int = 0) -> MatchResult:
    """A plays player 0 in even-numbered games and player 1 in odd ones; results are A's.

    `opening_moves` uniformly random moves start every game, so deterministic
    players do not repeat one game.
    """
    states = game.new_states(games)
    rng = np.random.default_rng(seed)
    for _ in range(opening_moves):
        live = ~states.terminal()
        legal = states.legal_mask()
        act = np.where(legal, rng.random(legal.shape), -1.0).argmax(axis=1).astype(np.int32)
        states.apply(np.where(live, act, -1).astype(np.int32))
    a_color = (np.arange(games) % 2).astype(np.int8)  # A's player index per game
    while True:
        term = states.terminal()
        if term.all():
            break
        to_play = states.to_play()
        actions = np.full(games, -1, np.int32)
        for player, is_a in ((a, True), (b, False)):
            idx = np.flatnonzero(~term & ((to_play == a_color) == is_a))
            if idx.size:
                actions[idx] = player.act(states.take(idx))
        states.apply(actions)
    outcome = states.outcome()
    a_result = np.where(a_color == 0, outcome, -outcome)
    return MatchResult(int((a_result > 0).sum()), int((a_result == 0).sum()), int((a_result < 0).sum()), games)
