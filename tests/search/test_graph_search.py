"""Monte-Carlo graph search (search/graph.py): a tree when nothing transposes, shared nodes when positions do."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from pygames import NimGame
from searchutil import assert_same, random_roots

from azero.agents.mcts import MctsPlayer
from azero.agents.spec import parse_player_spec
from azero.games import make_game
from azero.search.config import SearchConfig
from azero.search.evaluators import FakeEvaluator, UniformEvaluator
from azero.search.graph import GraphNode, GraphSearch, make_search
from azero.search.mcts import MCTS


class TreeSearch(GraphSearch):
    """GraphSearch with every position its own key: no transpositions, so it must be the tree search."""

    _fresh = itertools.count()

    def _keys(self, states):
        return [next(self._fresh) for _ in range(len(states))]


def make(name):
    return NimGame(pile=9, extra_turn=True) if name == "nim" else make_game(name)


@pytest.mark.parametrize("name,batch,plies,sims", [("tictactoe", 6, 5, 60), ("connect4", 6, 12, 80),
                                                   ("nim", 4, 3, 40), ("go9x9", 2, 10, 30)])
def test_without_transpositions_it_is_the_tree_search(name, batch, plies, sims):
    game = make(name)
    roots = random_roots(game, batch, seed=11, max_plies=plies)
    ev = FakeEvaluator(game.spec.obs_shape, game.spec.num_actions, seed=2)
    config = SearchConfig(simulations=sims, fpu_reduction=0.1, seed=5, dirichlet_weight=0.0)
    tree = MCTS(game.spec, ev, config, batch_size=batch).run(roots)
    graph = TreeSearch(game.spec, ev, SearchConfig(**{**vars(config), "graph": True}), batch_size=batch).run(roots)
    assert_same(tree, graph)


def walk(root: GraphNode):
    seen, stack = {}, [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen[id(node)] = node
        stack.extend(node.children.values())
    return list(seen.values())


@pytest.mark.parametrize("stop", [False, True])
def test_transpositions_share_nodes_and_the_statistics_add_up(connect4, stop):
    roots = random_roots(connect4, 4, seed=3, max_plies=6)
    ev = FakeEvaluator(connect4.spec.obs_shape, connect4.spec.num_actions, seed=1)
    search = GraphSearch(connect4.spec, ev, SearchConfig(simulations=300, graph=True, graph_stop=stop), batch_size=4)
    result = search.run(roots)
    assert (result.visits.sum(axis=1) == 300).all() and (result.simulations == 300).all()
    assert search.stats["transpositions"] > 0
    assert search.stats["leaves"] == sum(len(walk(root)) for root in search.roots)
    # One network call for the roots, then at most one a step: the new positions of a step's rounds
    # are evaluated together.
    assert search.stats["steps"] <= 1 + 300
    if stop:
        # A playout the stop rule ends calls no network: fewer rows than playouts (+ the roots).
        assert search.stats["stopped"] > 0
        assert search.stats["evaluated"] + search.stats["stopped"] <= 4 * 301
    else:
        assert search.stats["stopped"] == 0
    for root in search.roots:
        nodes = walk(root)
        parents = {}
        for node in nodes:
            if node.terminal:
                continue
            assert node.n == 1 + sum(node.edge_n.values()) and -1.0 <= node.q <= 1.0
            for child in node.children.values():
                parents.setdefault(id(child), set()).add(id(node))
        assert any(len(p) > 1 for p in parents.values()), "no position was reached by two move orders"
        # Q is recomputed on each backup through a node, so a node whose children were updated from
        # another parent since is a little stale (as in lightvector's MCGS). The root's children
        # have no other parent and every playout ends at the root: its Q is exact.
        expected = (root.u + sum(n * root.edge_q(a) for a, n in root.edge_n.items())) / root.n
        assert root.q == pytest.approx(expected, abs=1e-12)


def test_every_move_order_of_one_position_reaches_one_node(connect4):
    search = GraphSearch(connect4.spec, UniformEvaluator(), SearchConfig(simulations=1500, graph=True), batch_size=1)
    search.run(connect4.new_states(1))
    by_board: dict[tuple, set] = {}
    frontier = [((), search.roots[0])]
    for _ in range(4):  # every path of four moves in the graph
        frontier = [(path + (a,), child) for path, node in frontier for a, child in node.children.items()]
    for path, node in frontier:
        # The board: each column's stones bottom-up, by who played them.
        board = tuple(tuple(i % 2 for i, col in enumerate(path) if col == c) for c in range(7))
        by_board.setdefault(board, set()).add(id(node))
    assert all(len(ids) == 1 for ids in by_board.values())
    assert len(by_board) < len(frontier), "no four-move position was reached by two move orders"


def test_finds_the_win_and_returns_its_exact_value(tictactoe):
    # X (to move) has 0 and 1; 2 wins at once. O holds 3 and 4.
    roots = tictactoe.new_states(1)
    roots.apply_paths(np.array([[0, 3, 1, 4]], np.int32))
    result = make_search(tictactoe.spec, UniformEvaluator(), SearchConfig(simulations=200, graph=True, dirichlet_weight=0.0),
                         batch_size=1).run(roots)
    assert result.action[0] == 2
    assert result.q[0, 2] == 1.0


def test_terminal_and_inactive_roots_are_skipped(tictactoe):
    roots = random_roots(tictactoe, 6, seed=3, max_plies=9, allow_terminal=True)
    assert roots.terminal().any() and not roots.terminal().all()
    active = np.array([True, True, True, False, True, True])
    search = GraphSearch(tictactoe.spec, UniformEvaluator(), SearchConfig(simulations=20, graph=True), batch_size=6)
    result = search.run(roots, active=active)
    skipped = roots.terminal() | ~active
    assert (result.action[skipped] == -1).all() and (result.visits[skipped] == 0).all()
    assert (result.simulations[~skipped] == 20).all()


def test_players_search_a_graph_when_the_spec_says_so(connect4):
    spec = parse_player_spec("mcts:none@50:graph=true:graph_stop=true")
    config = spec.search_config()
    assert config.graph and config.graph_stop and config.dirichlet_weight == 0.0
    assert isinstance(make_search(connect4.spec, UniformEvaluator(), config, batch_size=2), GraphSearch)
    assert isinstance(make_search(connect4.spec, UniformEvaluator(), SearchConfig(), batch_size=2), MCTS)
    with pytest.raises(ValueError, match="graph=maybe"):
        parse_player_spec("mcts:none@50:graph=maybe")


@pytest.mark.parametrize("fields", [dict(algorithm="gumbel"), dict(solver=True), dict(tree_reuse=True),
                                    dict(leaves_per_game=4)])
def test_unsupported_combinations_are_named(fields):
    with pytest.raises(ValueError, match="graph=True needs"):
        SearchConfig(graph=True, **fields)


def test_the_stop_rule_without_a_graph_is_named():
    with pytest.raises(ValueError, match="graph_stop=True needs graph=True"):
        SearchConfig(graph_stop=True)


def test_the_tree_search_refuses_the_flag_instead_of_ignoring_it(connect4):
    with pytest.raises(ValueError, match="GraphSearch"):
        MCTS(connect4.spec, UniformEvaluator(), SearchConfig(graph=True), batch_size=1)


def test_score_heads_and_bad_evaluator_output_are_named(connect4):
    class Scored(UniformEvaluator):
        has_score = True

    with pytest.raises(ValueError, match="score_utility=0"):
        GraphSearch(connect4.spec, Scored(), SearchConfig(graph=True), batch_size=1)
    with pytest.raises(ValueError, match="score_utility=0"):  # a player says so when built, not at its first move
        MctsPlayer(connect4.spec, Scored(), SearchConfig(graph=True))
    MctsPlayer(connect4.spec, Scored(), SearchConfig(graph=True, score_utility=0.0))

    class Broken:
        def evaluate(self, obs, legal):
            return np.full(legal.shape, np.nan, np.float32), np.zeros(len(legal), np.float32)

    with pytest.raises(ValueError, match="non-finite priors"):
        GraphSearch(connect4.spec, Broken(), SearchConfig(simulations=4, graph=True), batch_size=1).run(
            connect4.new_states(1))
