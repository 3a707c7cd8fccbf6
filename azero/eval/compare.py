"""The test-time compute curve: one network's strength as a function of search simulations.

For each budget s in the list and each root algorithm (PUCT, Gumbel), the same
network with s simulations per move (s = 0: the raw network, argmax of its
policy) plays `games` arena games against the raw network, and optionally against
a fixed reference player. Colours alternate and openings are paired as in the
arena, so the raw network against itself scores exactly 1/2.

Statistics, per budget:

- score p = (wins + draws / 2) / n, with the 95% Wilson score interval
  (azero.eval.stats), which stays inside [0, 1] and is sensible at p = 0 or 1.
  Draws are counted as half a success; with draws the interval is somewhat conservative (a draw has less variance than a coin flip worth 1/2).
- Elo difference from the score, Elo = 400 log10(p / (1 - p)) (the logistic curve of
  azero.eval.elo), and its interval by mapping Wilson's ends through the same
  monotone function. A score of 0 or 1 has an infinite estimate (null in JSON):
  only the finite end of its interval is informative.

Outputs: compare.json (every budget, algorithm and opponent with counts, scores,
intervals, Elo), compare.png (score and Elo against simulations, one curve per
algorithm and opponent), and every game under games/.
"""

from __future__ import annotations

import dataclasses
import json
import math
import time
from pathlib import Path
from typing import Callable, Sequence

from azero.eval.arena import ArenaSummary, play_arena, write_game_file
from azero.agents.checkpoints import game_for
from azero.agents.factory import PlayerFactory
from azero.agents.spec import parse_player_spec
from azero.eval.stats import wilson_interval
from azero.search.config import ALGORITHMS
from azero.train.atomic import write_atomic


def score_to_elo(p: float) -> float:
    """Elo difference with expected score p: 400 log10(p / (1 - p)); +-inf at 1 and 0."""
    if p <= 0.0:
        return -math.inf
    if p >= 1.0:
        return math.inf
    return 400.0 * math.log10(p / (1.0 - p))


def parse_budgets(text: str) -> list[int]:
    """'0,1,2,4,...,800' -> [0, 1, 2, 4, 8, ..., 512, 800].

    '...' continues the geometric sequence of the two numbers before it (ratio b/a > 1)
    while below the number after it. Budgets are sorted and unique.
    """
    items = [t.strip() for t in text.split(",") if t.strip()]
    out: list[int] = []
    k = 0
    while k < len(items):
        t = items[k]
        if t == "...":
            if len(out) < 2 or k + 1 >= len(items) or out[-2] <= 0 or out[-1] <= out[-2]:
                raise ValueError(f"budgets {text!r}: '...' needs two increasing positive numbers before it "
                                 f"and one after it, e.g. 1,2,4,...,800")
            ratio = out[-1] / out[-2]
            end = _int(items[k + 1], text)
            x = out[-1] * ratio
            while round(x) < end:
                out.append(int(round(x)))
                x *= ratio
            k += 1
            continue
        out.append(_int(t, text))
        k += 1
    if not out or min(out) < 0:
        raise ValueError(f"budgets {text!r}: need one or more simulation counts >= 0")
    return sorted(set(out))


def _int(t: str, text: str) -> int:
    try:
        return int(t)
    except ValueError:
        raise ValueError(f"budgets {text!r}: {t!r} is not an integer") from None


@dataclasses.dataclass
class BudgetResult:
    algorithm: str
    """'puct' or 'gumbel' (the raw network's s = 0 row appears in both curves)."""
    simulations: int
    opponent: str
    """'raw' or 'reference'."""
    player: str
    opponent_spec: str
    wins: int
    draws: int
    losses: int
    score: float
    score_low: float
    score_high: float
    elo: float
    elo_low: float
    elo_high: float
    seconds: float

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    def to_json(self) -> dict:
        d = dataclasses.asdict(self)
        d["games"] = self.games
        for k in ("elo", "elo_low", "elo_high"):
            d[k] = None if not math.isfinite(d[k]) else round(d[k], 1)
        for k in ("score", "score_low", "score_high", "seconds"):
            d[k] = round(d[k], 4)
        return d


