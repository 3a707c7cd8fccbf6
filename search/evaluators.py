"""The evaluator protocol between search and model, and three evaluators that need no network.

Protocol:
    evaluate(obs, legal) -> (priors, values)
        obs     float32 [B, C, H, W]  observations of B leaf positions (player to move's view)
        legal   bool    [B, A]        legal actions of those positions (at least one per row)
        priors  float32 [B, A]        non-negative; the search renormalises over the legal actions
        values  float32 [B]           expected outcome in [-1, 1] for the player to move

An evaluator whose network also predicts the final score (Go nets with a score head) sets
`has_score = True` and has `evaluate_with_score(obs, legal) -> (priors, values, scores)`, scores
float32 [B] in points from the player to move's view; the search asks for them only when its
score utility is on (SearchConfig.score_utility).

An evaluator that needs the positions themselves (e.g. to play random games from
them) sets the class attribute `needs_states = True` and is then called as
`evaluate(obs, legal, states=leaf_states)`, where `leaf_states` is a scratch batch
(azero.games.base.States) of exactly those B positions that the evaluator may
modify. Everything else (the network evaluators, the inference-server client)
sees only (obs, legal). An evaluator that never reads observations sets
`needs_observations = False`; the search then skips encoding and passes obs=None.

`check_output` is what the search applies to every evaluator's output; NaN,
infinity and negative priors are caught inside the Cython core, without an extra
pass or allocation here.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from azero.games.base import States, value_for_player_to_move


@runtime_checkable
class Evaluator(Protocol):
    """Anything with evaluate(obs, legal) -> (priors, values) as described in the module docstring."""

    def evaluate(self, obs: np.ndarray, legal: np.ndarray) -> tuple[np.ndarray, np.ndarray]: ...


def check_output(priors, values, batch: int, num_actions: int) -> tuple[np.ndarray, np.ndarray]:
    """Return (priors, values) as C-contiguous float32 arrays or raise ValueError naming the problem."""
    if type(priors) is not np.ndarray or type(values) is not np.ndarray:
        raise ValueError(f"evaluator must return numpy arrays (priors, values), got "
                         f"{type(priors).__name__}, {type(values).__name__}")
    if priors.shape != (batch, num_actions) or priors.dtype != np.float32:
        raise ValueError(f"evaluator priors must be float32 of shape ({batch}, {num_actions}), "
                         f"got {priors.dtype} {priors.shape}")
    if values.shape != (batch,) or values.dtype != np.float32:
        raise ValueError(f"evaluator values must be float32 of shape ({batch},), got {values.dtype} {values.shape}")
    # Called once per batch step: skip the copies (and their call overhead) in the usual contiguous case.
    if not priors.flags.c_contiguous:
        priors = np.ascontiguousarray(priors)
    if not values.flags.c_contiguous:
        values = np.ascontiguousarray(values)
    return priors, values


def check_scores(scores, batch: int) -> np.ndarray:
    """scores as a C-contiguous float32 [batch] array (evaluate_with_score's third output), or ValueError."""
    if type(scores) is not np.ndarray or scores.shape != (batch,) or scores.dtype != np.float32:
        raise ValueError(f"evaluator scores must be a float32 numpy array of shape ({batch},), got "
                         f"{getattr(scores, 'dtype', type(scores).__name__)} {getattr(scores, 'shape', '')}")
    if not np.isfinite(scores).all():
        raise ValueError("evaluator scores contain NaN or infinity")
    return np.ascontiguousarray(scores)


def _uniform_priors(legal: np.ndarray) -> np.ndarray:
    # The search renormalises priors over the legal actions, so the legal mask itself is a uniform prior.
    return legal.astype(np.float32)


class UniformEvaluator:
    """Uniform prior over the legal actions and value 0: search guided by exact terminal values alone."""

    needs_observations = False
    """The search may pass obs=None: this evaluator never looks at observations."""

    def evaluate(self, obs: np.ndarray, legal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return _uniform_priors(legal), np.zeros(len(legal), np.float32)


class RandomRolloutEvaluator:
    """Uniform prior; value = mean outcome of `rollouts` uniformly random games from the leaf.

    The games are played by the game layer (States.random_playout), seeded from this
    evaluator's own generator, so a run is reproducible from `seed`.
    """

    needs_states = True
    needs_observations = False

    def __init__(self, *, rollouts: int = 1, seed: int = 0):
        if rollouts < 1:
            raise ValueError(f"rollouts must be >= 1, got {rollouts}")
        self.rollouts = rollouts
        self._rng = np.random.default_rng(seed)

    def evaluate(self, obs: np.ndarray, legal: np.ndarray, states: States | None = None):
        if states is None:
            raise ValueError("RandomRolloutEvaluator needs the leaf positions: call evaluate(obs, legal, states=...)")
        if len(states) != len(legal):
            raise ValueError(f"states has {len(states)} positions but legal has {len(legal)} rows")
        to_play = states.to_play()
        if self.rollouts > 1:
            states = states.take(np.repeat(np.arange(len(states), dtype=np.int64), self.rollouts))
            to_play = np.repeat(to_play, self.rollouts)
        seed = int(self._rng.integers(0, 2 ** 63))
        values = value_for_player_to_move(states.random_playout(seed), to_play)
        if self.rollouts > 1:
            values = values.reshape(-1, self.rollouts).mean(axis=1, dtype=np.float32)
        return _uniform_priors(legal), values.astype(np.float32)


class FakeEvaluator:
    """Deterministic pseudo-random priors and values: a fixed function of each observation row.

    Row outputs are computed with exact integer arithmetic, so they never depend on
    which other rows share the batch: a leaf evaluated alone (the reference twin) or
    in a batch of thousands (the Cython search) gets bit-identical priors and values.
    Every legal action gets a prior of at least 1/1000 of the largest.
    `calls` and `rows` count evaluate() calls and positions evaluated.
    """

    def __init__(self, obs_shape: tuple[int, ...], num_actions: int, *, seed: int = 0, value_scale: float = 1.0):
        rng = np.random.default_rng(seed)
        features = int(np.prod(obs_shape))
        self.obs_shape = tuple(obs_shape)
        self.num_actions = num_actions
        self.value_scale = float(value_scale)
        self._w_prior = rng.integers(1, 1 << 20, size=(features, num_actions), dtype=np.int64)
        self._w_value = rng.integers(1, 1 << 20, size=(features,), dtype=np.int64)
        self.calls = 0
        self.rows = 0

    def evaluate(self, obs: np.ndarray, legal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if obs.shape[1:] != self.obs_shape or legal.shape != (len(obs), self.num_actions):
            raise ValueError(f"FakeEvaluator: expected obs [B, {self.obs_shape}] and legal [B, {self.num_actions}], "
                             f"got {obs.shape} and {legal.shape}")
        self.calls += 1
        self.rows += len(obs)
        # Features quantised to 1/8 (observations are 0/1 planes in practice) and hashed with int64 weights.
        x = np.rint(obs.reshape(len(obs), -1) * 8).astype(np.int64)
        h_prior = (x @ self._w_prior) % 1000 + 1
        h_value = (x @ self._w_value + 12345) % 2001
        raw = np.where(legal, h_prior, 0).astype(np.float64)
        priors = (raw / np.maximum(raw.sum(axis=1, keepdims=True), 1.0)).astype(np.float32)
        values = (self.value_scale * (h_value - 1000) / 1000.0).astype(np.float32)
        return priors, values
