"""Independent searches in two threads give the same results as run one after the other."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from searchutil import random_roots

from azero.search.config import SearchConfig
from azero.search._mcts import SearchTree
from azero.search.evaluators import FakeEvaluator
from azero.search.mcts import MCTS


def make(game, seed, algorithm):
    config = SearchConfig(simulations=64, algorithm=algorithm, seed=seed, leaves_per_game=2)
    return MCTS(game.spec, FakeEvaluator(game.spec.obs_shape, game.spec.num_actions, seed=seed), config,
                batch_size=8)


def test_two_threads_match_sequential(go9):
    jobs = [(random_roots(go9, 8, seed=s, max_plies=12), s, alg) for s, alg in ((1, "puct"), (2, "gumbel"))]

    def job(i):
        roots, seed, alg = jobs[i]
        search = make(go9, seed, alg)
        first = search.run(roots)  # two searches, so the two threads overlap for a while
        return first, search.run(roots)

    sequential = [job(0), job(1)]
    results = [None, None]
    errors = []

    def work(i):
        try:
            results[i] = job(i)
        except BaseException as e:  # surfaced below; a thread's exception would otherwise be lost
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for got_pair, want_pair in zip(results, sequential):
        for got, want in zip(got_pair, want_pair):
            np.testing.assert_array_equal(got.visits, want.visits)
            np.testing.assert_array_equal(got.action, want.action)
            np.testing.assert_array_equal(got.policy, want.policy)


def test_tree_steps_release_the_gil():
    """Another Python thread runs while one thread is inside a single long expand_and_backup call."""
    batch, actions = 20000, 200
    priors = np.full((batch, actions), 1.0 / actions, np.float32)
    values = np.zeros(batch, np.float32)
    legal = np.ones((batch, actions), np.uint8)
    flags, to_play = np.zeros(batch, np.uint8), np.zeros(batch, np.int8)
    for attempt in range(5):  # the machine may be busy; one clear overlap is enough
        tree = SearchTree(batch, 2, actions, 1)
        tree.begin_search(np.ones(batch, np.int32))
        m, _ = tree.select()
        stamps, done = [], threading.Event()

        def count():
            while not done.is_set():
                stamps.append(time.perf_counter())

        t = threading.Thread(target=count)
        t.start()
        time.sleep(0.01)
        start = time.perf_counter()
        tree.expand_and_backup(m, priors, values, legal, flags, to_play)
        end = time.perf_counter()
        done.set()
        t.join()
        inside = [s for s in stamps if start + 0.002 < s < end - 0.002]
        if inside:
            return
    pytest.fail(f"no Python progress during a {1000 * (end - start):.1f} ms expand_and_backup call")
