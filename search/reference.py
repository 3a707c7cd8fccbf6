"""Readable pure-Python twin of the batched search (PUCT and Gumbel), one Node object per position.

This is the specification the Cython core (azero.search._mcts + azero.search.mcts)
is tested against: on fixed seeds with a deterministic evaluator both produce the
same visit counts. To make that exact rather than approximate, the twin follows the
same order of operations:

- Each game is searched in batch steps of up to K = leaves_per_game descents. A
  fresh root is evaluated alone first (not counted as a simulation). A descent that
  reaches a known terminal node backs its exact value up at once; one that reaches a
  node already being evaluated in this step (a collision) is dropped.
- Pending descents count as visits worth -virtual_loss (node.in_flight), at the
  children they went through. With K = 1 nothing is ever pending at selection time.
- Arithmetic is in Python floats (C doubles), in the same order as the Cython code;
  priors are stored rounded to float32 as the tree stores them.
- Ties go to the lowest action index. Random numbers (Dirichlet noise, Gumbel sample)
  are drawn per search by azero.search.noise from the same generator.

Values: node.value_sum and node.raw_value are from the view of the player to move at
the node; node.edge_value_sum is W(parent, action) from the parent's player's view.
"""

from __future__ import annotations

import math

import numpy as np

from azero.games.base import NO_ACTION, GameSpec, States, value_for_player_to_move
from azero.search.config import SearchConfig
from azero.search.evaluators import check_output
from azero.search.gumbel import considered_visits_table
from azero.search.noise import dirichlet_noise, gumbel_noise
from azero.search.result import SearchResult, final_choice, proven_weights, visit_policy

PENDING, EXPANDED, TERMINAL = "pending", "expanded", "terminal"
UNPROVEN, PROVEN_LOSS, PROVEN_DRAW, PROVEN_WIN = 0, 1, 2, 3  # the tree's node_proven codes (value = code - 2)
LOW_LOGIT = -1e9
RESCALE_EPS = 1e-8


class Node:
    """One position of the tree."""

    def __init__(self, parent: Node | None, action: int):
        self.parent = parent
        self.action = action          # move from the parent (NO_ACTION at the root)
        self.state = PENDING          # -> EXPANDED or TERMINAL once evaluated
        self.to_play = 0
        self.raw_value = 0.0          # evaluator value, or the exact outcome if terminal
        self.visits = 0               # N: backups through this node (its own evaluation included)
        self.value_sum = 0.0          # sum of backed-up values, own view
        self.edge_value_sum = 0.0     # W(parent, action): the same sum from the parent's view
        self.in_flight = 0            # descents of the current step that reached this node
        self.priors: list[float] = []  # per action, float32-rounded; 0 for illegal actions
        self.legal: list[bool] = []
        self.children: dict[int, Node] = {}
        self.noised = False           # root only: Dirichlet noise already mixed into priors
        self.root_score: list[float] = []  # root only (Gumbel): g(a) + logit(a)
        self.proven = UNPROVEN        # or PROVEN_LOSS / DRAW / WIN for the player to move (MCTS-Solver)

    def legal_actions(self) -> list[int]:
        return [a for a, ok in enumerate(self.legal) if ok]

    def edge(self, a: int, virtual_loss: float, in_flight: bool = True) -> tuple[int, float]:
        """(N, W) of action a, pending descents counted as visits worth -virtual_loss."""
        child = self.children.get(a)
        if child is None:
            return 0, 0.0
        n, w = child.visits, child.edge_value_sum
        if in_flight:
            n = n + child.in_flight
            w = w - child.in_flight * virtual_loss
        return n, w

    def count(self) -> int:
        return 1 + sum(child.count() for child in self.children.values())


