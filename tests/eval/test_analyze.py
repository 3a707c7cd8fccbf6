"""azero analyze: one output line per input line, known connect-four answers, invalid lines reported."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest

from azero.eval.analyze import Analyzer, PositionError, parse_position, run_analyze
from azero.games import make_game
from azero.search.evaluators import UniformEvaluator

LINES = [
    "121212",     # first player to move, three in column 1: column 1 wins at once
    "12121",      # second player to move: must block column 1
    "",           # start position
    "44444444",   # the 7th move goes into a full column
    "4x",         # not a column
    "1212121",    # already won by the first player
    "12121212",   # a move after the game ended
    "48",         # column 8 does not exist
]


def run_lines(lines, **kw):
    out, err = io.StringIO(), io.StringIO()
    run_analyze("connect4", checkpoint=kw.pop("checkpoint", "none"), simulations=kw.pop("simulations", 300),
                stdin=io.StringIO("".join(line + "\n" for line in lines)), stdout=out, stderr=err, **kw)
    return out.getvalue().splitlines(), err.getvalue()


def test_valid_and_invalid_lines_in_one_stream():
    out, err = run_lines(LINES)
    assert "uniform evaluator" in err  # no checkpoint: said so on stderr, not mixed into the results
    assert len(out) == len(LINES)
    recs = [json.loads(line) for line in out]
    assert [r["position"] for r in recs] == LINES
    win, block, start = recs[:3]
    assert win["move"] == 1 and win["to_play"] == 0 and win["value"] > 0.5
    assert block["move"] == 1 and block["to_play"] == 1
    assert start["to_play"] == 0 and len(start["visits"]) == 7 and sum(start["visits"]) == 300
    assert 1 <= start["move"] <= 7 and start["visits"][start["move"] - 1] == max(start["visits"])
    assert "move 7 ('4'): column is full" in recs[3]["error"]
    assert "move 2 ('x')" in recs[4]["error"]
    assert "first player won" in recs[5]["error"] and "nothing to analyze" in recs[5]["error"]
    assert "move 8 ('2'): the game is already over" in recs[6]["error"]
    assert "move 2 ('8')" in recs[7]["error"]
    for r in recs[3:]:
        assert set(r) == {"position", "error"}


def test_text_format_and_a_checkpoint(c4_run):
    out, err = run_lines(["4453", "9"], checkpoint=str(c4_run), simulations=20, fmt="text")
    assert err == ""
    assert out[0].startswith("4453 -> ") and "value" in out[0] and len(out[0].split("visits ")[1].split()) == 7
    assert out[1].startswith("9 -> error: ")


def test_parse_position_rules():
    game = make_game("connect4")
    s = parse_position(game, " 4 4 5 3 ")  # spaces are ignored
    assert s.num_moves()[0] == 4 and s.to_play()[0] == 0
    with pytest.raises(PositionError):
        parse_position(game, "0")
    ttt = make_game("tictactoe")  # other single-character games use the same form
    a = Analyzer(ttt, UniformEvaluator(), simulations=200)
    rec = a.analyze("0314")  # X: 0, 1 ... O: 3, 4; X to move wins at 2
    assert rec["move"] == 2 and rec["to_play"] == 0


def test_cli_streams_stdin_to_stdout():
    r = subprocess.run([sys.executable, "-m", "azero.cli", "analyze", "--game", "connect4", "--sims", "50"],
                       input="121212\n77777777\n", capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 2
    assert json.loads(lines[0])["move"] == 1 and "column is full" in json.loads(lines[1])["error"]


def test_default_is_the_shipped_network_when_there_is_one():
    from azero.models import shipped_checkpoint

    shipped = shipped_checkpoint("connect4")
    if shipped is None:
        pytest.skip("no connect-four network is shipped")
    out, err = run_lines(["4453"], checkpoint=None, simulations=50)
    assert f"shipped network {shipped}" in err and len(out) == 1
    assert "error" not in json.loads(out[0])


def test_search_settings_reach_the_search_and_bad_ones_are_named_before_any_output():
    from azero.search.graph import GraphSearch

    out, _ = run_lines(LINES[:2], search=["graph=true", "final_q_share=0.5"])
    win, block = (json.loads(line) for line in out)
    assert win["move"] == 1 and block["move"] == 1 and sum(win["visits"]) == 300
    ttt = make_game("tictactoe")
    assert isinstance(Analyzer(ttt, UniformEvaluator(), simulations=8, search={"graph": True}).search, GraphSearch)
    for bad, named in ((["graph"], "expected KEY=VALUE"), (["graph=maybe"], "not a valid bool"),
                       (["dirichlet_weight=0.3"], "unknown search option 'dirichlet_weight'"),
                       (["graph=true", "solver=true"], "graph=True needs")):
        out, err = io.StringIO(), io.StringIO()
        with pytest.raises(ValueError, match=named):
            run_analyze("connect4", checkpoint="none", simulations=10, search=bad, stdin=io.StringIO("4\n"),
                        stdout=out, stderr=err)
        assert out.getvalue() == ""


def test_go_analysis_refuses_settings_it_would_ignore():
    r = subprocess.run([sys.executable, "-m", "azero.cli", "analyze", "--game", "go9x9", "--search", "graph=true"],
                       input="", capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "drop --algorithm and --search" in r.stderr
