"""The KataGo-format JSON analysis engine: answers, perspectives, batching, actions, streaming."""

from __future__ import annotations

import io
import json
import threading

import numpy as np

from azero.analysis.engine import serve
from azero.search.evaluators import UniformEvaluator
from tests.analysis.conftest import query

GAME = [("B", "E5"), ("W", "C3"), ("B", "G7"), ("W", "D6")]


def finals(answers):
    return [a for a in answers if "turnNumber" in a and a.get("isDuringSearch") is False]


def test_every_asked_turn_gets_one_answer_with_its_visits(engine_on):
    c = engine_on()
    out = finals(c.ask(query(moves=GAME, analyzeTurns=[0, 2, 4], maxVisits=20)))
    assert sorted(a["turnNumber"] for a in out) == [0, 2, 4]
    for a in out:
        assert a["rootInfo"]["visits"] == 20
        assert sum(m["visits"] for m in a["moveInfos"]) == 19  # the root's own evaluation is a visit
        assert [m["order"] for m in a["moveInfos"]] == list(range(len(a["moveInfos"])))
        visits = [m["visits"] for m in a["moveInfos"]]
        assert visits == sorted(visits, reverse=True)
        for m in a["moveInfos"]:
            assert m["pv"][0] == m["move"] and 0 <= m["winrate"] <= 1 and 0 <= m["prior"] <= 1
            assert "scoreLead" in m and m["scoreLead"] == m["scoreMean"]
        assert a["rootInfo"]["currentPlayer"] == ("B" if a["turnNumber"] % 2 == 0 else "W")


def test_the_default_turn_is_the_last_and_the_default_visits_apply(engine_on):
    c = engine_on(default_visits=12)
    (a,) = finals(c.ask(query(moves=GAME)))
    assert a["turnNumber"] == len(GAME) and a["rootInfo"]["visits"] == 12


def test_perspectives_black_and_side_to_move_mirror_for_white(engine_on):
    asked = query(moves=GAME[:1], maxVisits=24, includeOwnership=True)  # white to move
    (black,) = finals(engine_on(report_as="BLACK").ask(asked))
    (side,) = finals(engine_on(report_as="SIDETOMOVE").ask(asked))
    assert black["rootInfo"]["currentPlayer"] == "W"
    assert abs(black["rootInfo"]["winrate"] - (1 - side["rootInfo"]["winrate"])) < 1e-5
    assert abs(black["rootInfo"]["scoreLead"] + side["rootInfo"]["scoreLead"]) < 1e-5
    assert np.allclose(black["ownership"], -np.asarray(side["ownership"]), atol=1e-5)
    by_move = {m["move"]: m for m in side["moveInfos"]}
    for m in black["moveInfos"]:
        assert abs(m["winrate"] - (1 - by_move[m["move"]]["winrate"])) < 1e-5
    # the query's overrideSettings win over the engine's setting
    (override,) = finals(engine_on(report_as="BLACK").ask(
        {**asked, "overrideSettings": {"reportAnalysisWinratesAs": "SIDETOMOVE"}}))
    assert override["rootInfo"]["winrate"] == side["rootInfo"]["winrate"]


def test_ownership_and_policy_have_the_board_layout(engine_on):
    (a,) = finals(engine_on().ask(query(moves=GAME, maxVisits=8, includeOwnership=True, includePolicy=True)))
    assert len(a["ownership"]) == 81 and all(-1 <= v <= 1 for v in a["ownership"])
    assert len(a["policy"]) == 82
    # occupied points are illegal: E5 is row 5 from the bottom (index (9 - 5) * 9 + 4), C3, G7, D6
    for index in (4 * 9 + 4, 6 * 9 + 2, 2 * 9 + 6, 3 * 9 + 3):
        assert a["policy"][index] == -1
    legal = [p for p in a["policy"] if p != -1]
    assert abs(sum(legal) - 1) < 1e-4


def test_one_query_for_the_game_answers_as_one_query_per_turn(engine_on):
    """Rows of a batch search independently: batching changes the speed, never the answers."""
    uniform = UniformEvaluator()
    whole = finals(engine_on(uniform, features="basic").ask(query(moves=GAME, analyzeTurns=[1, 2, 3], maxVisits=30)))
    c = engine_on(uniform, features="basic")
    single = finals(c.ask(*[query(f"t{t}", moves=GAME, analyzeTurns=[t], maxVisits=30) for t in (1, 2, 3)]))
    key = lambda a: a["turnNumber"]  # noqa: E731
    for a, b in zip(sorted(whole, key=key), sorted(single, key=key)):
        assert a["moveInfos"] == b["moveInfos"] and a["rootInfo"] == b["rootInfo"]


def test_parallel_parts_answer_every_turn(engine_on):
    c = engine_on(workers=2, rows=4)
    out = finals(c.ask(query(moves=GAME, analyzeTurns=[0, 1, 2, 3, 4], maxVisits=10)))
    assert sorted(a["turnNumber"] for a in out) == [0, 1, 2, 3, 4]
    assert all(a["rootInfo"]["visits"] == 10 for a in out)


