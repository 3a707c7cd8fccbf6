"""The automatic resignation threshold (selfplay/resign.py) and how a run carries it (RunBook)."""

import math
from types import SimpleNamespace

import pytest

from azero.games import make_game
from azero.runs.orchestration import RunBook
from azero.runs.run_dir import RunDir
from azero.selfplay.config import SelfPlayConfig
from azero.selfplay.resign import ResignCalibrator, bleakest


def _would_resign(values, t, k):
    """The worker's rule, move by move: k own values in a row below t."""
    streak = 0
    for v in values:
        streak = streak + 1 if v < t else 0
        if streak >= k:
            return True
    return False


def test_bleakest_is_where_the_streak_rule_starts_to_resign():
    values = [-0.5, -0.95, -0.92, -0.3, -0.97, -0.99, -0.6]
    assert bleakest(values, 2) == -0.97   # the run (-0.97, -0.99): its max
    assert bleakest(values, 1) == -0.99
    assert bleakest(values, 3) == -0.6    # (-0.97, -0.99, -0.6)
    assert bleakest(values[:1], 2) == math.inf
    for k in (1, 2, 3):
        for t in (-1.0, -0.99, -0.98, -0.97, -0.96, -0.93, -0.9, -0.6, -0.55, 0.0):
            assert _would_resign(values, t, k) == (bleakest(values, k) < t), (k, t)


def _pairs(*groups):
    return [(b, lost) for b, lost, n in groups for _ in range(n)]


def test_threshold_is_the_highest_with_few_false_resignations():
    pairs = _pairs((-0.99, True, 40), (-0.93, False, 5), (-0.93, True, 10), (-0.85, False, 20))
    cal = ResignCalibrator(-0.9, 0.05, 1000, pairs=pairs)
    # The 40 below -0.93 all lost; taking in the -0.93s would make 5 of 55 (9%) false.
    assert cal.threshold == -0.93
    assert cal.false_rate() == (0, 40)
    assert cal.false_rate(-0.9) == (5, 55)
    # 9% is within a 10% target, and the threshold never rises above the configured one.
    assert ResignCalibrator(-0.9, 0.10, 1000, pairs=pairs).threshold == -0.9
    # Until min_samples pairs are in, the configured threshold holds.
    assert ResignCalibrator(-0.9, 0.05, 1000, pairs=pairs[:10], min_samples=50).threshold == -0.9
    # When even the bleakest players went on to win, only values below all of them resign.
    cal = ResignCalibrator(-0.9, 0.05, 1000, pairs=_pairs((-0.99, False, 30), (-0.95, True, 30)))
    assert cal.threshold == -0.99 and cal.false_rate() == (0, 0)


def test_tied_values_are_not_split_and_the_window_forgets():
    # 60 tied at -0.95, 4 of them false (6.7%): no threshold can take only the sound ones.
    pairs = _pairs((-0.95, False, 4), (-0.95, True, 56))
    assert ResignCalibrator(-0.9, 0.05, 1000, pairs=pairs).threshold == -0.95
    cal = ResignCalibrator(-0.9, 0.05, 100, pairs=pairs)
    game = SimpleNamespace(bleakest=[(-0.95, True), (math.inf, False)])
    cal.add([game] * 100)               # the window (100) keeps only the new, all sound, pairs
    assert cal.threshold == -0.9 and cal.false_rate() == (0, 100)
    assert len(cal.state()["pairs"]) == 100


def test_run_book_sets_the_threshold_and_keeps_its_window_across_resumes(tmp_path):
    rd = RunDir(tmp_path / "run")
    rd.create()
    cfg = SelfPlayConfig(resign_threshold=-0.9, resign_after_steps=100, resign_window=500,
                         resign_false_target=0.05)
    spec = make_game("tictactoe").spec

    def book():
        return RunBook(rd, spec, cfg, resumed=False, stored_games=0)

    first = book()
    assert first.resign_below(99) is None and first.resign_below(100) == -0.9
    games = [SimpleNamespace(bleakest=[(-0.95, False), (-0.2, True)])] * 10 + \
            [SimpleNamespace(bleakest=[(-0.99, True), (0.1, False)])] * 60
    first.resign.add(games)
    first.state["resign"] = first.resign.state()
    rd.save_state(first.state)
    assert first.resign_below(100) == -0.95
    assert book().resign_below(100) == -0.95     # a resumed run starts from the same window
    fixed = SelfPlayConfig(resign_threshold=-0.9, resign_false_target=None)
    assert RunBook(rd, spec, fixed, resumed=False, stored_games=0).resign_below(500) == -0.9
    off = SelfPlayConfig(resign_threshold=None)
    assert RunBook(rd, spec, off, resumed=False, stored_games=0).resign_below(500) is None


@pytest.mark.parametrize("key, value", [("resign_false_target", 1.0), ("resign_false_target", -0.1),
                                        ("resign_window", 0)])
def test_bad_resign_settings_are_refused(key, value):
    with pytest.raises(ValueError, match=key):
        SelfPlayConfig(**{key: value})
    with pytest.raises(ValueError, match="resign_false_target=0.05 needs resign_threshold"):
        SelfPlayConfig(resign_threshold=None, resign_false_target=0.05)


@pytest.mark.timeout(600)
@pytest.mark.parametrize("processes", [False, True])
def test_a_run_measures_and_keeps_its_threshold(tmp_path, processes):
    """`azero selfplay` with the automatic threshold, in worker threads and in worker processes: the
    no-resign games' pairs reach the run's window, state.json keeps it, the progress line shows it."""
    import json
    import subprocess
    import sys

    run = tmp_path / "run"
    r = subprocess.run([sys.executable, "-m", "azero.cli", "selfplay", "--game", "tictactoe", "--run-dir", str(run),
                        "train.steps=60", "seed=3", "run.log_every_s=0", "model.blocks=1", "model.channels=16",
                        "model.value_hidden=16", "search.simulations=16", "selfplay.games_in_parallel=32",
                        "replay.min_positions=200", "selfplay.resign_threshold=-0.9", "selfplay.resign_false_target=0.05",
                        "selfplay.resign_after_steps=0", "selfplay.resign_min_moves=1",
                        "selfplay.resign_consecutive=1", "selfplay.no_resign_fraction=0.5",
                        f"run.worker_processes={str(processes).lower()}", "run.workers=2"],
                       capture_output=True, text=True, timeout=500)
    assert r.returncode == 0, r.stdout + r.stderr
    state = json.loads((run / "state.json").read_text())
    pairs = state["resign"]["pairs"]
    assert len(pairs) >= 20 and all(b <= 1.0 and isinstance(lost, bool) for b, lost in pairs)
    # what the run would compute from its window is what it kept
    assert state["resign"]["threshold"] == ResignCalibrator(-0.9, 0.05, 1000, pairs=pairs).threshold <= -0.9
    assert " below -" in r.stdout, r.stdout
