"""Endgame hygiene: moves a searcher should never play, and how to take them out of a search result.

KataGo prunes "useless" root moves: once the opponent has passed, a move inside one's own
pass-alive area (Benson: alive even if its owner always passes, together with the regions it
alone encloses) can change nothing but the owner's own eyes. A win/loss value cannot tell such
a move from a useful one when the game is decided, so untrained and losing players fill their
own eyes; the score utility makes those moves cost points, and this rule removes them.

The game layer says which points are pass-alive (States.pass_alive); nothing here knows Go.
"""

from __future__ import annotations


import numpy as np

from azero.games.base import NO_ACTION
from azero.search.result import SearchResult, most_visited


def useless_moves(states, opponent_passed: np.ndarray, pass_action: int) -> np.ndarray | None:
    """bool [B, A]: moves inside the player to move's own pass-alive area in the games whose
    opponent just passed; None when the game has no pass-alive areas or no game qualifies.

    The only legal non-pass move of a position is never pruned (as KataGo: a search always has a
    move besides the pass to weigh); with two or more, all may go and the pass remains."""
    if not hasattr(states, "pass_alive") or not np.any(opponent_passed):
        return None
    area = states.pass_alive()                                   # [B, N*N]: +1 Black's, -1 White's
    own = np.where(states.to_play() == 0, 1, -1).astype(np.int8)[:, None]
    legal = states.legal_mask()
    prune = np.zeros_like(legal)
    prune[:, :area.shape[1]] = (area == own) & np.asarray(opponent_passed, bool)[:, None]
    prune &= legal
    others = legal.copy()
    others[:, pass_action] = False
    prune[others.sum(axis=1) == 1] = False
    return prune if prune.any() else None


def without_moves(result: SearchResult, prune: np.ndarray, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(actions, policy targets) with the pruned moves removed: a game whose chosen move is pruned
    plays its most visited remaining move (its best remaining prior if none was visited), and
    every policy row drops the pruned moves, renormalised."""
    visits = np.where(prune, 0, result.visits)
    best = most_visited(visits)
    prior = np.where(prune, 0.0, result.prior)
    unvisited = best == NO_ACTION
    best[unvisited] = prior[unvisited].argmax(axis=1)
    hit = prune[np.arange(len(actions)), np.maximum(actions, 0)] & (actions != NO_ACTION)
    actions = np.where(hit, best, actions).astype(np.int32)
    policy = result.policy.copy()
    rows = np.flatnonzero(prune.any(axis=1) & (actions != NO_ACTION))
    kept = np.where(prune[rows], 0.0, policy[rows])
    total = kept.sum(axis=1, keepdims=True)
    kept = np.divide(kept, total, out=np.zeros_like(kept), where=total > 0)
    empty = total[:, 0] <= 0
    kept[np.flatnonzero(empty), actions[rows][empty]] = 1.0  # nothing left: the move played is the target
    policy[rows] = kept
    return actions, policy


__all__ = ["useless_moves", "without_moves"]
