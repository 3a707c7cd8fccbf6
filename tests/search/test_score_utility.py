"""The score utility u = v + lambda (2/pi) atan((s - c) / div): known answers on hand-built trees,
its bounds and sign convention in real searches, and that the win rate stays the win/loss value."""

from __future__ import annotations

import math

import numpy as np
import pytest
from treecheck import check_tree

from azero.games.go import GoGame
from azero.search._mcts import ROOT, SearchTree
from azero.search.config import SearchConfig
from azero.search.evaluators import UniformEvaluator
from azero.search.mcts import MCTS


def step(tree, priors, values, legal, terminal, to_play, scores, final=None):
    m, _ = tree.select()
    assert m == len(values)
    f32 = lambda x: np.asarray(x, np.float32)  # noqa: E731
    tree.expand_and_backup(m, f32(priors), f32(values), np.asarray(legal, np.uint8), np.asarray(terminal, np.uint8),
                           np.asarray(to_play, np.int8), scores=f32(scores),
                           final_scores=None if final is None else f32(final))


def utility(v, s, c, lam, div):
    return v + lam * (2 / math.pi) * math.atan((s - c) / div)


def test_known_answer_with_the_root_score_as_centre():
    lam, div = 0.4, 4.5
    tree = SearchTree(1, 8, 2, 4, score_lambda=lam, score_div=div)
    tree.begin_search(np.array([3], np.int32))
    step(tree, [[0.5, 0.5]], [0.1], [[1, 1]], [0], [0], [2.0])        # root: player 0 expects +2: c = 2
    assert tree.node_value_sum[0, ROOT] == pytest.approx(0.1)        # the root's own u has s == c
    step(tree, [[0.5, 0.5]], [0.3], [[1, 1]], [0], [1], [-5.0])       # child: player 1 expects -5 (root: +5)
    u_child = utility(0.3, -5.0, -2.0, lam, div)                    # centre in player 1's frame is -2
    assert tree.node_value_sum[0, 1] == pytest.approx(u_child)
    assert tree.child_value_sum[0, ROOT, 0] == pytest.approx(-u_child)
    assert -u_child > -0.3                                          # 3 points better than expected: worth more
    # The final score of a terminal leaf counts like a predicted one (player 0's view given).
    step(tree, [[0.5, 0.5]], [0.0], [[0, 0]], [1], [1], [0.0], final=[-7.0])
    outcome_p1 = 0.0  # values of a terminal leaf without outcome are taken as given (the player's view)
    u_term = utility(outcome_p1, 7.0, -2.0, lam, div)              # -7 for player 0 is +7 for player 1
    assert tree.node_value_sum[0, 2] == pytest.approx(u_term)
    # The win rate and the score are backed up beside u, without the utility.
    assert tree.root_value()[0] == pytest.approx((0.1 - 0.3 - 0.0) / 3)
    assert tree.root_score()[0] == pytest.approx((2.0 + 5.0 - 7.0) / 3)
    assert tree.root_utility()[0] == pytest.approx((0.1 - u_child - u_term) / 3)
    check_tree(tree, 0)


def test_without_lambda_scores_change_nothing():
    tree = SearchTree(1, 8, 2, 4, score_lambda=0.0)
    tree.begin_search(np.array([2], np.int32))
    step(tree, [[0.5, 0.5]], [0.1], [[1, 1]], [0], [0], [2.0])
    step(tree, [[0.5, 0.5]], [0.3], [[1, 1]], [0], [1], [-50.0])
    assert tree.node_value_sum[0, ROOT] == pytest.approx(0.1 - 0.3)
    assert tree.root_value()[0] == tree.root_utility()[0]


class ScoredEvaluator(UniformEvaluator):
    """Uniform priors, value 0, and a score from the board: own minus opponent stones (player to move's view)."""

    has_score = True
    needs_observations = True

    def __init__(self):
        self.calls = 0

    def evaluate_with_score(self, obs, legal):
        priors, values = self.evaluate(obs, legal)
        self.calls += 1
        score = (obs[:, 0].sum(axis=(1, 2)) - obs[:, 1].sum(axis=(1, 2))).astype(np.float32)
        return priors, values, score


def _go_positions(batch: int, moves: int, seed: int):
    game = GoGame(5, komi=0.5)
    states = game.new_states(batch)
    rng = np.random.default_rng(seed)
    for _ in range(moves):
        legal = states.legal_mask()
        legal[:, game.spec.pass_action] = False
        keys = np.where(legal, rng.random(legal.shape), -1)
        states.apply(keys.argmax(axis=1).astype(np.int32))
    return game, states


@pytest.mark.parametrize("fused", [True, False])
def test_utility_stays_within_its_bounds_and_the_win_rate_within_one(fused):
    game, states = _go_positions(8, 6, seed=3)
    lam = 0.5
    cfg = SearchConfig(simulations=48, score_utility=lam, dirichlet_weight=0.0)
    search = MCTS(game.spec, ScoredEvaluator(), cfg, batch_size=8)
    search._fused_steps = fused
    result = search.run(states)
    tree = search.tree
    n = tree.node_visits.astype(np.float64)
    seen = n > 0
    u = tree.node_value_sum[seen] / n[seen]
    w = tree.node_win_sum[seen] / n[seen]
    assert (np.abs(u) <= 1 + lam + 1e-9).all() and (np.abs(w) <= 1 + 1e-9).all()
    assert np.abs(u - w).max() > 0.01      # the utility did something
    assert result.score is not None and np.allclose(result.value, tree.root_value())
    for b in range(8):
        check_tree(tree, b)


def test_fused_and_separate_steps_agree_with_scores():
    game, states = _go_positions(4, 8, seed=5)
    out = []
    for fused in (True, False):
        search = MCTS(game.spec, ScoredEvaluator(), SearchConfig(simulations=40, score_utility=0.4, seed=2),
                      batch_size=4)
        search._fused_steps = fused
        r = search.run(states.copy())
        out.append((r.visits, r.value, r.score, search.tree.node_value_sum.copy()))
    for a, b in zip(*out):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


def test_search_prefers_the_capture_only_with_the_utility():
    """Value 0 everywhere: only the score term tells a capture (more own stones) from other moves."""
    game = GoGame(5, komi=0.5)
    states = game.new_states(1)
    # White stone at C3 surrounded on three sides; black to move captures at C2 (C3's last liberty).
    for v in ("B3", "C3", "D3", "E5", "C4", "A1"):
        states.apply(np.array([game.str_to_action(v)], np.int32))
    capture = game.str_to_action("C2")
    picks = {}
    for lam in (0.0, 0.5):
        cfg = SearchConfig(simulations=200, score_utility=lam, dirichlet_weight=0.0)
        r = MCTS(game.spec, ScoredEvaluator(), cfg, batch_size=1).run(states.copy())
        picks[lam] = int(r.action[0])
    assert picks[0.5] == capture
    assert picks[0.0] != capture  # uniform priors and zero values: visits spread, lowest index first


def test_a_net_without_scores_ignores_the_setting():
    game, states = _go_positions(2, 4, seed=1)
    search = MCTS(game.spec, UniformEvaluator(), SearchConfig(simulations=16, score_utility=0.4), batch_size=2)
    r = search.run(states)
    assert r.score is None and search.tree.score_lambda == 0.0
