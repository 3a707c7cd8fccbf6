"""Root noise draws shared by the Cython driver and the reference twin.

Both call these with the same generator state, so they consume random numbers
identically and the parity tests can compare visit counts exactly.
"""

from __future__ import annotations

import numpy as np


def dirichlet_noise(rng: np.random.Generator, legal: np.ndarray, *, alpha: float | None,
                    alpha_scale: float) -> np.ndarray:
    """float64 [B, A]: one Dirichlet sample per row over its legal actions (0 elsewhere).

    alpha None: alpha = alpha_scale / number of legal actions of the row (AlphaZero scales
    alpha inversely to the typical number of legal moves). Drawn as normalised Gamma(alpha)
    variates, one per entry (illegal ones too): the sample, and the state `rng` is left in,
    depend only on the generator state and the mask, whoever calls. A row whose draws all
    underflow to 0 (tiny alpha) becomes uniform over its legal actions.
    """
    legal = np.asarray(legal, dtype=bool)
    count = legal.sum(axis=1)
    if alpha is None:
        row_alpha = alpha_scale / np.maximum(count, 1)
    else:
        row_alpha = np.full(len(legal), float(alpha))
    g = rng.standard_gamma(np.broadcast_to(row_alpha[:, None], legal.shape))
    g = np.where(legal, g, 0.0)
    total = g.sum(axis=1, keepdims=True)
    uniform = legal / np.maximum(count, 1)[:, None]
    return np.where(total > 0, g / np.where(total > 0, total, 1.0), uniform).astype(np.float64)


def gumbel_noise(rng: np.random.Generator, batch: int, num_actions: int) -> np.ndarray:
    """float64 [B, A]: independent standard Gumbel variates g(a) for Gumbel-top-k at the root."""
    return rng.gumbel(size=(batch, num_actions)).astype(np.float64)
