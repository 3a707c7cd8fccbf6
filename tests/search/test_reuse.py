"""Tree reuse: advance() keeps the played move's subtree with all its statistics."""

from __future__ import annotations

import numpy as np
import pytest
from searchutil import random_roots
from treecheck import check_tree

from azero.search._mcts import ILLEGAL, ROOT
from azero.search.config import SearchConfig
from azero.search.evaluators import FakeEvaluator
from azero.search.mcts import MCTS


def subtree_by_path(tree, b, start):
    """{action path from `start`: (node fields, child rows)} for every node below `start`."""
    out, stack = {}, [(start, ())]
    while stack:
        node, path = stack.pop()
        out[path] = (
            tree.node_visits[b, node], tree.node_value_sum[b, node], tree.node_raw_value[b, node],
            tree.node_to_play[b, node], tree.node_state[b, node],
            tree.child_prior[b, node].tobytes(), tree.child_visits[b, node].tobytes(),
            tree.child_value_sum[b, node].tobytes(), tuple(tree.child_index[b, node] == ILLEGAL),
        )
        for a, child in enumerate(tree.child_index[b, node]):
            if child >= 0:
                stack.append((child, path + (a,)))
    return out


def make_search(game, batch, sims=80, **kw):
    config = SearchConfig(simulations=sims, tree_reuse=True, dirichlet_weight=0.0, seed=0, **kw)
    return MCTS(game.spec, FakeEvaluator(game.spec.obs_shape, game.spec.num_actions, seed=7), config,
                batch_size=batch)


def test_advance_preserves_subtree_statistics(connect4):
    roots = random_roots(connect4, 4, seed=1, max_plies=6)
    search = make_search(connect4, 4)
    result = search.run(roots)
    tree = search.tree
    actions = result.action
    before = [subtree_by_path(tree, b, tree.child_index[b, ROOT, actions[b]]) for b in range(4)]
    search.advance(actions)
    for b in range(4):
        after = subtree_by_path(tree, b, ROOT)
        assert after == before[b]
        assert tree.num_nodes[b] == len(before[b])  # compacted: exactly the kept nodes remain
        check_tree(tree, b)
    # The next search continues from the kept statistics.
    roots.apply(actions)
    kept_visits = tree.node_visits[:, ROOT].copy()
    result2 = search.run(roots)
    np.testing.assert_array_equal(tree.node_visits[:, ROOT], kept_visits + 80)
    assert (result2.visits.sum(axis=1) == kept_visits - 1 + 80).all()
    for b in range(4):
        check_tree(tree, b)


def test_new_root_keeps_the_visit_count_of_the_played_child(tictactoe):
    roots = tictactoe.new_states(1)
    search = make_search(tictactoe, 1, sims=200)
    result = search.run(roots)
    a = int(result.action[0])
    child_visits = result.visits[0, a]
    search.advance(np.array([a]))
    assert search.tree.node_visits[0, ROOT] == child_visits


def test_no_action_and_unvisited_child_start_fresh_trees(tictactoe):
    roots = tictactoe.new_states(2)
    search = make_search(tictactoe, 2, sims=3)
    result = search.run(roots)
    unvisited = int(np.flatnonzero(result.visits[1] == 0)[0])
    search.advance(np.array([-1, unvisited]))
    assert search.tree.num_nodes.tolist() == [1, 1]
    assert (search.tree.node_visits[:, ROOT] == 0).all()


def test_illegal_advance_is_an_error(tictactoe):
    roots = tictactoe.new_states(1)
    roots.apply(np.array([4], np.int32))
    search = make_search(tictactoe, 1, sims=10)
    search.run(roots)
    with pytest.raises(ValueError, match="illegal"):
        search.advance(np.array([4]))
    with pytest.raises(ValueError, match="out of range"):
        search.advance(np.array([9]))


def test_subtree_too_large_for_the_next_search_is_dropped(connect4):
    roots = connect4.new_states(2)
    search = make_search(connect4, 2, sims=50, max_nodes=60)
    result = search.run(roots)
    search.advance(result.action)
    roots.apply(result.action)
    assert (search.tree.num_nodes > 10).all()  # 10 free nodes are not enough for 50 simulations
    result = search.run(roots)
    assert search.stats["reuse_dropped"] == 2
    assert (result.simulations == 50).all() and (result.visits.sum(axis=1) == 50).all()
