"""Reading a search tree back out: the root's moves with their statistics and principal variations.

Analysis (GTP lz-analyze / kata-analyze, the KataGo-format JSON engine) reports
more than SearchResult's root arrays: each searched move's win rate, score and
utility, and the line the search expects to follow it. Everything here reads
the SearchTree's node and child arrays of one game and knows no game rules.

Frames: a node's sums are kept from the view of the player to move at that
node. Values returned here are all from the view of the player to move at the
root (a child's sums are negated where its player to move differs).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from azero.search._mcts import ROOT

PV_LENGTH = 15
"""Moves of a principal variation, the reported move included (KataGo's analysisPVLen default)."""
LCB_Z = 1.96
"""The lower confidence bound is win rate - LCB_Z * 0.5 / sqrt(visits): the tree keeps no
variance, so the Bernoulli worst case (standard deviation 0.5 on the 0..1 scale) stands in."""


@dataclasses.dataclass
class MoveStats:
    """One searched root move; values from the root player's view."""

    action: int
    visits: int
    win: float
    """Mean backed-up win/loss value in [-1, 1] (the win rate is (win + 1) / 2)."""
    utility: float
    """Mean backed-up utility: the win/loss value plus the score utility the search maximised."""
    score: float | None
    """Mean backed-up expected score in points (None when the search backed up no scores)."""
    prior: float
    pv: list[int]
    """The move, then the most visited line below it."""
    pv_visits: list[int]

    @property
    def winrate(self) -> float:
        return (self.win + 1.0) / 2.0

    @property
    def lcb(self) -> float:
        return self.winrate - LCB_Z * 0.5 / math.sqrt(max(self.visits, 1))


@dataclasses.dataclass
class RootStats:
    visits: int
    """Backups through the root (its own evaluation included)."""
    win: float
    utility: float
    score: float | None

    @property
    def winrate(self) -> float:
        return (self.win + 1.0) / 2.0


def _mean(total: float, n: int) -> float:
    return float(total) / n if n > 0 else 0.0


def root_stats(tree, b: int, *, scored: bool) -> RootStats:
    """The root of game `b` as searched so far."""
    n = int(tree.node_visits[b, ROOT])
    return RootStats(n, _mean(tree.node_win_sum[b, ROOT], n), _mean(tree.node_value_sum[b, ROOT], n),
                     _mean(tree.node_score_sum[b, ROOT], n) if scored else None)


def _best_child(tree, b: int, node: int) -> int:
    """The action of node's most visited child (ties: the higher prior), -1 when none is visited."""
    visits = tree.child_visits[b, node]
    top = int(visits.max()) if visits.size else 0
    if top <= 0:
        return -1
    tied = np.flatnonzero(visits == top)
    return int(tied[np.argmax(tree.child_prior[b, node, tied])])


def principal_variation(tree, b: int, action: int, length: int = PV_LENGTH) -> tuple[list[int], list[int]]:
    """(actions, visits): `action` from the root of game `b`, then the most visited child at each
    node below, while there is one and the line is shorter than `length`."""
    actions, visits = [action], [int(tree.child_visits[b, ROOT, action])]
    node = int(tree.child_index[b, ROOT, action])
    while node >= 0 and len(actions) < length:
        a = _best_child(tree, b, node)
        if a < 0:
            break
        actions.append(a)
        visits.append(int(tree.child_visits[b, node, a]))
        node = int(tree.child_index[b, node, a])
    return actions, visits


def root_moves(tree, b: int, *, scored: bool, pv_length: int = PV_LENGTH) -> list[MoveStats]:
    """Every visited root move of game `b`, most visited first (ties: higher prior first)."""
    root_player = int(tree.node_to_play[b, ROOT])
    moves = []
    for a in np.flatnonzero(tree.child_visits[b, ROOT] > 0):
        a = int(a)
        child = int(tree.child_index[b, ROOT, a])
        n = int(tree.node_visits[b, child])
        sign = 1.0 if int(tree.node_to_play[b, child]) == root_player else -1.0
        score = sign * _mean(tree.node_score_sum[b, child], n) if scored else None
        pv, pv_visits = principal_variation(tree, b, a, pv_length)
        moves.append(MoveStats(a, n, sign * _mean(tree.node_win_sum[b, child], n),
                               sign * _mean(tree.node_value_sum[b, child], n), score,
                               float(tree.child_prior[b, ROOT, a]), pv, pv_visits))
    moves.sort(key=lambda m: (-m.visits, -m.prior))
    return moves
