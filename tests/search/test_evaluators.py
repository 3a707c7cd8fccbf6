"""The evaluators that need no network, and the output check the search applies."""

from __future__ import annotations

import numpy as np
import pytest
from searchutil import random_roots
from pygames import NimGame

from azero.search.evaluators import (Evaluator, FakeEvaluator, RandomRolloutEvaluator, UniformEvaluator,
                                     check_output)


def test_uniform(connect4):
    states = random_roots(connect4, 5, seed=0, max_plies=20)
    legal = states.legal_mask()
    priors, values = UniformEvaluator().evaluate(states.encode(), legal)
    assert priors.dtype == np.float32 and values.dtype == np.float32
    # Unnormalised (the search renormalises over the legal actions): equal on every legal action.
    assert (priors[legal] == priors[legal].max()).all() and priors[legal].min() > 0
    assert (priors[~legal] == 0).all() and (values == 0).all()
    assert isinstance(UniformEvaluator(), Evaluator)


def test_fake_is_deterministic_per_row_whatever_the_batch(go9):
    states = random_roots(go9, 12, seed=1, max_plies=15)
    obs, legal = states.encode(), states.legal_mask()
    ev = FakeEvaluator(go9.spec.obs_shape, go9.spec.num_actions, seed=3)
    p_all, v_all = ev.evaluate(obs, legal)
    for i in range(12):
        p, v = ev.evaluate(obs[i:i + 1], legal[i:i + 1])
        np.testing.assert_array_equal(p[0], p_all[i])
        assert v[0] == v_all[i]
    assert (p_all[~legal] == 0).all() and (p_all[legal] > 0).all()
    np.testing.assert_allclose(p_all.sum(axis=1), 1.0, rtol=1e-5)
    assert (np.abs(v_all) <= 1).all() and len(set(v_all.tolist())) > 1
    assert ev.calls == 13 and ev.rows == 24


def test_random_rollout_values():
    game = NimGame(pile=3)
    states = game.new_states(3)
    states.stones[:] = [1, 2, 3]
    legal = states.legal_mask()
    ev = RandomRolloutEvaluator(rollouts=400, seed=5)
    priors, values = ev.evaluate(states.encode(), legal, states=states.copy())
    np.testing.assert_array_equal(priors, legal.astype(np.float32))  # uniform, unnormalised
    assert values[0] == 1.0  # one stone left: the player to move takes it and wins, in every playout
    assert abs(values[1]) < 0.15  # take 2 and win, or take 1 and lose: half each
    # Three stones: take 2 and the opponent takes the last one (-1); take 1 and the opponent, facing two,
    # wins or loses with even odds (0). Expected value -1/2.
    assert abs(values[2] + 0.5) < 0.15
    again = RandomRolloutEvaluator(rollouts=400, seed=5).evaluate(states.encode(), legal, states=states.copy())[1]
    np.testing.assert_array_equal(values, again)  # reproducible from the seed


def test_random_rollout_needs_states(tictactoe):
    states = tictactoe.new_states(2)
    with pytest.raises(ValueError, match="states"):
        RandomRolloutEvaluator().evaluate(states.encode(), states.legal_mask())
    assert RandomRolloutEvaluator.needs_states


def test_check_output():
    p, v = np.full((2, 3), 1 / 3, np.float32), np.zeros(2, np.float32)
    out_p, out_v = check_output(p, v, 2, 3)
    assert out_p is p and out_v is v  # already fine: no copy
    p_strided = np.full((2, 6), 1 / 3, np.float32)[:, ::2]
    assert check_output(p_strided, v, 2, 3)[0].flags.c_contiguous
    for bad in [(p.T, v), (p, v.reshape(2, 1)), (p.astype(np.float64), v), (list(p), v)]:
        with pytest.raises(ValueError):
            check_output(*bad, 2, 3)
