"""Evaluation under the board's symmetries: the network sees each leaf in another orientation.

A network trained with symmetry augmentation is still not symmetric: its errors in one
orientation differ from those in another. Two standard ways to use that:

- 'random' (AlphaGo Zero, Silver et al. 2017: "positions are evaluated ... using a random
  rotation or reflection"): each leaf is evaluated under one transform drawn for it, and
  its priors mapped back. Same cost as plain evaluation; the errors of one orientation no
  longer repeat through the whole tree.
- 'average' (KataGo's and Leela Zero's symmetry averaging): each leaf is evaluated under
  every transform of the game's group in one batch of |G| x B rows, the priors mapped back
  and averaged, and the values (and scores) averaged. |G| times the network's work per
  simulation (connect four 2, square Go boards 8); the simulation count is unchanged.

For transform T the network reads T(obs) with legal moves T(legal); its policy is over the
transformed actions, so `T.inverse.apply_policy` brings it back to the position's own actions
(games/symmetry.py). Values and scores do not depend on the orientation. A game whose
symmetry group is the identity alone gets the plain evaluation.
"""

from __future__ import annotations

import numpy as np

from azero.games.base import GameSpec
from azero.games.symmetry import symmetries
from azero.search.config import SYMMETRY_MODES


class SymmetricEvaluator:
    """Wraps an evaluator of the search protocol (search/evaluators.py); ownership and any other
    attribute pass through to the inner evaluator unchanged."""

    def __init__(self, inner, spec: GameSpec, mode: str, *, seed: int = 0):
        if mode not in SYMMETRY_MODES[1:]:
            raise ValueError(f"symmetry must be one of {SYMMETRY_MODES}, got {mode!r}")
        self.inner = inner
        self.mode = mode
        self.group = symmetries(spec)
        self._rng = np.random.default_rng(seed)

    @property
    def has_score(self) -> bool:
        return bool(getattr(self.inner, "has_score", False))

    def evaluate(self, obs: np.ndarray, legal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self._evaluate(obs, legal, self.inner.evaluate)

    def evaluate_with_score(self, obs: np.ndarray, legal: np.ndarray):
        return self._evaluate(obs, legal, self.inner.evaluate_with_score)

    def _evaluate(self, obs: np.ndarray, legal: np.ndarray, call):
        if len(self.group) == 1 or len(legal) == 0:
            return call(obs, legal)
        if self.mode == "average":
            return self._average(obs, legal, call)
        return self._random(obs, legal, call)

    def _average(self, obs, legal, call):
        b, g = len(legal), len(self.group)
        obs_t = np.concatenate([t.apply_obs(obs) for t in self.group])      # [G*B, C, H, W]
        legal_t = np.concatenate([t.apply_policy(legal) for t in self.group])  # [G*B, A]
        out = call(obs_t, legal_t)
        priors = np.zeros(legal.shape, np.float32)
        for i, t in enumerate(self.group):
            priors += t.inverse.apply_policy(out[0][i * b:(i + 1) * b])
        priors /= g
        rest = tuple(y.reshape(g, b).mean(axis=0, dtype=np.float64).astype(np.float32) for y in out[1:])
        return (priors, *rest)

    def _random(self, obs, legal, call):
        which = self._rng.integers(len(self.group), size=len(legal))       # [B] transform of each row
        obs_t = np.empty_like(obs)
        legal_t = np.empty_like(legal)
        for i, t in enumerate(self.group):
            rows = np.flatnonzero(which == i)
            if len(rows):
                obs_t[rows] = t.apply_obs(obs[rows])
                legal_t[rows] = t.apply_policy(legal[rows])
        out = call(obs_t, legal_t)
        priors = np.empty_like(out[0])
        for i, t in enumerate(self.group):
            rows = np.flatnonzero(which == i)
            if len(rows):
                priors[rows] = t.inverse.apply_policy(out[0][rows])
        return (priors, *out[1:])

    def __getattr__(self, name):
        return getattr(self.inner, name)
