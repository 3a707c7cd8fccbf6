"""The fused batch step (SearchTree.bind_leaves / leaf_step over the games' leaf API) gives exactly
the results of the separate calls, rolls failed steps back, and refuses mismatched bindings."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from searchutil import random_roots
from treecheck import check_tree

from azero.games import make_game
from azero.games.base import IllegalActionError
from azero.search._mcts import EvaluatorOutputError, SearchTree, TreeCapacityError
from azero.search.config import SearchConfig
from azero.search.evaluators import FakeEvaluator, UniformEvaluator
from azero.search.mcts import MCTS

NATIVE = ["tictactoe", "connect4", "go9x9"]
CONFIGS = {
    "puct": dict(algorithm="puct", dirichlet_weight=0.25),
    "puct-reuse": dict(algorithm="puct", tree_reuse=True, dirichlet_weight=0.25),
    "gumbel": dict(algorithm="gumbel", dirichlet_weight=0.0),
    "puct-vl2": dict(algorithm="puct", leaves_per_game=2, dirichlet_weight=0.25),
    "gumbel-vl2": dict(algorithm="gumbel", leaves_per_game=2, dirichlet_weight=0.0),
}


class Recording:
    """Wraps an evaluator and keeps a copy of every input it was given."""

    def __init__(self, inner):
        self.inner = inner
        self.needs_observations = getattr(inner, "needs_observations", True)
        self.inputs = []

    def evaluate(self, obs, legal):
        assert legal.any(axis=1).all(), "every row needs a legal action"
        self.inputs.append((None if obs is None else obs.copy(), legal.copy()))
        return self.inner.evaluate(obs, legal)


def play_searches(game, config, evaluator, *, fused, moves, batch=6, seed=5):
    """Results of `moves` consecutive searches (each followed by its move) on random roots."""
    search = MCTS(game.spec, evaluator, config, batch_size=batch)
    search._fused_steps = fused
    roots = random_roots(game, batch, seed=seed, max_plies=4)
    results = []
    for _ in range(moves):
        result = search.run(roots)
        results.append(result)
        actions = np.where(roots.terminal(), -1, search.choose_actions(result)).astype(np.int32)
        roots.apply(actions)
        search.advance(actions)
    return results, search.stats


@pytest.mark.parametrize("config_name", sorted(CONFIGS))
@pytest.mark.parametrize("name", NATIVE)
@pytest.mark.parametrize("evaluator", ["fake", "uniform"])
def test_fused_steps_match_the_separate_calls(name, config_name, evaluator, monkeypatch):
    game = make_game(name)
    config = SearchConfig(simulations=16 if name == "go9x9" else 48, seed=11, **CONFIGS[config_name])
    fused_calls = []
    original = MCTS._steps_fused

    def spy(self, *args, **kwargs):
        fused_calls.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(MCTS, "_steps_fused", spy)
    runs = {}
    for fused in (True, False):
        fused_calls.clear()
        inner = (FakeEvaluator(game.spec.obs_shape, game.spec.num_actions, seed=3) if evaluator == "fake"
                 else UniformEvaluator())
        recording = Recording(inner)
        results, stats = play_searches(game, config, recording, fused=fused, moves=3 if name == "go9x9" else 5)
        runs[fused] = results, stats, recording.inputs
        assert bool(fused_calls) == fused  # the flag really chose the path
    (fused_results, fused_stats, fused_inputs), (plain_results, plain_stats, plain_inputs) = runs[True], runs[False]
    assert fused_stats == plain_stats
    for got, want in zip(fused_results, plain_results):
        for field in ("visits", "policy", "q", "prior", "value", "action", "simulations"):
            g, w = getattr(got, field), getattr(want, field)
            assert g.dtype == w.dtype and np.array_equal(g, w), field
    # The evaluator saw the same observations and masks (terminal leaves: a placeholder row).
    assert len(fused_inputs) == len(plain_inputs)
    for (obs_f, legal_f), (obs_p, legal_p) in zip(fused_inputs, plain_inputs):
        np.testing.assert_array_equal(legal_f, legal_p)
        assert (obs_f is None) == (obs_p is None)
        if obs_f is not None:
            np.testing.assert_array_equal(obs_f, obs_p)


# ---------------------------------------------------------------------------- the tree's side, directly

def bound_tree(game, batch=3, capacity=64, leaves_per_game=1, roots=None, obs=True):
    """A SearchTree bound to a leaf batch of `game`, with its step buffers (a dict)."""
    A = game.spec.num_actions
    slots = batch * leaves_per_game
    tree = SearchTree(batch, capacity, A, game.spec.max_moves, leaves_per_game=leaves_per_game)
    bufs = dict(legal=np.zeros((slots, A), bool), terminal=np.zeros(slots, bool), to_play=np.zeros(slots, np.int8),
                outcome=np.zeros(slots, np.float32), query=np.zeros((slots, A), bool),
                obs=np.zeros((slots, *game.spec.obs_shape), np.float32) if obs else None)
    roots = game.new_states(batch) if roots is None else roots
    leaves = game.new_states(slots)
    tree.bind_leaves(leaves, roots, **bufs)
    return tree, roots, leaves, bufs


def snapshot(tree):
    """Copies of every game's live tree (nodes [0, num_nodes); slots past it are free and unspecified)."""
    snap = {"num_nodes": tree.num_nodes.copy(), "sims_done": tree.sims_done.copy()}
    for b in range(tree.batch):
        n = int(tree.num_nodes[b])
        for name in ("node_visits", "node_value_sum", "node_raw_value", "node_parent", "node_action",
                     "node_to_play", "node_state", "node_in_flight", "child_index", "child_prior",
                     "child_visits", "child_value_sum"):
            snap[f"{name}[{b}]"] = getattr(tree, name)[b, :n].copy()
    return snap


