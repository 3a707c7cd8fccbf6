"""The inference benchmarks run as a user would run them (tiny budgets), and the accuracy
benchmark's pieces give the answers they must on known inputs. No figure is asserted: speed
claims live in the benchmarks' output, never in tests."""

import re
import subprocess
import sys

import numpy as np
import pytest

from azero.bench.accuracy import policy_value_gap, replay_positions, search_moves, sgf_positions
from azero.games import make_game
from azero.games.sgf import write_sgf
from azero.search.evaluators import UniformEvaluator

AZERO = [sys.executable, "-m", "azero.cli"]


def run(args):
    return subprocess.run(AZERO + args, capture_output=True, text=True, timeout=600)


def test_bench_inference_prints_each_variant_and_the_best_line():
    r = run(["bench", "inference", "--game", "tictactoe", "--batches", "4,8", "--seconds", "0.05", "--rounds", "1"])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "torch f32" in r.stdout and "torch bf16" in r.stdout
    assert re.search(r"^best speedup over torch f32 eager: \d+\.\d\dx \((torch|openvino) (f32|bf16|int8), batch \d+\)$",
                     r.stdout, re.M), r.stdout


def test_bench_train_and_selfplay_print_their_ratios():
    r = run(["bench", "train", "--game", "tictactoe", "--seconds", "0.1", "--rounds", "1", "--batch", "8"])
    assert r.returncode == 0, r.stdout + r.stderr
    assert re.search(r"bf16 +[\d.]+ steps/s +ratio \d+\.\d\dx", r.stdout), r.stdout
    r = run(["bench", "selfplay", "--game", "tictactoe", "--seconds", "0.2", "--rounds", "1", "--no-configurations"])
    assert r.returncode == 0, r.stdout + r.stderr
    assert re.search(r"self-play speedup of the default over f32 eager: \d+\.\d\dx", r.stdout), r.stdout


def test_bench_rejects_empty_budgets():
    r = run(["bench", "inference", "--game", "tictactoe", "--rounds", "0"])
    assert r.returncode == 2 and "rounds >= 1" in r.stderr


def test_accuracy_pieces_on_known_inputs(tmp_path):
    game = make_game("go9x9")
    # one recorded game, every position before each of its moves
    moves = [40, 30, 50, 20, 60]
    (tmp_path / "sgf").mkdir()
    (tmp_path / "sgf" / "game_000000.sgf").write_text(write_sgf(9, 7.5, moves))
    states = sgf_positions(game, tmp_path / "sgf", 100, seed=0)
    assert len(states) == len(moves)
    assert sorted(int(n) for n in states.num_moves()) == list(range(len(moves)))
    # the same evaluator twice: no gap, the same moves
    obs, legal = states.encode(), states.legal_mask()
    kl, dv = policy_value_gap(UniformEvaluator(), UniformEvaluator(), obs, legal)
    assert kl == pytest.approx(0.0, abs=1e-7) and dv == 0.0
    a = search_moves(game, UniformEvaluator(), states, 16, seed=0)
    b = search_moves(game, UniformEvaluator(), states, 16, seed=0)
    np.testing.assert_array_equal(a, b)
    with pytest.raises(FileNotFoundError, match="no replay shards"):
        replay_positions(tmp_path / "nothing", 10, seed=0)
