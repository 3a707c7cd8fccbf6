"""azero ladder: the per-level summary, and a real (tiny) ladder against GNU Go."""

from __future__ import annotations

import json

import pytest

from azero.eval.ladder import elo_difference, level_summary, run_ladder


def rec(first, second, a_score, pair=("me", "gnugo:1")):
    return {"pair": list(pair), "first": first, "second": second, "a_score": a_score}


def test_level_summary_counts_colours_draws_and_intervals():
    records = [rec("me", "gnugo:1", 1.0), rec("gnugo:1", "me", 1.0), rec("me", "gnugo:1", 0.0),
               rec("gnugo:1", "me", 0.5), rec("x", "y", 1.0, pair=("x", "y"))]
    s = level_summary(records, "me", 1)
    assert (s["games"], s["wins"], s["draws"], s["losses"]) == (4, 2, 1, 1)
    assert s["score"] == 0.625 and s["low"] < 0.5 < s["high"]
    assert s["wins_as_black"] == "1/2" and s["wins_as_white"] == "1/2"
    assert s["elo_low"] < s["elo"] < s["elo_high"]
    # the player listed second in a pair: scores turn around
    flipped = level_summary([rec("me", "gnugo:1", 0.0, pair=("gnugo:1", "me"))], "me", 1)
    assert flipped["wins"] == 1 and flipped["elo"] == 800.0


def test_elo_difference():
    assert elo_difference(0.5) == 0.0 and elo_difference(0.0) == -800.0
    assert abs(elo_difference(0.76) - 200.0) < 1.0


@pytest.mark.parametrize("kw, words", [({"games": 3}, "even"), ({"games": 4, "max_games": 2}, "--max-games"),
                                       ({"levels": [11]}, "0..10"), ({"levels": []}, "0..10")])
def test_bad_settings(tmp_path, kw, words):
    with pytest.raises(ValueError, match=words):
        run_ladder("random", out_dir=tmp_path / "l", **kw)


def test_a_ladder_against_gnu_go_plays_more_games_while_close_and_writes_its_summary(tmp_path, gnugo):
    """random vs GNU Go level 0: it loses every game. 0 of 2 decides nothing (its interval reaches 66%),
    0 of 4 does (its interval ends at 49%), so the ladder stops there, before --max-games."""
    out = tmp_path / "ladder"
    lines = []
    doc = run_ladder("random", out_dir=out, levels=[0], games=2, max_games=6, step=2, parallel=2,
                     log=lines.append)
    (s,) = doc["levels"]
    assert s["games"] == 4 and s["losses"] == 4 and s["high"] < 0.5
    assert any("holds 50%" in line for line in lines)
    assert json.loads((out / "ladder.json").read_text())["levels"][0]["games"] == 4
    assert "level  0: 0-0-4 of 4" in (out / "ladder.txt").read_text()
    assert (out / "gnugo-0" / "results.jsonl").is_file()