def assert_same_tree(a, b):
    assert a.keys() == b.keys()
    for name in a:
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)


def uniform(m, bufs):
    """A uniform evaluation of the step's m leaves (the tree ignores the rows of terminal leaves)."""
    return bufs["legal"][:m].astype(np.float32), np.zeros(m, np.float32)


@pytest.mark.parametrize("name", NATIVE)
def test_leaf_step_writes_what_the_game_methods_compute(name):
    game = make_game(name)
    roots = random_roots(game, 4, seed=2, max_plies={"tictactoe": 4, "connect4": 30, "go9x9": 10}[name])
    tree, roots, leaves, bufs = bound_tree(game, batch=4, capacity=100, leaves_per_game=2, roots=roots)
    tree.begin_search(np.full(4, 80, np.int32))
    running, m, n_terminal = tree.leaf_step()
    seen_terminal = False
    while running:
        if m:
            rows = leaves.take(np.arange(m))
            terminal = rows.terminal()
            seen_terminal |= terminal.any()
            np.testing.assert_array_equal(bufs["legal"][:m], rows.legal_mask())
            np.testing.assert_array_equal(bufs["terminal"][:m], terminal)
            np.testing.assert_array_equal(bufs["to_play"][:m], rows.to_play())
            np.testing.assert_array_equal(bufs["outcome"][:m], rows.outcome())
            np.testing.assert_array_equal(bufs["obs"][:m], rows.encode())
            assert n_terminal == terminal.sum()
            if n_terminal:  # the evaluator's mask: the legal rows, every action of a terminal leaf marked
                np.testing.assert_array_equal(bufs["query"][:m], rows.legal_mask() | terminal[:, None])
            running, m, n_terminal = tree.leaf_step(*uniform(m, bufs))
        else:
            running, m, n_terminal = tree.leaf_step()
    assert not tree.searching()
    assert seen_terminal or name == "go9x9"
    for b in range(4):
        check_tree(tree, b)


def run_to_the_end(tree, bufs):
    running, m, _ = tree.leaf_step()
    while running:
        running, m, _ = tree.leaf_step(*uniform(m, bufs)) if m else tree.leaf_step()


