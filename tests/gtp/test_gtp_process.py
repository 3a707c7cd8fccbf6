"""GTP across process boundaries: the engine's stdin/stdout loop, GtpProcess's error handling, and
GtpPlayer driving azero's own engine in matches (board sync checked through final_score)."""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pytest

from azero.agents.gtp_player import GtpEngineError, GtpError, GtpPlayer, GtpProcess
from matches import play_match
from azero.agents.simple import RandomPlayer
from azero.games.go import GoGame

RESPONSES = re.compile(r"([=?])([0-9]*) ([^\n]*)((?:\n[^\n]+)*)\n\n")
FAST_ENGINE = [sys.executable, "-m", "azero.gtp"]  # no azero.cli import (hydra, torch): quick start-up


def split_responses(stdout: str) -> list[tuple[str, str, str]]:
    """Split a whole stdout into responses; fails if anything else is in it."""
    out, pos = [], 0
    while pos < len(stdout):
        m = RESPONSES.match(stdout, pos)
        assert m, f"non-GTP output at offset {pos}: {stdout[pos:pos + 80]!r}"
        out.append((m.group(1), m.group(2), (m.group(3) + m.group(4)).strip()))
        pos = m.end()
    return out


def test_cli_gtp_over_pipes_writes_only_gtp_to_stdout(tiny_checkpoint):
    script = "\n".join([
        "1 protocol_version", "# a comment line", "", "2 name", "boardsize 9", "clear_board", "komi 6.5",
        "3 play b E5", "4 genmove w", "showboard", "5 play b E5", "bogus", "6 boardsize 13", "final_score",
        "7 quit", "name",  # nothing after quit is answered
    ]) + "\n"
    r = subprocess.run([sys.executable, "-m", "azero.cli", "gtp", "--checkpoint", str(tiny_checkpoint),
                        "--sims", "8", "--device", "cpu"],
                       input=script, capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stderr
    responses = split_responses(r.stdout)
    assert [(ok, ident) for ok, ident, _ in responses] == [
        ("=", "1"), ("=", "2"), ("=", ""), ("=", ""), ("=", ""), ("=", "3"), ("=", "4"), ("=", ""),
        ("?", "5"), ("?", ""), ("?", "6"), ("=", ""), ("=", "7")]
    texts = [t for _, _, t in responses]
    assert texts[0] == "2" and texts[1] == "azero"
    assert texts[8] == "illegal move" and texts[9] == "unknown command" and texts[10] == "unacceptable size"
    board_rows = {line.split()[0]: line.split()[1:-1] for line in texts[7].split("\n") if line[:2].strip().isdigit()}
    assert board_rows["5"][4] == "X" and "Black to move" in texts[7]
    assert "ready" in r.stderr and "genmove W" in r.stderr  # logs go to stderr


def test_cli_gtp_refuses_a_bad_checkpoint_on_stderr(tmp_path):
    bad = tmp_path / "ckpt_000000001.safetensors"
    bad.write_bytes(b"not a checkpoint")
    r = subprocess.run(FAST_ENGINE + ["--checkpoint", str(bad)], input="name\n", capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 2 and r.stdout == "" and "checkpoint" in r.stderr


def test_gtp_refuses_search_settings_before_loading_anything(tmp_path):
    missing = tmp_path / "missing.safetensors"  # never read: the settings are checked first
    for setting, named in (("graph=true", "not for the GTP engine"), ("c_init=x", "not a valid float")):
        r = subprocess.run(FAST_ENGINE + ["--checkpoint", str(missing), "--search", setting], input="name\n",
                           capture_output=True, text=True, timeout=60)
        assert r.returncode != 0 and named in r.stderr and r.stdout == ""


def test_gtp_process_talks_to_azero_line_by_line():
    with GtpProcess(FAST_ENGINE + ["--sims", "4", "--game", "go5x5"], timeout=60) as p:
        assert p.send("name") == "azero"
        assert p.send("play b C3") == ""
        vertex = p.send("genmove w")
        assert re.fullmatch(r"[A-E][1-5]|pass", vertex)
        with pytest.raises(GtpError, match="illegal move"):
            p.send("play b C3")
        assert p.send("final_score").startswith(("B+", "W+")) and p.alive
    assert p.proc.returncode == 0  # quit on close


FAKE_ENGINE = r'''
import sys, time
mode = sys.argv[1]
for line in sys.stdin:
    parts = line.split()
    ident = parts[0] if parts and parts[0].isdigit() else ""
    cmd = (parts[1:] if ident else parts)[:1]
    cmd = cmd[0] if cmd else ""
    if mode == "junk":
        print("debug: thinking...", flush=True)
    if mode == "wrongid":
        ident = "999"
    if cmd == "genmove" and mode == "die":
        print("fatal: out of cheese", file=sys.stderr, flush=True)
        sys.exit(3)
    if cmd == "genmove" and mode == "hang":
        time.sleep(60)
    if cmd == "quit":
        print(f"={ident}\n", flush=True)
        break
    if cmd == "genmove":
        print(f"={ident} D4\n", flush=True)
    elif cmd == "bad":
        print(f"?{ident} no such thing\n", flush=True)
    else:
        print(f"={ident} \n", flush=True)
'''


@pytest.fixture
def fake_engine(tmp_path):
    path = tmp_path / "fake_engine.py"
    path.write_text(FAKE_ENGINE)
    return lambda mode: GtpProcess([sys.executable, str(path), mode], timeout=20, name=f"fake-{mode}")


def test_gtp_process_errors(fake_engine, tmp_path):
    with fake_engine("junk") as p:
        assert p.send("genmove b") == "D4"  # the junk line before the answer is skipped
        with pytest.raises(GtpError, match="no such thing") as info:
            p.send("bad")
        assert info.value.command == "bad" and p.send("genmove w") == "D4"  # still usable

    p = fake_engine("die")
    assert p.send("boardsize 9") == ""
    with pytest.raises(GtpEngineError, match="exited while answering 'genmove b'") as info:
        p.send("genmove b")
    assert "out of cheese" in str(info.value) and "exit code 3" in str(info.value)
    with pytest.raises(GtpEngineError, match="unusable"):
        p.send("name")
    p.close()

    p = fake_engine("hang")
    with pytest.raises(GtpEngineError, match="no answer to 'genmove b' within 0.5s"):
        p.send("genmove b", timeout=0.5)
    assert not p.alive and p.proc.poll() is not None  # killed: its state is unknown
    p.close()

    with fake_engine("wrongid") as p:
        with pytest.raises(GtpEngineError, match="out of step"):
            p.send("name")

    with pytest.raises(GtpEngineError, match="cannot start"):
        GtpProcess([str(tmp_path / "no-such-engine")])
    with pytest.raises(ValueError):
        fake_engine("junk").send("name\nquit")


def test_gtp_process_starts_engines_by_posix_spawn_and_finds_bare_names_on_the_given_path(fake_engine, tmp_path,
                                                                                         monkeypatch):
    """posix_spawn has no error pipe to wait on (the fork path's read of it once hung CI for 600 s);
    a bare command name is looked up on the PATH of the environment the engine gets."""
    spawned = []
    real = subprocess.Popen._posix_spawn
    monkeypatch.setattr(subprocess.Popen, "_posix_spawn",
                        lambda self, args, *rest: spawned.append(args[0]) or real(self, args, *rest))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "fake-engine").symlink_to(sys.executable)
    script = tmp_path / "fake_engine.py"
    with fake_engine("junk") as p:  # a full path: spawned as given
        assert p.send("genmove b") == "D4"
    with GtpProcess(["fake-engine", str(script), "junk"], env={"PATH": str(bin_dir)}, timeout=20) as p:
        assert p.send("genmove w") == "D4" and p.name == "fake-engine"
    assert spawned == [sys.executable, str(bin_dir / "fake-engine")]
    with pytest.raises(GtpEngineError, match="'fake-engine' is not on PATH"):
        GtpProcess(["fake-engine"], env={"PATH": str(tmp_path)})


def test_gtp_player_keeps_engine_boards_in_sync_with_more_games_than_engines():
    """Three 5x5 games at once against two azero engine processes: engines move between games by
    replay, and every engine's final_score (Tromp-Taylor, computed on its own board) must equal
    azero's score of the game as the match recorded it."""
    game = GoGame(5, 0.5)
    engine = GtpPlayer(FAST_ENGINE + ["--game", "go5x5", "--sims", "4", "--quiet"], board_size=5, komi=0.5,
                       max_engines=2, query_final_score=True, timeout=60)
    try:
        result = play_match(game, engine, RandomPlayer(seed=3), games=3, opening_moves=2, seed=1)
    finally:
        engine.close()
    assert result.games == 3 and len(engine._engines) == 0  # closed
    assert engine.name.startswith("azero")
    for g, moves in enumerate(result.moves):
        states = game.new_states(1)
        states.apply_paths(np.asarray([moves], np.int32))
        assert states.terminal()[0]
        score = float(states.score()[0])
        expected = "0" if score == 0 else f"{'B' if score > 0 else 'W'}+{abs(score):g}"
        assert engine.final_scores[g] == expected, (g, moves)
        assert engine.histories[g] == moves
    assert not engine.replaced_moves and not engine.resigned


def test_protocol_streams_send_stray_output_to_stderr():
    """Python prints and C-level writes to fd 1 after protocol_streams() land on stderr; only the
    protocol stream reaches stdout."""
    code = ("import os\n"
            "from azero.gtp.engine import protocol_streams\n"
            "inp, out = protocol_streams()\n"
            "print('python noise')\n"
            "os.write(1, b'fd noise\\n')\n"
            "out.write('= 2\\n\\n'); out.flush()\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "= 2\n\n"
    assert "python noise" in r.stderr and "fd noise" in r.stderr


def test_engine_loop_survives_invalid_utf8_and_binary_garbage():
    raw = b"1 name\n\xff\xfe\x00 name\n2 play b \xc3\xa9\n\x1b[31m3 protocol_version\n4 play b C3\n5 quit\n"
    r = subprocess.run(FAST_ENGINE + ["--quiet", "--game", "go5x5"], input=raw, capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr
    responses = split_responses(r.stdout.decode("ascii"))
    assert [(ok, i) for ok, i, _ in responses] == [("=", "1"), ("?", ""), ("?", "2"), ("?", ""), ("=", "4"),
                                                   ("=", "5")]
    assert responses[1][2] == "unknown command" and responses[2][2].startswith("syntax error")
