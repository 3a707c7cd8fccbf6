"""PUCT over a graph of positions: Monte-Carlo graph search (MCGS) for play and evaluation.

A tree gives every path its own node, so a position reached by two move orders is searched twice
and what one copy learns never reaches the other. Here a new child is looked up by its position
first; a transposition links the edge to the node that is already there. The statistics follow
lightvector's "Monte-Carlo Graph Search from First Principles" (the KataGo author's notes; Czech,
Korus & Kersting 2021 is the first MCGS for AlphaZero):

- a node keeps its own network value U and, per out-edge, the edge's visits N(n, a); its
  visits N(n) = 1 + sum_a N(n, a) and its value Q(n) = (U + sum_a N(n, a) * -Q(child_a)) / N(n)
  are recomputed from its children on every backup, so a child's value counts wherever the
  child is reached from, weighted by how often each parent chose it;
- selection is PUCT on the edges (azero.search's rule: c(s) = log((1 + N + c_base) / c_base) +
  c_init, unvisited edges at Q(n) - fpu_reduction);
- a simulation is a playout from the root; it ends at a new position (one network call for the
  batch) or a terminal one. With SearchConfig.graph_stop it also ends, with no network call, at a
  known child with more visits than the edge it came by (lightvector's rule: the child's value
  already holds more than this edge has taken), so a search of S simulations calls the network
  at most S times, and fewer where transpositions answer instead. Without it the graph calls the
  network about as often as the tree, and measured stronger per simulation on connect four.

A position's key is what the rules and the network see in it (its observation, legal moves, player
to move, move number and terminal flag), so two positions share a node only if everything the
search reads from them is equal; the move number makes every path strictly increasing, so the
graph has no cycles. For games whose observation holds recent history (Go) transpositions are
then rare, and a superko that reaches past that history is not in the key.

One playout per game per batch step (leaves_per_game = 1, no virtual loss); no tree reuse,
solver, Gumbel root or score utility (SearchConfig.validate and the constructor say so). Pure
Python over the shared evaluator and game API: the network's forward pass is still most of the
cost at the budgets it is for (evaluation and play), not this bookkeeping. make_search picks it from
SearchConfig.graph; the Cython MCTS refuses that flag so no caller ignores it silently.
"""

from __future__ import annotations

import math

import numpy as np

from azero.games.base import NO_ACTION, GameSpec, States, value_for_player_to_move
from azero.search.config import SearchConfig
from azero.search.evaluators import check_output
from azero.search.noise import dirichlet_noise
from azero.search.result import SearchResult, final_choice, visit_policy
from azero.search.symmetric import SymmetricEvaluator


class GraphNode:
    """One position of the graph; values from the view of its player to move."""

    __slots__ = ("u", "n", "q", "terminal", "to_play", "priors", "legal", "children", "edge_n")

    def __init__(self):
        self.u = 0.0                 # network value, or the exact outcome of a terminal position
        self.n = 0                   # 1 + sum of out-edge visits (0 until evaluated)
        self.q = 0.0                 # (u + sum N(n, a) * -Q(child)) / n, children of the other player
        self.terminal = False
        self.to_play = 0
        self.priors: list[float] = []
        self.legal: list[int] = []
        self.children: dict[int, GraphNode] = {}
        self.edge_n: dict[int, int] = {}

    def edge_q(self, a: int) -> float:
        """Q(n, a) from this node's player's view (the child may be of the same player: a pass
        rule, or a game that lets one player move twice)."""
        child = self.children[a]
        return child.q if child.to_play == self.to_play else -child.q


