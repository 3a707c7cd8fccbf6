"""Batched MCTS driver: B games searched in lockstep around the Cython tree (azero.search._mcts).

One batch step crosses Python once, in tree.leaf_step (native games):

    evaluator.evaluate(obs, legal)     the one Python call: all M leaves of the step (a terminal
                                       leaf's evaluation is ignored: its exact outcome is backed up)
    tree.leaf_step(priors, values)     with the GIL released once: expand_and_backup of those
                                       leaves, then select() up to K new leaves per game, and the
                                       game's leaf API (games/leaf_api.pxd) replays their action
                                       paths from the roots into a preallocated batch and writes
                                       legal / terminal / to_play / outcome / observations into
                                       preallocated buffers

Games without the leaf API (the OpenSpiel adapter, Python test games) and evaluators that
need the leaf positions take the same steps as separate calls: tree.select(), the game
layer's load_paths or take + apply_paths and queries, evaluate, tree.expand_and_backup().

Values are from the view of the player to move (see azero.games.base); a
terminal leaf's value is value_for_player_to_move(outcome, to_play) and the
tree negates it on the way up wherever the player to move changes.

Usage:
    search = MCTS(game.spec, evaluator, SearchConfig(simulations=200), batch_size=B)
    result = search.run(roots)                    # roots: States of B positions
    actions = search.choose_actions(result, temperature=1.0)
    roots.apply(actions); search.advance(actions)  # tree reuse, if configured

With tree_reuse the caller keeps `roots` in step with the trees: after run(),
apply the same actions to both (advance with NO_ACTION for a game that restarts).
"""

from __future__ import annotations

import numpy as np

from azero.games.base import NO_ACTION, GameSpec, States, value_for_player_to_move
from azero.search._mcts import ROOT, EvaluatorOutputError, SearchTree, TreeCapacityError
from azero.search.config import SearchConfig
from azero.search.evaluators import check_output, check_scores
from azero.search.symmetric import SymmetricEvaluator
from azero.search.gumbel import considered_visits_table
from azero.search.noise import dirichlet_noise, gumbel_noise
from azero.search.result import SearchResult, final_choice, proven_weights, sample_by_visits, visit_policy

__all__ = ["MCTS", "SearchResult", "TreeCapacityError", "EvaluatorOutputError"]


