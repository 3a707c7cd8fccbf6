"""Endgame hygiene: after the opponent passes, moves inside one's own pass-alive area are pruned, never
the only legal non-pass move, and a pruned choice is replaced in both the move and the target."""

from __future__ import annotations

import numpy as np

from azero.games.go import GoGame
from azero.search.result import SearchResult
from azero.selfplay.hygiene import useless_moves, without_moves


def _alive_top(game):
    """5x5: Black's chain on row 4 with B5 and D5 has three one-point eyes A5, C5, E5; White passes."""
    states = game.new_states(1)
    for v in ("A4", "B4", "C4", "D4", "E4", "B5", "D5"):
        states.apply(np.array([game.str_to_action(v)], np.int32))
        states.apply(np.array([game.spec.pass_action], np.int32))
    return states


def test_own_eyes_are_pruned_only_after_a_pass():
    game = GoGame(5, komi=0.5)
    states = _alive_top(game)
    eyes = [game.str_to_action(v) for v in ("A5", "C5", "E5")]
    prune = useless_moves(states, np.array([True]), game.spec.pass_action)
    assert prune is not None and sorted(np.flatnonzero(prune[0])) == sorted(eyes)
    assert useless_moves(states, np.array([False]), game.spec.pass_action) is None


class _OnlyMove:
    """A stand-in position whose single legal non-pass move lies in the mover's pass-alive area."""

    def pass_alive(self):
        return np.array([[1, 1, 0, 0]], np.int8)

    def to_play(self):
        return np.array([0], np.int8)

    def legal_mask(self):
        return np.array([[True, False, False, False, True]])


def test_the_only_legal_non_pass_move_is_never_pruned():
    assert useless_moves(_OnlyMove(), np.array([True]), 4) is None


def test_a_pruned_choice_gives_way_to_the_next_most_visited_move():
    visits = np.array([[10, 6, 2, 0], [0, 0, 0, 0]], np.int32)
    policy = (visits / np.maximum(visits.sum(axis=1, keepdims=True), 1)).astype(np.float32)
    result = SearchResult(visits=visits, policy=policy, q=np.zeros((2, 4), np.float32),
                          prior=np.full((2, 4), 0.25, np.float32), value=np.zeros(2, np.float32),
                          action=np.array([0, -1], np.int32), simulations=np.array([18, 0], np.int32))
    prune = np.array([[True, False, False, False], [False] * 4])
    actions, target = without_moves(result, prune, result.action.copy())
    assert actions.tolist() == [1, -1]
    np.testing.assert_allclose(target[0], [0, 0.75, 0.25, 0])
    np.testing.assert_array_equal(target[1], 0)      # an inactive game's row stays as it was


def test_self_play_with_pruning_never_fills_its_own_pass_alive_area_after_a_pass():
    from azero.search.config import SearchConfig
    from azero.search.evaluators import UniformEvaluator
    from azero.selfplay.config import SelfPlayConfig
    from azero.selfplay.worker import SelfPlayWorker

    game = GoGame(5, komi=0.5, max_moves=60)
    cfg = SelfPlayConfig(games_in_parallel=16, resign_threshold=None, full_search_prob=1.0, temperature_moves=60,
                         prune_pass_alive=True)
    worker = SelfPlayWorker(game, UniformEvaluator(), SearchConfig(simulations=8), cfg, seed=7)
    records = worker.play(70)
    assert len(records) >= 8
    p = game.spec.pass_action
    checked = 0
    for r in records:
        states = game.new_states(1)
        for prev, a in zip([None] + r.actions[:-1], r.actions):
            if prev == p and a != p:
                area = states.pass_alive()[0]
                own = 1 if states.to_play()[0] == 0 else -1
                assert area[a] != own, f"move {game.action_to_str(a)} fills the mover's own pass-alive area"
                checked += 1
            states.apply(np.array([a], np.int32))
    assert checked > 0
    assert worker.pruned_moves > 0   # random play does try such moves: the rule had work to do