def summarize(algorithm: str, sims: int, opponent: str, player: str, opponent_spec: str, summary: ArenaSummary,
              seconds: float) -> BudgetResult:
    n = summary.games
    p = summary.score
    lo, hi = wilson_interval(p, n)
    return BudgetResult(algorithm, sims, opponent, player, opponent_spec, summary.wins, summary.draws,
                        summary.losses, p, lo, hi, score_to_elo(p), score_to_elo(lo), score_to_elo(hi), seconds)


def run_compare(checkpoint: str, game_name: str, budgets: Sequence[int], *, games: int = 64,
                algorithms: Sequence[str] = ALGORITHMS, reference: str | None = None, out_dir: str | Path,
                seed: int = 0, parallel: int = 32, opening_moves: int = 2, device: str = "cpu",
                threads: int | None = 1, precision: str = "auto", backend: str = "auto",
                log: Callable[[str], None] | None = None) -> dict:
    """Play every budget and algorithm against the raw network (and `reference`); write JSON + PNG."""
    log = log or (lambda line: print(line, flush=True))
    budgets = sorted(set(int(b) for b in budgets))
    if not budgets or budgets[0] < 0:
        raise ValueError(f"budgets must be simulation counts >= 0, got {budgets}")
    unknown = [a for a in algorithms if a not in ALGORITHMS]
    if unknown or not algorithms:
        raise ValueError(f"algorithms must be among {', '.join(ALGORITHMS)}, got {list(algorithms)}")
    if games < 1:
        raise ValueError(f"games must be >= 1, got {games}")
    out_dir = Path(out_dir)
    from azero.runs.run_dir import make_output_dir

    make_output_dir(out_dir, "--out")
    probe = PlayerFactory(None, game_name=game_name)
    planes = [probe.planes(checkpoint)]
    if reference is not None and parse_player_spec(reference).uses_network:
        planes.append(probe.planes(parse_player_spec(reference).checkpoint))
    game = game_for(game_name, [p for p in planes if p is not None])
    factory = PlayerFactory(game, device=device, threads=threads, precision=precision, backend=backend,
                            pins=probe.pins)
    ckpt_file = factory.checkpoint_file(checkpoint)
    raw_spec = parse_player_spec(f"raw:{checkpoint}")
    opponents = [("raw", raw_spec)]
    if reference is not None:
        opponents.append(("reference", parse_player_spec(reference)))

    rows: list[BudgetResult] = []
    played: dict[tuple[int, str, str], BudgetResult] = {}
    for algorithm in algorithms:
        for sims in budgets:
            spec = raw_spec if sims == 0 else parse_player_spec(f"mcts:{checkpoint}@{sims}:{algorithm}")
            for label, opp in opponents:
                key = (sims, label, spec.text)
                if key in played:  # s = 0 is the same raw network for both algorithms: play it once
                    rows.append(dataclasses.replace(played[key], algorithm=algorithm))
                    continue
                t0 = time.perf_counter()
                a = factory.build(spec, seed=seed)
                b = factory.build(opp, seed=seed + 1)
                sub = out_dir / "games" / f"{'raw' if sims == 0 else algorithm}-{sims}-vs-{label}"
                try:
                    records = play_arena(game, a, b, games=games, parallel=parallel, seed=seed,
                                         opening_moves=opening_moves,
                                         on_game=lambda g, sub=sub: write_game_file(game, g, sub / f"{g.index:04d}"))
                finally:
                    a.close()
                    b.close()
                row = summarize(algorithm, sims, label, spec.text, opp.text, ArenaSummary.of(records),
                                time.perf_counter() - t0)
                played[key] = row
                rows.append(row)
                log(format_row(row))
    factory.close()
    doc = {
        "checkpoint": str(ckpt_file), "game": game_name, "games_per_budget": games, "budgets": budgets,
        "algorithms": list(algorithms), "reference": reference, "seed": seed, "opening_moves": opening_moves,
        "interval": "Wilson 95% on the score (draw = 1/2); Elo = 400 log10(p / (1 - p)) of the score and its ends",
        "results": [r.to_json() for r in rows],
    }
    text = json.dumps(doc, indent=1).encode()
    write_atomic(out_dir / "compare.json", lambda f: f.write(text))
    plot_compare(doc, out_dir / "compare.png")
    return doc


def format_row(r: BudgetResult) -> str:
    def e(x: float) -> str:
        return f"{x:+.0f}" if math.isfinite(x) else ("+inf" if x > 0 else "-inf")

    return (f"{r.algorithm:<7} sims {r.simulations:>5} vs {r.opponent:<9} +{r.wins} ={r.draws} -{r.losses}  "
            f"score {r.score:.3f} [{r.score_low:.3f}, {r.score_high:.3f}]  "
            f"Elo {e(r.elo)} [{e(r.elo_low)}, {e(r.elo_high)}]  ({r.seconds:.1f}s)")


