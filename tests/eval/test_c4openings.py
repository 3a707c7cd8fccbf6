"""`azero c4-openings` (azero/eval/c4openings.py): every short opening from both sides, the ones the
solver says are lost for the agent listed and not played, wins and score with intervals.

The real 2-move table takes the solver minutes per position, so these tests use a made-up table,
and the shipped tables are checked against each other (negamax) and the known centre win."""

import json

import numpy as np
import pytest

from azero.agents.simple import RandomPlayer
from azero.eval import c4openings
from azero.eval.c4openings import classify, mirror, opening_values, run_openings, table_file
from azero.games import make_game


def _fake_table(plies):
    # A made-up but mirror-symmetric table (24 mirror pairs and "44": 25 solves for real): openings starting in the centre win for the first player,
    # those starting at the edge lose, the rest draw (mover's view; the mover is first for even plies).
    sign = 1 if plies % 2 == 0 else -1
    out = {}
    for seq in c4openings.openings(plies):
        moves = "".join(str(a + 1) for a in seq)
        first = moves[0] if moves else "4"
        out[moves] = sign * (1 if first == "4" else -1 if first in "17" else 0)
    return out


def test_sides_and_exclusions(monkeypatch):
    monkeypatch.setattr(c4openings, "opening_values", lambda plies, **kw: _fake_table(plies))
    res = classify(2, log=lambda m: None)
    assert len(res) == 98
    as_first = {r.opening: r.value for r in res if r.agent_first}
    as_second = {r.opening: r.value for r in res if not r.agent_first}
    assert as_first["44"] == 1 and as_second["44"] == -1 and as_first["15"] == -1 and as_second["72"] == 1
    assert as_first["36"] == as_second["36"] == 0


def test_run_plays_only_what_is_not_lost(monkeypatch):
    monkeypatch.setattr(c4openings, "opening_values", lambda plies, **kw: _fake_table(plies))
    game = make_game("connect4")
    doc = run_openings(game, RandomPlayer(seed=1, name="a"), RandomPlayer(seed=2, name="b"), plies=2, games=2,
                       parallel=40, log=lambda m: None)
    ex = doc["excluded"]
    # lost for the agent: as first player every opening starting 1 or 7 (14), as second every 4x (7)
    assert ex["count"] == 21 and len(ex["agent_first"]) == 14 and ex["agent_second"] == [f"4{c}" for c in "1234567"]
    assert doc["games_played"] == 2 * (98 - 21) == doc["wins"] + doc["draws"] + doc["losses"]
    played = [r for r in doc["openings"] if r["value"] >= 0]
    assert all(len(r["scores"]) == 2 for r in played)
    assert all(not r["scores"] for r in doc["openings"] if r["value"] < 0)
    scores = np.array([s for r in played for s in r["scores"]])
    assert doc["score"] == pytest.approx(scores.mean()) and doc["win_rate"] == pytest.approx((scores == 1).mean())
    assert doc["score_ci"][0] <= doc["score"] <= doc["score_ci"][1]
    assert len(doc["lost_games"]) == doc["losses"]
    assert "left out, lost for the agent" in c4openings.format_summary(doc)


def test_cached_tables_are_read_and_bad_ones_resolved(tmp_path, monkeypatch):
    monkeypatch.setattr(c4openings, "table_file", lambda plies: tmp_path / "none.json")
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "plies1.json").write_text(json.dumps({"values": _fake_table(1)}))
    assert opening_values(1, cache_dir=cache, log=lambda m: None) == _fake_table(1)
    (cache / "plies1.json").write_text(json.dumps({"values": {"1": 5}}))  # incomplete and out of range
    solved = []
    monkeypatch.setattr(c4openings, "solve_openings", lambda plies, log: solved.append(plies) or _fake_table(plies))
    msgs = []
    assert opening_values(1, cache_dir=cache, log=msgs.append) == _fake_table(1)
    assert solved == [1] and any("not a complete table" in m for m in msgs)
    assert json.loads((cache / "plies1.json").read_text())["values"] == _fake_table(1)


def test_mirrors_are_solved_once(monkeypatch):
    calls = []
    monkeypatch.setattr(c4openings, "solve", lambda moves: calls.append(moves) or 0)
    values = c4openings.solve_openings(2, log=lambda m: None)
    assert len(values) == 49 and len(calls) == 25 and all(values[m] == values[mirror(m)] for m in values)
    with pytest.raises(ValueError, match="plies must be in"):
        c4openings.openings(7)


def test_a_killed_solve_resumes_from_its_progress_file(tmp_path, monkeypatch):
    progress = tmp_path / "partial.json"
    calls = []

    def solve_until_killed(moves):
        if len(calls) == 3:
            raise KeyboardInterrupt
        calls.append(moves)
        return -1

    monkeypatch.setattr(c4openings, "solve", solve_until_killed)
    with pytest.raises(KeyboardInterrupt):
        c4openings.solve_openings(2, log=lambda m: None, progress=progress)
    assert set(json.loads(progress.read_text())["values"]) == set(calls)
    monkeypatch.setattr(c4openings, "solve", lambda moves: calls.append(moves) or 1)
    values = c4openings.solve_openings(2, log=lambda m: None, progress=progress)
    assert len(calls) == 25 and len(set(calls)) == 25  # nothing solved twice
    assert sum(v == -1 for v in values.values()) >= 3
    progress.write_text(json.dumps({"plies": 1, "values": {"1": 1}}))
    with pytest.raises(ValueError, match="not 2-move openings"):
        c4openings.solve_openings(2, log=lambda m: None, progress=progress)


@pytest.mark.parametrize("plies", [2])
def test_shipped_tables_agree_with_negamax(plies):
    two, one = table_file(plies), table_file(plies - 1)
    if not (two.is_file() and one.is_file()):
        pytest.skip("the solved opening tables are not shipped in this checkout (experiments/c4_openings.py)")
    v2 = json.loads(two.read_text())["values"]
    v1 = json.loads(one.read_text())["values"]
    for a, v in v1.items():  # the mover after one move picks the reply that is best for them
        assert v == max(-v2[a + b] for b in "1234567"), a
    assert all(v2[m] == v2[mirror(m)] for m in v2)
    assert v1["4"] == -1  # the centre opening wins for the first player (the mover is the second)
