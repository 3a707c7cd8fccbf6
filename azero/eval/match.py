"""Play many games between two players at once, colours alternating."""

from __future__ import annotations

import dataclasses

import numpy as np

from azero.games.base import NO_ACTION, Game


@dataclasses.dataclass
class MatchResult:
    wins: int
    draws: int
    losses: int
    games: int
    moves: list = dataclasses.field(default_factory=list)  # per game: the actions played
    a_player: np.ndarray | None = None  # per game: which player index A had (0 moves first)

    @property
    def score(self) -> float:
        """Points per game for the first player of the match: win 1, draw 1/2."""
        return (self.wins + 0.5 * self.draws) / max(self.games, 1)


def play_match(game: Game, a, b, *, games: int, opening_moves: int = 0, seed: int = 0) -> MatchResult:
    """A plays player 0 in even-numbered games and player 1 in odd ones; results are A's.

    `opening_moves` uniformly random moves start every game (recorded, and shown
    to both players), so deterministic players do not repeat one game.
    """
    states = game.new_states(games)
    rng = np.random.default_rng(seed)
    slots_all = np.arange(games, dtype=np.int64)
    history: list[list[int]] = [[] for _ in range(games)]
    for p in (a, b):
        p.start(games)

    def played(actions):
        for p in (a, b):
            p.observe(slots_all, actions)
        for g in np.flatnonzero(actions != NO_ACTION):
            history[g].append(int(actions[g]))

    for _ in range(opening_moves):
        live = ~states.terminal()
        legal = states.legal_mask()
        act = np.where(legal, rng.random(legal.shape), -1.0).argmax(axis=1).astype(np.int32)
        act = np.where(live, act, NO_ACTION).astype(np.int32)
        states.apply(act)
        played(act)
    a_color = (np.arange(games) % 2).astype(np.int8)  # A's player index per game
    finished = states.terminal().copy()
    while not finished.all():
        to_play = states.to_play()
        actions = np.full(games, NO_ACTION, np.int32)
        for player, is_a in ((a, True), (b, False)):
            idx = np.flatnonzero(~finished & ((to_play == a_color) == is_a))
            if idx.size:
                actions[idx] = player.act(idx, states.take(idx))
        states.apply(actions)
        played(actions)
        now = states.terminal()
        newly = np.flatnonzero(now & ~finished)
        if newly.size:
            for p in (a, b):
                p.finish(newly)
        finished = now
    outcome = states.outcome()
    a_result = np.where(a_color == 0, outcome, -outcome)
    return MatchResult(int((a_result > 0).sum()), int((a_result == 0).sum()), int((a_result < 0).sum()), games,
                       moves=history, a_player=a_color)
