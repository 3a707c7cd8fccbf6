"""The benchmark's random move choice: always legal and uniform over each row's legal set."""

import numpy as np

from azero.bench.games import random_legal_actions


def test_random_legal_actions_are_legal_and_uniform():
    rng = np.random.default_rng(0)
    A, B = 82, 4
    mask = np.zeros((B, A), dtype=bool)
    mask[0, [3, 40, 81]] = True          # few legal: most draws take the noise fallback
    mask[1] = True                        # all legal
    mask[2, ::2] = True                   # half legal
    mask[3, 81] = True                    # only one (pass)
    out = np.empty(B, dtype=np.int32)
    counts = np.zeros((B, A))
    draws = 6000
    for _ in range(draws):
        random_legal_actions(mask, rng, out)
        assert mask[np.arange(B), out].all()
        counts[np.arange(B), out] += 1
    for b in range(B):
        legal = np.flatnonzero(mask[b])
        expected = draws / legal.size
        # Binomial standard deviation per action; 5 sigma never fails by chance in practice.
        sigma = np.sqrt(draws * (1 / legal.size) * (1 - 1 / legal.size)) + 1e-9
        assert np.abs(counts[b, legal] - expected).max() <= 5 * sigma, b
