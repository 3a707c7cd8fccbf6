"""A search that grows in steps over a batch of analysed positions, each row with its own budget.

Analysis wants three things a move search does not: partial reports while the
search runs (GTP's interval, KataGo's reportDuringSearchEvery), a stop at any
time (the next GTP command, a terminate action), and rows that come and go
(a queue of queries sharing one batch). So the tree is kept between calls
(PUCT with tree reuse, never advanced: each `grow` adds simulations to the
same roots) and rows are filled and emptied one by one.

Capacity: a tree needs one node per simulation, so every row gets
`max_visits + 2` nodes up front (numpy zero pages cost memory only once used).
"""

from __future__ import annotations

import numpy as np

from azero.games.base import States
from azero.search.config import play_config
from azero.search.inspect import MoveStats, RootStats, root_moves, root_stats
from azero.search.mcts import MCTS
from azero.search.result import SearchResult, most_visited, visit_policy

NODE_BYTES_PER_ACTION = 20
"""child_index, child_prior, child_visits (4 bytes each) and child_value_sum (8): a tree's cost
per node and action."""


class GrowingSearch:
    """`rows` trees of up to `max_visits` simulations each, over positions of one game."""

    def __init__(self, game, evaluator, *, rows: int, max_visits: int, seed: int = 0, **search):
        """`game`: the game whose positions the rows hold (its komi and move limit included).
        `search`: SearchConfig fields for play_config (c_init, score_utility, ...)."""
        if rows < 1 or max_visits < 1:
            raise ValueError(f"rows and max_visits must be >= 1, got {rows} and {max_visits}")
        self.game = game
        self.spec = spec = game.spec
        self.rows = rows
        self.max_visits = max_visits
        config = play_config(max_visits, seed=seed, tree_reuse=True, max_nodes=max_visits + 2, **search)
        self.mcts = MCTS(spec, evaluator, config, batch_size=rows)
        self.scored = self.mcts._scored
        self.roots: States = game.new_states(rows)
        self.target = np.zeros(rows, np.int64)
        """Visits each row's root should reach (0: an empty row)."""

    # ------------------------------------------------------------------ rows
    def load(self, row: int, position: States, target: int) -> None:
        """Put `position` (a batch of one) in `row`, with a fresh tree that will grow to `target` visits."""
        if not 1 <= target <= self.max_visits:
            raise ValueError(f"target must be in [1, {self.max_visits}], got {target}")
        self.roots.put(np.array([row], np.int64), position)
        self.mcts.reset([row])
        self.target[row] = target

    def clear(self, row: int) -> None:
        self.target[row] = 0

    def visits(self) -> np.ndarray:
        """int64 [rows]: root visits so far (the root's own evaluation included)."""
        return self.mcts.tree.node_visits[:, 0].astype(np.int64)

    def remaining(self) -> np.ndarray:
        """int64 [rows]: simulations each row still needs (0 for empty, finished or terminal rows)."""
        # The root's own evaluation is a visit but no simulation: s simulations on a fresh root give
        # s + 1 visits. A fresh root always gets one, so a target of 1 still expands the root.
        visits = self.visits()
        fresh = visits == 0
        need = np.where(fresh, np.maximum(self.target - 1, 1), self.target - visits)
        need[(self.target == 0) | self.roots.terminal()] = 0
        return np.maximum(need, 0)

    def grow(self, simulations: int) -> np.ndarray:
        """Run up to `simulations` more simulations in every row that needs some (never past a row's
        target); returns the rows that were searched."""
        need = self.remaining()
        active = need > 0
        if not active.any():
            return np.zeros(0, np.int64)
        step = int(min(simulations, need[active].min()))
        self.mcts.run(self.roots, active=active, simulations=max(step, 1))
        return np.flatnonzero(active)

    # ------------------------------------------------------------------ results
    def moves(self, row: int) -> list[MoveStats]:
        return root_moves(self.mcts.tree, row, scored=self.scored)

    def root(self, row: int) -> RootStats:
        return root_stats(self.mcts.tree, row, scored=self.scored)

    def prior(self, row: int) -> np.ndarray:
        """float32 [A]: the root's network priors (0 for illegal moves; all 0 before the first visit)."""
        return self.mcts.tree.child_prior[row, 0].copy()

    def result(self) -> SearchResult:
        """Every row's root as one SearchResult (PUCT: most visited move), all simulations so far counted."""
        tree = self.mcts.tree
        visits = tree.root_visits()
        return SearchResult(visits=visits, policy=visit_policy(visits), q=tree.root_q(), prior=tree.root_prior(),
                            value=tree.root_value(), action=most_visited(visits),
                            simulations=np.maximum(self.visits() - 1, 0).astype(np.int32),
                            score=tree.root_score() if self.scored else None, action_weights=visits)



class ParallelSearch:
    """GrowingSearch rows split over `workers` searches that grow in parallel threads.

    The search core and OpenVINO (one stream per worker: load_evaluator(streams=workers)) release
    the GIL, so on a machine with W cores W parts evaluate their batches at the same time. That is
    KataGo's numAnalysisThreads, and it only helps when rows are many: one position is one part.
    Row r lives in part r % workers, so consecutive rows alternate between the parts.
    """

    def __init__(self, game, evaluator, *, rows: int, max_visits: int, workers: int = 1, seed: int = 0, **search):
        if workers < 1:
            raise ValueError(f"workers must be >= 1, got {workers}")
        workers = min(workers, rows)
        self.workers = workers
        self.rows = rows
        self.max_visits = max_visits
        sizes = [len(range(w, rows, workers)) for w in range(workers)]
        self.parts = [GrowingSearch(game, evaluator, rows=n, max_visits=max_visits, seed=seed + w, **search)
                      for w, n in enumerate(sizes)]
        self.scored = self.parts[0].scored
        self._pool = None
        if workers > 1:
            from concurrent.futures import ThreadPoolExecutor

            self._pool = ThreadPoolExecutor(workers, thread_name_prefix="analysis")

    def _at(self, row: int) -> tuple[GrowingSearch, int]:
        return self.parts[row % self.workers], row // self.workers

    def _gather(self, per_part) -> np.ndarray:
        out = np.zeros(self.rows, np.int64)
        for w, values in enumerate(per_part):
            out[w::self.workers] = values
        return out

    def load(self, row: int, position: States, target: int) -> None:
        part, r = self._at(row)
        part.load(r, position, target)

    def clear(self, row: int) -> None:
        part, r = self._at(row)
        part.clear(r)

    def visits(self) -> np.ndarray:
        return self._gather([p.visits() for p in self.parts])

    def remaining(self) -> np.ndarray:
        return self._gather([p.remaining() for p in self.parts])

    def grow(self, simulations: int) -> None:
        """GrowingSearch.grow in every part that needs it, in parallel."""
        busy = [p for p in self.parts if p.remaining().any()]
        if self._pool is None or len(busy) <= 1:
            for p in busy:
                p.grow(simulations)
        else:
            for future in [self._pool.submit(p.grow, simulations) for p in busy]:
                future.result()

    def moves(self, row: int) -> list[MoveStats]:
        part, r = self._at(row)
        return part.moves(r)

    def root(self, row: int) -> RootStats:
        part, r = self._at(row)
        return part.root(r)

    def prior(self, row: int) -> np.ndarray:
        part, r = self._at(row)
        return part.prior(r)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
