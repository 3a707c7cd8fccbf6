"""Misuse and bad evaluator output raise clear errors and leave the tree usable."""

from __future__ import annotations

import numpy as np
import pytest
from treecheck import check_tree

from azero.search._mcts import EvaluatorOutputError, SearchTree, TreeCapacityError
from azero.search.config import SearchConfig
from azero.search.evaluators import FakeEvaluator, UniformEvaluator
from azero.search.mcts import MCTS


class Broken:
    """Returns a corrupted copy of a good evaluator's output."""

    def __init__(self, game, corrupt):
        self.inner = FakeEvaluator(game.spec.obs_shape, game.spec.num_actions, seed=1)
        self.corrupt = corrupt
        self.calls = 0

    def evaluate(self, obs, legal):
        self.calls += 1
        priors, values = self.inner.evaluate(obs, legal)
        return self.corrupt(priors, values) if self.calls == 3 else (priors, values)


def nan_value(p, v):
    v[0] = np.nan
    return p, v


def inf_prior(p, v):
    p[-1, 0] = np.inf
    return p, v


def negative_prior(p, v):
    p[0, 1] = -0.5
    return p, v


@pytest.mark.parametrize("corrupt,error,match", [
    (nan_value, EvaluatorOutputError, "not finite"),
    (inf_prior, EvaluatorOutputError, "NaN, infinite or negative"),
    (negative_prior, EvaluatorOutputError, "NaN, infinite or negative"),
    (lambda p, v: (p[:, :-1], v), ValueError, r"priors must be float32 of shape \(\d+, 7\)"),
    (lambda p, v: (p, v[:-1]), ValueError, "values must be float32"),
    (lambda p, v: (p.astype(np.float64), v), ValueError, "priors must be float32"),
    (lambda p, v: (p, v.astype(np.float16)), ValueError, "values must be float32"),
    (lambda p, v: (p.tolist(), v), ValueError, "numpy arrays"),
    (lambda p, v: p, ValueError, "tuple"),
])
@pytest.mark.parametrize("fused", [True, False], ids=["leaf_step", "separate_calls"])
def test_bad_evaluator_output(connect4, corrupt, error, match, fused):
    config = SearchConfig(simulations=40, leaves_per_game=2, dirichlet_weight=0.0)
    roots = connect4.new_states(3)
    search = MCTS(connect4.spec, Broken(connect4, corrupt), config, batch_size=3)
    search._fused_steps = fused
    with pytest.raises(error, match=match):
        search.run(roots)
    # The failed step was rolled back: the trees are consistent, and finishing the interrupted search
    # on them gives exactly the visits of an undisturbed search.
    for b in range(3):
        check_tree(search.tree, b)
    search.evaluator = FakeEvaluator(connect4.spec.obs_shape, connect4.spec.num_actions, seed=1)
    while search.tree.searching():
        search._step(roots)
    undisturbed = MCTS(connect4.spec, search.evaluator, config, batch_size=3).run(roots)
    np.testing.assert_array_equal(search.tree.root_visits(), undisturbed.visits)


def test_capacity_overflow_is_reported_before_anything_is_written():
    tree = SearchTree(2, 10, 3, 5)
    with pytest.raises(TreeCapacityError, match="game 1.*capacity of 10"):
        tree.begin_search(np.array([5, 10], np.int32))
    assert tree.num_nodes.tolist() == [1, 1]


def test_search_larger_than_tree_is_an_error(connect4):
    search = MCTS(connect4.spec, UniformEvaluator(), SearchConfig(simulations=20), batch_size=2)
    with pytest.raises(TreeCapacityError, match="max_nodes"):
        search.run(connect4.new_states(2), simulations=50)
    assert (search.run(connect4.new_states(2)).simulations == 20).all()  # still usable


def test_public_tree_arrays_are_read_only():
    tree = SearchTree(2, 10, 3, 5)
    for name in ("num_nodes", "sims_target", "child_index", "node_parent", "paths", "leaf_game"):
        with pytest.raises(ValueError, match="read-only"):
            getattr(tree, name)[0] = 7


