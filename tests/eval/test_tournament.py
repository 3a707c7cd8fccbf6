"""Tournaments: every game recorded once, resume after SIGKILL, truncated lines, settings that must match."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from azero.cli import main
from azero.eval.tournament import RESULTS, read_results, run_tournament, tournament_pairs

AZERO = [sys.executable, "-m", "azero.cli"]


def keyed(out: Path) -> dict:
    recs = [json.loads(line) for line in (out / RESULTS).read_text().splitlines()]
    keys = [(r["pair"][0], r["pair"][1], r["index"]) for r in recs]
    assert len(keys) == len(set(keys)), "a game was recorded twice"
    return {k: r for k, r in zip(keys, recs)}


def test_round_robin_records_every_game_with_its_file(ttt_run, tmp_path):
    out = tmp_path / "t"
    players = ["random", f"raw:{ttt_run}", f"mcts:{ttt_run}@4"]
    rep = run_tournament(out, game_name="tictactoe", players=players, games_per_pair=6, parallel=4, log=lambda s: None)
    recs = keyed(out)
    assert rep.played == rep.total == len(recs) == 3 * 6
    assert set((a, b) for a, b, _ in recs) == set(tournament_pairs(players, None))
    for (a, b, i), r in recs.items():
        assert r["first"] == (a if i % 2 == 0 else b)
        text = (out / r["file"]).read_text()
        assert f"first: {r['first']}" in text and f"result: {r['result']}" in text
    assert {r.name for r in rep.table.rows} == set(players)
    assert (out / "elo.png").stat().st_size > 0 and "anchor" in (out / "elo.txt").read_text()
    assert json.loads((out / "elo.json").read_text())["games"] == 18
    # A second run has nothing left to play; more games per pair adds only the new ones.
    assert run_tournament(out, log=lambda s: None).played == 0
    assert run_tournament(out, games_per_pair=8, log=lambda s: None).played == 3 * 2
    assert len(keyed(out)) == 24


def test_resume_with_the_players_in_another_order_replays_nothing(tmp_path):
    # New players join a tournament in whatever order a script lists them: a pair is one pair
    out = tmp_path / "t"
    run_tournament(out, game_name="tictactoe", players=["random", "mcts:none@2"], games_per_pair=4, parallel=2,
                   log=lambda s: None)
    rep = run_tournament(out, players=["mcts:none@4", "mcts:none@2", "random"], log=lambda s: None)
    assert rep.played == 2 * 4  # only the new player's two pairs
    recs = keyed(out)
    assert {(a, b) for a, b, _ in recs if {a, b} == {"random", "mcts:none@2"}} == {("random", "mcts:none@2")}


def test_gauntlet_plays_one_against_all(ttt_run, tmp_path):
    out = tmp_path / "g"
    rep = run_tournament(out, game_name="tictactoe", gauntlet=f"raw:{ttt_run}", players=["random", f"mcts:{ttt_run}@2"],
                         games_per_pair=2, anchor=f"raw:{ttt_run}", anchor_value=1000, log=lambda s: None)
    assert {(a, b) for a, b, _ in keyed(out)} == {(f"raw:{ttt_run}", "random"), (f"raw:{ttt_run}", f"mcts:{ttt_run}@2")}
    assert rep.table.rating(f"raw:{ttt_run}") == 1000


def test_several_gauntlet_players_meet_everyone_but_each_other(ttt_run, tmp_path):
    out = tmp_path / "g2"
    gauntlet = ["random", f"raw:{ttt_run}"]
    players = [f"mcts:{ttt_run}@2", f"mcts:{ttt_run}@4"]
    run_tournament(out, game_name="tictactoe", gauntlet=gauntlet, players=players, games_per_pair=2,
                   log=lambda s: None)
    pairs = {(a, b) for a, b, _ in keyed(out)}
    assert pairs == {(g, p) for g in gauntlet for p in players}
    # resumed from tournament.json alone: the same pairs, nothing left to play
    rep = run_tournament(out, log=lambda s: None)
    assert rep.played == 0 and rep.total == 2 * len(pairs)


def test_resume_settings_must_match(ttt_run, tmp_path):
    out = tmp_path / "m"
    run_tournament(out, game_name="tictactoe", players=["random", f"raw:{ttt_run}"], games_per_pair=2, seed=1,
                   log=lambda s: None)
    for kw in ({"seed": 2}, {"parallel": 3}, {"opening_moves": 0}, {"game_name": "connect4"}):
        with pytest.raises(ValueError, match="started with"):
            run_tournament(out, log=lambda s: None, **kw)
    with pytest.raises(ValueError, match="anchor 'nobody'"):
        run_tournament(out, anchor="nobody", log=lambda s: None)


def test_truncated_last_line_is_dropped_and_replayed(ttt_run, tmp_path):
    out = tmp_path / "tr"
    kw = dict(game_name="tictactoe", players=["random", f"raw:{ttt_run}"], games_per_pair=4, parallel=2)
    run_tournament(out, log=lambda s: None, **kw)
    full = keyed(out)
    lines = (out / RESULTS).read_bytes().split(b"\n")
    # keep 2 games, then half of the third line: a write cut short by a kill
    (out / RESULTS).write_bytes(b"\n".join(lines[:2]) + b"\n" + lines[2][: len(lines[2]) // 2])
    assert len(read_results(out / RESULTS, repair=False).records) == 2
    logs = []
    rep = run_tournament(out, log=logs.append, **kw)
    assert any("truncated last line" in s for s in logs) and rep.notes
    again = keyed(out)
    assert len(again) == 4 and rep.played == 2
    assert {k: r["moves"] for k, r in again.items()} == {k: r["moves"] for k, r in full.items()}
    # corruption in the middle is an error naming the line, not something to skip silently
    text = (out / RESULTS).read_text().splitlines()
    (out / RESULTS).write_text("\n".join([text[0], "{oops", *text[1:]]) + "\n")
    with pytest.raises(ValueError, match="line 2"):
        read_results(out / RESULTS)


def test_resume_after_sigkill_loses_no_finished_game(c4_run, tmp_path):
    players = ["random", f"mcts:{c4_run}@8", f"raw:{c4_run}"]
    args = ["tournament", "--game", "connect4", "--players", *players, "--games-per-pair", "8", "--parallel", "4"]
    total = 3 * 8

    # the same tournament uninterrupted, for the exact games a resume must reproduce
    reference = tmp_path / "ref"
    assert main(args + ["--out", str(reference)]) == 0
    expected = {k: r["moves"] for k, r in keyed(reference).items()}
    assert len(expected) == total

    out = tmp_path / "killed"
    proc = subprocess.Popen(AZERO + args + ["--out", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    results = out / RESULTS
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            if results.exists() and results.read_bytes().count(b"\n") >= 6:
                break
            time.sleep(0.01)
        assert proc.poll() is None, "the tournament finished before it could be killed: " + proc.stderr.read().decode()
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    # (a kill inside a write could leave a partial last line: read as a resume does)
    before = {(r["pair"][0], r["pair"][1], r["index"]): r for r in read_results(results, repair=False).records}
    assert 6 <= len(before) < total
    # also a half-written line, as a kill during a write leaves it
    with open(results, "ab") as f:
        f.write(b'{"pair": ["random", "mcts:')

    r = subprocess.run(AZERO + ["tournament", "--out", str(out)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "truncated last line" in r.stdout + r.stderr
    assert "replayed differently" not in r.stdout + r.stderr  # replayed batches reproduce recorded games
    assert f"{len(before)} game(s) recorded, {total - len(before)} to play" in r.stdout
    after = keyed(out)  # each game exactly once
    assert len(after) == total
    for k, rec in before.items():
        assert after[k] == rec  # finished games untouched
    assert {k: rec["moves"] for k, rec in after.items()} == expected  # the missing games, exactly
    files = sorted((out / "games").rglob("*.txt"))
    assert len(files) == total
    assert "random" in (out / "elo.txt").read_text()


def test_cli_elo_only_and_errors(ttt_run, tmp_path, capsys):
    out = tmp_path / "e"
    assert main(["tournament", "--game", "tictactoe", "--players", "random", f"raw:{ttt_run}", "--games-per-pair", "2",
                 "--out", str(out), "--anchor", "random=500"]) == 0
    capsys.readouterr()
    assert main(["tournament", "--out", str(out), "--elo-only", "--anchor", f"raw:{ttt_run}=0"]) == 0
    table = capsys.readouterr().out
    assert f"anchor: raw:{ttt_run} = 0" in table
    assert main(["tournament", "--game", "tictactoe", "--players", "random", "--games-per-pair", "2",
                 "--out", str(tmp_path / "one")]) == 2
    assert "at least two" in capsys.readouterr().err
    assert main(["tournament", "--game", "tictactoe", "--players", "random", "mcts:x", "--games-per-pair", "2",
                 "--out", str(tmp_path / "bad")]) == 2
    assert "player spec 'mcts:x'" in capsys.readouterr().err


def test_go_tournament_against_gnugo_keeps_both_scores(tmp_path):
    from azero.agents.gtp_player import find_gnugo
    from azero.games.sgf import read_sgf

    if find_gnugo() is None:
        pytest.skip("GNU Go is not installed (apt-get install gnugo)")
    out = tmp_path / "go"
    run_tournament(out, game_name="go5x5", players=["random", "gnugo:0"], games_per_pair=2, parallel=2,
                   log=lambda s: None)
    recs = keyed(out)
    assert len(recs) == 2
    for r in recs.values():
        check = r["score_checks"][0]
        assert check["player"] == "gnugo:0" and check["tt_score"] == r["score"]
        assert r["disagreement"] == (check["agrees"] is False)
        sgf = read_sgf((out / r["file"]).read_text())
        assert (sgf.black, sgf.white, sgf.result, sgf.board_size) == (r["first"], r["second"], r["result"], 5)
        assert sgf.moves == r["moves"]


def test_a_missing_gnu_go_stops_the_tournament_before_any_game(tmp_path, monkeypatch):
    import azero.agents.gtp_player as gtp_player

    monkeypatch.setattr(gtp_player, "find_gnugo", lambda: None)
    out = tmp_path / "t"
    with pytest.raises(FileNotFoundError, match="'gnugo:1': GNU Go is not installed"):
        run_tournament(out, game_name="go5x5", players=["random", "mcts:none@2", "gnugo:1"], games_per_pair=2,
                       parallel=2)
    assert not (out / "results.jsonl").exists() or not (out / "results.jsonl").read_text().strip()
