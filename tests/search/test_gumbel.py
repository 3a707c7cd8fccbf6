"""Gumbel AlphaZero root: schedule, coverage of the root actions, and the improved policy."""

from __future__ import annotations

import numpy as np
import pytest
from searchutil import random_roots

from azero.search.config import SearchConfig
from azero.search.evaluators import FakeEvaluator, RandomRolloutEvaluator, UniformEvaluator
from azero.search.gumbel import considered_visits, considered_visits_table
from azero.search.mcts import MCTS


def test_sequential_halving_schedule():
    # m = 4, n = 16: two phases; 4 actions x 2 visits, then 2 actions x 4 visits.
    assert considered_visits(4, 16) == [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5]
    assert considered_visits(1, 5) == [0, 1, 2, 3, 4]
    assert considered_visits(16, 8) == [0] * 8  # fewer simulations than candidates: top-n, once each
    for m in (2, 3, 7, 16):
        for n in (1, 10, 50, 200):
            seq = considered_visits(m, n)
            assert len(seq) == n
            assert seq[: min(m, n)] == [0] * min(m, n)  # the first m simulations visit m distinct actions
            assert all(b - a in (0, 1) or b < a for a, b in zip(seq, seq[1:]))
    table = considered_visits_table(16, 50)
    assert table.shape == (17, 50) and table.dtype == np.int32
    assert table[5].tolist() == considered_visits(5, 50)


@pytest.mark.parametrize("name,sims", [("tictactoe", 9), ("tictactoe", 40), ("connect4", 7), ("connect4", 100)])
def test_visits_every_root_action_when_budget_allows(request, name, sims):
    game = request.getfixturevalue(name)
    roots = random_roots(game, 6, seed=2, max_plies=4)
    config = SearchConfig(simulations=sims, algorithm="gumbel", seed=1)
    result = MCTS(game.spec, FakeEvaluator(game.spec.obs_shape, game.spec.num_actions, seed=3), config,
                  batch_size=6).run(roots)
    legal = roots.legal_mask()
    assert (legal.sum(axis=1) <= sims).all()
    np.testing.assert_array_equal(result.visits > 0, legal)
    assert (result.visits.sum(axis=1) == sims).all()


def test_considers_only_m_actions_with_small_m(go9):
    roots = go9.new_states(3)
    config = SearchConfig(simulations=32, algorithm="gumbel", gumbel_num_considered=4, seed=0)
    result = MCTS(go9.spec, UniformEvaluator(), config, batch_size=3).run(roots)
    assert ((result.visits > 0).sum(axis=1) == 4).all()
    # Sequential halving: 4 candidates x 4 visits, then the 2 survivors x 8 more.
    assert sorted(result.visits[0][result.visits[0] > 0].tolist()) == [4, 4, 12, 12]


@pytest.mark.parametrize("evaluator", ["uniform", "rollout", "fake"])
def test_improved_policy_prefers_higher_completed_q(connect4, evaluator):
    roots = random_roots(connect4, 8, seed=5, max_plies=10)
    ev = {"uniform": UniformEvaluator(), "rollout": RandomRolloutEvaluator(seed=2),
          "fake": FakeEvaluator(connect4.spec.obs_shape, 7, seed=1)}[evaluator]
    search = MCTS(connect4.spec, ev, SearchConfig(simulations=64, algorithm="gumbel", seed=3), batch_size=8)
    result = search.run(roots)
    completed = search.tree.root_completed_q()
    legal = roots.legal_mask()
    for b in range(8):
        acts = np.flatnonzero(legal[b])
        pi, prior, cq = result.policy[b, acts], result.prior[b, acts], completed[b, acts]
        assert np.isclose(pi.sum(), 1.0, atol=1e-5) and (result.policy[b, ~legal[b]] == 0).all()
        # pi'(a) / P(a) = exp(sigma(completed Q(a))) / Z: strictly increasing in completed Q.
        ratio = pi / prior
        for i in range(len(acts)):
            for j in range(len(acts)):
                if cq[i] > cq[j] + 1e-9:
                    assert ratio[i] > ratio[j], (b, acts[i], acts[j], cq[i], cq[j])
        # Completed Q is Q where visited, and one shared value (v_mix) elsewhere.
        visited = result.visits[b, acts] > 0
        np.testing.assert_allclose(cq[visited], result.q[b, acts][visited], rtol=1e-5, atol=1e-6)
        assert np.ptp(cq[~visited]) == 0 if (~visited).any() else True
        # The chosen action is one of the most visited (the survivors of sequential halving).
        assert result.visits[b, result.action[b]] == result.visits[b].max()


