"""Structural invariants of a finished search tree (no descent in flight), checked node by node."""

from __future__ import annotations

import numpy as np

from azero.search._mcts import ILLEGAL, NO_PARENT, NODE_EXPANDED, NODE_PENDING, NODE_TERMINAL, ROOT, UNEXPANDED


def check_tree(tree, b: int) -> None:
    n = int(tree.num_nodes[b])
    assert 1 <= n <= tree.capacity
    assert tree.node_parent[b, ROOT] == NO_PARENT
    assert (tree.node_in_flight[b, :n] == 0).all(), "virtual loss left behind"
    seen = np.zeros(n, bool)
    for node in range(n):
        state = tree.node_state[b, node]
        assert state != NODE_PENDING or (node == ROOT and tree.node_visits[b, node] == 0), f"pending node {node}"
        visits, value_sum = tree.node_visits[b, node], tree.node_value_sum[b, node]
        if node != ROOT:
            parent, action = tree.node_parent[b, node], tree.node_action[b, node]
            assert 0 <= parent < node, "a child always has a larger id than its parent"
            assert tree.child_index[b, parent, action] == node
            # Edge statistics on the parent mirror the child's own, in the parent's frame.
            assert tree.child_visits[b, parent, action] == visits
            sign = 1.0 if tree.node_to_play[b, parent] == tree.node_to_play[b, node] else -1.0
            assert np.isclose(tree.child_value_sum[b, parent, action], sign * value_sum, atol=1e-9)
        if state == NODE_TERMINAL:
            assert np.isclose(value_sum, visits * tree.node_raw_value[b, node])
            assert abs(tree.node_raw_value[b, node]) <= 1.0 + tree.score_lambda  # the score utility adds <= lambda
            assert abs(tree.node_raw_win[b, node]) <= 1.0
        elif state == NODE_EXPANDED:
            row = tree.child_index[b, node]
            legal = row != ILLEGAL
            assert legal.any()
            assert np.isclose(tree.child_prior[b, node][legal].sum(), 1.0, atol=1e-5)
            assert (tree.child_prior[b, node][~legal] == 0).all()
            assert visits == 1 + tree.child_visits[b, node].sum()
            assert np.isclose(value_sum, tree.node_raw_value[b, node] + tree.child_value_sum[b, node].sum(), atol=1e-6)
            for child in row[row >= 0]:
                assert child < n and not seen[child], "every node has exactly one parent slot"
                seen[child] = True
            assert ((row == UNEXPANDED) <= (tree.child_visits[b, node] == 0)).all()
    assert seen[1:].all(), "every non-root node is reachable from the root"
