"""Smoke and error-path tests of the `azero` command line, run as a user would."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from azero.cli import build_parser, main

AZERO = [sys.executable, "-m", "azero.cli"]


def run(args, **kw):
    return subprocess.run(AZERO + args, capture_output=True, text=True, timeout=300, **kw)


def test_help_lists_every_command_and_each_has_help():
    r = run(["--help"])
    assert r.returncode == 0
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert set(sub.choices) >= {"games", "config", "bench"}
    for name in sub.choices:
        assert name in r.stdout
        h = run([name, "--help"])
        assert h.returncode == 0 and "usage" in h.stdout


def test_games_lists_all_games(capsys):
    assert main(["games"]) == 0
    out = capsys.readouterr().out
    for name in ("go9x9", "go", "connect4", "tictactoe", "openspiel"):
        assert name in out
    assert "komi=7.5" in out


def test_config_overrides_and_errors(capsys):
    assert main(["config", "--game", "connect4", "seed=7"]) == 0
    out = capsys.readouterr().out
    assert "name: connect4" in out and "seed: 7" in out
    assert main(["config", "game.komi=abc"]) == 2
    assert "game.komi" in capsys.readouterr().err
    assert main(["config", "game.nonsense=1"]) == 2
    assert "game.nonsense" in capsys.readouterr().err
    assert main(["config", "game=chess"]) == 2
    err = capsys.readouterr().err
    assert "chess" in err and "connect4" in err
    assert main(["config", "notakeyvalue"]) == 2


def test_bench_games_prints_rates_and_ratios():
    r = run(["bench", "games", "--games", "tictactoe,connect4", "--batch", "16", "--seconds", "0.2"])
    assert r.returncode == 0, r.stderr
    lines = [l for l in r.stdout.splitlines() if l.startswith(("tictactoe", "connect4"))]
    assert len(lines) == 2
    for line in lines:
        assert line.rstrip().endswith("x")  # ratio vs OpenSpiel printed


def test_bench_run_times_whole_runs_per_placement_and_prints_ratios():
    r = run(["bench", "run", "--game", "tictactoe", "--minutes", "0.1", "--arms", "threads, pinned;processes",
             "model.blocks=1", "model.channels=16", "search.simulations=8", "replay.min_positions=100"])
    assert r.returncode == 0, r.stderr
    medians = r.stdout.split("medians:")[1].splitlines()
    peer = next(l for l in medians if "threads, pinned" in l)
    procs = next(l for l in medians if "processes" in l)
    assert "(1.00x)" in peer and "positions/s" in procs and "cores busy" in procs
    bad = run(["bench", "run", "--arms", "threads;gpu"])
    assert bad.returncode == 2 and "unknown arm(s) gpu" in bad.stderr


def test_bench_unknown_game_is_a_clear_error():
    r = run(["bench", "games", "--games", "nope", "--seconds", "0.1"])
    assert r.returncode == 2
    assert "unknown game 'nope'" in r.stderr and "go9x9" in r.stderr


def test_no_generic_top_level_package_installed(tmp_path):
    # Outside the repo root only the azero namespace may be importable.
    code = ("import importlib.util as u;"
            "print([n for n in ('games','train','search','selfplay') if u.find_spec(n)]);"
            "print(u.find_spec('azero.games') is not None)")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert r.stdout.split() == ["[]", "True"], r.stdout + r.stderr


def test_config_resolves_the_preset_exactly_as_selfplay(capsys):
    from omegaconf import OmegaConf

    from azero.runs.launch import compose_new

    assert main(["config", "--game", "go9x9"]) == 0
    shown = OmegaConf.create(capsys.readouterr().out)
    used = compose_new([], "go9x9")
    assert shown.model.blocks == used.model.blocks == 4 and shown.model.channels == 32
    assert shown.search.simulations == used.search.simulations == 64
    assert shown.train.steps == used.train.steps == 200


def test_overrides_may_stand_between_and_after_options(capsys):
    assert main(["config", "train.steps=7", "--game", "tictactoe", "run.max_minutes=0.5"]) == 0
    out = capsys.readouterr().out
    assert "steps: 7" in out and "max_minutes: 0.5" in out
    assert main(["config", "--game", "tictactoe", "=1"]) == 2
    assert "'=1'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["config", "--game", "tictactoe", "--bogus"])
    assert "--bogus" in capsys.readouterr().err


@pytest.mark.parametrize("overrides", [["--game", "go9x9", "game.board_size=25"],
                                       ["game=go", "game.board_size=1"],
                                       ["game=openspiel", "game.load=no_such_game"]])
def test_a_late_config_error_writes_nothing(tmp_path, capsys, overrides):
    run_dir = tmp_path / "run"
    assert main(["selfplay", "--run-dir", str(run_dir), *overrides]) == 2
    assert "error" in capsys.readouterr().err
    assert not run_dir.exists()


def test_run_dir_out_and_resume_naming_a_file_are_clear_errors(tmp_path, capsys):
    f = tmp_path / "a-file"
    f.write_text("x")
    assert main(["selfplay", "--game", "tictactoe", "--run-dir", str(f)]) == 2
    assert "is a file" in capsys.readouterr().err
    assert main(["selfplay", "--resume", str(f)]) == 2
    assert "is a file" in capsys.readouterr().err
    assert main(["tournament", "--game", "tictactoe", "--players", "random", "random", "--games-per-pair", "2",
                 "--out", str(f / "t")]) == 2
    assert "is a file" in capsys.readouterr().err
    assert f.read_text() == "x"
