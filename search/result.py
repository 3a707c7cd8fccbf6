"""What one search returns, and move choice from it (shared by the Cython driver and the reference twin).

Both algorithms return the same SearchResult, in the spirit of mctx's PolicyOutput(action,
action_weights, search_tree): `policy` is the training target, `action` the deterministic move and
`action_weights` what a move played with exploration is drawn from, so a caller picks moves with
`result.choose(temperature, rng)` and never asks which algorithm ran.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from azero.games.base import NO_ACTION


@dataclasses.dataclass
class SearchResult:
    """Root statistics of B searches; rows of games that were not searched are zero / NO_ACTION."""

    visits: np.ndarray
    """int32 [B, A]: N(root, a)."""
    policy: np.ndarray
    """float32 [B, A]: the policy training target. PUCT: visit distribution; Gumbel: the improved
    policy softmax(logit + sigma(completed Q)) over the legal actions."""
    q: np.ndarray
    """float32 [B, A]: Q(root, a) from the view of the player to move at the root; 0 where unvisited."""
    prior: np.ndarray
    """float32 [B, A]: root priors as searched (after Dirichlet noise)."""
    value: np.ndarray
    """float32 [B]: mean backed-up root win/loss value, player to move's view (the win rate; without
    the score utility the search may add)."""
    action: np.ndarray
    """int32 [B]: the deterministic move. PUCT: most visited (lowest index on ties); Gumbel: argmax of
    g + logit + sigma(completed Q) among the most visited actions (the paper's choice)."""
    simulations: np.ndarray
    """int32 [B]: simulations run in this search (0 for terminal or inactive roots)."""
    score: np.ndarray | None = None
    """float32 [B]: mean backed-up expected score of the root, player to move's view, when the
    evaluator predicts scores (None otherwise)."""
    action_weights: np.ndarray | None = None
    """[B, A] or None: what choose() draws a move from, with probability proportional to
    weight^(1/temperature). PUCT: the visit counts (AlphaZero's temperature sampling); None for
    Gumbel, whose move is `action` at every temperature (its exploration is the Gumbel noise at
    the root, already in the search)."""
    win_q: np.ndarray | None = None
    """float32 [B, A] or None: the win/loss part of q where q adds a score utility (the evaluator
    predicts scores); None where q is the win/loss value itself."""

    def choose(self, temperature: float, rng: np.random.Generator) -> np.ndarray:
        """int32 [B]: the moves to play: drawn from action_weights (sample_by_visits; temperature 0
        is `action`), or `action` itself when the search has no weights to sample (no draw from rng)."""
        if self.action_weights is None:
            return self.action.copy()
        return sample_by_visits(self.action_weights, temperature, rng)


def visit_policy(visits: np.ndarray) -> np.ndarray:
    """float32 [B, A]: visits normalised per row (all-zero rows stay zero)."""
    total = visits.sum(axis=1, keepdims=True)
    return (visits / np.maximum(total, 1)).astype(np.float32)


def most_visited(visits: np.ndarray) -> np.ndarray:
    """int32 [B]: argmax of visits, lowest action index on ties; NO_ACTION for all-zero rows."""
    action = np.argmax(visits, axis=1).astype(np.int32)
    action[visits.max(axis=1) <= 0] = NO_ACTION
    return action


def final_choice(weights: np.ndarray, q: np.ndarray, share: float) -> np.ndarray:
    """int32 [B]: the move to play at temperature 0. share = 0: most_visited(weights). share > 0: the
    move of highest root Q among those with at least `share` times the top weight (a move the search
    explored well enough for its Q to be trusted; ties: lowest action index); NO_ACTION for all-zero rows."""
    if share <= 0:
        return most_visited(weights)
    top = weights.max(axis=1, keepdims=True)
    eligible = (weights > 0) & (weights >= share * top)
    action = np.where(eligible, q, -np.inf).argmax(axis=1).astype(np.int32)
    action[top[:, 0] <= 0] = NO_ACTION
    return action


def proven_weights(visits: np.ndarray, proven: np.ndarray, prior: np.ndarray) -> np.ndarray:
    """int32 [B, A]: the visits a move is chosen from when root actions have proven values
    (SearchConfig.solver): only the proven wins where there is one; else the visits with the proven
    losses zeroed; where that leaves nothing, the legal move (prior > 0) of highest prior that is not
    a proven loss, with weight 1; where every legal move is a proven loss, the visits as they are.
    proven [B, A]: +1 / 0 / -1 from the root player's view, anything else for not proven."""
    weights = visits.copy()
    win = proven == 1
    winning = win.any(axis=1)
    weights[winning] = np.where(win[winning], visits[winning], 0)
    loss = proven == -1
    legal = (prior > 0) | (visits > 0)
    rest = ~winning & (legal & ~loss).any(axis=1)
    weights[rest] = np.where(loss[rest], 0, visits[rest])
    # No visited move survives: the most likely move not proven lost (the search ran out right after
    # proving the visited ones; PUCT would have gone there next).
    empty = rest & (weights.max(axis=1) <= 0)
    open_prior = np.where(loss | ~legal, -1.0, prior)
    for b in np.flatnonzero(empty & (open_prior.max(axis=1) > 0)):
        weights[b] = 0
        weights[b, int(np.argmax(open_prior[b]))] = 1
    return weights


def sample_by_visits(visits: np.ndarray, temperature: float, rng: np.random.Generator) -> np.ndarray:
    """int32 [B]: action b drawn with probability proportional to visits[b]^(1/temperature).

    temperature 0 is most_visited. One uniform draw per row (inverse CDF), so the
    consumption of `rng` does not depend on the visit counts.
    """
    if temperature < 0:
        raise ValueError(f"temperature must be >= 0, got {temperature}")
    u = rng.random(len(visits))
    if temperature == 0:
        return most_visited(visits)
    top = np.maximum(visits.max(axis=1, keepdims=True), 1).astype(np.float64)
    # Normalising by the max keeps N^(1/T) finite for small T.
    weights = (visits / top) ** (1.0 / temperature)
    cdf = np.cumsum(weights, axis=1)
    total = cdf[:, -1:]
    action = (cdf <= u[:, None] * total).sum(axis=1).astype(np.int32)
    action = np.minimum(action, visits.shape[1] - 1)
    action[total[:, 0] <= 0] = NO_ACTION
    return action


def policy_value(result: SearchResult) -> np.ndarray:
    """float32 [B]: the root's win/loss value under the policy target, sum_a policy(a) Q(a) over the
    visited actions (the policy renormalised over them; win_q where q adds a score utility), player
    to move's view; result.value in rows where no action was visited.

    This, not result.value, is what selfplay.value_q_weight mixes into the value target. A Gumbel
    root spreads its simulations over the considered actions by sequential halving whatever their
    values, so the mean backed-up value averages in moves it has already ruled out: with one
    winning move among seven it reads a won position as nearly drawn (connect four, 64
    simulations, a trained 8x64 net, depth-12 solver positions: mean root value +0.25 in won and
    -0.23 in drawn positions, against +0.77 and +0.15 under the improved policy, which tells won
    from drawn with AUC 0.92 instead of 0.81). For PUCT the policy is the visit distribution, so
    this is the mean of the children's backed-up values, the root mean without the root's own
    network evaluation.
    """
    visited = result.visits > 0
    weights = np.where(visited, result.policy, 0.0).astype(np.float64)
    mass = weights.sum(axis=1)
    q = (weights * (result.q if result.win_q is None else result.win_q)).sum(axis=1) / np.maximum(mass, 1e-12)
    return np.where(mass > 0, q, result.value).astype(np.float32)
