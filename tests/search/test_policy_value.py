"""policy_value: the root's win/loss value under the policy target, the q that
selfplay.value_q_weight mixes into value targets (not the mean backed-up root value)."""

from __future__ import annotations

import numpy as np
import pytest

from azero.eval.c4accuracy import test_states as c4_states
from azero.search._mcts import ROOT, SearchTree
from azero.search.config import SearchConfig
from azero.search.evaluators import UniformEvaluator
from azero.search.mcts import MCTS, root_win_q
from azero.search.result import SearchResult, policy_value


def result(visits, policy, q, value, win_q=None) -> SearchResult:
    f32 = lambda x: np.asarray(x, np.float32)  # noqa: E731
    visits = np.asarray(visits, np.int32)
    return SearchResult(visits=visits, policy=f32(policy), q=f32(q), prior=f32(policy), value=f32(value),
                        action=visits.argmax(axis=1).astype(np.int32), simulations=visits.sum(axis=1),
                        win_q=None if win_q is None else f32(win_q))


def test_weights_the_visited_actions_by_the_policy_renormalised():
    r = result(visits=[[3, 1, 0], [0, 0, 0]], policy=[[0.6, 0.2, 0.2], [0.5, 0.5, 0.0]],
               q=[[0.5, -1.0, 0.0], [0.0, 0.0, 0.0]], value=[0.1, -0.4])
    # row 0: the unvisited action's 0.2 leaves the weights; row 1: nothing visited, the root value
    np.testing.assert_allclose(policy_value(r), [(0.6 * 0.5 - 0.2) / 0.8, -0.4], rtol=1e-6)


def test_reads_the_win_loss_part_where_q_adds_a_score_utility():
    r = result(visits=[[2, 2]], policy=[[0.5, 0.5]], q=[[0.9, 0.7]], value=[0.0], win_q=[[0.4, 0.2]])
    assert policy_value(r)[0] == pytest.approx(0.3)


def test_root_win_q_leaves_the_score_utility_out():
    tree = SearchTree(1, 8, 2, 4, score_lambda=0.4, score_div=4.5)
    tree.begin_search(np.array([3], np.int32))
    f32 = lambda x: np.asarray(x, np.float32)  # noqa: E731
    for values, to_play, scores, terminal in (([0.1], [0], [2.0], [0]), ([0.3], [1], [-5.0], [0]),
                                              ([0.0], [1], [0.0], [1])):
        m, _ = tree.select()
        tree.expand_and_backup(m, f32([[0.5, 0.5]]), f32(values), np.ones((1, 2), np.uint8),
                               np.asarray(terminal, np.uint8), np.asarray(to_play, np.int8), scores=f32(scores),
                               final_scores=f32([-7.0]) if terminal[0] else None)
    # child 0: player 1 valued it 0.3, so -0.3 for the root player; child 1: a terminal draw
    np.testing.assert_allclose(root_win_q(tree)[0], [-0.3, 0.0], atol=1e-6)
    assert abs(tree.root_q()[0, 0] + 0.3) > 0.05  # the utility differs: the score moved it
    assert tree.child_visits[0, ROOT].tolist() == [1, 1]


def test_a_gumbel_root_in_a_won_position_reads_won_under_its_policy(connect4):
    """One winning move among seven: sequential halving still spends simulations on the six
    others, so the mean root value stays far below the win that the improved policy plays."""
    states = c4_states(["112233"])  # the first player to move wins in column 4
    search = MCTS(connect4.spec, UniformEvaluator(),
                  SearchConfig(simulations=32, algorithm="gumbel", seed=0), batch_size=1)
    r = search.run(states)
    assert r.action[0] == 3 and (r.visits[0] > 0).sum() == 7
    assert r.value[0] < 0.5
    assert policy_value(r)[0] > 0.95
