"""A move chooser for one position at a time: an evaluator plus MCTS, shared by GTP and human play.

The evaluator is a trained network when a checkpoint is given. Without one it
is random rollouts (azero.search.evaluators.RandomRolloutEvaluator: uniform
priors, value = the result of one uniformly random game from the leaf), so the
engine plays legal, somewhat sensible moves with no trained network at all; a
uniform evaluator (value 0 everywhere) would leave the search blind until the
game's very end.

Search settings for play, not for training: no Dirichlet noise, temperature 0
(the most visited move), no tree reuse. The budget is given per call, since
GTP's clock changes it from move to move.
"""

from __future__ import annotations

import collections
import dataclasses
import logging

import numpy as np

from azero.games.base import GameSpec, States
from azero.search.config import ALGORITHMS, SearchConfig, play_config
from azero.search.evaluators import RandomRolloutEvaluator
from azero.search.mcts import MCTS, SearchResult

log = logging.getLogger(__name__)


@dataclasses.dataclass
class LoadedEvaluator:
    """An evaluator and what it can play."""

    evaluator: object
    description: str
    """For logs and GTP's version: the checkpoint and its step, or 'random rollouts'."""
    obs_shape: tuple[int, int, int] | None = None
    """The network's input (C, H, W); None when any game fits (rollouts)."""
    num_actions: int | None = None

    def fits(self, spec: GameSpec) -> bool:
        """Whether this evaluator can evaluate positions of `spec` (a network is trained for one board size)."""
        if self.obs_shape is None:
            return True
        return tuple(spec.obs_shape) == self.obs_shape and spec.num_actions == self.num_actions


def load_evaluator(checkpoint: str | None, *, device: str = "auto", seed: int = 0,
                   threads: int | None = 1, precision: str = "auto", backend: str = "auto") -> LoadedEvaluator:
    """The network of `checkpoint` (CheckpointError if unusable), or random rollouts when None.

    `threads`: torch CPU threads (process-wide). One by default: a search evaluates one position at a
    time, and for batches of one the thread pool's hand-offs cost more than they save (about 5x on a
    busy 2-core machine with the tiny network); None leaves torch's default.
    """
    if checkpoint is None:
        return LoadedEvaluator(RandomRolloutEvaluator(rollouts=1, seed=seed), "random rollouts (no checkpoint)")
    from azero.selfplay.network_evaluator import NetworkEvaluator
    from azero.train.checkpoint import load_checkpoint, network_from_checkpoint_data

    ckpt = load_checkpoint(checkpoint)
    net = network_from_checkpoint_data(ckpt).eval()
    evaluator = NetworkEvaluator(net, device=device, threads=threads, precision=precision, backend=backend)
    return LoadedEvaluator(evaluator, f"{ckpt.path.name} (step {ckpt.step}, {evaluator.describe})",
                           tuple(int(x) for x in net.obs_shape), int(net.num_actions))


class SearchAgent:
    """MCTS over batches of one position, with a per-call simulation budget."""

    MAX_CACHED = 4
    """Searches kept (per game, and for Gumbel per budget); the least recently used goes first."""

    def __init__(self, evaluator, *, algorithm: str = "puct", seed: int = 0):
        if algorithm not in ALGORITHMS:
            raise ValueError(f"algorithm must be one of {ALGORITHMS}, got {algorithm!r}")
        self.evaluator = evaluator
        self.algorithm = algorithm
        self.seed = seed
        self._searches: collections.OrderedDict = collections.OrderedDict()

    def _config(self, simulations: int) -> SearchConfig:
        return play_config(simulations, algorithm=self.algorithm, seed=self.seed)

    def _search_for(self, spec: GameSpec, simulations: int) -> MCTS:
        # The MCTS keeps buffers of positions of one game: a komi change (a new GameSpec) needs its own.
        game_key = (spec.name, spec.num_actions, spec.max_moves, repr(sorted(spec.params.items())))
        if self.algorithm == "puct":
            # One tree per game, grown when a bigger budget comes: PUCT runs any budget up to its
            # capacity, so clock-driven budgets share one allocation.
            key = game_key
            search = self._searches.get(key)
            if search is None or search.config.simulations < simulations:
                size = max(simulations, int(1.5 * search.config.simulations) if search else simulations)
                search = self._searches[key] = MCTS(spec, self.evaluator, self._config(size), batch_size=1)
        else:
            # Gumbel's sequential-halving schedule is fixed by the simulation count: one search per budget.
            key = (game_key, simulations)
            search = self._searches.get(key)
            if search is None:
                search = self._searches[key] = MCTS(spec, self.evaluator, self._config(simulations), batch_size=1)
        self._searches.move_to_end(key)
        while len(self._searches) > self.MAX_CACHED:
            self._searches.popitem(last=False)
        return search

    def search(self, spec: GameSpec, root: States, simulations: int) -> SearchResult:
        """Search the single position `root` with `simulations` simulations (at least 1)."""
        if len(root) != 1:
            raise ValueError(f"SearchAgent searches one position at a time, got {len(root)}")
        simulations = max(1, int(simulations))
        search = self._search_for(spec, simulations)
        if self.algorithm == "puct":
            return search.run(root, simulations=simulations)
        return search.run(root)


def best_allowed(result: SearchResult, allowed: np.ndarray) -> int:
    """The allowed action with most visits, ties (and unvisited moves) broken by prior; -1 if none is allowed."""
    idx = np.flatnonzero(allowed)
    if idx.size == 0:
        return -1
    visits = result.visits[0, idx].astype(np.float64)
    prior = result.prior[0, idx].astype(np.float64)
    order = np.lexsort((-prior, -visits))  # last key is primary: most visits, then highest prior
    return int(idx[order[0]])
