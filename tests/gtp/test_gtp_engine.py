"""GTP conformance of GtpEngine, command by command, in-process (no subprocess, no network)."""

from __future__ import annotations

import pytest
from gtpboard import showboard

from azero.agents.checkpoints import load_evaluator
from azero.gtp.engine import GtpEngine

REQUIRED = {"protocol_version", "name", "version", "known_command", "list_commands", "quit", "boardsize",
            "clear_board", "komi", "play", "genmove", "undo", "final_score", "showboard", "time_settings",
            "time_left", "kgs-genmove_cleanup"}


def board_of(engine, ask) -> list[str]:
    """The rows of showboard, top row first, as strings of '.', 'X', 'O'."""
    return showboard(engine, ask)[0]


def play_all(engine, ask, moves: str) -> None:
    """Alternate Black and White through space-separated vertices; every move must be accepted."""
    for k, v in enumerate(moves.split()):
        ok, _, text = ask(engine, f"play {'bw'[k % 2]} {v}")
        assert ok, f"play {v}: {text}"


def test_administrative_commands_and_ids(make_engine, ask):
    e = make_engine()
    assert ask(e, "protocol_version") == (True, "", "2")
    assert ask(e, "12 name") == (True, "12", "azero")
    ok, ident, version = ask(e, "007 version")
    assert ok and ident == "007" and version  # the id is echoed exactly as sent
    ok, _, listing = ask(e, "list_commands")
    names = listing.split("\n")
    assert REQUIRED <= set(names) and len(names) == len(set(names))
    for name in names:
        assert ask(e, f"known_command {name}") == (True, "", "true")
    for name in ("foo", "PLAY", "genmove_black", "known_command2"):
        assert ask(e, f"3 known_command {name}") == (True, "3", "false")
    assert ask(e, "known_command")[0] is False


def test_unknown_and_malformed_lines(make_engine, ask):
    e = make_engine()
    assert ask(e, "foo") == (False, "", "unknown command")
    assert ask(e, "5 foo bar") == (False, "5", "unknown command")
    assert ask(e, "PLAY b D4") == (False, "", "unknown command")  # command names are case-sensitive
    assert ask(e, "42") == (False, "42", "unknown command")       # an id and nothing else
    assert ask(e, "-3 name") == (False, "", "unknown command")    # '-3' is no id, so it is the command
    # Lines GTP ignores get no response at all.
    for line in ("", "   ", "\t", "# just a comment", "\x01\x02", "\n"):
        assert e.handle(line) is None
    # Preprocessing: control characters removed, tabs are spaces, '#' starts a comment.
    assert ask(e, "na\x00me") == (True, "", "azero")
    assert ask(e, "1\tname # trailing comment") == (True, "1", "azero")
    assert ask(e, "play\tb\tD4\r")[0] is True
    assert board_of(e, ask)[5][3] == "X"


def test_boardsize_clear_board_and_sizes_a_network_cannot_play(make_engine, ask, tiny_checkpoint):
    e = make_engine()
    play_all(e, ask, "D4")
    assert ask(e, "boardsize 13")[0]
    assert board_of(e, ask) == ["." * 13] * 13 and e.board.history == []  # boardsize clears
    for bad in ("1", "20", "25", "0"):
        assert ask(e, f"boardsize {bad}") == (False, "", "unacceptable size")
    for malformed in ("boardsize x", "boardsize", "boardsize 9 9", "boardsize -9", "boardsize 9.0"):
        ok, _, text = ask(e, malformed)
        assert not ok and text.startswith("syntax error"), (malformed, text)
    assert e.board.board_size == 13  # failed commands change nothing
    play_all(e, ask, "A1 N13")
    assert ask(e, "clear_board")[0]
    assert board_of(e, ask) == ["." * 13] * 13

    net = GtpEngine(load_evaluator(str(tiny_checkpoint), device="cpu"), simulations=4)
    assert ask(net, "boardsize 9")[0]
    for other in (13, 19, 5):
        assert ask(net, f"boardsize {other}") == (False, "", "unacceptable size")
    assert net.board.board_size == 9
    ok, _, vertex = ask(net, "genmove b")
    assert ok and (vertex == "pass" or sum(row.count("X") for row in board_of(net, ask)) == 1)
    assert "ckpt_000000001" in ask(net, "version")[2]
    # after the opponent's pass, a network without an ownership head falls back to the board count
    assert ask(net, "play w pass")[0] and ask(net, "genmove b")[0]
    with pytest.raises(ValueError, match="does not play 13x13"):
        GtpEngine(load_evaluator(str(tiny_checkpoint), device="cpu"), board_size=13)


