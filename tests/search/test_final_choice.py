"""search.final_q_share: the move played is the best-Q one among the well-visited moves."""

from __future__ import annotations

import numpy as np
import pytest
from searchutil import assert_same, random_roots

from azero.games.base import NO_ACTION
from azero.search.config import SearchConfig
from azero.search.evaluators import FakeEvaluator
from azero.search.mcts import MCTS
from azero.search.reference import ReferenceMCTS
from azero.search.result import final_choice


def test_final_choice_by_hand():
    weights = np.array([[10, 6, 4, 0], [10, 6, 4, 0], [0, 0, 0, 0], [3, 3, 0, 1]], np.int32)
    q = np.array([[0.1, 0.3, 0.9, 1.0], [0.1, 0.3, 0.9, 1.0], [0.5, 0, 0, 0], [0.2, 0.2, 0, 0.9]], np.float32)
    np.testing.assert_array_equal(final_choice(weights, q, 0.0), [0, 0, NO_ACTION, 0])
    # share 0.5: moves with >= 5 visits (row 0: 0 and 1); the unvisited move's Q never counts
    np.testing.assert_array_equal(final_choice(weights, q, 0.5), [1, 1, NO_ACTION, 0])
    np.testing.assert_array_equal(final_choice(weights, q, 0.4), [2, 2, NO_ACTION, 0])
    np.testing.assert_array_equal(final_choice(weights, q, 0.3), [2, 2, NO_ACTION, 3])
    np.testing.assert_array_equal(final_choice(weights, q, 1.0), [0, 0, NO_ACTION, 0])  # Q tie: lowest index
    # The only visited move even though the unvisited ones read Q 0 > -0.5.
    np.testing.assert_array_equal(final_choice(np.array([[10, 0, 0]]), np.array([[-0.5, 0, 0]]), 0.5), [0])


@pytest.mark.parametrize("share", [0.3, 0.7])
def test_search_plays_the_rule_and_matches_the_reference(connect4, share):
    roots = random_roots(connect4, 8, seed=9, max_plies=12)
    ev = FakeEvaluator(connect4.spec.obs_shape, connect4.spec.num_actions, seed=6)
    config = SearchConfig(simulations=120, seed=4, dirichlet_weight=0.0, final_q_share=share)
    result = MCTS(connect4.spec, ev, config, batch_size=8).run(roots)
    assert_same(result, ReferenceMCTS(connect4.spec, ev, config, batch_size=8).run(roots))
    np.testing.assert_array_equal(result.action, final_choice(result.visits, result.q, share))
    plain = MCTS(connect4.spec, ev, SearchConfig(simulations=120, seed=4, dirichlet_weight=0.0),
                 batch_size=8).run(roots)
    np.testing.assert_array_equal(result.visits, plain.visits)  # only the final pick changes
    if share < 0.5:  # a low share lets a less visited move of better Q win somewhere in the batch
        assert (result.action != plain.action).any()


def test_bad_share_is_named():
    for bad in (-0.1, 1.5):
        with pytest.raises(ValueError, match="final_q_share"):
            SearchConfig(final_q_share=bad)
