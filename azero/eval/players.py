"""Players for matches and tournaments, all behind one small protocol.

A match runs many games at once; each game has a slot number. The arena calls

    player.start(n)                       before the first move of n games (slots 0..n-1)
    player.act(slots, states) -> actions  moves for the games in `slots` (int64 [k]), whose
                                          positions are `states` (k positions); int32 [k]
    player.observe(slots, actions)        after every move of those games, by either side
                                          (NO_ACTION rows: nothing happened in that slot)
    player.finish(slots)                  those games are over (release engines, trees)
    player.close()                        the match is over

Stateless players (random, raw network, network + search) only implement
`act`; stateful ones (GTP engines, which keep their own board) use the rest to
stay in sync with the game. `name` labels results and SGF files.
"""

from __future__ import annotations

import abc
import dataclasses

import numpy as np

from azero.games.base import States
from azero.search.config import SearchConfig
from azero.search.mcts import MCTS


class Player(abc.ABC):
    """Base class: no-op lifecycle hooks; subclasses implement act()."""

    name = "player"

    def start(self, n: int) -> None:
        pass

    @abc.abstractmethod
    def act(self, slots: np.ndarray, states: States) -> np.ndarray:
        """int32 [len(slots)]: a legal move for each of the positions `states`."""

    def observe(self, slots: np.ndarray, actions: np.ndarray) -> None:
        pass

    def finish(self, slots: np.ndarray) -> None:
        pass

    def close(self) -> None:
        pass


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


class MctsPlayer(Player):
    """An evaluator (network, rollouts, ...) plus search; deterministic move choice, no root noise."""

    def __init__(self, spec, evaluator, search: SearchConfig, *, name: str = "mcts"):
        self.spec = spec
        self.evaluator = evaluator
        self.search_cfg = dataclasses.replace(search, dirichlet_weight=0.0, tree_reuse=False)
        self.name = name
        self._searches: dict[int, MCTS] = {}
        self.last_result = None

    def act(self, slots, states: States) -> np.ndarray:
        n = len(states)
        search = self._searches.get(n)
        if search is None:
            search = self._searches[n] = MCTS(self.spec, self.evaluator, self.search_cfg, batch_size=n)
        self.last_result = search.run(states)
        return self.last_result.action.astype(np.int32)