def test_komi_and_final_score_after_known_sequences(make_engine, ask):
    e = make_engine()
    assert ask(e, "final_score") == (True, "", "W+7.5")  # empty board: komi only
    assert ask(e, "komi 6.5")[0] and ask(e, "final_score")[2] == "W+6.5"
    assert ask(e, "komi -3")[0] and ask(e, "final_score")[2] == "B+3"
    assert ask(e, "komi 0")[0] and ask(e, "final_score")[2] == "0"
    for bad in ("komi abc", "komi nan", "komi inf", "komi 1e999", "komi", "komi 1 2", "komi 0x10"):
        ok, _, text = ask(e, bad)
        assert not ok, bad
    assert e.board.komi == 0.0
    assert ask(e, "komi 7.5")[0]
    play_all(e, ask, "E5")
    assert ask(e, "final_score")[2] == "B+73.5"  # one stone owns the whole 9x9 board
    # 5x5, komi 0.5: Black holds columns A-B, White D-E, column C is neutral: 10 - 10 - 0.5.
    assert ask(e, "boardsize 5")[0] and ask(e, "komi 0.5")[0]
    play_all(e, ask, "B1 D1 B2 D2 B3 D3 B4 D4 B5 D5")
    assert ask(e, "final_score")[2] == "W+0.5"
    play_all(e, ask, "C3")  # one Black stone in the neutral column: 11 - 10 - 0.5
    assert ask(e, "final_score")[2] == "B+0.5"
    # A capture: the White stone on A1 dies (Black B1 is already there, A2 completes it).
    e2 = make_engine()
    play_all(e2, ask, "B1 A1 A2")
    assert board_of(e2, ask)[8][:2] == ".X" and board_of(e2, ask)[7][0] == "X"
    assert ask(e2, "final_score")[2] == "B+73.5"  # three black stones, the rest black area


def test_play_refuses_illegal_moves_and_changes_nothing(make_engine, ask):
    e = make_engine()
    play_all(e, ask, "D5 E5 E6 F6 E4 F4 A1 G5")
    before = board_of(e, ask)
    assert ask(e, "play b D5") == (False, "", "illegal move")   # occupied
    assert ask(e, "play w D5") == (False, "", "illegal move")
    for off in ("Z9", "J10", "A0", "T19", "Z25"):               # well-formed, off the 9x9 board
        assert ask(e, f"play b {off}") == (False, "", "illegal move"), off
    for bad in ("play x D4", "play b", "play", "play b D4 E4", "play b 44", "play b D", "play b resign",
                "play b I5", "play b D٤", "play b ＤＤ", "play white D4x", "play blackk D4"):
        ok, _, text = ask(e, bad)
        assert not ok and text.startswith("syntax error"), (bad, text)
    assert board_of(e, ask) == before and len(e.board.history) == 8
    # Ko: Black F5 takes the White stone on E5; White may not retake at once (positional superko).
    assert ask(e, "play b F5")[0]
    assert board_of(e, ask)[4][3:7] == "X.XO"
    after_capture = board_of(e, ask)
    assert ask(e, "play w E5") == (False, "", "illegal move")
    assert board_of(e, ask) == after_capture
    assert ask(e, "play w H8")[0] and ask(e, "play b H2")[0]
    assert ask(e, "play w E5")[0]  # after a ko threat exchange the recapture is legal
    # Suicide: a Black stone on J9 inside White H9/J8 is refused.
    e3 = make_engine()
    play_all(e3, ask, "A1 H9 A2 J8")
    assert ask(e3, "play b J9") == (False, "", "illegal move")


def test_play_out_of_turn_inserts_a_pass(make_engine, ask):
    e = make_engine()
    play_all(e, ask, "D4")
    assert ask(e, "play b E5")[0]  # Black twice: White passed in between
    rows = board_of(e, ask)
    assert rows[5][3] == "X" and rows[4][4] == "X"
    assert e.board.to_play() == 1 and e.board.history == [(0, 48), (0, 40)]
    assert "White to move" in ask(e, "showboard")[2]
    # Moves continue after two passes (GoGui, KGS cleanup): the pass pair is dropped internally.
    assert ask(e, "play w pass")[0] and ask(e, "play b pass")[0]
    assert e.board.states.terminal()[0]
    assert ask(e, "play w C3")[0] and board_of(e, ask)[6][2] == "O"
    assert ask(e, "undo")[0] and ask(e, "undo")[0]  # takes back W C3 and B pass; W pass is last
    assert e.board.to_play() == 0 and board_of(e, ask)[6][2] == "." and not e.board.states.terminal()[0]
    assert ask(e, "undo")[0] and e.board.to_play() == 1


