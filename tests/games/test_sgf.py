"""SGF reading and writing: round trips, known coordinates, and refusals of bad input."""

from __future__ import annotations

import datetime

import numpy as np
import pytest

from azero.games import NO_ACTION, make_game
from azero.games.sgf import SgfError, SgfRecord, read_sgf, write_sgf


@pytest.mark.parametrize("size,seed", [(9, 0), (9, 1), (19, 2), (13, 3)])
def test_round_trip_of_random_move_lists(size, seed):
    rng = np.random.default_rng(seed)
    n_moves = int(rng.integers(1, 3 * size * size // 2))
    # legal random games (read_sgf replays the rules); about one move in eight is a pass, never two
    # in a row (that would end the game), so passes appear mid-game
    from azero.games.go import GoGame

    states = GoGame(size, 6.5, max_moves=n_moves + 1).new_states(1)
    moves = []
    while len(moves) < n_moves and not states.terminal()[0]:
        points = np.flatnonzero(states.legal_mask()[0, : size * size])
        last_pass = bool(moves) and moves[-1] == size * size
        a = size * size if (rng.random() < 0.125 and not last_pass) or not len(points) else int(rng.choice(points))
        states.apply(np.array([a], dtype=np.int32))
        moves.append(a)
    text = write_sgf(size, 6.5, moves, result="W+R", black="azero-b", white="azero-w",
                     date=datetime.date(2024, 5, 17))
    assert text.startswith("(;") and "FF[4]" in text and "GM[1]" in text and f"SZ[{size}]" in text
    rec = read_sgf(text)
    assert rec == SgfRecord(board_size=size, komi=6.5, moves=moves, result="W+R", black="azero-b",
                            white="azero-w", rules="Chinese", date="2024-05-17")
    assert read_sgf(text.encode("utf-8")) == rec  # bytes input, decoded by CA[UTF-8]


def test_written_coordinates_are_sgf_letters_from_the_top_left():
    # 9x9: action 0 = A9 = 'aa', 8 = J9 = 'ia', 72 = A1 = 'ai', 80 = J1 = 'ii', 81 = pass
    text = write_sgf(9, 7.5, [0, 8, 72, 80, 81, 40])
    assert ";B[aa];W[ia];B[ai];W[ii];B[tt];W[ee]" in text.replace("\n", "")
    assert "KM[7.5]" in text and "RU[Chinese]" in text
    assert "RE[" not in text and "PB[" not in text  # optional properties only when given


def test_hand_written_sgf_is_read_in_our_convention():
    text = """(;FF[4]GM[1]SZ[9]KM[5.5]RU[Japanese]PB[Honinbo Shusaku]PW[Gennan \\] Inseki]
        RE[B+2.5]DT[1846-09-11]C[a comment]
        ;B[aa]C[top left];W[ia];B[ai]
        ;W[]  ;B[tt]
        ;C[a node with no move]
        ;W[ei](;B[ba])(;B[ab]))"""
    rec = read_sgf(text)
    assert rec.board_size == 9
    assert rec.komi == 5.5
    assert rec.rules == "Japanese"
    assert rec.black == "Honinbo Shusaku"
    assert rec.white == "Gennan ] Inseki"
    assert rec.result == "B+2.5"
    assert rec.date == "1846-09-11"
    # aa = A9 = 0, ia = J9 = 8, ai = A1 = 72, two passes (81), ei = E1 = 8*9+4, main line ba = B9 = 1
    assert rec.moves == [0, 8, 72, 81, 81, 76, 1]


def test_defaults_when_properties_are_absent():
    rec = read_sgf("(;SZ[19];B[pd];W[dp])")
    assert rec.komi == 0.0 and rec.result is None and rec.black == "" and rec.white == "" and rec.rules == ""
    # pd: column p = 15, row d = 3 from the top
    assert rec.moves == [3 * 19 + 15, 15 * 19 + 3]
    assert read_sgf("(;GM[1];B[tt])").board_size == 19  # SGF's default size


@pytest.mark.parametrize("text,message", [
    ("this is not sgf", "cannot parse SGF"),
    ("", "cannot parse SGF"),
    ("(;GM[3]SZ[9];B[aa])", r"GM\[3\] is not a Go game"),
    ("(;SZ[1])", r"SZ\[1\] out of range \[2, 19\]"),
    ("(;SZ[25];B[aa])", r"SZ\[25\] out of range"),
    ("(;SZ[9];B[jj])", r"B\[jj\] is not a point on a 9x9 board"),
    ("(;SZ[9]AB[cc][gg];W[ee])", "setup stones"),
    ("(;SZ[9];B[aa];AW[bb])", "node 2: setup stones"),
    ("(;SZ[9];W[aa])", "by White, expected Black"),
    ("(;SZ[9];B[aa];B[bb])", "move 1 is by Black, expected White"),
    ("(;SZ[9];B[aa]W[bb])", "both a B and a W"),
    ("(;SZ[9]KM[lots])", r"KM\[lots\] is not a number"),
    ("(;FF[7]SZ[9])", r"FF\[7\]"),
])
def test_malformed_or_unsupported_sgf_raises_sgf_error(text, message):
    with pytest.raises(SgfError, match=message):
        read_sgf(text)


def test_sgf_error_is_a_value_error_and_write_validates():
    assert issubclass(SgfError, ValueError)
    with pytest.raises(SgfError, match=r"board size 20 out of range"):
        write_sgf(20, 7.5, [])
    with pytest.raises(SgfError, match=r"move 1: action 82 out of range \[0, 81\]"):
        write_sgf(9, 7.5, [0, 82])
    with pytest.raises(SgfError, match="move 0: action must be an integer"):
        write_sgf(9, 7.5, [1.5])
    with pytest.raises(SgfError, match="komi"):
        write_sgf(9, float("nan"), [])
    assert read_sgf(write_sgf(9, 7.5, [np.int64(5)])).moves == [5]  # numpy integers are fine


def test_a_native_go_game_replays_from_its_sgf():
    pytest.importorskip("azero.games.go")
    game = make_game("go9x9")
    rng = np.random.default_rng(4)
    states = game.new_states(1)
    moves = []
    while not states.terminal()[0] and len(moves) < 120:
        a = int(rng.choice(np.flatnonzero(states.legal_mask()[0])))
        states.apply(np.array([a], dtype=np.int32))
        moves.append(a)
    rec = read_sgf(write_sgf(9, 7.5, moves))
    replay = game.new_states(1)
    path = np.full((1, game.spec.max_moves), NO_ACTION, dtype=np.int32)
    path[0, : len(rec.moves)] = rec.moves
    replay.apply_paths(path)
    np.testing.assert_array_equal(replay.encode(), states.encode())


def test_invalid_utf8_in_a_property_is_an_sgf_error():
    with pytest.raises(SgfError, match="PB"):
        read_sgf(b"(;FF[4]CA[UTF-8]GM[1]SZ[9]PB[\xc3\x28];B[ee])")


@pytest.mark.parametrize("moves, number", [(";B[ee];W[ee]", 2), (";B[ee];W[ff];B[ff]", 3),
                                           # suicide: White's A9 with B9 and A8 black
                                           (";B[ba];W[ee];B[ab];W[aa]", 4)])
def test_illegal_moves_are_rejected_naming_the_move(moves, number):
    with pytest.raises(SgfError, match=f"move {number} "):
        read_sgf(f"(;GM[1]SZ[9]{moves})")


def test_a_capture_and_the_recapture_elsewhere_replay_fine():
    # Black captures the white stone at A9 (corner) and White plays on: all legal
    rec = read_sgf("(;GM[1]SZ[9];B[ba];W[aa];B[ab])")
    assert len(rec.moves) == 3


def test_moves_after_two_passes_are_not_checked():
    # play resumed after two passes (a settled dispute): the record reads as written
    assert read_sgf("(;GM[1]SZ[9];B[ee];W[];B[];W[ee])").moves == [40, 81, 81, 40]
