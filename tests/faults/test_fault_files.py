"""Fault suite: every kind of file azero writes, corrupted, gives its documented outcome.

Each case damages one file of a real (tiny) run or tournament and checks either that the command
resumes with nothing lost or duplicated, or that it stops with a clear error naming the file and
leaves everything on disk as it was. Elsewhere in the suite:
  - killed roles: tests/azero/test_selfplay_run.py (local SIGKILL + --resume; every Ray role);
  - a checkpoint or shard cut in half on resume: tests/azero/test_selfplay_run.py;
  - a tournament's last line cut by a kill: tests/eval/test_tournament.py;
  - checkpoint bytes of every kind: tests/train/test_checkpoint.py; shards: tests/train/test_replay.py.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

AZERO = [sys.executable, "-m", "azero.cli"]
TINY = ["run.log_every_s=1", "model.blocks=1", "model.channels=16", "model.value_hidden=16",
        "search.simulations=8", "selfplay.games_in_parallel=16", "replay.min_positions=100",
        "run.async_reload=false"]


def azero(args, timeout=600):
    return subprocess.run(AZERO + args, capture_output=True, text=True, timeout=timeout)


def digest(folder: Path) -> dict[str, str]:
    """Every file's content hash: what 'nothing on disk changed' compares."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def small_run(tmp_path_factory) -> Path:
    run = tmp_path_factory.mktemp("faults") / "run"
    r = azero(["selfplay", "--game", "tictactoe", "--run-dir", str(run), "train.steps=30",
               "train.checkpoint_every=10", *TINY])
    assert r.returncode == 0, r.stdout + r.stderr
    return run


def copy_of(run: Path, dst: Path) -> Path:
    shutil.copytree(run, dst)
    return dst


@pytest.mark.parametrize("content", [b"\x00\xff garbage \xfe", b'{"games_total": 12, "game_st', b"[1, 2, 3]",
                                     b'{"games_total": 3, "game_stats": {"games": "many"}}',
                                     b'{"game_stats": {"no_such_counter": 1}}'],
                         ids=["binary", "truncated", "not-an-object", "bad-counter", "unknown-counter"])
def test_corrupt_state_json_is_named_and_nothing_changes(small_run, tmp_path, content):
    run = copy_of(small_run, tmp_path / "run")
    (run / "state.json").write_bytes(content)
    before = digest(run)
    r = azero(["selfplay", "--resume", str(run), "train.steps=40"])
    assert r.returncode == 2, r.stdout + r.stderr
    assert "state.json" in r.stderr and "corrupt run state" in r.stderr and "Traceback" not in r.stderr
    assert digest(run) == before


def test_removing_state_json_resumes_with_counters_from_the_shards(small_run, tmp_path):
    run = copy_of(small_run, tmp_path / "run")
    games = json.loads((run / "state.json").read_text())["games_total"]
    (run / "state.json").unlink()
    r = azero(["selfplay", "--resume", str(run), "train.steps=40"])
    assert r.returncode == 0, r.stdout + r.stderr
    ids = []
    for f in sorted((run / "replay").glob("shard_*.npz")):
        with np.load(f, allow_pickle=False) as d:
            ids.extend(zip(d["game_id"].tolist(), d["move"].tolist()))
    assert len(ids) == len(set(ids))                               # nothing duplicated
    assert {g for g, _ in ids} >= set(range(games))                 # the old games are all still there
    assert json.loads((run / "state.json").read_text())["games_total"] > games


@pytest.mark.parametrize("damage", ["garbage", "half"])
def test_corrupt_checkpoint_is_named_on_every_reader(small_run, tmp_path, damage):
    run = copy_of(small_run, tmp_path / "run")
    ckpt = sorted((run / "checkpoints").glob("ckpt_*.safetensors"))[-1]
    raw = ckpt.read_bytes()
    ckpt.write_bytes(b"PK\x03\x04 not a checkpoint" if damage == "garbage" else raw[: len(raw) // 2])
    before = digest(run)
    for args in (["selfplay", "--resume", str(run), "train.steps=40"],
                 ["tournament", "--game", "tictactoe", "--players", f"raw:{ckpt}", "random", "--games-per-pair", "2",
                  "--out", str(tmp_path / "t")],
                 ["play", "--game", "tictactoe", "--checkpoint", str(ckpt)]):
        r = azero(args)
        assert r.returncode == 2, (args, r.stdout + r.stderr)
        assert ckpt.name in r.stderr and "Traceback" not in r.stderr, (args, r.stderr)
    assert digest(run) == before


def test_corrupt_shard_is_named_and_nothing_changes(small_run, tmp_path):
    run = copy_of(small_run, tmp_path / "run")
    shard = sorted((run / "replay").glob("shard_*.npz"))[0]
    raw = bytearray(shard.read_bytes())
    raw[len(raw) // 2: len(raw) // 2 + 64] = b"\x00" * 64  # damage inside the zip, not at its end
    shard.write_bytes(bytes(raw))
    before = digest(run)
    r = azero(["selfplay", "--resume", str(run), "train.steps=40"])
    assert r.returncode == 2 and shard.name in r.stderr and "Traceback" not in r.stderr, r.stdout + r.stderr
    assert digest(run) == before


@pytest.fixture(scope="module")
def tournament(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("faults") / "t"
    r = azero(["tournament", "--game", "tictactoe", "--players", "random", "openspiel-mcts:8", "--games-per-pair", "4",
               "--out", str(out), "--seed", "1"])
    assert r.returncode == 0, r.stdout + r.stderr
    return out


@pytest.mark.parametrize("damage", ["middle-line", "not-an-object", "meta"])
def test_corrupt_tournament_files_are_named(tournament, tmp_path, damage):
    out = copy_of(tournament, tmp_path / "t")
    results = out / "results.jsonl"
    lines = results.read_text().splitlines(keepends=True)
    if damage == "middle-line":
        lines[1] = '{"white": "random", "res\n'
        results.write_text("".join(lines))
        named = "results.jsonl: line 2"
    elif damage == "not-an-object":
        lines[0] = "[1, 2]\n"
        results.write_text("".join(lines))
        named = "results.jsonl: line 1"
    else:
        (out / "tournament.json").write_text("{not json")
        named = "tournament.json"
    before = digest(out)
    r = azero(["tournament", "--out", str(out)])
    assert r.returncode == 2, r.stdout + r.stderr
    assert named in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert digest(out) == before


def test_corrupt_sgf_is_named_by_the_reader(tmp_path):
    from azero.bench.accuracy import sgf_positions
    from azero.games import make_game
    from azero.games.sgf import SgfError

    sgf = tmp_path / "sgf"
    sgf.mkdir()
    (sgf / "game_000001.sgf").write_text("(;GM[1]SZ[9];B[ee];W[ff])")
    (sgf / "game_000002.sgf").write_bytes(b"(;GM[1]SZ[9];B[ee];W[ee])")  # a move onto a stone
    with pytest.raises(SgfError, match="game_000002.sgf: move 2"):
        sgf_positions(make_game("go9x9"), sgf, 10, 0)
    (sgf / "game_000002.sgf").write_bytes(b"\x00\x01 not sgf")
    with pytest.raises(SgfError, match="game_000002.sgf"):
        sgf_positions(make_game("go9x9"), sgf, 10, 0)
