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

from azero.eval.passing import pass_wins
from azero.games.base import NO_ACTION, States
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
        self._last_action = np.zeros(0, np.int32)  # [slots]: the last move played in each game
        self.passes_that_win = 0
        """Moves answered with a pass because the opponent passed and the count already won."""

    def start(self, n: int) -> None:
        self._last_action = np.full(n, NO_ACTION, np.int32)

    def observe(self, slots, actions) -> None:
        if len(self._last_action) < len(slots):
            self._last_action = np.full(len(slots), NO_ACTION, np.int32)
        played = actions != NO_ACTION
        self._last_action[np.asarray(slots)[played]] = actions[played]

    def act(self, slots, states: States) -> np.ndarray:
        n = len(states)
        search = self._searches.get(n)
        if search is None:
            search = self._searches[n] = MCTS(self.spec, self.evaluator, self.search_cfg, batch_size=n)
        self.last_result = search.run(states)
        actions = self.last_result.action.astype(np.int32)
        for k in self._winning_passes(np.asarray(slots), states):
            actions[k] = self.spec.pass_action
        return actions

    def _winning_passes(self, slots: np.ndarray, states: States) -> list[int]:
        """Rows whose opponent just passed and whose pass already wins the count (eval/passing.py)."""
        p = self.spec.pass_action
        if p is None or not hasattr(states, "board") or len(self._last_action) == 0:
            return []
        rows = [k for k, s in enumerate(slots) if s < len(self._last_action) and self._last_action[s] == p]
        if not rows:
            return []
        owner = getattr(self.evaluator, "ownership", None)
        views = owner(states.take(np.array(rows, np.int64)).encode()) if owner is not None else None
        to_play = states.to_play()
        komi = float(self.spec.params.get("komi", 0.0))
        wins = [k for i, k in enumerate(rows)
                if pass_wins(states.board(k), int(to_play[k]), komi, None if views is None else views[i])]
        self.passes_that_win += len(wins)
        return wins
