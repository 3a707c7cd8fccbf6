"""The one MCTS player: an evaluator plus search, for tournaments, GTP, `azero play` and analysis.

Search settings for play, not for training: no Dirichlet noise, the most
visited move, no tree reuse across calls (search.config.play_config gives
Gumbel its deterministic root). Two things differ from one caller to the next,
and the player serves both:

- the batch: a match asks for moves in sub-batches of every size from 1 to its
  game count. Searches are kept per power of two (rows padded in are inactive
  and skipped by the core), so at most log2(B) + 1 trees exist, not B;
- the budget: GTP's clock changes it from move to move (`search(...,
  simulations=)`). A PUCT tree runs any budget up to its capacity and grows
  when a bigger one comes; Gumbel's sequential-halving schedule is fixed by the
  simulation count, so it keeps one search per budget.

The least recently used searches go first beyond MAX_CACHED. After the
opponent's pass, `act` passes when that already wins the count (passing.py).
"""

from __future__ import annotations

import collections
import dataclasses

import numpy as np

from azero.agents.passing import pass_wins
from azero.agents.player import Player
from azero.games.base import NO_ACTION, GameSpec, States
from azero.search.config import SearchConfig
from azero.search.graph import check_graph_evaluator, make_search
from azero.search.mcts import SearchResult


def _padded_size(n: int) -> int:
    return 1 << max(n - 1, 0).bit_length()


class MctsPlayer(Player):
    """An evaluator (network, rollouts, ...) plus search; deterministic move choice, no root noise."""

    MAX_CACHED = 16
    """Searches kept (per game, batch size and, for Gumbel, budget); the least recently used goes first."""

    def __init__(self, spec: GameSpec, evaluator, search: SearchConfig, *, name: str = "mcts"):
        self.spec = spec
        self.evaluator = evaluator
        self.config = dataclasses.replace(search, dirichlet_weight=0.0, tree_reuse=False)
        check_graph_evaluator(self.config, evaluator)
        self.name = name
        self._searches: collections.OrderedDict = collections.OrderedDict()
        self.last_result: SearchResult | None = None
        """The last search's result; rows past the positions asked for are padding."""
        self._last_action = np.zeros(0, np.int32)  # [slots]: the last move played in each game
        self.passes_that_win = 0
        """Moves answered with a pass because the opponent passed and the count already won."""

    @property
    def algorithm(self) -> str:
        return self.config.algorithm

    # ------------------------------------------------------------------ search
    def _search_for(self, spec: GameSpec, size: int, simulations: int):
        # The MCTS keeps buffers of positions of one game: a komi change (a new GameSpec) needs its own.
        game_key = (spec.name, spec.num_actions, spec.max_moves, repr(sorted(spec.params.items())), size)
        puct = self.config.algorithm == "puct"
        key = game_key if puct else (game_key, simulations)
        search = self._searches.get(key)
        if search is None or search.config.simulations < simulations:
            capacity = simulations
            if puct and search is not None:
                capacity = max(simulations, int(1.5 * search.config.simulations))
            config = dataclasses.replace(self.config, simulations=capacity)
            search = self._searches[key] = make_search(spec, self.evaluator, config, batch_size=size)
        self._searches.move_to_end(key)
        while len(self._searches) > self.MAX_CACHED:
            self._searches.popitem(last=False)
        return search

    def search(self, states: States, *, simulations: int | None = None, spec: GameSpec | None = None) -> SearchResult:
        """Search every position of `states` with `simulations` simulations each (default: the
        config's; at least 1), for the game `spec` (default: the player's). Rows of the result past
        len(states) are padding."""
        spec = spec or self.spec
        sims = self.config.simulations if simulations is None else max(1, int(simulations))
        n = len(states)
        size = _padded_size(n)
        search = self._search_for(spec, size, sims)
        active = None
        if size != n:
            states = states.take(np.concatenate([np.arange(n), np.zeros(size - n, np.int64)]).astype(np.int64))
            active = np.arange(size) < n
        budget = sims if self.config.algorithm == "puct" else None
        self.last_result = search.run(states, active=active, simulations=budget)
        return self.last_result

    # ------------------------------------------------------------------ the Player protocol
    def start(self, n: int) -> None:
        self._last_action = np.full(n, NO_ACTION, np.int32)

    def observe(self, slots, actions) -> None:
        if len(self._last_action) < len(slots):
            self._last_action = np.full(len(slots), NO_ACTION, np.int32)
        played = actions != NO_ACTION
        self._last_action[np.asarray(slots)[played]] = actions[played]

    def act(self, slots, states: States) -> np.ndarray:
        actions = self.search(states).action[: len(states)].astype(np.int32)
        for k in self._winning_passes(np.asarray(slots), states):
            actions[k] = self.spec.pass_action
        return actions

    def _winning_passes(self, slots: np.ndarray, states: States) -> list[int]:
        """Rows whose opponent just passed and whose pass already wins the count (passing.py)."""
        p = self.spec.pass_action
        if not self.spec.area_scoring or p is None or len(self._last_action) == 0:
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


def best_allowed(result: SearchResult, allowed: np.ndarray, row: int = 0) -> int:
    """The allowed action with most visits in `row`, ties (and unvisited moves) broken by prior; -1 if
    none is allowed."""
    idx = np.flatnonzero(allowed)
    if idx.size == 0:
        return -1
    visits = result.visits[row, idx].astype(np.float64)
    prior = result.prior[row, idx].astype(np.float64)
    order = np.lexsort((-prior, -visits))  # last key is primary: most visits, then highest prior
    return int(idx[order[0]])