def test_undo_restores_positions_including_captures(make_engine, ask):
    e = make_engine()
    assert ask(e, "undo") == (False, "", "cannot undo")
    play_all(e, ask, "B1 A1")
    board_two = board_of(e, ask)
    play_all(e, ask, "A2")  # captures A1
    assert board_of(e, ask)[8][0] == "."
    assert ask(e, "undo")[0]
    assert board_of(e, ask) == board_two and e.board.to_play() == 0
    ok, _, v = ask(e, "genmove b")
    assert ok and ask(e, "undo")[0] and board_of(e, ask) == board_two
    assert ask(e, "undo")[0] and ask(e, "undo")[0]
    assert board_of(e, ask) == ["." * 9] * 9
    assert ask(e, "undo") == (False, "", "cannot undo")


def test_genmove_plays_a_legal_move_for_the_colour_asked(make_engine, ask):
    e = make_engine(simulations=8)
    for colour, mark in (("b", "X"), ("w", "O"), ("black", "X"), ("WHITE", "O")):
        before = sum(row.count(mark) for row in board_of(e, ask))
        ok, _, v = ask(e, f"genmove {colour}")
        assert ok and v != "resign"
        after = sum(row.count(mark) for row in board_of(e, ask))
        assert after == before + (v != "pass")
    # Black to move, but White asked: White plays (a Black pass is inserted).
    ok, _, v = ask(e, "genmove w")
    assert ok and e.board.history[-1][0] == 1 and e.board.to_play() == 0
    assert ask(e, "genmove x")[0] is False and ask(e, "genmove")[0] is False
    # reg_genmove answers without playing.
    before = board_of(e, ask)
    history = list(e.board.history)
    ok, _, v = ask(e, "reg_genmove b")
    assert ok and board_of(e, ask) == before and e.board.history == history


def test_search_settings_reach_genmove_and_the_analysis_tree(make_engine, ask):
    e = make_engine(simulations=8, search={"c_init": 2.0, "final_q_share": 0.5})
    assert e.agent.config.c_init == 2.0 and e.agent.config.final_q_share == 0.5
    ok, _, v = ask(e, "genmove b")
    assert ok and v != "resign"
    tree = e.ponder_search(1)
    assert tree.mcts.config.c_init == 2.0 and tree.mcts.config.final_q_share == 0.5
    for refused in ({"graph": True}, {"max_nodes": 100}):
        with pytest.raises(ValueError, match=f"--search {next(iter(refused))}: not for the GTP engine"):
            make_engine(search=refused)


def test_showboard_content(make_engine, ask):
    e = make_engine()
    play_all(e, ask, "C3 G7")
    ok, _, text = ask(e, "showboard")
    lines = text.split("\n")
    assert lines[0].split() == list("ABCDEFGHJ")
    rows = board_of(e, ask)
    assert rows[6][2] == "X" and rows[2][6] == "O"
    assert sum(r.count("X") + r.count("O") for r in rows) == 2
    assert "Black to move" in text and "komi 7.5" in text and "last move: W G7" in text
    assert e.handle("showboard").startswith("= \n")  # the board starts on its own line


def test_final_status_list_matches_tromp_taylor(make_engine, ask):
    e = make_engine()
    play_all(e, ask, "C3 G7")
    assert set(ask(e, "final_status_list alive")[2].split()) == {"C3", "G7"}
    assert ask(e, "final_status_list dead") == (True, "", "")
    assert ask(e, "final_status_list sick")[0] is False


def test_quit(make_engine, ask):
    e = make_engine()
    assert ask(e, "9 quit") == (True, "9", "")
    assert e.quit_requested


class Recorder:
    """Wraps a MctsPlayer, recording the simulation budgets asked for."""

    def __init__(self, agent):
        self.agent, self.budgets = agent, []

    def search(self, root, *, simulations, spec):
        self.budgets.append(simulations)
        return self.agent.search(root, simulations=simulations, spec=spec)

    def __getattr__(self, name):
        return getattr(self.agent, name)


