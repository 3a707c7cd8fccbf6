"""Evaluation under board symmetries (search/symmetric.py): priors mapped back, values averaged."""

from __future__ import annotations

import numpy as np
import pytest
from searchutil import random_roots

from azero.agents.spec import parse_player_spec
from azero.games.symmetry import symmetries
from azero.search.config import SearchConfig
from azero.search.evaluators import FakeEvaluator, RandomRolloutEvaluator
from azero.search.mcts import MCTS
from azero.search.symmetric import SymmetricEvaluator


class LeftLeaning:
    """Deliberately not symmetric: all prior on the lowest-numbered legal action it is shown, value
    = (own stones in the left half - in the right half) / 8, score = 10 * value. Records what it saw."""

    has_score = True

    def __init__(self):
        self.seen = []

    def evaluate_with_score(self, obs, legal):
        self.seen.append(obs.copy())
        b, a = legal.shape
        priors = np.zeros((b, a), np.float32)
        priors[np.arange(b), legal.argmax(axis=1)] = 1.0
        w = obs.shape[-1]
        own = obs[:, 0]
        values = np.clip((own[..., : w // 2].sum((1, 2)) - own[..., (w + 1) // 2:].sum((1, 2))) / 8, -1, 1)
        return priors, values.astype(np.float32), (10 * values).astype(np.float32)

    def evaluate(self, obs, legal):
        return self.evaluate_with_score(obs, legal)[:2]


def test_average_on_connect4_mirrors_the_prior_and_averages_the_value(connect4):
    states = connect4.new_states(2)
    states.apply(np.array([0, 3], np.int32))     # a stone in column a; one in the middle
    states.apply(np.array([3, 3], np.int32))     # the player to move now owns that first stone
    obs, legal = states.encode(), states.legal_mask()
    inner = LeftLeaning()
    priors, values, scores = SymmetricEvaluator(inner, connect4.spec, "average").evaluate_with_score(obs, legal)
    # identity: column 0; mirrored: the transformed position's column 0 is the real column 6
    np.testing.assert_allclose(priors, np.tile([0.5, 0, 0, 0, 0, 0, 0.5], (2, 1)))
    raw = inner.evaluate(obs, legal)[1]
    assert raw[0] != 0 and raw[1] == 0
    # a stone on the left seen mirrored counts as on the right: the mean is 0
    np.testing.assert_allclose(values, [0.0, 0.0], atol=1e-7)
    np.testing.assert_allclose(scores, 10 * values, atol=1e-6)
    assert len(inner.seen) == 2 and len(inner.seen[0]) == 4  # one batch of |G| * B rows


def test_average_over_go_dihedral_group_keeps_pass_and_is_symmetric(go9):
    states = random_roots(go9, 6, seed=2, max_plies=12)
    obs, legal = states.encode(), states.legal_mask()
    inner = FakeEvaluator(go9.spec.obs_shape, go9.spec.num_actions, seed=5)
    ev = SymmetricEvaluator(inner, go9.spec, "average")
    priors, values = ev.evaluate(obs, legal)
    assert priors.dtype == np.float32 and values.dtype == np.float32
    assert (priors[~legal] == 0).all()
    np.testing.assert_allclose(priors.sum(axis=1), 1.0, rtol=1e-5)
    # Averaging over the whole group makes the evaluator equivariant: a transformed position gets the
    # transformed priors and the same value.
    for t in symmetries(go9.spec)[1:]:
        p_t, v_t = ev.evaluate(t.apply_obs(obs), t.apply_policy(legal))
        np.testing.assert_allclose(p_t, t.apply_policy(priors), atol=1e-6)
        np.testing.assert_allclose(v_t, values, atol=1e-6)
    # pass (the last action) is fixed by every transform: its prior is the mean of the inner ones
    pass_priors = [t.inverse.apply_policy(inner.evaluate(t.apply_obs(obs), t.apply_policy(legal))[0])[:, -1]
                   for t in symmetries(go9.spec)]
    np.testing.assert_allclose(priors[:, -1], np.mean(pass_priors, axis=0), atol=1e-6)


def test_random_draws_one_transform_per_row_and_is_seeded(connect4):
    states = random_roots(connect4, 64, seed=3, max_plies=10)
    obs, legal = states.encode(), states.legal_mask()
    inner = LeftLeaning()
    identity, mirror = symmetries(connect4.spec)
    p_id, v_id = inner.evaluate(obs, legal)
    p_mi, v_mi = inner.evaluate(mirror.apply_obs(obs), mirror.apply_policy(legal))
    p_mi = mirror.inverse.apply_policy(p_mi)
    priors, values = SymmetricEvaluator(inner, connect4.spec, "random", seed=7).evaluate(obs, legal)
    as_identity = (priors == p_id).all(axis=1) & (values == v_id)
    as_mirror = (priors == p_mi).all(axis=1) & (values == v_mi)
    assert (as_identity | as_mirror).all()
    differs = ~((p_id == p_mi).all(axis=1) & (v_id == v_mi))
    assert as_identity[differs].any() and as_mirror[differs].any()   # both orientations drawn
    again = SymmetricEvaluator(inner, connect4.spec, "random", seed=7).evaluate(obs, legal)
    np.testing.assert_array_equal(again[0], priors)


def test_search_with_average_symmetry_splits_visits_evenly(connect4):
    """On the empty board a left-leaning net makes plain search favour column a; averaged over the
    mirror the search sees a symmetric position and splits its visits between a and g."""
    roots = connect4.new_states(1)
    plain = MCTS(connect4.spec, LeftLeaning(), SearchConfig(simulations=64, dirichlet_weight=0.0),
                 batch_size=1).run(roots)
    sym = MCTS(connect4.spec, LeftLeaning(), SearchConfig(simulations=64, dirichlet_weight=0.0, symmetry="average"),
               batch_size=1).run(roots)
    v_plain = plain.visits[0]
    v_sym = sym.visits[0]
    assert v_plain[0] > v_plain[6]
    assert v_sym[0] == v_sym[6] and v_sym[0] > 0


def test_evaluators_without_observations_are_not_wrapped(connect4):
    search = MCTS(connect4.spec, RandomRolloutEvaluator(seed=0), SearchConfig(simulations=8, symmetry="average"),
                  batch_size=1)
    assert isinstance(search.evaluator, RandomRolloutEvaluator)


def test_bad_symmetry_is_named():
    with pytest.raises(ValueError, match="symmetry must be one of"):
        SearchConfig(symmetry="mirror")
    assert dict(parse_player_spec("mcts:shipped@800:symmetry=average").search)["symmetry"] == "average"
    with pytest.raises(ValueError, match="symmetry must be one of"):
        parse_player_spec("mcts:shipped@800:symmetry=sideways")