def test_a_network_without_heads_leaves_scores_and_ownership_out_with_warnings(engine_on, tiny_checkpoint):
    from azero.agents.checkpoints import load_evaluator

    plain = load_evaluator(tiny_checkpoint, precision="f32", backend="torch").evaluator
    out = engine_on(plain, features="basic").ask(query(moves=GAME, maxVisits=8, includeOwnership=True))
    warned = {a["field"] for a in out if "warning" in a}
    assert {"scoreLead", "includeOwnership"} <= warned
    (a,) = finals(out)
    assert "ownership" not in a and "scoreLead" not in a["rootInfo"]
    assert all("scoreLead" not in m for m in a["moveInfos"]) and a["moveInfos"]


def test_initial_stones_and_initial_player(engine_on):
    (a,) = finals(engine_on().ask(query(initialStones=[["B", "C3"], ["B", "G7"]], initialPlayer="W",
                                        maxVisits=6, includePolicy=True)))
    assert a["rootInfo"]["currentPlayer"] == "W" and a["turnNumber"] == 0
    assert a["policy"][6 * 9 + 2] == -1 and a["policy"][2 * 9 + 6] == -1


def test_higher_priority_is_answered_first(engine_on):
    c = engine_on(rows=1)
    out = finals(c.ask(query("low", maxVisits=4, priority=0), query("high", maxVisits=4, priority=5)))
    assert [a["id"] for a in out] == ["high", "low"]


def test_queries_with_other_komi_are_answered_too(engine_on):
    out = finals(engine_on().ask(query("a", maxVisits=6), query("b", maxVisits=6, komi=5.5), query("c", maxVisits=6)))
    assert sorted(a["id"] for a in out) == ["a", "b", "c"]


def test_during_search_reports_then_exactly_one_final(engine_on):
    ticks = iter(range(10**6))
    c = engine_on(now=lambda: float(next(ticks)), chunk=4)
    out = c.ask(query(maxVisits=40, reportDuringSearchEvery=0.5))
    during = [a for a in out if a.get("isDuringSearch")]
    assert during and len(finals(out)) == 1
    visits = [a["rootInfo"]["visits"] for a in during]
    assert visits == sorted(visits) and visits[-1] < 40
    assert out[-1]["isDuringSearch"] is False and out[-1]["rootInfo"]["visits"] == 40


def test_terminate_ends_a_running_query_with_its_visits_and_a_waiting_one_with_no_results(engine_on):
    c = engine_on(rows=1, chunk=4, max_visits=1000)
    c.engine.submit(json.dumps(query("long", maxVisits=1000)))
    c.engine.submit(json.dumps(query("waiting", maxVisits=1000)))
    c.engine.step()
    c.engine.submit(json.dumps({"id": "t", "action": "terminate", "terminateId": "long"}))
    c.engine.submit(json.dumps({"id": "t2", "action": "terminate", "terminateId": "waiting", "turnNumbers": [0]}))
    c.engine.drain()
    out = [json.loads(line) for line in c.lines]
    acks = [a for a in out if a.get("action") == "terminate"]
    assert [a["id"] for a in acks] == ["t", "t2"]
    (long,) = [a for a in out if a.get("id") == "long"]
    assert 1 < long["rootInfo"]["visits"] < 1000 and long["isDuringSearch"] is False
    (waiting,) = [a for a in out if a.get("id") == "waiting"]
    assert waiting["noResults"] is True and waiting["isDuringSearch"] is False


def test_actions(engine_on):
    c = engine_on()
    version, cache, unknown, bad = c.ask({"id": "v", "action": "query_version"}, {"id": "c", "action": "clear_cache"},
                                         {"id": "u", "action": "explode"}, {"id": 3, "action": "query_version"})
    assert version["id"] == "v" and version["action"] == "query_version" and "version" in version
    assert cache == {"id": "c", "action": "clear_cache"}
    assert unknown["id"] == "u" and unknown["field"] == "action" and "explode" in unknown["error"]
    assert bad["field"] == "id"


def test_serve_reads_while_searching_and_finishes_every_query_at_end_of_input(engine_on):
    c = engine_on()
    lines = "\n".join(json.dumps(query(f"q{k}", maxVisits=8)) for k in range(3)) + "\nnot json\n"
    t = threading.Thread(target=serve, args=(c.engine, io.StringIO(lines)))
    t.start()
    t.join(timeout=60)
    assert not t.is_alive()
    out = [json.loads(line) for line in c.lines]
    assert sorted(a["id"] for a in finals(out)) == ["q0", "q1", "q2"]
    assert any("error" in a and a["id"] is None for a in out)


def test_max_time_ends_a_turn_with_the_visits_it_has(engine_on):
    ticks = iter(range(10**6))
    c = engine_on(now=lambda: float(next(ticks)), chunk=2, max_visits=1000)
    (a,) = finals(c.ask(query(maxVisits=1000, overrideSettings={"maxTime": 3})))
    assert 1 < a["rootInfo"]["visits"] < 1000


def test_the_cli_refuses_go_options_for_other_games_and_text_for_go(capsys):
    from azero.cli import main

    assert main(["analyze", "--game", "connect4", "--rows", "8"]) == 2
    assert "--rows: only for Go" in capsys.readouterr().err
    assert main(["analyze", "--game", "go9x9", "--format", "text"]) == 2
    assert "JSON protocol only" in capsys.readouterr().err
