"""Bad input to the JSON analysis engine: each gets an error (or a warning) for its query id, and the
stream goes on."""

from __future__ import annotations

import pytest

from tests.analysis.conftest import query

GOOD = query("ok", maxVisits=4)


def answer_to(c, bad):
    """What the engine wrote for `bad`, then check that a good query after it is still answered."""
    out = c.ask(bad, GOOD)
    assert any(a.get("id") == "ok" and a.get("isDuringSearch") is False for a in out), out
    return [a for a in out if a.get("id") != "ok"]


@pytest.mark.parametrize("line, field, words", [
    ('{"id": "m", "moves": [', None, "JSON"),
    ('{"id": "m", "moves": [["B" "E5"]]}', None, "JSON"),
    ("[" * 100000, None, "JSON"),
    ('["a", "list"]', None, "object"),
])
def test_malformed_lines(engine_on, line, field, words):
    (err,) = answer_to(engine_on(), line)
    assert "error" in err and words in err["error"] and err.get("field") == field
    if '"id": "m"' in line:
        assert err["id"] == "m"  # recovered from the raw text


@pytest.mark.parametrize("change, field, words", [
    ({"moves": [["B", "E5"], ["W", "E5"]]}, "moves", "occupied"),
    ({"moves": [["B", "Z99"]]}, "moves", "off the 9x9 board"),
    ({"moves": [["B", "E5x"]]}, "moves", "malformed"),
    ({"moves": [["B", "J10"]]}, "moves", "off the 9x9 board"),
    ({"moves": [["X", "E5"]]}, "moves", "player B or W"),
    ({"moves": "E5"}, "moves", "list"),
    ({"initialStones": [["B", "C3"], ["W", "C3"]]}, "initialStones", "C3"),
    ({"boardXSize": 19, "boardYSize": 19}, "boardXSize", "9x9"),
    ({"boardXSize": 9, "boardYSize": 13}, "boardYSize", "square"),
    ({"boardXSize": "9"}, "boardXSize", "integer"),
    ({"maxVisits": 0}, "maxVisits", ">= 1"),
    ({"maxVisits": -5}, "maxVisits", ">= 1"),
    ({"maxVisits": "100"}, "maxVisits", ">= 1"),
    ({"maxVisits": 2.5}, "maxVisits", ">= 1"),
    ({"maxVisits": True}, "maxVisits", ">= 1"),
    ({"analyzeTurns": [3]}, "analyzeTurns", "out of range"),
    ({"analyzeTurns": []}, "analyzeTurns", "non-empty"),
    ({"komi": 1000}, "komi", "komi"),
    ({"komi": "7.5"}, "komi", "komi"),
    ({"rules": "chess"}, "rules", "unknown rules"),
    ({"includeOwnership": "yes"}, "includeOwnership", "true or false"),
    ({"reportDuringSearchEvery": 0}, "reportDuringSearchEvery", "> 0"),
    ({"priorities": [1, 2]}, "priorities", "one per"),
    ({"initialPlayer": "black"}, "initialPlayer", "initialPlayer"),
    ({"overrideSettings": {"reportAnalysisWinratesAs": "RED"}}, "overrideSettings", "BLACK"),
])
def test_bad_fields_get_an_error_naming_the_field(engine_on, change, field, words):
    (err,) = answer_to(engine_on(), {**query("bad"), **change})
    assert err["id"] == "bad" and err["field"] == field and words in err["error"], err


@pytest.mark.parametrize("missing", ["id", "moves", "rules", "boardXSize"])
def test_required_fields(engine_on, missing):
    bad = {k: v for k, v in query("bad").items() if k != missing}
    (err,) = answer_to(engine_on(), bad)
    assert err["field"] == missing and "required" in err["error"]


def test_unknown_and_unsupported_fields_are_warnings_and_the_query_is_answered(engine_on):
    out = engine_on().ask({**query("w", maxVisits=4), "colour": "blue", "avoidMoves": [{"player": "B"}],
                           "rules": "japanese", "overrideSettings": {"wideRootNoise": 0.04}})
    warned = {a["field"] for a in out if "warning" in a}
    assert warned == {"colour", "avoidMoves", "rules", "overrideSettings"}
    assert any(a.get("isDuringSearch") is False for a in out)


def test_a_huge_max_visits_is_cut_to_the_engine_limit_with_a_warning(engine_on):
    out = engine_on(max_visits=32).ask(query("h", maxVisits=10**30))
    (warning,) = [a for a in out if "warning" in a and a["field"] == "maxVisits"]
    assert "32" in warning["warning"]
    (a,) = [a for a in out if "rootInfo" in a]
    assert a["rootInfo"]["visits"] == 32
