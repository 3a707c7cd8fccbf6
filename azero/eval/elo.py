"""Elo ratings from game results: maximum-likelihood Bradley-Terry, with confidence intervals.

Model. Player i has strength theta_i (natural units); the expected score of i
against j is the logistic

    E[s_ij] = p_ij = 1 / (1 + exp(-(theta_i - theta_j))),     Elo_i = theta_i * 400 / ln 10,

which is Elo's own curve (a 400-point gap is an expected score of 10/11;
Elo 1978, Bradley & Terry 1952, Zermelo 1929).

Draws count as half a win and half a loss: a game contributes
s log p + (1 - s) log(1 - p) with s in {0, 1/2, 1}. Why not Davidson's draw model
(Davidson 1970) or Rao-Kupper: both add a draw parameter and change what a rating
difference means (P(win) is no longer the expected score), while here a rating
gap keeps its usual meaning, "expected score", the quantity every Elo reader and
`azero compare` (score -> Elo) use. The half-win likelihood is a quasi-likelihood:
its estimate is consistent whenever E[s] follows the logistic curve, whatever the
draw rate, because the estimating equations only involve E[s].

Regularisation. A player who won (or lost) every game has no finite maximum.
Every pair of players that met gets `prior_draws` virtual games scored as draws
(BayesElo's device; Coulom 2005). It is a log-concave prior on rating
*differences* between opponents who met, so it does not depend on the anchor,
keeps the log-likelihood strictly concave on every connected set of players, and
fades as real games accumulate: with the default of one virtual game, a 10-0
record becomes 10.5 / 11, a gap of 400 log10(21) = 529 Elo instead of infinity.

Fit. Newton's method on the free strengths (the anchor is fixed), with step
halving whenever a step does not increase the objective. With
n_ij games (real + virtual) and S_ij the score of i against j:

    gradient_i   = sum_j (S_ij - n_ij p_ij)
    information  = L, the weighted graph Laplacian L_ij = -n_ij p_ij (1 - p_ij), L_ii = -sum_{j!=i} L_ij

Confidence intervals come from the observed Fisher information with the anchor
fixed: Cov(theta_free) = L_ff^{-1} (the Laplace approximation of the posterior,
virtual games included), and a 95% interval is rating +- 1.96 standard errors.
Each interval is a rating's uncertainty *relative to the anchor*; the anchor has
none. Why not the bootstrap: it needs hundreds of refits and its resamples of a
lopsided pair often have all-win records (handled only by the prior), while the
information matrix is exact for this model up to the normal approximation. With
draws the intervals are slightly conservative: Var(s) = p(1-p) - d/4 for a draw
rate d, while the information assumes p(1-p).

Players with no chain of games to the anchor have no defined rating: they are
reported with NaN and listed in `EloTable.unrated`.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from azero.eval.stats import Z95

ELO_PER_NAT = 400.0 / math.log(10.0)


@dataclasses.dataclass
class EloRow:
    name: str
    rating: float
    """Elo (anchor's value for the anchor); NaN when unrated."""
    se: float
    """Standard error relative to the anchor (0 for the anchor)."""
    low: float
    """Lower end of the 95% interval."""
    high: float
    """Upper end of the 95% interval."""
    games: int
    """Real games played (virtual prior games excluded)."""
    score: float
    """Points scored in those games: win 1, draw 1/2."""


@dataclasses.dataclass
class EloTable:
    rows: list[EloRow]
    """Sorted by rating, strongest first (unrated last)."""
    anchor: str
    anchor_value: float
    prior_draws: float
    covariance: np.ndarray
    """[P, P] Elo^2: covariance of all ratings in `names` order (zero row/column for the anchor)."""
    names: list[str]
    """Player order of `covariance`."""
    iterations: int
    unrated: list[str] = dataclasses.field(default_factory=list)

    def rating(self, name: str) -> float:
        return self.row(name).rating

    def row(self, name: str) -> EloRow:
        for r in self.rows:
            if r.name == name:
                return r
        raise KeyError(f"no player {name!r} in the Elo table; players: {', '.join(self.names)}")

    def difference_se(self, a: str, b: str) -> float:
        """Standard error of rating(a) - rating(b), from the full covariance (not the two marginal errors)."""
        i, j = self.names.index(a), self.names.index(b)
        c = self.covariance
        return float(math.sqrt(max(c[i, i] + c[j, j] - 2 * c[i, j], 0.0)))

    def format(self) -> str:
        """A plain-text table: rank, player, Elo, 95% interval, games, score %."""
        width = max([len(r.name) for r in self.rows] + [6])
        lines = [f"{'#':>3}  {'player':<{width}}  {'Elo':>7}  {'95% CI':>17}  {'games':>6}  {'score':>6}"]
        for k, r in enumerate(self.rows, 1):
            if math.isnan(r.rating):
                rating, ci = "-", "(not connected)"
            else:
                rating = f"{r.rating:7.0f}"
                ci = "(anchor)" if r.name == self.anchor else f"[{r.low:7.0f}, {r.high:7.0f}]"
            pct = f"{100 * r.score / r.games:5.1f}%" if r.games else "-"
            lines.append(f"{k:>3}  {r.name:<{width}}  {rating:>7}  {ci:>17}  {r.games:>6}  {pct:>6}")
        lines.append(f"anchor: {self.anchor} = {self.anchor_value:g}; 95% intervals relative to the anchor; "
                     f"prior: {self.prior_draws:g} virtual draw(s) per pair that met")
        return "\n".join(lines)

    def to_json(self) -> dict:
        def num(x: float):
            return None if not math.isfinite(x) else round(float(x), 2)

        return {
            "anchor": self.anchor, "anchor_value": self.anchor_value, "prior_draws": self.prior_draws,
            "model": "Bradley-Terry (logistic Elo), draws = half a win, 95% CI from observed Fisher information",
            "players": [{"name": r.name, "elo": num(r.rating), "se": num(r.se), "low": num(r.low),
                         "high": num(r.high), "games": r.games, "score": r.score} for r in self.rows],
            "unrated": list(self.unrated),
        }


def pair_totals(results: Iterable[tuple[str, str, float]], names: Sequence[str] | None = None):
    """Aggregate (a, b, score_of_a) triples into (names, games [P, P], score [P, P]).

    score[i, j] is the points i took from j; games is symmetric. `names` fixes the
    order (players without games are allowed); otherwise order of first appearance.
    """
    order: list[str] = list(names) if names is not None else []
    index = {n: k for k, n in enumerate(order)}
    triples = []
    for a, b, s in results:
        if a == b:
            raise ValueError(f"a player cannot play itself in a rated game: {a!r}")
        if not 0.0 <= float(s) <= 1.0:
            raise ValueError(f"score of {a!r} against {b!r} must lie in [0, 1], got {s}")
        for n in (a, b):
            if n not in index:
                if names is not None:
                    raise ValueError(f"result names player {n!r}, who is not among {list(names)}")
                index[n] = len(order)
                order.append(n)
        triples.append((index[a], index[b], float(s)))
    p = len(order)
    games = np.zeros((p, p))
    score = np.zeros((p, p))
    for i, j, s in triples:
        games[i, j] += 1
        games[j, i] += 1
        score[i, j] += s
        score[j, i] += 1.0 - s
    return order, games, score


def _connected(games: np.ndarray, start: int) -> np.ndarray:
    seen = np.zeros(len(games), bool)
    seen[start] = True
    frontier = [start]
    while frontier:
        i = frontier.pop()
        for j in np.flatnonzero(games[i] > 0):
            if not seen[j]:
                seen[j] = True
                frontier.append(j)
    return seen


def _log_likelihood(theta: np.ndarray, n: np.ndarray, s: np.ndarray) -> float:
    d = theta[:, None] - theta[None, :]
    # log sigmoid(d) = -log(1 + exp(-d)), written stably with logaddexp
    return float(-(s * np.logaddexp(0.0, -d)).sum())


def fit_elo(results: Iterable[tuple[str, str, float]], *, anchor: str | None = None, anchor_value: float = 0.0,
            prior_draws: float = 1.0, names: Sequence[str] | None = None, max_iter: int = 100,
            tol: float = 1e-10) -> EloTable:
    """Maximum-likelihood (MAP with the virtual-draw prior) Elo ratings of the players in `results`.

    results: (player_a, player_b, score_of_a) with score 1 win, 0.5 draw, 0 loss.
    anchor: the player held at `anchor_value` (default: 'random' if present, else the first player).
    """
    if prior_draws < 0:
        raise ValueError(f"prior_draws must be >= 0, got {prior_draws}")
    order, games, score = pair_totals(results, names)
    if not order:
        raise ValueError("no games to rate")
    if anchor is None:
        anchor = "random" if "random" in order else order[0]
    if anchor not in order:
        raise ValueError(f"anchor {anchor!r} is not among the players: {', '.join(order)}")
    a = order.index(anchor)
    rated = _connected(games, a)
    # Virtual draws between every pair that met (module docstring).
    met = games > 0
    n = games + prior_draws * met
    s = score + 0.5 * prior_draws * met

    free = np.flatnonzero(rated & (np.arange(len(order)) != a))
    theta = np.zeros(len(order))
    iterations = 0
    info_ff = np.zeros((0, 0))
    for iterations in range(1, max_iter + 1):
        d = theta[:, None] - theta[None, :]
        p = 1.0 / (1.0 + np.exp(-d))
        grad = (s - n * p).sum(axis=1)
        w = n * p * (1.0 - p)
        laplacian = np.diag(w.sum(axis=1)) - w
        info_ff = laplacian[np.ix_(free, free)]
        if free.size == 0:
            break
        step = np.linalg.solve(info_ff, grad[free])
        before = _log_likelihood(theta, n, s)
        t = 1.0
        while True:  # step halving: the objective is concave, so a short enough Newton step improves it
            trial = theta.copy()
            trial[free] += t * step
            if _log_likelihood(trial, n, s) >= before - 1e-12 or t < 1e-6:
                break
            t *= 0.5
        theta = trial
        if np.max(np.abs(t * step)) < tol:
            break
    # Information at the final estimate.
    d = theta[:, None] - theta[None, :]
    p = 1.0 / (1.0 + np.exp(-d))
    w = n * p * (1.0 - p)
    laplacian = np.diag(w.sum(axis=1)) - w
    cov = np.zeros((len(order), len(order)))
    if free.size:
        cov[np.ix_(free, free)] = np.linalg.inv(laplacian[np.ix_(free, free)]) * ELO_PER_NAT ** 2

    elo = (theta - theta[a]) * ELO_PER_NAT + anchor_value
    rows = []
    for k, name in enumerate(order):
        g = int(games[k].sum())
        pts = float(score[k].sum())
        if not rated[k]:
            rows.append(EloRow(name, math.nan, math.nan, math.nan, math.nan, g, pts))
            continue
        se = float(math.sqrt(max(cov[k, k], 0.0)))
        rows.append(EloRow(name, float(elo[k]), se, float(elo[k] - Z95 * se), float(elo[k] + Z95 * se), g, pts))
    rows.sort(key=lambda r: (math.isnan(r.rating), -r.rating if not math.isnan(r.rating) else 0.0, r.name))
    return EloTable(rows=rows, anchor=anchor, anchor_value=float(anchor_value), prior_draws=float(prior_draws),
                    covariance=cov, names=list(order), iterations=iterations,
                    unrated=[order[k] for k in np.flatnonzero(~rated)])


def parse_anchor(text: str | None) -> tuple[str | None, float]:
    """'NAME=VALUE' -> (NAME, VALUE); None -> (None, 0.0). The name may itself contain '=' (split at the last)."""
    if text is None:
        return None, 0.0
    name, sep, value = text.rpartition("=")
    if not sep or not name:
        raise ValueError(f"anchor {text!r} must be NAME=VALUE, e.g. random=0 or gnugo:10=1800")
    try:
        return name, float(value)
    except ValueError:
        raise ValueError(f"anchor {text!r}: {value!r} is not a number") from None


def plot_elo(table: EloTable, path: str | Path, *, title: str = "Elo ratings (95% CI)") -> Path:
    """Horizontal bars of the ratings with their 95% intervals, strongest on top; PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in table.rows if not math.isnan(r.rating)][::-1]
    fig, ax = plt.subplots(figsize=(8, 0.45 * len(rows) + 1.5))
    y = np.arange(len(rows))
    ratings = np.array([r.rating for r in rows])
    err = np.array([[r.rating - r.low for r in rows], [r.high - r.rating for r in rows]])
    ax.errorbar(ratings, y, xerr=err, fmt="o", color="tab:blue", ecolor="tab:gray", capsize=4)
    for k, r in enumerate(rows):
        ax.annotate(f"{r.rating:.0f}", (r.rating, k), textcoords="offset points", xytext=(0, 7),
                    ha="center", fontsize=8)
    ax.set_yticks(y)
    ax.set_yticklabels([r.name for r in rows], fontsize=8)
    ax.set_xlabel(f"Elo ({table.anchor} = {table.anchor_value:g})")
    ax.set_title(title)
    ax.grid(axis="x", alpha=0.3)
    ax.margins(y=0.6 / max(len(rows), 1))  # room for the value labels above the top point
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
