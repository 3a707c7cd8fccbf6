"""Go's written forms (games/go_notation.py): vertices, results, names."""

from __future__ import annotations

import math

import pytest

from azero.games.base import IllegalActionError
from azero.games.go import GoGame
from azero.games.go_notation import (MalformedVertex, OffBoardVertex, board_size_of, parse_result, parse_vertex,
                                     result_string, score_string, vertex)


def test_vertices_round_trip_and_skip_i():
    assert vertex(0, 9) == "A9" and vertex(80, 9) == "J1" and vertex(81, 9) == "pass"
    assert vertex(8, 19) == "J19"  # no I between H and J
    for n in (2, 9, 13, 19):
        for a in range(n * n + 1):
            assert parse_vertex(vertex(a, n), n) == a
    assert parse_vertex("d4", 9) == parse_vertex("D4", 9) == (9 - 4) * 9 + 3
    assert parse_vertex(" PASS ", 9) == 81
    assert GoGame(9).str_to_action("c7") == parse_vertex("C7", 9)


def test_bad_vertices_say_which_kind():
    for bad in ("", "I5", "A", "5A", "A٣", "AA1", "A123", None):
        with pytest.raises(MalformedVertex):
            parse_vertex(bad, 9)
    for off in ("K1", "A10", "A0", "Z5", "T19"):
        with pytest.raises(OffBoardVertex) as e:
            parse_vertex(off, 9)
        assert "off the 9x9 board" in str(e.value)
    assert issubclass(MalformedVertex, IllegalActionError) and issubclass(OffBoardVertex, IllegalActionError)


def test_scores_and_results():
    assert [score_string(s) for s in (3.5, -0.5, 0.0, 81.0)] == ["B+3.5", "W+0.5", "0", "B+81"]
    for s in (3.5, -0.5, 0.0, 81.0, -73.5):
        assert parse_result(score_string(s)) == s
    assert parse_result("W+R") == -math.inf and parse_result("B+Resign") == math.inf
    assert parse_result("w+12.5") == -12.5 and parse_result("Jigo") == 0.0
    for bad in ("", "B+", "X+3", "B+-3", "3.5", "B+nan"):
        with pytest.raises(ValueError):
            parse_result(bad)
        assert parse_result(bad, strict=False) is None or bad == "B+"
    assert parse_result("B+", strict=False) == math.inf  # a win with no count, as some engines write
    assert result_string(1, score=3.5) == "B+3.5" and result_string(-1, score=-0.5) == "W+0.5"
    assert result_string(-1, resigned=True) == "W+R" and result_string(1) == "B+" and result_string(0) == "0"


def test_game_names():
    assert board_size_of("go9x9") == 9 and board_size_of("go13x13") == 13 and board_size_of("go") == 9
    for other in ("go9x13", "connect4", "go9", "gox"):
        assert board_size_of(other) is None
