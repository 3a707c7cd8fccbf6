"""The raw-vs-search curve: budgets, intervals, and the shape of compare.json."""

from __future__ import annotations

import json
import math

import pytest

from azero.cli import main
from azero.eval.compare import parse_budgets, run_compare, score_to_elo


def test_parse_budgets():
    assert parse_budgets("0,1,2,4,...,800") == [0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 800]
    assert parse_budgets("0, 10, 5") == [0, 5, 10]
    assert parse_budgets("1,3,...,27") == [1, 3, 9, 27]
    for bad in ("", "a", "-1", "...,4", "4,2,...,8", "1,2,..."):
        with pytest.raises(ValueError, match="budgets"):
            parse_budgets(bad)


def test_score_to_elo():
    assert score_to_elo(0.5) == 0.0
    assert score_to_elo(10 / 11) == pytest.approx(400.0)
    assert score_to_elo(1.0) == math.inf and score_to_elo(0.0) == -math.inf


def test_compare_covers_every_budget_and_algorithm(ttt_run, tmp_path):
    budgets = [0, 1, 2, 4]
    doc = run_compare(str(ttt_run), "tictactoe", budgets, games=6, reference="random", out_dir=tmp_path,
                      parallel=6, log=lambda s: None)
    assert json.loads((tmp_path / "compare.json").read_text()) == doc
    assert (tmp_path / "compare.png").read_bytes()[:4] == b"\x89PNG"
    rows = doc["results"]
    assert len(rows) == 2 * len(budgets) * 2  # algorithms x budgets x opponents
    for alg in ("puct", "gumbel"):
        for opp in ("raw", "reference"):
            curve = [r for r in rows if r["algorithm"] == alg and r["opponent"] == opp]
            assert [r["simulations"] for r in curve] == budgets  # sorted, every budget present
    for r in rows:
        assert r["games"] == r["wins"] + r["draws"] + r["losses"] == 6
        assert r["score"] == pytest.approx((r["wins"] + 0.5 * r["draws"]) / 6, abs=1e-4)
        assert r["score_low"] <= r["score"] <= r["score_high"]
        if r["elo"] is not None:
            assert r["elo"] == pytest.approx(score_to_elo(r["score"]), abs=0.1)
        assert r["player"] == (f"raw:{ttt_run}" if r["simulations"] == 0 else f"mcts:{ttt_run}@{r['simulations']}:{r['algorithm']}")
    raw_rows = [r for r in rows if r["simulations"] == 0 and r["opponent"] == "raw"]
    # the raw network against itself with paired openings: every opening is won once by each side (or drawn twice)
    assert all(r["score"] == 0.5 for r in raw_rows)
    assert {k: v for k, v in raw_rows[0].items() if k != "algorithm"} == \
        {k: v for k, v in raw_rows[1].items() if k != "algorithm"}  # played once, shown in both curves
    assert len(list((tmp_path / "games").rglob("*.txt"))) == 6 * (2 * 3 + 1) * 2  # s = 0 played once per opponent


def test_compare_cli(ttt_run, tmp_path, capsys):
    assert main(["compare", str(ttt_run), "--game", "tictactoe", "--sims", "0,1,2,...,4", "--games", "2",
                 "--algorithms", "gumbel", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "gumbel" in out and "compare.png" in out
    doc = json.loads((tmp_path / "compare.json").read_text())
    assert doc["budgets"] == [0, 1, 2, 4] and doc["algorithms"] == ["gumbel"]
    assert main(["compare", str(ttt_run), "--game", "tictactoe", "--algorithms", "mcts", "--out", str(tmp_path)]) == 2
    assert "algorithms must be among" in capsys.readouterr().err
