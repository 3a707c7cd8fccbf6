"""MCTS-Solver (SearchConfig.solver): proven values travel up the tree and decide the move.

Known answers come from tic-tac-toe's minimax (test_tictactoe_minimax); the evaluator is a fake one
whose values are noise, so a correct move can only come from what the search proved.
"""

from __future__ import annotations

import numpy as np
import pytest
from searchutil import random_roots
from test_tictactoe_minimax import mover, positions_with_a_wrong_move, value

from azero.search._mcts import PROVEN_DRAW, UNPROVEN, UNPROVEN_VALUE
from azero.search.config import SearchConfig
from azero.search.evaluators import FakeEvaluator
from azero.search.mcts import MCTS
from azero.search.reference import ReferenceMCTS
from azero.search.result import proven_weights


def late_cases(min_plies: int):
    """Tic-tac-toe positions with at least min_plies stones where some move is not optimal: (roots
    as move paths, optimal move sets, minimax value of every legal move for the mover)."""
    _, cases = positions_with_a_wrong_move()
    cases = [(path, optimal) for path, optimal in cases if len(path) >= min_plies]
    move_values = []
    for path, _ in cases:
        board = [0] * 9
        for ply, cell in enumerate(path):
            board[cell] = 1 if ply % 2 == 0 else 2
        me = mover(tuple(board))
        move_values.append({i: -value(tuple(board[:i] + [me] + board[i + 1:])) for i in range(9) if not board[i]})
    return cases, move_values


def roots_of(game, cases):
    paths = np.full((len(cases), 9), -1, np.int32)
    for i, (path, _) in enumerate(cases):
        paths[i, : len(path)] = path
    roots = game.new_states(len(cases))
    roots.apply_paths(paths)
    return roots


def search(game, roots, *, evaluator_seed: int, **config):
    """(the MCTS, its result) on `roots` with a FakeEvaluator: priors and values are noise."""
    ev = FakeEvaluator(game.spec.obs_shape, game.spec.num_actions, seed=evaluator_seed)
    mcts = MCTS(game.spec, ev, SearchConfig(dirichlet_weight=0.0, **config), batch_size=len(roots))
    return mcts, mcts.run(roots)


def test_solver_proofs_are_exact_and_a_proven_root_is_played_perfectly(tictactoe):
    cases, move_values = late_cases(4)
    assert len(cases) > 300
    roots = roots_of(tictactoe, cases)
    solved, result = search(tictactoe, roots, evaluator_seed=3, simulations=1500, solver=True, seed=1)
    proven = solved.tree.root_proven()
    for i, values in enumerate(move_values):
        for move in range(9):
            # What is proven is right; a move may stay open (a won root ends every descent at once,
            # and PUCT may prefer a proven draw to an open move with a poor value).
            if proven[i, move] != UNPROVEN_VALUE:
                assert proven[i, move] == values[move], (cases[i][0], move)
    root = solved.tree.node_proven[:, 0]
    exact = np.array([max(v.values()) + PROVEN_DRAW for v in move_values])
    assert ((root == exact) | (root == UNPROVEN)).all() and (root == exact).mean() > 0.8
    right = np.array([result.action[i] in cases[i][1] for i in range(len(cases))])
    assert right[root != UNPROVEN].all()  # a proven root is played perfectly
    assert (result.simulations == 1500).all()  # descents into proven nodes still count

    # The same budget without the solver follows the noisy values into losing moves more often.
    _, plain = search(tictactoe, roots, evaluator_seed=3, simulations=1500, seed=1)
    plain_right = np.array([plain.action[i] in cases[i][1] for i in range(len(cases))])
    assert plain_right.sum() < right.sum()


def test_a_proven_loss_is_never_played_while_another_move_is_open(tictactoe):
    cases, move_values = late_cases(5)
    roots = roots_of(tictactoe, cases)
    # Too few simulations to prove everything: whatever is proven lost must still be avoided.
    mcts, result = search(tictactoe, roots, evaluator_seed=8, simulations=12, solver=True, seed=2)
    proven = mcts.tree.root_proven()
    legal = roots.legal_mask()
    checked = 0
    for i in range(len(cases)):
        lost = (proven[i] == -1) & legal[i]
        if lost.any() and not lost[legal[i]].all():
            checked += 1
            assert not lost[result.action[i]]
        if (proven[i] == 1).any():
            assert proven[i, result.action[i]] == 1
    assert checked > 10


@pytest.mark.parametrize("name,plies,sims", [("tictactoe", 5, 200), ("connect4", 30, 300)])
@pytest.mark.parametrize("k", [1, 4])
def test_cython_matches_reference_with_the_solver(name, plies, sims, k):
    from azero.games import make_game

    game = make_game(name)
    roots = random_roots(game, 6, seed=4, max_plies=plies)
    config = SearchConfig(simulations=sims, solver=True, leaves_per_game=k, seed=5, fpu_reduction=0.1)
    ev = FakeEvaluator(game.spec.obs_shape, game.spec.num_actions, seed=2)
    fast = MCTS(game.spec, ev, config, batch_size=6)
    slow = ReferenceMCTS(game.spec, ev, config, batch_size=6)
    a, b = fast.run(roots), slow.run(roots)
    np.testing.assert_array_equal(a.visits, b.visits)
    np.testing.assert_array_equal(a.action, b.action)
    np.testing.assert_array_equal(a.action_weights, b.action_weights)
    np.testing.assert_allclose(a.q, b.q, rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(fast.tree.root_proven(), slow.root_proven())
    assert (fast.tree.root_proven() != UNPROVEN_VALUE).any()  # the case exercises proofs


def test_tree_reuse_keeps_proofs(tictactoe):
    cases, move_values = late_cases(4)
    roots = roots_of(tictactoe, cases[:50])
    mcts, result = search(tictactoe, roots, evaluator_seed=3, simulations=600, solver=True, tree_reuse=True,
                          max_nodes=1300)
    code_of_child = mcts.tree.node_proven[np.arange(50), mcts.tree.child_index[np.arange(50), 0, result.action]]
    mcts.advance(result.action)
    assert (mcts.tree.node_proven[:, 0] == code_of_child).all() and (code_of_child != UNPROVEN).sum() > 40


def test_proven_weights():
    visits = np.array([[5, 9, 0, 2], [5, 9, 1, 0], [4, 3, 0, 0], [0, 3, 4, 0]], np.int32)
    proven = np.array([[-128, -1, -128, 1],       # a win: only the wins remain
                       [-1, -1, 0, -128],         # losses zeroed, the draw and the open move remain
                       [-1, -1, -128, -128],      # every visited move loses: the open move of highest prior
                       [-128, -1, -1, -128]],     # the open unvisited move rather than a loss
                      np.int8)
    prior = np.array([[.25] * 4, [.25] * 4, [.4, .3, .1, .2], [.2, .4, .4, 0]], np.float32)
    np.testing.assert_array_equal(proven_weights(visits, proven, prior),
                                  [[0, 0, 0, 2], [0, 0, 1, 0], [0, 0, 0, 1], [1, 0, 0, 0]])
    everything_lost = np.array([[-1, -1, -128, -128]], np.int8)
    lost_visits = np.array([[5, 9, 0, 0]], np.int32)
    np.testing.assert_array_equal(proven_weights(lost_visits, everything_lost, np.array([[.5, .5, 0, 0]])),
                                  lost_visits)


def test_solver_needs_puct():
    with pytest.raises(ValueError, match="solver=True needs algorithm='puct'"):
        SearchConfig(algorithm="gumbel", solver=True).validate()