def test_select_reports_a_full_tree_and_rolls_back():
    # begin_search guarantees room for every simulation it starts, so select's own capacity check is a
    # second line of defence; reach it by deliberately lifting the read-only guard on sims_target.
    tree = SearchTree(1, 3, 2, 4)
    tree.begin_search(np.array([2], np.int32))
    for legal in ([1, 1], [1, 1], [1, 1]):
        m, _ = tree.select()
        tree.expand_and_backup(m, np.full((m, 2), 0.5, np.float32), np.zeros(m, np.float32),
                               np.array([legal] * m, np.uint8), np.zeros(m, np.uint8), np.zeros(m, np.int8))
    assert tree.num_nodes[0] == 3 and not tree.searching()
    target = tree.sims_target
    target.flags.writeable = True
    target[0] += 1  # pretend one more simulation was requested
    with pytest.raises(TreeCapacityError, match="is full"):
        tree.select()
    check_tree(tree, 0)


def test_mismatched_shapes_into_the_tree():
    tree = SearchTree(2, 10, 3, 5)
    tree.begin_search(np.array([3, 3], np.int32))
    m, _ = tree.select()
    good = dict(priors=np.full((m, 3), 1 / 3, np.float32), values=np.zeros(m, np.float32),
                legal=np.ones((m, 3), np.uint8), terminal=np.zeros(m, np.uint8), to_play=np.zeros(m, np.int8))
    bad_cases = [
        dict(good, priors=np.full((m, 4), 0.25, np.float32)),
        dict(good, priors=np.full((m - 1, 3), 0.25, np.float32)),
        dict(good, legal=np.ones((m, 2), np.uint8)),
        dict(good, values=np.zeros(m - 1, np.float32)),
    ]
    for case in bad_cases:
        with pytest.raises(ValueError, match="expected priors"):
            tree.expand_and_backup(m, **case)
    with pytest.raises(ValueError, match="pending"):
        tree.expand_and_backup(m + 1, **good)
    with pytest.raises(ValueError):  # wrong dtype: typed memoryviews refuse it
        tree.expand_and_backup(m, **dict(good, priors=good["priors"].astype(np.float64)))
    with pytest.raises(RuntimeError, match="not expanded"):
        tree.select()
    tree.expand_and_backup(m, **good)  # the right call still works after all the refused ones
    check_tree(tree, 0)


def test_non_terminal_leaf_without_legal_moves_is_reported():
    tree = SearchTree(1, 4, 2, 2)
    tree.begin_search(np.array([1], np.int32))
    m, _ = tree.select()
    with pytest.raises(EvaluatorOutputError, match="no legal action"):
        tree.expand_and_backup(m, np.full((1, 2), 0.5, np.float32), np.zeros(1, np.float32),
                               np.zeros((1, 2), np.uint8), np.zeros(1, np.uint8), np.zeros(1, np.int8))


def test_driver_argument_errors(connect4):
    search = MCTS(connect4.spec, UniformEvaluator(), SearchConfig(simulations=10), batch_size=2)
    with pytest.raises(ValueError, match="expected 2 root positions"):
        search.run(connect4.new_states(3))
    with pytest.raises(ValueError, match="batch_size"):
        MCTS(connect4.spec, UniformEvaluator(), SearchConfig(), batch_size=0)
    with pytest.raises(ValueError, match="advance"):
        SearchTree(2, 4, 2, 2).advance(np.array([0]))


@pytest.mark.parametrize("field,value,match", [
    ("algorithm", "mcts", "algorithm"),
    ("simulations", 0, "simulations"),
    ("dirichlet_weight", 1.5, "dirichlet_weight"),
    ("max_nodes", 5, "max_nodes"),
    ("leaves_per_game", 0, "leaves_per_game"),
    ("temperature", -1.0, "temperature"),
])
def test_config_validation(field, value, match):
    with pytest.raises(ValueError, match=match):
        SearchConfig(**{"simulations": 10, field: value})
    with pytest.raises(ValueError, match="tree_reuse"):
        SearchConfig(algorithm="gumbel", tree_reuse=True)
