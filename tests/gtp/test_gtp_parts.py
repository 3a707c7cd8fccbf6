"""The GTP engine's parts on their own: wire format, game record, clock, cleanup rule."""

from __future__ import annotations

import math

import numpy as np
import pytest
from gopositions import drawn_position

from azero.games.base import IllegalActionError
from azero.gtp.board import GtpBoard, derive_sequence
from azero.gtp.cleanup import cleanup_moves
from azero.gtp.protocol import Command, format_response, parse_command, parse_response
from azero.gtp.timecontrol import SAFETY_SECONDS, USABLE_FRACTION, TimeManager


# ---------------------------------------------------------------------- protocol
def test_parse_command():
    assert parse_command("12 play b D4") == Command("12", "play", ("b", "D4"))
    assert parse_command("  genmove\tw  # why not") == Command(None, "genmove", ("w",))
    assert parse_command("na\x07me\r\n") == Command(None, "name", ())
    assert parse_command("7") == Command("7", "", ())
    assert parse_command("x7 name") == Command(None, "x7", ("name",))
    for ignored in ("", "\n", "   ", "# comment", "\x00\x01", "\t#"):
        assert parse_command(ignored) is None


def test_format_and_parse_response_roundtrip():
    assert format_response(True, "", "3") == "=3 \n\n"
    assert format_response(False, "unknown command") == "? unknown command\n\n"
    board = "\n 9 . .\n\n 8 . .\n"
    text = format_response(True, board, "1")
    assert text == "=1 \n 9 . .\n 8 . .\n\n"  # blank lines inside would end the response early
    r = parse_response(text.rstrip("\n").split("\n"))
    assert r.ok and r.id == "1" and r.text == "9 . .\n 8 . ."
    r = parse_response(["?17 illegal move"])
    assert not r.ok and r.id == "17" and r.text == "illegal move"
    with pytest.raises(ValueError):
        parse_response(["hello"])


# ---------------------------------------------------------------------- game record
def test_sequence_derivation_inserts_passes_and_drops_finished_pass_pairs():
    P = 81
    assert derive_sequence([(0, 10), (1, 11)], P) == [10, 11]
    assert derive_sequence([(0, 10), (0, 12)], P) == [10, P, 12]          # Black twice
    assert derive_sequence([(1, 10)], P) == [P, 10]                       # White first
    assert derive_sequence([(0, P), (1, P), (0, 5)], P) == [5]            # play on after two passes
    assert derive_sequence([(0, 10), (1, P), (1, 12)], P) == [10, 12]     # W pass, W again: B's pass pair drops
    assert derive_sequence([(0, P), (1, P)], P) == [P, P]                 # a game that ended stays ended


def test_board_play_undo_komi_and_move_limit():
    b = GtpBoard(5, 7.5)
    b.play(0, 12)
    b.play(0, 13)  # out of turn: a White pass goes in between
    assert b.sequence == [12, 25, 13] and b.to_play() == 1
    with pytest.raises(IllegalActionError):
        b.play(1, 12)
    assert b.sequence == [12, 25, 13] and len(b.history) == 2  # refused: nothing changed
    b.set_komi(0.5)
    assert b.komi == 0.5 and b.sequence == [12, 25, 13] and b.score() == 25 - 0.5
    root = b.position_for(0)  # Black asked to move: a White pass first
    assert int(root.to_play()[0]) == 0 and int(root.num_moves()[0]) == 4
    assert b.undo() and b.sequence == [12] and b.undo() and not b.undo()
    passes = GtpBoard(2, 0.5)
    for _ in range(passes.game.max_moves):
        passes.play(0, 4)  # Black passes again and again: each pass pair drops, the game never ends
    assert passes.sequence == [4] and not passes.states.terminal()[0]


def test_board_move_limit(monkeypatch):
    import azero.gtp.board as board_module

    monkeypatch.setattr(board_module, "MOVE_LIMIT_FACTOR", 1)  # 2x2: four moves
    b = GtpBoard(2, 0.5)
    for colour, action in ((0, 0), (1, 3), (0, 1), (1, 2)):  # the last move captures Black's two stones
        b.play(colour, action)
    assert b.states.terminal()[0]
    with pytest.raises(IllegalActionError, match="limit of 4 moves"):
        b.position_for(0)
    with pytest.raises(IllegalActionError):
        b.play(0, 4)
    assert len(b.history) == 4 and b.undo() and not b.states.terminal()[0]


# ---------------------------------------------------------------------- clock
def test_time_settings_semantics():
    tm = TimeManager()
    assert tm.move_seconds(0, 0, 9) is None                       # no clock
    tm.set_settings(0, 1, 0)
    assert not tm.limited and tm.move_seconds(0, 0, 9) is None    # byo-yomi time, no stones: no limit
    tm.set_settings(300, 0, 0)                                    # absolute time
    assert tm.limited
    expected = (0.75 * 81 + 40) / 2
    assert tm.move_seconds(0, 0, 9) == pytest.approx(300 / expected * USABLE_FRACTION)
    # Late in the game the reserve keeps at least MIN_MOVES_LEFT moves' worth.
    assert tm.move_seconds(0, 500, 9) == pytest.approx(300 / 8 * USABLE_FRACTION)
    tm.set_settings(60, 30, 10)
    tm.set_time_left(1, 20, 5)                                    # White in byo-yomi: 20 s for 5 stones
    assert tm.move_seconds(1, 40, 9) == pytest.approx(4 * USABLE_FRACTION)
    tm.set_time_left(1, 0.2, 1)
    assert tm.move_seconds(1, 40, 9) == 0.0                       # below the safety margin
    assert TimeManager(time_per_move=2.0).move_seconds(0, 0, 9) == 2.0
    capped = TimeManager(time_per_move=100.0)
    capped.set_settings(0, 10, 1)
    assert capped.move_seconds(0, 0, 9) == pytest.approx((10 - SAFETY_SECONDS) * USABLE_FRACTION)
    with pytest.raises(ValueError):
        TimeManager(time_per_move=0)