@pytest.mark.parametrize("bad,error,match", [
    (lambda p, v: (p, np.full_like(v, np.nan)), EvaluatorOutputError, "not finite.*rolled back"),
    (lambda p, v: (-p, v), EvaluatorOutputError, "NaN, infinite or negative"),
    (lambda p, v: (p[:, :-1], v), ValueError, "priors must be float32 of shape"),
    (lambda p, v: (p, v[:-1]), ValueError, "values must be float32"),
    (lambda p, v: (p.astype(np.float64), v), ValueError, "priors must be float32"),
    (lambda p, v: (p.tolist(), v), ValueError, "numpy arrays"),
])
def test_bad_evaluations_roll_the_step_back(connect4, bad, error, match):
    roots = random_roots(connect4, 3, seed=4, max_plies=6)
    trees = []
    for _ in range(2):  # one tree gets the bad evaluation, its twin does not
        tree, _, _, bufs = bound_tree(connect4, batch=3, leaves_per_game=2, roots=roots)
        tree.begin_search(np.full(3, 20, np.int32))
        running, m, _ = tree.leaf_step()
        for _ in range(2):
            running, m, _ = tree.leaf_step(*uniform(m, bufs))
        tree.leaf_step(*uniform(m, bufs), False)  # back up, select nothing
        trees.append((tree, bufs))
    (tree, bufs), (twin, twin_bufs) = trees
    before = snapshot(tree)
    running, m, _ = tree.leaf_step()
    assert running and m
    with pytest.raises(error, match=match):
        tree.leaf_step(*bad(*uniform(m, bufs)))
    assert_same_tree(snapshot(tree), before)
    for b in range(3):
        check_tree(tree, b)
    # The tree is usable, and finishing the search gives exactly the undisturbed twin's tree.
    run_to_the_end(tree, bufs)
    run_to_the_end(twin, twin_bufs)
    assert_same_tree(snapshot(tree), snapshot(twin))


def test_an_illegal_path_is_reported_by_the_game_and_rolled_back(tictactoe):
    # The tree is grown from the empty board, then bound to roots where X already took the centre:
    # sooner or later a descent plays an action that is illegal there.
    tree, roots, leaves, bufs = bound_tree(tictactoe, batch=1, capacity=200)
    tree.begin_search(np.array([20], np.int32))
    run_to_the_end(tree, bufs)
    moved = tictactoe.new_states(1)
    moved.apply(np.array([4], np.int32))
    tree.unbind_leaves()
    tree.bind_leaves(leaves, moved, **bufs)
    tree.begin_search(np.array([100], np.int32))
    illegal = r"illegal action \d at batch index 0, path step \d: .*(occupied|over)"
    with pytest.raises(IllegalActionError, match=illegal):
        for _ in range(100):
            before = snapshot(tree)
            running, m, _ = tree.leaf_step()  # select: the step that can fail
            if m:
                tree.leaf_step(*uniform(m, bufs), False)
    assert_same_tree(snapshot(tree), before)
    check_tree(tree, 0)
    tree.unbind_leaves()
    with pytest.raises(RuntimeError, match="no leaf batch"):
        tree.leaf_step()


def test_capacity_error_from_the_fused_step(connect4):
    tree, roots, leaves, bufs = bound_tree(connect4, batch=1, capacity=4)
    tree.begin_search(np.array([3], np.int32))
    target = tree.sims_target
    target.flags.writeable = True  # as in test_errors: reach select's own capacity check
    target[0] = 10
    with pytest.raises(TreeCapacityError, match="is full"):
        running, m, _ = tree.leaf_step()
        while running:
            running, m, _ = tree.leaf_step(*uniform(m, bufs)) if m else tree.leaf_step()
    check_tree(tree, 0)


