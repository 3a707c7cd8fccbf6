"""Players that pick moves for a batch of positions: random, raw network, network + MCTS.

A player is an object with `act(states) -> int32 actions [len(states)]`; all of
them work on whole batches so many games can be played at once.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from azero.games.base import States
from azero.search.config import SearchConfig
from azero.search.mcts import MCTS


class RandomPlayer:
    name = "random"

    def __init__(self, seed: int = 0):
        self.rng = np.random.default_rng(seed)

    def act(self, states: States) -> np.ndarray:
        legal = states.legal_mask()
        noise = self.rng.random(legal.shape)
        return np.where(legal, noise, -1.0).argmax(axis=1).astype(np.int32)


class RawNetworkPlayer:
    """The network's policy alone: argmax of the priors (temperature 0) or a sample."""

    def __init__(self, evaluator, *, temperature: float = 0.0, seed: int = 0, name: str = "raw"):
        self.evaluator = evaluator
        self.temperature = temperature
        self.rng = np.random.default_rng(seed)
        self.name = name

    def act(self, states: States) -> np.ndarray:
        legal = states.legal_mask()
        priors, _ = self.evaluator.evaluate(states.encode(), legal)
        if self.temperature == 0:
            return np.where(legal, priors, -1.0).argmax(axis=1).astype(np.int32)
        logits = np.where(legal, np.log(np.maximum(priors, 1e-30)) / self.temperature, -np.inf)
        g = self.rng.gumbel(size=logits.shape)
        return np.where(legal, logits + g, -np.inf).argmax(axis=1).astype(np.int32)


class MctsPlayer:
    """Network (or any evaluator) + search; deterministic move choice, no root noise by default."""

    def __init__(self, spec, evaluator, search: SearchConfig, *, name: str = "mcts"):
        self.spec = spec
        self.evaluator = evaluator
        self.search_cfg = dataclasses.replace(search, dirichlet_weight=0.0, tree_reuse=False)
        self.name = name
        self._searches: dict[int, MCTS] = {}

    def act(self, states: States) -> np.ndarray:
        n = len(states)
        search = self._searches.get(n)
        if search is None:
            search = self._searches[n] = MCTS(self.spec, self.evaluator, self.search_cfg, batch_size=n)
        return search.run(states).action.astype(np.int32)
