"""search.policy_temperature: the search uses the priors p^(1/T), renormalised over legal moves."""

from __future__ import annotations

import numpy as np
import pytest
from searchutil import assert_same, random_roots

from azero.search.config import SearchConfig
from azero.search.evaluators import FakeEvaluator
from azero.search.mcts import MCTS
from azero.search.reference import ReferenceMCTS


def tempered(priors: np.ndarray, legal: np.ndarray, t: float) -> np.ndarray:
    p = np.where(legal, priors.astype(np.float64), 0.0) ** (1.0 / t)
    return p / p.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("t", [0.5, 1.6])
def test_root_priors_are_the_tempered_network_priors(connect4, t):
    roots = random_roots(connect4, 5, seed=4, max_plies=10)
    ev = FakeEvaluator(connect4.spec.obs_shape, connect4.spec.num_actions, seed=1)
    result = MCTS(connect4.spec, ev, SearchConfig(simulations=8, policy_temperature=t, dirichlet_weight=0.0),
                  batch_size=5).run(roots)
    legal = roots.legal_mask()
    raw, _ = ev.evaluate(roots.encode(), legal)
    np.testing.assert_allclose(result.prior, tempered(raw, legal, t), rtol=1e-5, atol=1e-7)
    # The order of the moves is kept; a hotter prior is flatter, a colder one sharper.
    spread = result.prior.max(axis=1) - np.where(legal, result.prior, 1).min(axis=1)
    base = tempered(raw, legal, 1.0)
    base_spread = base.max(axis=1) - np.where(legal, base, 1).min(axis=1)
    assert (spread < base_spread).all() if t > 1 else (spread > base_spread).all()


def test_temperature_one_leaves_the_search_unchanged(connect4):
    roots = random_roots(connect4, 4, seed=2, max_plies=8)
    ev = FakeEvaluator(connect4.spec.obs_shape, connect4.spec.num_actions, seed=3)
    a = MCTS(connect4.spec, ev, SearchConfig(simulations=60, seed=1), batch_size=4).run(roots)
    b = MCTS(connect4.spec, ev, SearchConfig(simulations=60, seed=1, policy_temperature=1.0), batch_size=4).run(roots)
    assert_same(a, b)


@pytest.mark.parametrize("algorithm", ["puct", "gumbel"])
def test_tempered_search_matches_the_reference_and_moves_visits(connect4, algorithm):
    roots = random_roots(connect4, 6, seed=7, max_plies=12)
    ev = FakeEvaluator(connect4.spec.obs_shape, connect4.spec.num_actions, seed=2)
    hot = SearchConfig(simulations=80, algorithm=algorithm, seed=5, policy_temperature=2.0)
    a = MCTS(connect4.spec, ev, hot, batch_size=6).run(roots)
    assert_same(a, ReferenceMCTS(connect4.spec, ev, hot, batch_size=6).run(roots))
    plain = MCTS(connect4.spec, ev, SearchConfig(simulations=80, algorithm=algorithm, seed=5), batch_size=6).run(roots)
    assert not np.allclose(a.policy, plain.policy)  # PUCT: the visits; Gumbel: its improved policy


def test_the_evaluators_output_is_not_changed_in_place(connect4):
    roots = random_roots(connect4, 3, seed=1, max_plies=6)
    inner = FakeEvaluator(connect4.spec.obs_shape, connect4.spec.num_actions, seed=4)
    kept = []

    class Keeping:  # an evaluator that keeps what it returned, as a cache would
        def evaluate(self, obs, legal):
            out = inner.evaluate(obs, legal)
            kept.append((out[0], out[0].copy()))
            return out

    MCTS(connect4.spec, Keeping(), SearchConfig(simulations=20, policy_temperature=1.5), batch_size=3).run(roots)
    assert kept and all(np.array_equal(now, then) for now, then in kept)


@pytest.mark.parametrize("bad", [0.0, -1.0, float("inf"), float("nan")])
def test_bad_policy_temperature_is_named(bad):
    with pytest.raises(ValueError, match="policy_temperature"):
        SearchConfig(policy_temperature=bad)
