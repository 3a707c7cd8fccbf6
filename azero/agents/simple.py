"""Players without search: uniformly random moves, and the raw network's policy."""

from __future__ import annotations

import numpy as np

from azero.agents.player import Player
from azero.games.base import States


class RandomPlayer(Player):
    """Uniformly random legal moves."""

    def __init__(self, seed: int = 0, name: str = "random"):
        self.rng = np.random.default_rng(seed)
        self.name = name

    def act(self, slots, states: States) -> np.ndarray:
        legal = states.legal_mask()
        noise = self.rng.random(legal.shape)
        return np.where(legal, noise, -1.0).argmax(axis=1).astype(np.int32)


class RawNetworkPlayer(Player):
    """The network's policy alone: argmax of the priors (temperature 0) or a sample."""

    def __init__(self, evaluator, *, temperature: float = 0.0, seed: int = 0, name: str = "raw"):
        self.evaluator = evaluator
        self.temperature = temperature
        self.rng = np.random.default_rng(seed)
        self.name = name

    def act(self, slots, states: States) -> np.ndarray:
        legal = states.legal_mask()
        priors, _ = self.evaluator.evaluate(states.encode(), legal)
        if self.temperature == 0:
            return np.where(legal, priors, -1.0).argmax(axis=1).astype(np.int32)
        logits = np.where(legal, np.log(np.maximum(priors, 1e-30)) / self.temperature, -np.inf)
        g = self.rng.gumbel(size=logits.shape)
        return np.where(legal, logits + g, -np.inf).argmax(axis=1).astype(np.int32)