def test_bindings_must_match(connect4, tictactoe, go9):
    tree = SearchTree(2, 16, 7, 42)
    bufs = dict(legal=np.zeros((2, 7), bool), terminal=np.zeros(2, bool), to_play=np.zeros(2, np.int8),
                outcome=np.zeros(2, np.float32), query=np.zeros((2, 7), bool))
    with pytest.raises(TypeError, match="leaves are Connect4States but the roots are TicTacToeStates"):
        tree.bind_leaves(connect4.new_states(2), tictactoe.new_states(2), **bufs)
    with pytest.raises(TypeError, match="export no leaf API"):
        tree.bind_leaves(connect4.new_states(2), object(), **bufs)

    class Fake:
        def _leaf_api(self):
            return object()

    with pytest.raises(TypeError, match="leaf API capsule"):
        tree.bind_leaves(Fake(), connect4.new_states(2), **bufs)
    same = connect4.new_states(2)
    with pytest.raises(ValueError, match="different batches"):
        tree.bind_leaves(same, same, **bufs)
    with pytest.raises(ValueError, match="expected 2 roots"):
        tree.bind_leaves(connect4.new_states(2), connect4.new_states(3), **bufs)
    with pytest.raises(ValueError, match="leaf batch holds 1 positions"):
        tree.bind_leaves(connect4.new_states(1), connect4.new_states(2), **bufs)
    with pytest.raises(ValueError, match="9 actions but the tree 7"):
        tree.bind_leaves(tictactoe.new_states(2), tictactoe.new_states(2), **bufs)
    for key, bad in [("legal", np.zeros((2, 8), bool)), ("legal", np.zeros((1, 7), bool)),
                     ("terminal", np.zeros(2, np.int64)), ("to_play", np.zeros(2, np.int32)),
                     ("outcome", np.zeros(2, np.float64)), ("query", np.zeros((2, 14), bool)[:, ::2]),
                     ("obs", np.zeros((2, 3, 6, 6), np.float32))]:
        with pytest.raises(ValueError, match=f"bind_leaves: {key} must be"):
            tree.bind_leaves(connect4.new_states(2), connect4.new_states(2), **{**bufs, key: bad})
    readonly = np.zeros((2, 7), bool)
    readonly.flags.writeable = False
    with pytest.raises(ValueError, match="bind_leaves: legal must be a writeable"):
        tree.bind_leaves(connect4.new_states(2), connect4.new_states(2), **{**bufs, "legal": readonly})
    with pytest.raises(ValueError, match="different buffers"):
        tree.bind_leaves(connect4.new_states(2), connect4.new_states(2), **{**bufs, "query": bufs["legal"]})
    with pytest.raises(RuntimeError, match="no leaf batch"):
        tree.leaf_step()  # nothing was bound by the refused calls

    # Go: the same engine with other rules cannot share states.
    go_tree = SearchTree(2, 16, 82, 50)
    go_bufs = dict(legal=np.zeros((2, 82), bool), terminal=np.zeros(2, bool), to_play=np.zeros(2, np.int8),
                   outcome=np.zeros(2, np.float32), query=np.zeros((2, 82), bool))
    other = make_game("go9x9", komi=6.5)
    with pytest.raises(ValueError, match="different rules"):
        go_tree.bind_leaves(go9.new_states(2), other.new_states(2), **go_bufs)
    go_tree.bind_leaves(go9.new_states(2), go9.new_states(2), **go_bufs)  # the right call still works


def test_leaf_step_argument_errors(connect4):
    tree, roots, leaves, bufs = bound_tree(connect4, batch=2)
    tree.begin_search(np.full(2, 4, np.int32))
    with pytest.raises(ValueError, match="nothing to back up"):
        tree.leaf_step(np.zeros((1, 7), np.float32), np.zeros(1, np.float32))
    running, m, _ = tree.leaf_step()
    with pytest.raises(ValueError, match="pass their priors and values"):
        tree.leaf_step()
    with pytest.raises(RuntimeError, match="in progress"):
        tree.bind_leaves(leaves, roots, **bufs)
    tree.leaf_step(*uniform(m, bufs))


def test_the_capsule_keeps_its_states_alive(connect4):
    states = connect4.new_states(2)
    before = sys.getrefcount(states)
    capsule = states._leaf_api()
    assert sys.getrefcount(states) == before + 1
    del capsule
    assert sys.getrefcount(states) == before