class TickClock:
    """A clock that advances 1 ms per reading: think times, and so the measured speed, do not
    depend on how fast or loaded the machine is."""

    def __init__(self):
        self.t = 0.0

    def __call__(self):
        self.t += 0.001
        return self.t


def test_time_settings_and_time_left_cut_the_budget(make_engine, ask):
    e = make_engine(simulations=300, now=TickClock())
    rec = e.agent = Recorder(e.agent)
    assert ask(e, "genmove b")[0] and rec.budgets == [300]  # no clock: the fixed budget
    for bad in ("time_settings 1 2", "time_settings a 0 0", "time_settings 10 0 1.5", "time_settings -1 0 0",
                "time_left b 10", "time_left x 10 0", "time_left b ten 0", "time_left b 10 -1"):
        assert ask(e, bad)[0] is False, bad
    assert ask(e, "time_settings 0 1 0")[0]  # byo-yomi time without stones: no limit
    assert ask(e, "genmove w")[0] and rec.budgets[-1] == 300
    assert ask(e, "time_settings 600 30 5")[0] and ask(e, "time_left b 0.05 1")[0]
    rec.budgets.clear()
    assert ask(e, "genmove b")[0]
    # 0.05 s left for one stone, less than the safety margin: a probe search, then one simulation.
    assert rec.budgets[-1] == 1
    assert ask(e, "time_left w 600 0")[0]
    rec.budgets.clear()
    assert ask(e, "genmove w")[0]
    assert rec.budgets[-1] == 300  # 10 minutes of main time: the fixed budget fits


def test_kgs_cleanup_captures_dead_stones_before_passing(make_engine, ask):
    e = make_engine(simulations=8)
    assert ask(e, "boardsize 7")[0] and ask(e, "komi 0.5")[0]
    # White lives in the lower right corner (eyes F1 and G2) behind a Black wall; the two White
    # stones B6 and C6 are dead in Black's area. Moves alternate, so fillers are passes.
    black = "D1 D2 D3 D4 E4 F4 G4"
    white = "E1 E2 E3 F3 G3 F2 G1 B6 C6"
    for k in range(max(len(black.split()), len(white.split()))):
        for colour, stones in (("b", black.split()), ("w", white.split())):
            assert ask(e, f"play {colour} {stones[k] if k < len(stones) else 'pass'}")[0]
    # Black keeps playing (White passes) until B6 and C6 are gone, and only then passes.
    for _ in range(60):
        rows = board_of(e, ask)
        dead_left = rows[1][1] == "O" or rows[1][2] == "O"
        ok, _, v = ask(e, "kgs-genmove_cleanup b")
        assert ok
        if v == "pass":
            break
        assert ask(e, "play w pass")[0]
    else:
        pytest.fail("cleanup never passed")
    rows = board_of(e, ask)
    assert not dead_left and rows[1][1] != "O" and rows[1][2] != "O"
    assert sum(r.count("O") for r in rows) == 7  # the living White group is untouched
    # Everything outside White's corner is Black's now: 49 - 9 (White stones + eyes) - 0.5.
    assert ask(e, "final_score")[2] == "B+30.5"


def test_internal_errors_become_failures(make_engine, ask):
    e = make_engine()

    def boom(args):
        raise RuntimeError("kaput")

    e.handlers["name"] = boom
    ok, _, text = ask(e, "name")
    assert not ok and "internal error" in text and "kaput" in text
    assert ask(e, "protocol_version") == (True, "", "2")


def test_huge_clocks_and_integers_are_argument_errors_or_harmless(make_engine, ask):
    e = make_engine(simulations=12, now=TickClock())
    rec = e.agent = Recorder(e.agent)
    # a clock far beyond any game: moves keep coming, at the fixed budget
    for line in ("time_settings 1e308 0 0", "time_left b 1e308 0", "time_settings 1e308 1e308 1"):
        assert ask(e, line)[0], line
        ok, _, text = ask(e, "genmove b")
        assert ok, (line, text)
        assert rec.budgets[-1] == 12
    # integers of thousands of digits: a plain failure naming the argument, nothing stuck
    for line, what in ((f"boardsize {'9' * 5000}", "board size"), (f"time_settings 1 1 {'7' * 5000}", "byo-yomi stones"),
                       (f"time_left b 10 {'1' * 4400}", "stones")):
        ok, _, text = ask(e, line)
        assert not ok and what in text and "internal error" not in text, (line, text)
    assert ask(e, "time_settings 0 1 0")[0] and ask(e, "genmove w")[0]
