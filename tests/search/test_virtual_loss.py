"""K > 1 leaves per game and step (virtual loss): totals add up and the tree stays consistent."""

from __future__ import annotations

import pytest
from searchutil import random_roots
from pygames import NimGame
from treecheck import check_tree

from azero.search._mcts import NODE_TERMINAL, ROOT
from azero.search.config import SearchConfig
from azero.search.evaluators import FakeEvaluator, UniformEvaluator
from azero.search.mcts import MCTS


@pytest.mark.parametrize("name", ["connect4", "go9"])
@pytest.mark.parametrize("k", [2, 8])
@pytest.mark.parametrize("algorithm", ["puct", "gumbel"])
def test_visit_totals_and_invariants(request, name, k, algorithm):
    game = request.getfixturevalue(name)
    roots = random_roots(game, 4, seed=3, max_plies=8)
    ev = FakeEvaluator(game.spec.obs_shape, game.spec.num_actions, seed=2)
    sims = 96
    search = MCTS(game.spec, ev, SearchConfig(simulations=sims, leaves_per_game=k, algorithm=algorithm, seed=1),
                  batch_size=4)
    result = search.run(roots)
    tree = search.tree
    assert (result.simulations == sims).all()
    assert (result.visits.sum(axis=1) == sims).all()
    assert (tree.node_visits[:, ROOT] == sims + 1).all()
    # Every non-terminal node went to the evaluator exactly once: nothing was evaluated twice.
    terminal_nodes = sum(int((tree.node_state[b, : tree.num_nodes[b]] == NODE_TERMINAL).sum()) for b in range(4))
    assert search.stats["evaluated"] == tree.num_nodes.sum() - terminal_nodes
    for b in range(4):
        check_tree(tree, b)
    # Larger batches per step: fewer steps than one leaf per game and step would need.
    assert search.stats["steps"] <= (sims + k - 1) // k + 2 + tree.collisions


def test_collisions_are_dropped_not_double_expanded():
    game = NimGame(pile=12)
    roots = game.new_states(3)
    search = MCTS(game.spec, UniformEvaluator(), SearchConfig(simulations=60, leaves_per_game=8,
                                                              virtual_loss=0.0, dirichlet_weight=0.0),
                  batch_size=3)
    result = search.run(roots)
    tree = search.tree
    # With no virtual loss and two actions, descents of one step pile onto the same leaf.
    assert tree.collisions > 0
    assert (result.simulations == 60).all() and (result.visits.sum(axis=1) == 60).all()
    for b in range(3):
        check_tree(tree, b)


def test_virtual_loss_spreads_one_step_over_distinct_leaves(connect4):
    roots = connect4.new_states(1)
    search = MCTS(connect4.spec, UniformEvaluator(),
                  SearchConfig(simulations=7, leaves_per_game=7, dirichlet_weight=0.0), batch_size=1)
    result = search.run(roots)
    # One step after the root's own evaluation: 7 descents, 7 different root children, no collision.
    assert search.stats["steps"] == 2 and search.tree.collisions == 0
    assert result.visits[0].tolist() == [1] * 7
