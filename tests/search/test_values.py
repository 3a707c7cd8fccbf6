"""The value convention: values are from the view of the player to move, negated along an edge exactly
when the player to move changes; terminal leaves back up their exact outcome."""

from __future__ import annotations

import numpy as np
import pytest
from pygames import NimGame
from treecheck import check_tree

from azero.search._mcts import NODE_EXPANDED, NODE_TERMINAL, ROOT, SearchTree
from azero.search.config import SearchConfig
from azero.search.evaluators import UniformEvaluator
from azero.search.mcts import MCTS


def one_step(tree, priors, values, legal, terminal, to_play):
    m, length = tree.select()
    assert m == len(values)
    tree.expand_and_backup(m, np.asarray(priors, np.float32), np.asarray(values, np.float32),
                           np.asarray(legal, np.uint8), np.asarray(terminal, np.uint8), np.asarray(to_play, np.int8))
    return m, length


@pytest.mark.parametrize("child_player,sign", [(1, -1.0), (0, 1.0)])
def test_backup_negates_exactly_when_the_player_changes(child_player, sign):
    tree = SearchTree(1, 8, 2, 4)
    tree.begin_search(np.array([2], np.int32))
    one_step(tree, [[0.5, 0.5]], [0.25], [[1, 1]], [0], [0])     # root: player 0, value 0.25
    assert tree.node_state[0, ROOT] == NODE_EXPANDED
    one_step(tree, [[0.5, 0.5]], [0.5], [[1, 1]], [0], [child_player])  # first child, its player's view
    assert tree.child_value_sum[0, ROOT, 0] == sign * 0.5
    assert tree.node_value_sum[0, ROOT] == 0.25 + sign * 0.5
    assert tree.node_value_sum[0, 1] == 0.5
    one_step(tree, [[0.5, 0.5]], [-1.0], [[0, 0]], [1], [1])     # second child: terminal, exact -1 for player 1
    assert tree.node_state[0, 2] == NODE_TERMINAL
    assert tree.child_value_sum[0, ROOT, 1] == 1.0  # player 1 lost: +1 for player 0 at the root
    check_tree(tree, 0)


def test_terminal_revisits_back_up_the_exact_value_again():
    tree = SearchTree(1, 8, 1, 4)
    tree.begin_search(np.array([4], np.int32))
    one_step(tree, [[1.0]], [0.0], [[1]], [0], [0])
    one_step(tree, [[1.0]], [1.0], [[0]], [1], [0])  # the only move wins (same player's view after it)
    for _ in range(3):
        m, _ = tree.select()  # the known terminal child is backed up inside select: nothing to evaluate
        assert m == 0
    assert not tree.searching()
    assert tree.child_visits[0, ROOT, 0] == 4 and tree.child_value_sum[0, ROOT, 0] == 4.0
    assert tree.terminal_visits == 3


@pytest.mark.parametrize("extra_turn", [False, True])
def test_nim_values_match_minimax(extra_turn):
    game = NimGame(pile=10, extra_turn=extra_turn)
    piles = np.arange(1, 11)
    states = game.new_states(len(piles))
    states.stones[:] = piles
    states.player[:] = piles % 2  # both players appear at the root
    search = MCTS(game.spec, UniformEvaluator(), SearchConfig(simulations=400, dirichlet_weight=0.0),
                  batch_size=len(piles))
    result = search.run(states)
    for i, pile in enumerate(piles):
        best = game.solve(int(pile))
        winning = [a for a in (0, 1) if a + 1 <= pile and (
            pile - (a + 1) == 0 or
            (game.solve(pile - (a + 1)) if extra_turn and a == 1 else -game.solve(pile - (a + 1))) == 1)]
        # The root value and the chosen move agree with minimax, for whichever player is to move.
        assert np.sign(result.value[i]) == best, (pile, result.value[i], best)
        if best == 1:
            assert result.action[i] in winning
        check_tree(search.tree, i)


def test_immediate_win_is_worth_exactly_one_to_the_mover(tictactoe):
    states = tictactoe.new_states(2)
    # X: 0, 1 (wins at 2); the second game is the same with O to finish: O: 3, 4 (wins at 5).
    states.apply_paths(np.array([[0, 3, 1, 8, -1], [0, 3, 1, 4, 6]], np.int32))
    search = MCTS(tictactoe.spec, UniformEvaluator(), SearchConfig(simulations=100, dirichlet_weight=0.0),
                  batch_size=2)
    result = search.run(states)
    assert result.q[0, 2] == 1.0 and result.action[0] == 2
    assert result.q[1, 5] == 1.0 and result.action[1] == 5
    assert (result.value > 0.5).all()


def test_priors_are_renormalised_over_legal_actions():
    tree = SearchTree(2, 4, 3, 2)
    tree.begin_search(np.array([1, 1], np.int32))
    one_step(tree, [[0.2, 0.2, 0.6], [0.0, 0.0, 1.0]], [0.0, 0.0], [[1, 1, 0], [1, 1, 0]], [0, 0], [0, 0])
    np.testing.assert_allclose(tree.child_prior[0, ROOT], [0.5, 0.5, 0.0])
    # All the mass on an illegal action: uniform over the legal ones.
    np.testing.assert_allclose(tree.child_prior[1, ROOT], [0.5, 0.5, 0.0])
