"""The Cython search and the pure-Python reference twin agree exactly on fixed seeds."""

from __future__ import annotations

import numpy as np
import pytest
from searchutil import assert_same, random_roots
from pygames import NimGame

from azero.games import make_game
from azero.search.config import SearchConfig
from azero.search.evaluators import FakeEvaluator
from azero.search.mcts import MCTS
from azero.search.reference import ReferenceMCTS


def both(game, config, batch, seed=0):
    ev = FakeEvaluator(game.spec.obs_shape, game.spec.num_actions, seed=seed)
    return MCTS(game.spec, ev, config, batch_size=batch), ReferenceMCTS(game.spec, ev, config, batch_size=batch)


CASES = [
    # game, batch, max plies, simulations
    ("tictactoe", 6, 5, 60),
    ("connect4", 6, 12, 80),
    ("nim", 4, 3, 40),
    ("go9x9", 2, 10, 40),
]


def make(name):
    return NimGame(pile=9, extra_turn=True) if name == "nim" else make_game(name)


@pytest.mark.parametrize("name,batch,plies,sims", CASES)
@pytest.mark.parametrize("algorithm,k", [("puct", 1), ("puct", 4), ("gumbel", 1), ("gumbel", 3)])
def test_cython_matches_reference(name, batch, plies, sims, algorithm, k):
    game = make(name)
    roots = random_roots(game, batch, seed=11, max_plies=plies)
    config = SearchConfig(simulations=sims, algorithm=algorithm, leaves_per_game=k, seed=5,
                          gumbel_num_considered=4 if name == "go9x9" else 16, fpu_reduction=0.1)
    fast, slow = both(game, config, batch)
    a, b = fast.run(roots), slow.run(roots)
    assert_same(a, b)
    assert (a.simulations == sims).all()


def test_parity_includes_terminal_roots_and_fixed_alpha(tictactoe):
    roots = random_roots(tictactoe, 8, seed=3, max_plies=9, allow_terminal=True)
    assert roots.terminal().any() and not roots.terminal().all()
    config = SearchConfig(simulations=50, dirichlet_alpha=0.3, seed=9)
    fast, slow = both(tictactoe, config, 8)
    a, b = fast.run(roots), slow.run(roots)
    assert_same(a, b)
    assert (a.simulations[roots.terminal()] == 0).all()
    assert (a.action[roots.terminal()] == -1).all()


@pytest.mark.parametrize("k", [1, 3])
def test_parity_with_tree_reuse(connect4, k):
    roots = random_roots(connect4, 4, seed=8, max_plies=6)
    config = SearchConfig(simulations=60, tree_reuse=True, leaves_per_game=k, seed=2, max_nodes=100)
    fast, slow = both(connect4, config, 4)
    for move in range(4):
        a, b = fast.run(roots), slow.run(roots)
        assert_same(a, b)
        actions = a.action.copy()
        actions[roots.terminal()] = -1
        fast.advance(actions)
        slow.advance(actions)
        live = actions >= 0
        roots.apply(np.where(live, actions, -1).astype(np.int32))
    # Reuse really happened: roots carried visits over from the previous search.
    assert fast.stats["reuse_dropped"] > 0 or (fast.tree.node_visits[:, 0] > 61).any()


def test_parity_with_collisions():
    game = NimGame(pile=12)
    roots = random_roots(game, 3, seed=1, max_plies=3)
    config = SearchConfig(simulations=40, leaves_per_game=8, virtual_loss=0.0, seed=3)
    fast, slow = both(game, config, 3)
    a, b = fast.run(roots), slow.run(roots)
    assert fast.tree.collisions > 0  # dropped descents are part of what must agree
    assert_same(a, b)


def test_same_search_through_the_openspiel_adapter(tictactoe):
    """The core sees only legal masks, terminal flags and outcomes: the native and the OpenSpiel
    tic-tac-toe (same action numbering) must give identical trees with a uniform evaluator."""
    from azero.search.evaluators import UniformEvaluator

    other = make_game("openspiel:tic_tac_toe")
    paths = np.array([[4, 0, -1], [0, 4, 8], [-1, -1, -1], [2, 4, 6]], np.int32)
    config = SearchConfig(simulations=300, dirichlet_weight=0.0)
    results = []
    for game in (tictactoe, other):
        states = game.new_states(len(paths))
        states.apply_paths(paths)
        results.append(MCTS(game.spec, UniformEvaluator(), config, batch_size=len(paths)).run(states))
    np.testing.assert_array_equal(results[0].visits, results[1].visits)
    np.testing.assert_array_equal(results[0].q, results[1].q)
