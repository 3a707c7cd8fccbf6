"""Typed configuration of the `search` group (a hydra structured config: one docstring per field).

Defaults are the papers': AlphaZero (Silver et al. 2018) for PUCT and root
noise, Gumbel AlphaZero (Danihelka et al., ICLR 2022) for the Gumbel root.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Optional

import numpy as np

ALGORITHMS = ("puct", "gumbel")
SYMMETRY_MODES = ("none", "random", "average")


@dataclasses.dataclass
class SearchConfig:
    """How one move is searched; shared by self-play, arena and benchmarks."""

    simulations: int = 800
    """Simulations per move and game (leaf evaluations or terminal revisits below the root; the
    root's own evaluation is not counted)."""
    algorithm: str = "puct"
    """'puct' (AlphaZero: PUCT everywhere, Dirichlet noise at the root, visit-count targets) or
    'gumbel' (Gumbel-top-k + sequential halving at the root, deterministic interior selection,
    completed-Q improved policy as the target)."""
    c_base: float = 19652.0
    """PUCT: c(s) = log((1 + N(s) + c_base) / c_base) + c_init."""
    c_init: float = 1.25
    """PUCT: exploration constant at small visit counts (see c_base)."""
    fpu_reduction: float = 0.0
    """PUCT first-play urgency: an unvisited child is valued V(parent) - fpu_reduction (0 = the
    parent's value; Leela Zero uses about 0.25)."""
    dirichlet_weight: float = 0.25
    """PUCT: weight of the Dirichlet noise mixed into the root priors (0 disables; arena play
    should use 0). Ignored by 'gumbel', whose Gumbel sample already explores."""
    dirichlet_alpha: Optional[float] = None
    """Fixed Dirichlet concentration (AlphaZero: 0.3 chess, 0.15 shogi, 0.03 Go). None scales it
    to the position: alpha = dirichlet_alpha_scale / number of legal root moves."""
    dirichlet_alpha_scale: float = 10.0
    """Used when dirichlet_alpha is None: alpha = dirichlet_alpha_scale / legal moves (AlphaZero's
    values are about 10 / typical legal moves: 0.3 chess, 0.03 Go)."""
    leaves_per_game: int = 1
    """K: leaves one game contributes per batch step, spread by virtual loss. 1 is exact
    AlphaZero; K > 1 gives the evaluator K times larger batches for the same number of games."""
    virtual_loss: float = 1.0
    """Value a pending (not yet backed up) descent counts as: one visit worth -virtual_loss."""
    tree_reuse: bool = False
    """Keep the played move's subtree for the next search (PUCT only: the Gumbel schedule assumes
    a fresh root). A kept subtree that leaves no room for a full search is dropped."""
    max_nodes: Optional[int] = None
    """Tree capacity per game. None: simulations + 1, or 2 * simulations + 1 with tree_reuse."""
    gumbel_num_considered: int = 16
    """Gumbel: m, the actions sampled without replacement (Gumbel-top-k) at the root."""
    gumbel_c_visit: float = 50.0
    """Gumbel: c_visit in sigma(q) = (c_visit + max_b N(b)) * c_scale * q."""
    gumbel_c_scale: float = 1.0
    """Gumbel: c_scale in sigma(q) (see gumbel_c_visit)."""
    gumbel_scale: float = 1.0
    """Gumbel: scale of the root's Gumbel noise g(a) (mctx's gumbel_scale). 1 samples the
    considered actions and the final pick (self-play); 0 makes the search deterministic, top-m by
    prior and argmax of logits + sigma(q) (test-time decoding, evaluation)."""
    gumbel_rescale_q: bool = True
    """Gumbel: normalise completed Q to [0, 1] by min-max over the node's legal actions (mctx's
    default); False maps the known value range [-1, 1] to [0, 1] instead."""
    score_utility: float = 0.4
    """lambda of the score utility u = v + lambda (2/pi) atan((s - c) / (score_scale sqrt(area))) that
    the search backs up instead of the win/loss value v (KataGo, Wu 2019, section 4.2; its 9x9
    self-play uses 0.4). s: the network's expected score (nets with a score head, games with a
    board; otherwise ignored, so nets without a score head search as before), c: the root's
    expected score. Move choice by visits, resignation and the reported win rate still use v.
    0 turns it off."""
    score_scale: float = 0.5
    """Score utility: points of score difference per unit of atan's argument, per sqrt(board area)."""
    solver: bool = False
    """PUCT: MCTS-Solver (Winands, Bjornsson & Saito 2008). Exact outcomes of terminal positions are
    proven up the tree (a node is won once one move wins, lost or drawn once every move is proven),
    a descent into a proven node backs up its proven value, PUCT never picks a proven loss, and the
    move played is a proven win when there is one and never a proven loss when there is an
    alternative. The policy target stays the visit distribution."""
    symmetry: str = "none"
    """Evaluate leaves under the board's symmetries (search/symmetric.py): 'none'; 'random', one
    transform drawn per leaf (AlphaGo Zero; no extra cost); 'average', the mean over every transform
    of the game's group (|G| times the network's work per simulation: 2 for connect four, 8 for
    square Go boards). Evaluators that read no observations (random rollouts) ignore it."""
    policy_temperature: float = 1.0
    """Softmax temperature of the network's move priors inside the search, at every node: the
    search uses p(a)^(1 / T) renormalised over the legal moves (equivalently logits / T). T > 1
    flattens the priors so the search spends simulations on moves the network underrates (Leela
    Chess Zero searches with a policy softmax temperature above 1); 1 is AlphaZero. The raw network's own move
    (its argmax) and the value are unchanged; SearchResult.prior reports the tempered root priors."""
    final_q_share: float = 0.0
    """PUCT move choice at temperature 0 (evaluation play, and self-play after its sampled moves): 0
    plays the most visited move (AlphaZero); s > 0 plays the move of highest root Q among those
    visited at least s times as often as the most visited one, trusting Q once a move is well
    explored (KataGo chooses by a lower confidence bound of Q in the same spirit). Gumbel roots
    choose by their own rule. With solver=True the proven losses are left out first."""
    graph: bool = False
    """PUCT over a graph instead of a tree (Monte-Carlo graph search, search/graph.py): a position
    reached by two move orders is one node, its value shared by every path to it. For play and
    evaluation (players, through make_search): one playout per game per batch step, no tree
    reuse, solver, Gumbel root or score utility. Off: AlphaZero's tree."""
    graph_stop: bool = False
    """With graph=True: a playout that reaches a known position with more visits than the edge it
    came by stops there, without a network call (lightvector's MCGS rule: fewer network calls for
    the same simulations). Off, every playout goes on to a new or terminal position, as in a tree,
    so the graph spends about the tree's network calls (measured stronger per simulation on connect
    four; README)."""
    temperature: float = 1.0
    """PUCT move choice: sample proportional to N(a)^(1 / temperature); 0 = most visited, lowest
    action index on ties. Callers pass their own schedule (e.g. 1 for 30 moves, then 0)."""
    seed: int = 0
    """Seed of the search's own random draws (Dirichlet noise, Gumbel sample, move sampling)."""

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Raise ValueError naming the first field out of range."""
        checks = [
            (self.algorithm in ALGORITHMS, f"algorithm must be one of {ALGORITHMS}, got {self.algorithm!r}"),
            (self.simulations >= 1, f"simulations must be >= 1, got {self.simulations}"),
            (self.c_base > 0, f"c_base must be > 0, got {self.c_base}"),
            (0.0 <= self.dirichlet_weight <= 1.0, f"dirichlet_weight must lie in [0, 1], got {self.dirichlet_weight}"),
            (self.dirichlet_alpha is None or self.dirichlet_alpha > 0,
             f"dirichlet_alpha must be > 0 or None, got {self.dirichlet_alpha}"),
            (self.dirichlet_alpha_scale > 0, f"dirichlet_alpha_scale must be > 0, got {self.dirichlet_alpha_scale}"),
            (self.leaves_per_game >= 1, f"leaves_per_game must be >= 1, got {self.leaves_per_game}"),
            (self.virtual_loss >= 0, f"virtual_loss must be >= 0, got {self.virtual_loss}"),
            (self.max_nodes is None or self.max_nodes >= self.simulations + 1,
             f"max_nodes must be >= simulations + 1 = {self.simulations + 1}, got {self.max_nodes}"),
            (self.gumbel_num_considered >= 1, f"gumbel_num_considered must be >= 1, got {self.gumbel_num_considered}"),
            (self.gumbel_c_visit >= 0 and self.gumbel_c_scale >= 0, "gumbel_c_visit and gumbel_c_scale must be >= 0"),
            (self.gumbel_scale >= 0, f"gumbel_scale must be >= 0, got {self.gumbel_scale}"),
            (self.symmetry in SYMMETRY_MODES, f"symmetry must be one of {SYMMETRY_MODES}, got {self.symmetry!r}"),
            (self.temperature >= 0, f"temperature must be >= 0, got {self.temperature}"),
            (0.0 <= self.final_q_share <= 1.0, f"final_q_share must lie in [0, 1], got {self.final_q_share}"),
            (math.isfinite(self.policy_temperature) and self.policy_temperature > 0,
             f"policy_temperature must be a finite number > 0, got {self.policy_temperature}"),
            (self.score_utility >= 0, f"score_utility must be >= 0, got {self.score_utility}"),
            (self.score_scale > 0, f"score_scale must be > 0, got {self.score_scale}"),
            (not (self.solver and self.algorithm == "gumbel"),
             "solver=True needs algorithm='puct' (the Gumbel root's schedule would spend visits on proven moves)"),
            (not self.graph or (self.algorithm == "puct" and not self.solver and not self.tree_reuse
                                and self.leaves_per_game == 1),
             "graph=True needs algorithm='puct', solver=False, tree_reuse=False and leaves_per_game=1"),
            (self.graph or not self.graph_stop, "graph_stop=True needs graph=True"),
            (not (self.tree_reuse and self.algorithm == "gumbel"),
             "tree_reuse is not supported with algorithm='gumbel' (sequential halving needs a fresh root)"),
        ]
        for ok, message in checks:
            if not ok:
                raise ValueError(f"SearchConfig: {message}")

    def tempered_priors(self, priors: np.ndarray) -> np.ndarray:
        """p^(1 / policy_temperature) as a new array of the priors' float dtype (the evaluator may keep
        its output); the priors themselves at T = 1. The tree renormalises each row over its legal
        moves when it stores them."""
        if self.policy_temperature == 1.0:
            return priors
        return np.power(priors, priors.dtype.type(1.0 / self.policy_temperature))

    @property
    def capacity(self) -> int:
        """Nodes per tree: max_nodes, or the default described there."""
        if self.max_nodes is not None:
            return self.max_nodes
        return (2 if self.tree_reuse else 1) * self.simulations + 1


def play_config(simulations: int, *, algorithm: str = "puct", seed: int = 0, **overrides) -> SearchConfig:
    """The SearchConfig of a player that plays to win rather than to explore (arena, tournament,
    compare, GTP, play, analysis): no Dirichlet noise, the most visited move, no tree reuse, and a
    deterministic Gumbel root (gumbel_scale=0: top-m actions by prior, argmax of logits + sigma(q);
    with root noise Gumbel samples from its policy and scores 0.22 against the raw net at one
    simulation). `overrides` (e.g. gumbel_scale=1.0) replace any of these."""
    fields = dict(simulations=simulations, algorithm=algorithm, seed=seed, dirichlet_weight=0.0, temperature=0.0,
                  tree_reuse=False, gumbel_scale=0.0)
    fields.update(overrides)
    return SearchConfig(**fields)