class ReferenceMCTS:
    """Same interface and results as azero.search.mcts.MCTS, written for reading."""

    def __init__(self, spec: GameSpec, evaluator, config: SearchConfig | None = None, *, batch_size: int):
        self.spec = spec
        self.evaluator = evaluator
        self.config = config if config is not None else SearchConfig()
        self.batch_size = batch_size
        self.gumbel = self.config.algorithm == "gumbel"
        self.table = (considered_visits_table(self.config.gumbel_num_considered, self.config.simulations)
                      if self.gumbel else None)
        self.rng = np.random.default_rng(self.config.seed)
        self.roots = [Node(None, NO_ACTION) for _ in range(batch_size)]

    # ------------------------------------------------------------------ search
    def run(self, roots: States) -> SearchResult:
        cfg, B, A = self.config, self.batch_size, self.spec.num_actions
        targets = np.where(roots.terminal(), 0, cfg.simulations)
        for b in range(B):
            if not cfg.tree_reuse or self.roots[b].count() + targets[b] > cfg.capacity:
                self.roots[b] = Node(None, NO_ACTION)
        noise = gumbel = None
        if self.gumbel:
            gumbel = gumbel_noise(self.rng, B, A) * cfg.gumbel_scale
        elif cfg.dirichlet_weight > 0:
            noise = dirichlet_noise(self.rng, roots.legal_mask(), alpha=cfg.dirichlet_alpha,
                                    alpha_scale=cfg.dirichlet_alpha_scale)
        done = np.zeros(B, np.int32)
        for b in range(B):
            root = self.roots[b]
            noise_row = None if noise is None or targets[b] == 0 or root.noised else noise[b]
            gumbel_row = None if gumbel is None else gumbel[b]
            if root.state == EXPANDED:
                self._prepare_root(root, noise_row, gumbel_row)
            done[b] = self._search_game(roots.take(np.array([b])), root, int(targets[b]), noise_row, gumbel_row)
        return self._result(targets, done)

    def _search_game(self, state: States, root: Node, target: int, noise_row, gumbel_row) -> int:
        done = 0
        while done < target:
            leaves: list[tuple[Node, list[int]]] = []
            for k in range(min(self.config.leaves_per_game, target - done)):
                if root.state == PENDING:
                    # A fresh root is evaluated alone, before any simulation.
                    if k == 0 and root.in_flight == 0:
                        root.in_flight = 1
                        leaves.append((root, []))
                    break
                outcome = self._descend(root)
                if outcome == "terminal":
                    done += 1
                elif outcome != "collision":
                    leaves.append(outcome)
            done += self._evaluate(state, root, leaves, noise_row, gumbel_row)
        return done

    def _descend(self, root: Node):
        """One descent: a new leaf (node, path), or 'terminal' (backed up) or 'collision' (reverted)."""
        node, path = root, []
        root.in_flight += 1
        while True:
            if node.state == TERMINAL:
                self._backup(node, node.raw_value)
                return "terminal"
            if node.state == PENDING:
                self._revert(node)
                return "collision"
            if self.config.solver and node.proven != UNPROVEN:
                self._backup(node, float(node.proven - PROVEN_DRAW))
                return "terminal"
            if self.gumbel and node is root:
                a = self._choose_gumbel_root(node)
            elif self.gumbel:
                a = self._choose_gumbel_interior(node)
            else:
                a = self._choose_puct(node)
            path.append(a)
            child = node.children.get(a)
            if child is None:
                child = node.children[a] = Node(node, a)
                child.in_flight = 1
                return child, path
            node = child
            node.in_flight += 1

    def _evaluate(self, state: States, root: Node, leaves, noise_row, gumbel_row) -> int:
        """Evaluate and back up the leaves of one step; return how many count as simulations."""
        if not leaves:
            return 0
        n = len(leaves)
        positions = state.take(np.zeros(n, dtype=np.int64))
        width = max(len(path) for _, path in leaves)
        if width:
            paths = np.full((n, width), NO_ACTION, np.int32)
            for i, (_, path) in enumerate(leaves):
                paths[i, : len(path)] = path
            positions.apply_paths(paths)
        legal, terminal, to_play = positions.legal_mask(), positions.terminal(), positions.to_play()
        values = value_for_player_to_move(positions.outcome(), to_play)
        priors = np.zeros((n, self.spec.num_actions), np.float32)
        live = np.flatnonzero(~terminal)
        if live.size:
            sub = positions.take(live)
            if getattr(self.evaluator, "needs_states", False):
                out = self.evaluator.evaluate(sub.encode(), legal[live], states=sub)
            else:
                out = self.evaluator.evaluate(sub.encode(), legal[live])
            p, v = check_output(out[0], out[1], live.size, self.spec.num_actions)
            priors[live] = self.config.tempered_priors(p)  # renormalised over legal moves by _expand
            values[live] = v
        simulations = 0
        for i, (node, _) in enumerate(leaves):
            node.to_play = int(to_play[i])
            node.raw_value = float(values[i])
            if terminal[i]:
                node.state = TERMINAL
            else:
                self._expand(node, priors[i], legal[i])
                if node is root:
                    self._prepare_root(node, noise_row, gumbel_row)
            if node is not root:
                simulations += 1
            self._backup(node, node.raw_value)
            if terminal[i]:
                node.proven = PROVEN_WIN if node.raw_value > 0 else PROVEN_LOSS if node.raw_value < 0 else PROVEN_DRAW
                if self.config.solver:
                    self._prove_up(node)
        return simulations

    @staticmethod
    def _value_for(node: Node, child: Node) -> int:
        """The proven value of moving from node to child, from node's player's view."""
        v = child.proven - PROVEN_DRAW
        return -v if child.to_play != node.to_play else v

    def _prove_up(self, node: Node) -> None:
        """MCTS-Solver: a node is won once some move wins, decided once every move is proven."""
        while node.parent is not None and node.parent.proven == UNPROVEN:
            parent = node.parent
            values = [self._value_for(parent, c) if (c := parent.children.get(a)) is not None
                      and c.proven != UNPROVEN else None for a in parent.legal_actions()]
            known = [v for v in values if v is not None]
            best = max(known, default=-2)
            if best < 1 and len(known) < len(values):
                return
            parent.proven = best + PROVEN_DRAW
            node = parent

    @staticmethod
    def _expand(node: Node, priors: np.ndarray, legal: np.ndarray) -> None:
        node.legal = [bool(x) for x in legal]
        total, count = 0.0, 0
        for a, ok in enumerate(node.legal):
            if ok:
                total += float(priors[a])
                count += 1
        node.priors = [0.0] * len(legal)
        for a, ok in enumerate(node.legal):
            if ok:
                p = float(priors[a]) / total if total > 0.0 else 1.0 / count
                node.priors[a] = float(np.float32(p))
        node.state = EXPANDED

    def _prepare_root(self, root: Node, noise_row, gumbel_row) -> None:
        """Mix Dirichlet noise into the root priors (once per root) and cache g(a) + logit(a)."""
        w = self.config.dirichlet_weight
        if noise_row is not None and not root.noised:
            for a in root.legal_actions():
                root.priors[a] = float(np.float32((1.0 - w) * root.priors[a] + w * float(noise_row[a])))
            root.noised = True
        if gumbel_row is not None:
            root.root_score = [0.0] * len(root.priors)
            for a in root.legal_actions():
                p = root.priors[a]
                root.root_score[a] = float(gumbel_row[a]) + (math.log(p) if p > 0 else LOW_LOGIT)

    @staticmethod
    def _backup(node: Node, value: float) -> None:
        """Add value (the node's player's view) to the node and its ancestors, flipping sign per player change."""
        while True:
            node.visits += 1
            node.value_sum += value
            node.in_flight -= 1
            parent = node.parent
            if parent is None:
                return
            if parent.to_play != node.to_play:
                value = -value
            node.edge_value_sum += value
            node = parent

    @staticmethod
    def _revert(node: Node) -> None:
        while node is not None:
            node.in_flight -= 1
            node = node.parent

    # ------------------------------------------------------------------ selection rules
    def _choose_puct(self, node: Node) -> int:
        """argmax Q + c(s) P sqrt(N(s)) / (1 + N(s, a)); unvisited: Q = V(s) - fpu_reduction."""
        cfg = self.config
        n_parent = node.visits + node.in_flight - 1  # the other pending descents, not this one
        c = math.log((1.0 + n_parent + cfg.c_base) / cfg.c_base) + cfg.c_init
        c_sqrt = c * math.sqrt(n_parent)
        fpu = node.value_sum / node.visits - cfg.fpu_reduction
        best, best_a = -math.inf, NO_ACTION
        for a in node.legal_actions():
            child = node.children.get(a)
            if cfg.solver and child is not None and child.proven != UNPROVEN and self._value_for(node, child) == -1:
                continue  # a proven loss for the mover
            n, w = node.edge(a, cfg.virtual_loss)
            q = w / n if n > 0 else fpu
            score = q + c_sqrt * node.priors[a] / (1 + n)
            if score > best:
                best, best_a = score, a
        return best_a

    def _completed_q(self, node: Node, in_flight: bool = True):
        """(completed Q per action, N per action, sum N, max N); unvisited actions take v_mix (eq. 33)."""
        A = len(node.priors)
        q, ns = [0.0] * A, [0] * A
        sum_n = max_n = count = 0
        sum_p = sum_pq = sum_q = 0.0
        for a in node.legal_actions():
            n, w = node.edge(a, self.config.virtual_loss, in_flight)
            ns[a] = n
            if n > 0:
                q[a] = w / n
                sum_n += n
                count += 1
                max_n = max(max_n, n)
                sum_p += node.priors[a]
                sum_pq += node.priors[a] * q[a]
                sum_q += q[a]
        v_mix = node.raw_value
        if sum_n > 0:
            weighted_q = sum_pq / sum_p if sum_p > 0.0 else sum_q / count
            v_mix = (v_mix + sum_n * weighted_q) / (sum_n + 1)
        for a in node.legal_actions():
            if ns[a] == 0:
                q[a] = v_mix
        return q, ns, sum_n, max_n

    def _sigma(self, node: Node, q: list[float], max_n: int) -> list[float]:
        """sigma(q) = (c_visit + max N) * c_scale * q, q normalised to [0, 1]."""
        cfg = self.config
        scale = (cfg.gumbel_c_visit + max_n) * cfg.gumbel_c_scale
        legal = node.legal_actions()
        s = list(q)
        if cfg.gumbel_rescale_q:
            lo, hi = min(q[a] for a in legal), max(q[a] for a in legal)
            span = max(hi - lo, RESCALE_EPS)
            for a in legal:
                s[a] = scale * ((q[a] - lo) / span)
        else:
            for a in legal:
                s[a] = scale * ((q[a] + 1.0) / 2.0)
        return s

    def _improved_policy(self, node: Node, s: list[float]) -> list[float]:
        """pi'(a) = P(a) exp(sigma(a)) / Z over the legal actions (shifted by the max over P > 0)."""
        legal = node.legal_actions()
        s_max = max(s[a] for a in legal if node.priors[a] > 0)
        e = [0.0] * len(s)
        z = 0.0
        for a in legal:
            e[a] = node.priors[a] * math.exp(s[a] - s_max) if node.priors[a] > 0 else 0.0
            z += e[a]
        return [x / z for x in e]

    def _choose_gumbel_interior(self, node: Node) -> int:
        """argmax pi'(a) - N(a) / (1 + sum N): deterministic, matches visits to the improved policy."""
        q, ns, sum_n, max_n = self._completed_q(node)
        pi = self._improved_policy(node, self._sigma(node, q, max_n))
        best, best_a = -math.inf, NO_ACTION
        for a in node.legal_actions():
            score = pi[a] - ns[a] / (1.0 + sum_n)
            if score > best:
                best, best_a = score, a
        return best_a

    def _choose_gumbel_root(self, root: Node) -> int:
        """Sequential halving: among actions with the scheduled visit count, argmax g + logit + sigma."""
        q, ns, sum_n, max_n = self._completed_q(root)
        s = self._sigma(root, q, max_n)
        legal = root.legal_actions()
        considered = min(self.table.shape[0] - 1, len(legal))
        target = int(self.table[considered, min(sum_n, self.table.shape[1] - 1)])
        candidates = [a for a in legal if ns[a] == target] or legal
        best, best_a = -math.inf, NO_ACTION
        for a in candidates:
            score = root.root_score[a] + s[a]
            if score > best:
                best, best_a = score, a
        return best_a

    # ------------------------------------------------------------------ results and reuse
    def _result(self, targets: np.ndarray, done: np.ndarray) -> SearchResult:
        B, A = self.batch_size, self.spec.num_actions
        visits = np.zeros((B, A), np.int32)
        q = np.zeros((B, A), np.float32)
        prior = np.zeros((B, A), np.float32)
        value = np.zeros(B, np.float32)
        policy = np.zeros((B, A), np.float32)
        action = np.full(B, NO_ACTION, np.int32)
        for b, root in enumerate(self.roots):
            if targets[b] == 0:
                continue
            for a, child in root.children.items():
                visits[b, a] = child.visits
                if child.visits:
                    q[b, a] = child.edge_value_sum / child.visits
            prior[b] = root.priors
            value[b] = root.value_sum / root.visits
            if self.gumbel:
                cq, ns, _, max_n = self._completed_q(root, in_flight=False)
                s = self._sigma(root, cq, max_n)
                policy[b] = self._improved_policy(root, s)
                best = -math.inf
                for a in root.legal_actions():
                    if ns[a] == max_n and root.root_score[a] + s[a] > best:
                        best, action[b] = root.root_score[a] + s[a], a
        weights = None
        if not self.gumbel:
            weights = proven_weights(visits, self.root_proven(), prior) if self.config.solver else visits
            policy, action = visit_policy(visits), final_choice(weights, q, self.config.final_q_share)
        return SearchResult(visits=visits, policy=policy, q=q, prior=prior, value=value, action=action,
                            simulations=done.astype(np.int32), action_weights=weights)

    def root_proven(self) -> np.ndarray:
        """int8 [B, A]: proven values of the root actions, root player's view (-128: not proven)."""
        out = np.full((self.batch_size, self.spec.num_actions), -128, np.int8)
        for b, root in enumerate(self.roots):
            for a, child in root.children.items():
                if child.proven != UNPROVEN:
                    out[b, a] = self._value_for(root, child)
        return out

    def advance(self, actions: np.ndarray) -> None:
        """Tree reuse: the played child becomes the root, keeping its subtree."""
        for b, a in enumerate(np.asarray(actions)):
            root = self.roots[b]
            child = root.children.get(int(a)) if a != NO_ACTION and root.state == EXPANDED else None
            if a != NO_ACTION and root.state == EXPANDED and not root.legal[a]:
                raise ValueError(f"advance: action {a} is illegal at the root of game {b}")
            if not self.config.tree_reuse or child is None or child.state == PENDING:
                self.roots[b] = Node(None, NO_ACTION)
            else:
                child.parent, child.action, child.noised = None, NO_ACTION, False
                self.roots[b] = child