def test_improved_policy_with_uniform_prior_orders_like_completed_q(connect4):
    roots = random_roots(connect4, 6, seed=9, max_plies=8)
    search = MCTS(connect4.spec, RandomRolloutEvaluator(seed=1),
                  SearchConfig(simulations=100, algorithm="gumbel", seed=4), batch_size=6)
    result = search.run(roots)
    completed = search.tree.root_completed_q()
    legal = roots.legal_mask()
    for b in range(6):
        acts = np.flatnonzero(legal[b])
        best = acts[np.argmax(completed[b, acts])]
        assert result.policy[b, best] == result.policy[b, acts].max()
        assert result.policy[b, best] > 1.0 / len(acts)  # more mass than the uniform prior gave it


def test_improved_policy_is_finite_when_sigma_dwarfs_a_zero_prior_action():
    """pi' = softmax(logit + sigma): an action with prior 0 but the largest sigma must not make Z = 0."""
    from azero.search._mcts import SearchTree

    tree = SearchTree(1, 4, 2, 3, gumbel=True, c_scale=20.0, gumbel_table=considered_visits_table(16, 2))
    tree.begin_search(np.array([2], np.int32), gumbel=np.zeros((1, 2)))
    for value, to_play in ((1.0, 0), (1.0, 1)):  # root (+1 for its player), then child 0 (-1 from the root)
        m, _ = tree.select()
        tree.expand_and_backup(m, np.array([[1.0, 0.0]], np.float32), np.array([value], np.float32),
                               np.ones((1, 2), np.uint8), np.zeros(1, np.uint8), np.array([to_play], np.int8))
    # Completed Q: action 0 visited at -1, action 1 (prior 0) gets v_mix = 0, so after min-max
    # sigma(1) - sigma(0) = (50 + 1) * 20 = 1020: exp(-1020) underflows to 0.
    np.testing.assert_allclose(tree.root_completed_q()[0], [-1.0, 0.0])
    policy, action = tree.gumbel_result()
    np.testing.assert_array_equal(policy[0], [1.0, 0.0])
    assert action[0] == 0


def test_gumbel_scale_zero_is_deterministic_and_follows_the_prior(connect4):
    """gumbel_scale 0 (test-time search): no seed changes the result; with one simulation the
    pick is the prior's argmax (top-1 of logits + 0 noise)."""
    roots = random_roots(connect4, 6, seed=7, max_plies=8)
    ev = FakeEvaluator(connect4.spec.obs_shape, 7, seed=4)
    results = [MCTS(connect4.spec, ev, SearchConfig(simulations=24, algorithm="gumbel", gumbel_scale=0.0, seed=s),
                    batch_size=6).run(roots) for s in (1, 2)]
    np.testing.assert_array_equal(results[0].action, results[1].action)
    np.testing.assert_array_equal(results[0].visits, results[1].visits)
    noisy = [MCTS(connect4.spec, ev, SearchConfig(simulations=24, algorithm="gumbel", seed=s),
                  batch_size=6).run(roots) for s in (1, 2)]
    assert not np.array_equal(noisy[0].visits, noisy[1].visits)
    one = MCTS(connect4.spec, ev, SearchConfig(simulations=1, algorithm="gumbel", gumbel_scale=0.0),
               batch_size=6).run(roots)
    prior, _ = ev.evaluate(roots.encode(), roots.legal_mask())
    prior = np.where(roots.legal_mask(), prior, -1.0)
    np.testing.assert_array_equal(one.action, prior.argmax(axis=1))
    with pytest.raises(ValueError, match="gumbel_scale"):
        SearchConfig(algorithm="gumbel", gumbel_scale=-1.0)
