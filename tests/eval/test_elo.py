"""Elo by maximum likelihood: known answers, recovery of simulated ratings, interval coverage."""

from __future__ import annotations

import math

import numpy as np
import pytest

from azero.eval.elo import ELO_PER_NAT, fit_elo, pair_totals, parse_anchor, plot_elo

TRUE = {"random": 0.0, "a": 150.0, "b": 300.0, "c": -200.0, "d": 500.0}


def simulate(rng: np.random.Generator, ratings: dict[str, float], games_per_pair: int, draw_share: float = 1.0):
    """Round-robin results with E[score] = logistic(Elo gap); draws with probability draw_share * min(p, 1-p)."""
    names = list(ratings)
    out = []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            p = 1.0 / (1.0 + 10 ** (-(ratings[a] - ratings[b]) / 400.0))
            d = draw_share * min(p, 1.0 - p)
            # win p - d/2, draw d, loss 1 - p - d/2: the expected score stays p
            s = rng.choice([1.0, 0.5, 0.0], size=games_per_pair, p=[p - d / 2, d, 1.0 - p - d / 2])
            out += [(a, b, float(x)) for x in s]
    return out


def test_two_players_match_the_closed_form():
    # 7 wins in 10 and no prior: the likelihood peaks where the expected score is 0.7.
    results = [("x", "y", 1.0)] * 7 + [("x", "y", 0.0)] * 3
    t = fit_elo(results, anchor="y", anchor_value=1000.0, prior_draws=0.0)
    assert t.rating("x") == pytest.approx(1000 + 400 * math.log10(7 / 3), abs=1e-6)
    # Fisher information of a binomial logit: n p (1 - p) per nat^2.
    assert t.row("x").se == pytest.approx(ELO_PER_NAT / math.sqrt(10 * 0.7 * 0.3), rel=1e-6)
    assert t.row("y").se == 0.0 and t.rating("y") == 1000.0
    # Draws count as half a win: 4 wins, 6 draws = a score of 0.7 as well.
    t2 = fit_elo([("x", "y", 1.0)] * 4 + [("x", "y", 0.5)] * 6, anchor="y", anchor_value=1000.0, prior_draws=0.0)
    assert t2.rating("x") == pytest.approx(t.rating("x"), abs=1e-6)


def test_recovers_known_ratings_within_their_intervals():
    rng = np.random.default_rng(7)
    t = fit_elo(simulate(rng, TRUE, 200), anchor="random", anchor_value=0.0)
    for name, true in TRUE.items():
        row = t.row(name)
        assert row.low <= true <= row.high, (name, true, row)
    assert [r.name for r in t.rows] == sorted(TRUE, key=lambda n: -TRUE[n])
    assert "random" in t.format() and "(anchor)" in t.format()


def test_interval_coverage_and_calibration_over_seeds():
    covered, total = 0, 0
    estimates = {n: [] for n in TRUE if n != "random"}
    ses = {n: [] for n in estimates}
    for seed in range(20):
        t = fit_elo(simulate(np.random.default_rng(seed), TRUE, 60), anchor="random")
        for name in estimates:
            row = t.row(name)
            covered += row.low <= TRUE[name] <= row.high
            total += 1
            estimates[name].append(row.rating)
            ses[name].append(row.se)
    coverage = covered / total
    # Nominal 95%; draws make the information-based interval a little conservative, never much too narrow.
    assert 0.85 <= coverage <= 1.0, coverage
    for name in estimates:
        spread = float(np.std(estimates[name]))
        assert abs(np.mean(estimates[name]) - TRUE[name]) < 40, name  # small prior shrinkage only
        assert 0.6 < np.mean(ses[name]) / spread < 2.0, (name, np.mean(ses[name]), spread)


def test_all_wins_and_all_losses_stay_finite():
    results = [("champ", "random", 1.0)] * 10 + [("random", "chump", 1.0)] * 10 + [("random", "mid", 0.5)] * 4
    t = fit_elo(results)
    assert t.anchor == "random"
    for r in t.rows:
        assert math.isfinite(r.rating) and math.isfinite(r.low) and math.isfinite(r.high)
    # one virtual draw: 10-0 becomes 10.5 / 11, a gap of 400 log10(21)
    assert t.rating("champ") == pytest.approx(400 * math.log10(21), abs=1e-6)
    assert t.rating("chump") == pytest.approx(-400 * math.log10(21), abs=1e-6)
    assert t.rows[0].name == "champ" and t.rows[-1].name == "chump"


def test_players_without_a_chain_to_the_anchor_are_unrated():
    t = fit_elo([("a", "b", 1.0), ("a", "b", 0.0), ("c", "d", 1.0)], anchor="a")
    assert t.unrated == ["c", "d"]
    assert math.isnan(t.rating("c")) and math.isfinite(t.rating("b"))
    assert "not connected" in t.format()


def test_difference_se_uses_the_covariance():
    t = fit_elo(simulate(np.random.default_rng(1), TRUE, 50), anchor="random")
    d = t.difference_se("a", "b")
    assert 0 < d < t.row("a").se + t.row("b").se  # positive covariance through the shared anchor
    assert t.difference_se("random", "a") == pytest.approx(t.row("a").se)


def test_errors_name_the_problem():
    with pytest.raises(ValueError, match="anchor 'zz'"):
        fit_elo([("a", "b", 1.0)], anchor="zz")
    with pytest.raises(ValueError, match="itself"):
        fit_elo([("a", "a", 1.0)])
    with pytest.raises(ValueError, match="no games"):
        fit_elo([])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        pair_totals([("a", "b", 2.0)])
    assert parse_anchor("gnugo:10=1800") == ("gnugo:10", 1800.0)
    assert parse_anchor(None) == (None, 0.0)
    for bad in ("random", "=3", "random=x"):
        with pytest.raises(ValueError, match="anchor"):
            parse_anchor(bad)


def test_plot_is_a_png(tmp_path):
    t = fit_elo(simulate(np.random.default_rng(2), TRUE, 20), anchor="random", anchor_value=100)
    path = plot_elo(t, tmp_path / "elo.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 5000
    assert t.to_json()["players"][0]["name"] == "d"