class GraphSearch:
    """Same interface as azero.search.mcts.MCTS (run, choose_actions, advance, reset) for PUCT play."""

    def __init__(self, spec: GameSpec, evaluator, config: SearchConfig, *, batch_size: int):
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        config.validate()
        if not config.graph:
            raise ValueError("GraphSearch: config.graph is False (use MCTS, or make_search)")
        check_graph_evaluator(config, evaluator)
        if (config.symmetry != "none" and getattr(evaluator, "needs_observations", True)
                and not getattr(evaluator, "needs_states", False)):
            evaluator = SymmetricEvaluator(evaluator, spec, config.symmetry, seed=config.seed)
        self.spec, self.evaluator, self.config, self.batch_size = spec, evaluator, config, batch_size
        self._needs_states = bool(getattr(evaluator, "needs_states", False))
        self._rng = np.random.default_rng(config.seed)
        self.roots: list[GraphNode] = []
        self.stats = {"steps": 0, "leaves": 0, "evaluated": 0, "transpositions": 0, "stopped": 0}
        """Counters since construction: network calls, new positions, evaluator rows, edges found to
        lead to a known position, playouts that graph_stop ended without a network call."""

    # ------------------------------------------------------------------ public API
    def reset(self, index=None) -> None:
        """Nothing to forget: every search starts from fresh graphs."""

    def advance(self, actions: np.ndarray) -> None:
        """No tree reuse: the next run() starts afresh."""

    def choose_actions(self, result: SearchResult, temperature: float | None = None) -> np.ndarray:
        t = self.config.temperature if temperature is None else temperature
        return result.choose(t, self._rng)

    def run(self, roots: States, *, active: np.ndarray | None = None, simulations: int | None = None) -> SearchResult:
        """Search every root (config.simulations playouts each, or `simulations`); terminal roots and
        games with active[b] False are skipped (zero rows, NO_ACTION)."""
        B = self.batch_size
        if len(roots) != B:
            raise ValueError(f"run: expected {B} root positions, got {len(roots)}")
        sims = self.config.simulations if simulations is None else int(simulations)
        if sims < 0:
            raise ValueError(f"run: simulations must be >= 0, got {sims}")
        live = ~roots.terminal()
        if active is not None:
            live &= np.asarray(active, dtype=bool).reshape(B)
        targets = np.where(live, sims, 0).astype(np.int64)
        self.roots = [GraphNode() for _ in range(B)]
        tables: list[dict] = [{} for _ in range(B)]
        games = np.flatnonzero(targets > 0)
        if games.size:
            self._expand(roots.take(games), [self.roots[b] for b in games])
            self._noise(roots, games)
        done = np.zeros(B, np.int64)
        while True:
            games = np.flatnonzero(done < targets)
            if not games.size:
                break
            self._step(roots, games, tables)
            done[games] += 1
        return self._result(targets, done)

    # ------------------------------------------------------------------ one playout per game
    def _step(self, roots: States, games: np.ndarray, tables: list[dict]) -> None:
        """One playout in each game of `games`. A descent that takes an edge no playout took before
        waits for the batch to say which position it leads to: a known one is linked and, where the
        playout may go on (the stop rule is off), descends from there in another round; a new one
        ends the playout. The new positions of every round are evaluated together at the end, one
        network call a step: a game plays one playout a step, so no later round of the step can
        reach a node created in it before it is evaluated."""
        finished: list[list[tuple[GraphNode, int]]] = []
        open_: list[tuple[int, list]] = []
        for b in games:
            path, ended = self._descend(self.roots[b], [])
            (finished if ended else open_).append(path if ended else (b, path))
        fresh_open: list[tuple[int, list]] = []
        fresh_nodes: list[GraphNode] = []
        fresh_rounds: list[tuple[States, list[int]]] = []  # per round with new positions: its batch, their rows
        while open_:
            leaves = self._positions(roots, open_)
            keys = self._keys(leaves)
            again, rows = [], []
            for i, (b, path) in enumerate(open_):
                parent, a = path[-1]
                child = tables[b].get(keys[i])
                if child is None:
                    child = tables[b][keys[i]] = GraphNode()
                    parent.children[a] = child
                    rows.append(i)
                    fresh_open.append((b, path))
                    fresh_nodes.append(child)
                    finished.append(path)
                    continue
                parent.children[a] = child  # a transposition: the edge now leads to the known node
                self.stats["transpositions"] += 1
                if child.terminal:
                    child.n += 1
                    finished.append(path)
                elif self.config.graph_stop:
                    self.stats["stopped"] += 1
                    finished.append(path)
                else:
                    path, ended = self._descend(child, path)
                    (finished if ended else again).append(path if ended else (b, path))
            if rows:
                fresh_rounds.append((leaves, rows))
            open_ = again
        if fresh_nodes:
            # Most steps find all their new positions in one round: take those rows as they are;
            # else replay all the new positions' paths into one batch.
            if len(fresh_rounds) == 1:
                leaves, rows = fresh_rounds[0]
                new = leaves.take(np.asarray(rows, np.int64))
            else:
                new = self._positions(roots, fresh_open)
            self._expand(new, fresh_nodes)
        for path in finished:
            self._backup(path)

    @staticmethod
    def _positions(roots: States, open_: list[tuple[int, list]]) -> States:
        """The positions the open playouts' paths lead to, replayed from their roots."""
        width = max(len(path) for _, path in open_)
        paths = np.full((len(open_), width), NO_ACTION, np.int32)
        for i, (_, path) in enumerate(open_):
            paths[i, :len(path)] = [a for _, a in path]
        leaves = roots.take(np.asarray([b for b, _ in open_], np.int64))
        leaves.apply_paths(paths)
        return leaves

    def _descend(self, node: GraphNode, path: list) -> tuple[list[tuple[GraphNode, int]], bool]:
        """Extend `path` from `node` to (path of (node, action), ended): ended when the playout stops
        at a known node (terminal, or, with the stop rule, one that knows more than the edge it came
        by); else the last edge is one no playout took before."""
        while True:
            a = self._select(node)
            path.append((node, a))
            child = node.children.get(a)
            if child is None:
                return path, False
            if child.terminal:
                child.n += 1
                return path, True
            if self.config.graph_stop and node.edge_n.get(a, 0) < child.n:
                self.stats["stopped"] += 1
                return path, True
            node = child

    def _select(self, node: GraphNode) -> int:
        """argmax Q(n, a) + c(n) P(a) sqrt(N(n)) / (1 + N(n, a)); unvisited edges at Q(n) - fpu_reduction."""
        cfg = self.config
        c = math.log((1.0 + node.n + cfg.c_base) / cfg.c_base) + cfg.c_init
        c_sqrt = c * math.sqrt(node.n)
        fpu = node.q - cfg.fpu_reduction
        best, best_a = -math.inf, NO_ACTION
        # edge_q inlined (this loop is most of the search's own time)
        edge_n, children, priors, me = node.edge_n, node.children, node.priors, node.to_play
        for a in node.legal:
            n = edge_n.get(a, 0)
            if n > 0:
                child = children[a]
                q = child.q if child.to_play == me else -child.q
            else:
                q = fpu
            score = q + c_sqrt * priors[a] / (1 + n)
            if score > best:
                best, best_a = score, a
        return best_a

    @staticmethod
    def _backup(path: list[tuple[GraphNode, int]]) -> None:
        """Count the edge visits of the path and recompute each node's N and Q from its children."""
        for node, a in reversed(path):
            edge_n, children, me = node.edge_n, node.children, node.to_play
            edge_n[a] = edge_n.get(a, 0) + 1
            n, w = 1, node.u
            for b, en in edge_n.items():
                child = children[b]
                n += en
                w += en * (child.q if child.to_play == me else -child.q)
            node.n, node.q = n, w / n

    # ------------------------------------------------------------------ positions and the network
    def _keys(self, states: States) -> list[bytes]:
        """What the rules and the network see of each position (module docstring)."""
        obs = np.ascontiguousarray(states.encode())
        legal = np.packbits(states.legal_mask(), axis=1)
        meta = np.stack([states.to_play().astype(np.int64), states.num_moves().astype(np.int64),
                         states.terminal().astype(np.int64)], axis=1)
        return [obs[i].tobytes() + legal[i].tobytes() + meta[i].tobytes() for i in range(len(states))]

    def _expand(self, states: States, nodes: list[GraphNode]) -> None:
        """Evaluate new positions (terminal ones take their exact outcome) and give them N = 1."""
        legal, terminal, to_play = states.legal_mask(), states.terminal(), states.to_play()
        values = value_for_player_to_move(states.outcome(), to_play)
        priors = np.zeros((len(states), self.spec.num_actions), np.float32)
        live = np.flatnonzero(~terminal)
        if live.size:
            sub = states.take(live)
            p, v = self._evaluate(sub, legal[live])
            priors[live], values[live] = p, v
        self.stats["leaves"] += len(nodes)
        for i, node in enumerate(nodes):
            node.to_play = int(to_play[i])
            node.u = node.q = float(values[i])
            node.n = 1
            if terminal[i]:
                node.terminal = True
                continue
            node.legal = np.flatnonzero(legal[i]).tolist()
            row = priors[i, node.legal].astype(np.float64)
            total = row.sum()
            row = row / total if total > 0 else np.full(len(node.legal), 1.0 / len(node.legal))
            node.priors = [0.0] * self.spec.num_actions
            for a, p in zip(node.legal, row.astype(np.float32).tolist()):
                node.priors[a] = p

    def _evaluate(self, states: States, legal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        obs = states.encode() if getattr(self.evaluator, "needs_observations", True) else None
        if self._needs_states:
            out = self.evaluator.evaluate(obs, legal, states=states)
        else:
            out = self.evaluator.evaluate(obs, legal)
        if not isinstance(out, tuple) or len(out) != 2:
            raise ValueError(f"evaluator must return a tuple (priors, values), got {type(out).__name__}")
        priors, values = check_output(out[0], out[1], len(legal), self.spec.num_actions)
        if not (np.isfinite(priors).all() and (priors >= 0).all()):
            raise ValueError("evaluator returned negative or non-finite priors")
        if not (np.isfinite(values).all() and (np.abs(values) <= 1.0 + 1e-6).all()):
            raise ValueError("evaluator returned values outside [-1, 1] or not finite")
        priors = self.config.tempered_priors(priors)
        self.stats["steps"] += 1
        self.stats["evaluated"] += len(legal)
        return priors, values

    def _noise(self, roots: States, games: np.ndarray) -> None:
        """Dirichlet noise into the root priors (self-play style searches; players set it to 0)."""
        w = self.config.dirichlet_weight
        if w <= 0:
            return
        noise = dirichlet_noise(self._rng, roots.legal_mask(), alpha=self.config.dirichlet_alpha,
                                alpha_scale=self.config.dirichlet_alpha_scale)
        for b in games:
            root = self.roots[b]
            for a in root.legal:
                root.priors[a] = float(np.float32((1.0 - w) * root.priors[a] + w * float(noise[b, a])))

    def _result(self, targets: np.ndarray, done: np.ndarray) -> SearchResult:
        B, A = self.batch_size, self.spec.num_actions
        visits = np.zeros((B, A), np.int32)
        q = np.zeros((B, A), np.float32)
        prior = np.zeros((B, A), np.float32)
        value = np.zeros(B, np.float32)
        for b in np.flatnonzero(targets > 0):
            root = self.roots[b]
            for a, n in root.edge_n.items():
                visits[b, a] = n
                q[b, a] = root.edge_q(a)
            prior[b] = root.priors
            value[b] = root.q
        action = final_choice(visits, q, self.config.final_q_share)
        return SearchResult(visits=visits, policy=visit_policy(visits), q=q, prior=prior, value=value,
                            action=action, simulations=done.astype(np.int32), action_weights=visits)


def check_graph_evaluator(config: SearchConfig, evaluator) -> None:
    """ValueError if a graph search `config` cannot use `evaluator` (a player checks this when it is
    built, before its first search)."""
    if config.graph and config.score_utility > 0 and getattr(evaluator, "has_score", False):
        raise ValueError("SearchConfig: graph=True backs up the win/loss value only; set score_utility=0 "
                         "for a network with a score head")


def make_search(spec: GameSpec, evaluator, config: SearchConfig, *, batch_size: int):
    """The search `config` asks for: GraphSearch when config.graph, else the Cython MCTS."""
    if config.graph:
        return GraphSearch(spec, evaluator, config, batch_size=batch_size)
    from azero.search.mcts import MCTS

    return MCTS(spec, evaluator, config, batch_size=batch_size)