def format_table(doc: dict) -> str:
    lines = [f"{'algorithm':<9} {'sims':>5} {'opponent':<9} {'games':>5} {'score':>6} {'95% CI':>15} "
             f"{'Elo':>6} {'95% CI':>15}"]

    def e(x):
        return "inf" if x is None else f"{x:+.0f}"

    for r in doc["results"]:
        lines.append(f"{r['algorithm']:<9} {r['simulations']:>5} {r['opponent']:<9} {r['games']:>5} "
                     f"{r['score']:>6.3f} [{r['score_low']:.3f}, {r['score_high']:.3f}] "
                     f"{e(r['elo']):>6} [{e(r['elo_low'])}, {e(r['elo_high'])}]")
    return "\n".join(lines)


def plot_compare(doc: dict, path: str | Path) -> Path:
    """Score (Wilson 95%) and Elo against simulations; x is symlog so s = 0 (raw network) fits."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    fig, (ax_s, ax_e) = plt.subplots(1, 2, figsize=(12, 4.5))
    colors = {"puct": "tab:blue", "gumbel": "tab:orange"}
    styles = {"raw": "-", "reference": "--"}
    finite = [v for r in doc["results"] for v in (r["elo"], r["elo_low"], r["elo_high"]) if v is not None]
    cap = max([abs(v) for v in finite] + [400.0]) * 1.15  # where an infinite Elo is drawn (with an arrow)
    for k, alg in enumerate(doc["algorithms"]):
        dodge = 1.0 + 0.04 * k  # a small horizontal offset keeps overlapping error bars apart
        for opp in ("raw", "reference"):
            rows = sorted((r for r in doc["results"] if r["algorithm"] == alg and r["opponent"] == opp),
                          key=lambda r: r["simulations"])
            if not rows:
                continue
            x = np.array([r["simulations"] for r in rows], float) * dodge + 0.03 * k
            label = f"{alg} vs {'raw network' if opp == 'raw' else doc['reference']}"
            s = np.array([r["score"] for r in rows])
            s_err = np.array([[r["score"] - r["score_low"] for r in rows], [r["score_high"] - r["score"] for r in rows]])
            ax_s.errorbar(x, s, yerr=s_err, fmt="o" + styles[opp], color=colors.get(alg), capsize=3, label=label)

            def clip(v, sign=1.0):
                return sign * cap if v is None else max(-cap, min(cap, v))

            elo = np.array([clip(r["elo"], 1.0 if r["score"] >= 0.5 else -1.0) for r in rows])
            lo = np.array([clip(r["elo_low"], -1.0) for r in rows])
            hi = np.array([clip(r["elo_high"], 1.0) for r in rows])
            ax_e.errorbar(x, elo, yerr=[elo - lo, hi - elo], fmt="o" + styles[opp], color=colors.get(alg),
                          capsize=3, label=label)
            for xi, r, yi in zip(x, rows, elo):
                if r["elo"] is None:  # all wins or all losses: the estimate is unbounded
                    ax_e.annotate("", (xi, yi), xytext=(xi, yi - np.sign(yi) * cap * 0.1),
                                  arrowprops=dict(arrowstyle="->", color=colors.get(alg)))
    budgets = sorted({r["simulations"] for r in doc["results"]})
    for ax in (ax_s, ax_e):
        ax.set_xscale("symlog", linthresh=1.0)
        ax.set_xticks(budgets)
        ax.set_xticklabels([str(b) for b in budgets], fontsize=8, rotation=45 if len(budgets) > 8 else 0)
        ax.minorticks_off()
        ax.set_xlabel("simulations per move (0 = raw network)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    ax_s.axhline(0.5, color="gray", lw=0.8)
    ax_s.set_ylim(-0.02, 1.02)
    ax_s.set_ylabel("score (win = 1, draw = 1/2), Wilson 95%")
    ax_e.axhline(0.0, color="gray", lw=0.8)
    ax_e.set_ylabel("Elo vs opponent (from the score)")
    fig.suptitle(f"{doc['game']}: raw network vs search, {doc['games_per_budget']} games per point")
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