class MCTS:
    """Searches a batch of `batch_size` positions of one game; owns its tree and buffers.

    One MCTS object is driven by one thread at a time; independent objects can run in
    parallel threads (the tree and the native games release the GIL).
    """

    def __init__(self, spec: GameSpec, evaluator, config: SearchConfig | None = None, *, batch_size: int):
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.spec = spec
        self.config = config = config if config is not None else SearchConfig()
        config.validate()
        if config.graph:
            raise ValueError("SearchConfig: graph=True is searched by azero.search.graph.GraphSearch "
                             "(make_search builds it, as players do); self-play, analysis and benchmarks search trees")
        if (config.symmetry != "none" and getattr(evaluator, "needs_observations", True)
                and not getattr(evaluator, "needs_states", False)):
            evaluator = SymmetricEvaluator(evaluator, spec, config.symmetry, seed=config.seed)
        self.evaluator = evaluator
        self.batch_size = batch_size
        self._gumbel = config.algorithm == "gumbel"
        capacity = config.capacity
        num_actions = spec.num_actions
        # A path from the root never has more moves than a whole game (nor more edges than nodes).
        max_depth = max(1, min(capacity - 1, spec.max_moves))
        table = considered_visits_table(config.gumbel_num_considered, config.simulations) if self._gumbel else None
        # Scores only where the evaluator predicts them (nets with a score head: evaluate_with_score).
        self._scored = config.score_utility > 0 and bool(getattr(evaluator, "has_score", False))
        area = float(np.prod(spec.board_shape)) if getattr(spec, "board_shape", None) else float(num_actions)
        self.tree = SearchTree(
            batch_size, capacity, num_actions, max_depth, leaves_per_game=config.leaves_per_game,
            gumbel=self._gumbel, c_base=config.c_base, c_init=config.c_init, fpu_reduction=config.fpu_reduction,
            virtual_loss=config.virtual_loss, c_visit=config.gumbel_c_visit, c_scale=config.gumbel_c_scale,
            rescale_q=config.gumbel_rescale_q, gumbel_table=table,
            score_lambda=config.score_utility if self._scored else 0.0,
            score_div=config.score_scale * np.sqrt(area), solver=config.solver)
        self._rng = np.random.default_rng(config.seed)
        self._needs_states = bool(getattr(evaluator, "needs_states", False))
        # Evaluators that ignore observations (uniform, rollouts) say so; encoding is then skipped.
        self._needs_obs = bool(getattr(evaluator, "needs_observations", True))
        self._leaves = None
        self._native_query = False
        self._fused_steps = True
        """Drive native games through tree.leaf_step (tests switch it off to compare with the separate calls)."""

        # Step buffers for up to B * K leaves, allocated once; steps use their leading rows.
        slots = batch_size * config.leaves_per_game
        self._legal = np.zeros((slots, num_actions), np.bool_)
        self._legal_u8 = self._legal.view(np.uint8)
        self._terminal = np.zeros(slots, np.bool_)
        self._terminal_u8 = self._terminal.view(np.uint8)
        self._to_play = np.zeros(slots, np.int8)
        self._outcome = np.zeros(slots, np.float32)
        self._query = np.zeros((slots, num_actions), np.bool_)
        self._obs = np.zeros((slots, *spec.obs_shape), np.float32)
        self._priors = np.zeros((slots, num_actions), np.float32)
        self._values = np.zeros(slots, np.float32)
        self._scores = np.zeros(slots, np.float32)
        self._final_scores = np.zeros(slots, np.float32)
        self._views: dict[tuple[int, int], tuple] = {}
        self._fused_views: dict[int, tuple] = {}
        self.stats = {"steps": 0, "leaves": 0, "evaluated": 0, "reuse_dropped": 0}
        """Counters since construction: batch steps, leaves, evaluator rows, reused trees dropped for room."""

    # ------------------------------------------------------------------ public API
    def reset(self, index=None) -> None:
        """Forget the trees of the games in `index` (all when None)."""
        self.tree.reset(index)

    def run(self, roots: States, *, active: np.ndarray | None = None, simulations: int | None = None) -> SearchResult:
        """Search every root (config.simulations each, or `simulations`) and return the root statistics.

        Terminal roots and games with active[b] False are skipped (zero rows, NO_ACTION).
        Without tree reuse every search starts from fresh trees.
        """
        cfg = self.config
        B = self.batch_size
        if len(roots) != B:
            raise ValueError(f"run: expected {B} root positions, got {len(roots)}")
        sims = cfg.simulations if simulations is None else int(simulations)
        if sims < 0 or (self._gumbel and sims != cfg.simulations):
            raise ValueError(f"run: simulations must be >= 0 (and equal config.simulations for Gumbel), got {sims}")
        live = ~roots.terminal()
        if active is not None:
            live &= np.asarray(active, dtype=bool).reshape(B)
        targets = np.where(live, sims, 0).astype(np.int32)

        if cfg.tree_reuse:
            # A kept subtree that leaves too little room for this search is dropped (documented in SearchConfig).
            short = np.flatnonzero(self.tree.num_nodes.astype(np.int64) + targets > self.tree.capacity)
            if short.size:
                self.tree.reset(short)
                self.stats["reuse_dropped"] += int(short.size)
        else:
            self.tree.reset()

        noise = gumbel = None
        if self._gumbel:
            gumbel = gumbel_noise(self._rng, B, self.spec.num_actions) * cfg.gumbel_scale
        elif cfg.dirichlet_weight > 0:
            noise = dirichlet_noise(self._rng, roots.legal_mask(), alpha=cfg.dirichlet_alpha,
                                    alpha_scale=cfg.dirichlet_alpha_scale)
        self.tree.begin_search(targets, noise, cfg.dirichlet_weight, gumbel)

        self._steps(roots)
        return self._result()

    def choose_actions(self, result: SearchResult, temperature: float | None = None) -> np.ndarray:
        """int32 [B]: moves to play, result.choose at temperature T (from the config when None): PUCT
        samples N^(1/T) (T = 0 is result.action); Gumbel always plays result.action."""
        t = self.config.temperature if temperature is None else temperature
        return result.choose(t, self._rng)

    def advance(self, actions: np.ndarray) -> None:
        """Tell the trees which move each game played (NO_ACTION: the game restarts).

        With tree reuse the played move's subtree becomes the next root; otherwise this only
        forgets the trees (run() would anyway).
        """
        if self.config.tree_reuse:
            self.tree.advance(np.asarray(actions))
        else:
            self.tree.reset()

    # ------------------------------------------------------------------ one batch step
    def _steps(self, roots: States, *, single: bool = False) -> None:
        """Batch steps until every game reached its target (one step if `single`): the one step loop of
        a search, run the fastest way the game and the evaluator allow. Native games whose evaluator
        needs no leaf States step in place (_steps_in_place: through tree.leaf_step when the game
        exports the leaf API); any other game takes the separate calls of _evaluate_leaves."""
        full = self._leaf_batch(roots)
        if full is not None and not self._needs_states:
            if self._fused_steps and hasattr(full, "_leaf_api"):
                self._steps_fused(full, roots, single=single)
            else:
                self._steps_in_place(full, roots, single=single)
            return
        tree = self.tree
        while single or tree.searching():
            m, length = tree.select()
            self.stats["steps"] += 1
            if m:  # else every descent ended in a known terminal node, already backed up
                try:
                    self._evaluate_leaves(roots, m, length)
                except BaseException:
                    tree.abort_step()  # the tree stays exactly as before this step
                    raise
                self.stats["leaves"] += m
            if single:
                break

    def _step(self, roots: States) -> None:
        """One batch step (the tests drive a search step by step)."""
        self._steps(roots, single=True)

    def _step_views(self, m: int, length: int):
        """Views of the first m rows of the step buffers (and the [m, L] paths), cached: each step of a
        search has nearly always the same (m, L), and building six views costs more than a lookup."""
        key = (m, length)
        views = self._views.get(key)
        if views is None:
            if len(self._views) > 1024:
                self._views.clear()
            tree = self.tree
            views = self._views[key] = (
                tree.leaf_game[:m], tree.paths[: m * length].reshape(m, length), self._legal[:m],
                self._terminal[:m], self._to_play[:m], self._obs[:m])
        return views

    def _leaf_batch(self, roots: States):
        """A preallocated batch of B*K leaf positions, when the game supports load_paths.

        Built once per kind of States; every step then copies roots into it and plays the
        paths in one native call, so a step allocates no game memory at all.
        """
        if not hasattr(roots, "load_paths"):
            return None
        if self._leaves is None or type(self._leaves) is not type(roots):
            self._leaves = roots.take(np.zeros(len(self._terminal), np.int64))
            self._native_query = hasattr(self._leaves, "query")
        return self._leaves

    def _evaluate_leaves(self, roots: States, m: int, length: int) -> None:
        tree = self.tree
        games, paths, legal, terminal, to_play, obs = self._step_views(m, length)
        full = self._leaf_batch(roots)
        if full is not None:
            # The queries run over the whole preallocated batch; rows past m are stale and
            # ignored. A step has m < B*K only when descents ended in known terminal nodes
            # or collided, so the extra work is small.
            full.load_paths(roots, games, paths)
            full.legal_mask(out=self._legal)
            full.terminal(out=self._terminal)
            full.to_play(out=self._to_play)
            leaves = full if m == len(full) else None
        else:
            leaves = roots.take(games)
            if length:
                leaves.apply_paths(paths)
            leaves.legal_mask(out=legal)
            leaves.terminal(out=terminal)
            leaves.to_play(out=to_play)
        n_terminal = int(np.count_nonzero(terminal))
        if n_terminal == 0:
            if leaves is None:
                leaves = full.take(np.arange(m, dtype=np.int64))
            if self._needs_obs:
                leaves.encode(out=obs)
            priors, values, scores = self._evaluate(obs if self._needs_obs else None, legal, leaves)
        else:
            # Terminal leaves get their exact outcome; only the others go to the evaluator.
            if leaves is None:
                leaves = full.take(np.arange(m, dtype=np.int64))
            outcome = leaves.outcome(out=self._outcome[:m])
            priors, values, scores = self._priors, self._values, (self._scores if self._scored else None)
            values[:m] = value_for_player_to_move(outcome, to_play)
            if n_terminal < m:
                live = np.flatnonzero(~terminal)
                sub = leaves.take(live)
                sub_obs = sub.encode(out=self._obs[: len(live)]) if self._needs_obs else None
                p, v, sc = self._evaluate(sub_obs, legal[live], sub)
                priors[live] = p
                values[live] = v
                if scores is not None:
                    scores[live] = sc
        final = None
        if self._scored and n_terminal:
            final = leaves.final_score(out=self._final_scores[:m]) if hasattr(leaves, "final_score") else None
        tree.expand_and_backup(m, priors, values, self._legal_u8, self._terminal_u8, self._to_play,
                               scores=scores, final_scores=final)

    def _steps_fused(self, full: States, roots: States, *, single: bool = False) -> None:
        """Batch steps until every game reached its target (one step if `single`) through tree.leaf_step.

        Each call backs up the previous step's evaluations and builds, queries and encodes the next
        step's leaves in `full`, in one crossing with the GIL released once: two threads driving two
        searches then contend for the GIL only around the evaluator call and this loop.
        """
        tree = self.tree
        step = tree.leaf_step
        scored = self._scored
        evaluate = self.evaluator.evaluate_with_score if scored else self.evaluator.evaluate
        views = self._fused_views
        tree.bind_leaves(full, roots, self._legal, self._terminal, self._to_play, self._outcome, self._query,
                         self._obs if self._needs_obs else None)
        steps = leaves = evaluated = 0
        try:
            running, m, n_terminal = step(None, None, True)
            while running:
                steps += 1
                if not m:  # every descent ended in a known terminal node, already backed up
                    if single:
                        break
                    running, m, n_terminal = step(None, None, True)
                    continue
                view = views.get(m)
                if view is None:
                    view = self._fused_view(m)
                obs, legal, query = view
                priors, values, scores = self._unpack(evaluate(obs, query if n_terminal else legal))
                running, next_m, next_terminal = step(priors, values, not single, scores)
                leaves += m
                evaluated += m - n_terminal  # placeholders are not evaluations
                m, n_terminal = next_m, next_terminal
        except BaseException:
            tree.abort_step()  # the tree stays exactly as before this step (a no-op if leaf_step rolled back)
            raise
        finally:
            tree.unbind_leaves()
            stats = self.stats
            stats["steps"] += steps
            stats["leaves"] += leaves
            stats["evaluated"] += evaluated

    def _fused_view(self, m: int) -> tuple:
        """(obs, legal, query) views of the first m rows, cached: a search's steps nearly always have the same m."""
        if len(self._fused_views) > 1024:
            self._fused_views.clear()
        view = self._fused_views[m] = (self._obs[:m] if self._needs_obs else None, self._legal[:m], self._query[:m])
        return view

    def _steps_in_place(self, full: States, roots: States, *, single: bool = False) -> None:
        """Batch steps until every game reached its target (one step if `single`), for games whose
        States have load_paths: through _steps_fused when they also export the leaf API, else here,
        as separate calls.

        Leaves are built in the preallocated batch and evaluated there, no copies. This loop is the
        only Python a step runs (a few calls, ~15 ns per simulation per microsecond at B = 64), so
        everything a step looks up is bound once per search, and the counters are summed locally.

        Terminal leaves are not split off (that costs a fancy-indexed copy of every buffer per
        step, and late in a game most steps have one): they go to the evaluator with a
        placeholder legal row, since it needs one legal action per row; the tree ignores their
        evaluation and backs up the exact outcome. The few wasted evaluator rows cost less
        than the split.
        """
        if self._fused_steps and hasattr(full, "_leaf_api"):
            self._steps_fused(full, roots, single=single)
            return
        tree = self.tree
        select, expand, searching = tree.select, tree.expand_and_backup, tree.searching
        scored = self._scored
        evaluate = self.evaluator.evaluate_with_score if scored else self.evaluator.evaluate
        native_query = self._native_query
        final = self._final_scores if scored else None
        legal_all, terminal_all, to_play_all, outcome = self._legal, self._terminal, self._to_play, self._outcome
        legal_u8, terminal_u8 = self._legal_u8, self._terminal_u8
        load_paths = full.load_paths
        obs_all = self._obs if self._needs_obs else None
        steps = leaves = evaluated = 0
        try:
            while single or searching():
                m, length = select()
                steps += 1
                if m:
                    try:
                        games, paths, legal, terminal, _, _ = self._step_views(m, length)
                        load_paths(roots, games, paths)
                        if native_query:
                            full.query(m, legal_all, terminal_all, to_play_all, outcome)
                        else:
                            full.legal_mask(out=legal_all)
                            full.terminal(out=terminal_all)
                            full.to_play(out=to_play_all)
                            full.outcome(out=outcome)
                        # Rows past m are stale; encoding them too costs less than a view-sized copy.
                        obs = full.encode(out=obs_all)[:m] if obs_all is not None else None
                        query = legal
                        n_terminal = int(np.count_nonzero(terminal))
                        if n_terminal:
                            query = self._query[:m]
                            np.copyto(query, legal)
                            query[terminal] = True
                        evaluated += m - n_terminal  # placeholders are not evaluations
                        priors, values, scores = self._checked(evaluate(obs, query), m)
                        if scored:
                            if n_terminal:
                                if hasattr(full, "final_score"):
                                    full.final_score(out=final)
                                else:
                                    final[:] = 0.0
                            expand(m, priors, values, legal_u8, terminal_u8, to_play_all, outcome, scores, final)
                        else:
                            expand(m, priors, values, legal_u8, terminal_u8, to_play_all, outcome)
                    except BaseException:
                        tree.abort_step()  # the tree stays exactly as before this step
                        raise
                    leaves += m
                if single:
                    break
        finally:
            stats = self.stats
            stats["steps"] += steps
            stats["leaves"] += leaves
            stats["evaluated"] += evaluated

    def _evaluate(self, obs: np.ndarray | None, legal: np.ndarray, states: States | None = None):
        """(priors, values, scores or None) of the leaves, checked."""
        self.stats["evaluated"] += len(legal)
        if self._scored:
            out = self.evaluator.evaluate_with_score(obs, legal)
        elif self._needs_states:
            out = self.evaluator.evaluate(obs, legal, states=states)
        else:
            out = self.evaluator.evaluate(obs, legal)
        return self._checked(out, len(legal))

    def _unpack(self, out) -> tuple:
        """(priors, values, scores or None) of one evaluator call, once its output is a tuple of the
        right length (the one place every step path checks that; the arrays are checked by _checked,
        or by tree.leaf_step itself)."""
        if not isinstance(out, tuple) or len(out) != 2 + self._scored:
            raise ValueError(f"evaluator must return a tuple (priors, values{', scores' if self._scored else ''}), "
                             f"got {type(out).__name__}")
        priors = out[0]
        if type(priors) is np.ndarray and priors.dtype.kind == "f":
            priors = self.config.tempered_priors(priors)
        return priors, out[1], (out[2] if self._scored else None)

    def _checked(self, out, m: int) -> tuple:
        """_unpack, then the evaluator protocol's checks of m rows (priors [m, A], values [m], scores [m])."""
        priors, values, scores = self._unpack(out)
        priors, values = check_output(priors, values, m, self.spec.num_actions)
        return priors, values, (check_scores(scores, m) if scores is not None else None)

    def _result(self) -> SearchResult:
        tree = self.tree
        visits = tree.root_visits()
        q = tree.root_q()
        if self._gumbel:
            (policy, action), weights = tree.gumbel_result(), None
        else:
            weights = proven_weights(visits, tree.root_proven(), tree.root_prior()) if self.config.solver else visits
            policy, action = visit_policy(visits), final_choice(weights, q, self.config.final_q_share)
        result = SearchResult(visits=visits, policy=policy, q=q, prior=tree.root_prior(),
                              value=tree.root_value(), action=action, simulations=tree.sims_done.copy(),
                              score=tree.root_score() if self._scored else None, action_weights=weights,
                              win_q=root_win_q(tree) if self._scored else None)
        skipped = tree.sims_target == 0  # a reused tree may hold statistics of a root that was not searched
        if skipped.any():
            for field in ("visits", "policy", "q", "prior", "value") + (("score", "win_q") if self._scored else ()):
                getattr(result, field)[skipped] = 0
            result.action[skipped] = NO_ACTION
        return result


def root_win_q(tree: SearchTree) -> np.ndarray:
    """float32 [B, A]: the win/loss part of Q(root, a), root player's view, 0 where unvisited.

    tree.root_q() is the search's utility, which adds the score utility when the evaluator predicts
    scores; a value target must stay a win/loss value, so this reads the children's win sums."""
    child = tree.child_index[:, ROOT, :]
    node = np.maximum(child, 0)
    visits = np.take_along_axis(tree.node_visits, node, axis=1)
    wins = np.take_along_axis(tree.node_win_sum, node, axis=1)
    same = np.take_along_axis(tree.node_to_play, node, axis=1) == tree.node_to_play[:, ROOT:ROOT + 1]
    ok = (child >= 0) & (visits > 0)
    q = np.divide(wins, visits, out=np.zeros(wins.shape, np.float64), where=ok)
    return np.where(same, q, -q).astype(np.float32)