def test_clock_bookkeeping_and_rate():
    tm = TimeManager()
    tm.set_settings(10, 6, 3)
    tm.spend(0, 4)
    assert (tm.clocks[0].seconds, tm.clocks[0].stones) == (6, 0)
    tm.spend(0, 7)                       # main time runs out: byo-yomi starts, the 1 s overrun charged
    assert (tm.clocks[0].seconds, tm.clocks[0].stones) == (5, 3)
    tm.spend(0, 1)
    tm.spend(0, 1)
    assert (tm.clocks[0].seconds, tm.clocks[0].stones) == (3, 1)
    tm.spend(0, 1)                       # period complete: a fresh one
    assert (tm.clocks[0].seconds, tm.clocks[0].stones) == (6, 3)
    assert tm.clocks[1].seconds == 10    # the other colour's clock untouched
    assert tm.simulations(None, 300) == 300 and tm.simulations(1.0, 300) == 300  # no rate yet
    tm.record_search(1000, 1.0)
    assert tm.rate == 1000 and tm.simulations(0.1, 300) == 100 and tm.simulations(5, 300) == 300
    assert tm.simulations(0.0, 300) == 1
    tm.record_search(2000, 1.0)
    assert tm.rate == pytest.approx(1300)


# ---------------------------------------------------------------------- cleanup
def _board(rows: list[str]) -> np.ndarray:
    return np.array([[".XO".index(ch) for ch in row] for row in rows], np.int8)


def _cleanup(board: np.ndarray, colour: int, legal: np.ndarray):
    """cleanup_moves on the engine's position holding `board`."""
    rows = ["".join(".XO"[x] for x in row) for row in board]
    return cleanup_moves(drawn_position(rows)[1], colour, legal)


def _legal(board: np.ndarray, illegal=()) -> np.ndarray:
    n = board.shape[0]
    legal = np.append(board.reshape(-1) == 0, True)
    for r, c in illegal:
        legal[r * n + c] = False
    return legal


def _points(mask: np.ndarray, n: int) -> set[tuple[int, int]]:
    return {(int(a) // n, int(a) % n) for a in np.flatnonzero(mask[: n * n])}


def test_cleanup_captures_biggest_first():
    # Two White stones in atari on A5/... (row 0 col 1, row 1 col 0) share the liberty (0, 0);
    # one White stone on (4, 3) has the single liberty (4, 4).
    board = _board([".OX..",
                    "OX...",
                    "X....",
                    "...X.",
                    "..XO."])
    moves = _cleanup(board, 0, _legal(board))
    assert moves.captures == [(0, 2), (24, 1)]
    assert not moves.useful[0] and not moves.useful[24] and not moves.useful[25]  # captures are not 'useful'
    assert _cleanup(board, 1, _legal(board)).captures == []  # White has nothing to take


def test_cleanup_fills_only_disputed_points_that_are_not_self_atari():
    # White shape in the upper left, one Black stone far away: the big empty region touches both.
    board = _board([".O...",
                    "O.O..",
                    ".O...",
                    ".....",
                    "....X"])
    legal = _legal(board, illegal=[(0, 0), (1, 1)])  # suicide for Black
    useful = _points(_cleanup(board, 0, legal).useful, 5)
    empty = _points(_legal(board), 5)
    # (0, 2) and (2, 0) leave a Black stone with one liberty: self-atari, not played.
    assert useful == empty - {(0, 0), (1, 1), (0, 2), (2, 0)}


def test_cleanup_leaves_settled_regions_alone():
    # Black owns the left, White the right; the centre column's points touch both colours.
    board = _board(["XX.OO",
                    "X.XO.",
                    "XX.OO",
                    "X.XO.",
                    "XX.OO"])
    disputed = {(0, 2), (2, 2), (4, 2)}  # (1, 1), (3, 1): Black's eyes; (1, 4), (3, 4): White's
    for colour in (0, 1):
        moves = _cleanup(board, colour, _legal(board))
        assert moves.captures == [] and _points(moves.useful, 5) == disputed
    settled = board.copy()
    settled[0, 2] = settled[2, 2] = settled[4, 2] = 1
    assert not _cleanup(settled, 0, _legal(settled)).useful.any()  # nothing left: pass


def test_coarse_budget_for_gumbel():
    from azero.gtp.engine import coarse_budget

    values = [coarse_budget(s) for s in range(1, 2000)]
    assert all(2 * s < 3 * v and v <= s for s, v in zip(range(1, 2000), values))
    assert len(set(values)) <= 2 * 11 + 1  # two budgets per power of two
    assert [coarse_budget(s) for s in (1, 3, 5, 7, 200, 384)] == [1, 3, 4, 6, 192, 384]
