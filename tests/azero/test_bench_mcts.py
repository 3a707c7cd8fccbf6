"""azero bench mcts: the scaling figure's machinery (behaviour only; no timing is asserted)."""

import math

from azero.bench.mcts import _Lane, thread_scaling
from azero.games import make_game
from azero.search.evaluators import UniformEvaluator


def test_thread_scaling_alternates_windows_and_reports_a_median():
    one, many, median = thread_scaling(make_game("tictactoe"), lambda i: UniformEvaluator(), batch=4, threads=2,
                                       simulations=16, seconds=0.2, rounds=3)
    assert one.sims > 0 and many.sims > 0 and one.sims % 16 == 0 and many.sims % 16 == 0
    assert math.isfinite(median) and median > 0


def test_a_lane_keeps_playing_past_finished_games():
    lane = _Lane(make_game("tictactoe"), UniformEvaluator(), batch=2, simulations=8, seed=0)
    # Far more than 9 moves: a finished game that was not restarted would be a terminal root,
    # which the search skips (0 simulations), so every move searching both games means restarts.
    for _ in range(20):
        sims, _ = lane._move()
        assert sims == 8 * 2


def test_the_openspiel_peer_runs_where_built_and_says_why_not_elsewhere(monkeypatch, tmp_path):
    import pytest

    from azero.bench import mcts, openspiel_mcts

    if openspiel_mcts.LIBRARY.is_file():  # setup.py built it (a C++ compiler and open_spiel's headers)
        sims, seconds = openspiel_mcts.OpenSpielMCTS().run("tic_tac_toe", simulations=10, moves=3)
        assert sims == 30 and seconds >= 0
    monkeypatch.setattr(openspiel_mcts, "LIBRARY", tmp_path / "_openspiel_mcts.so")
    with pytest.raises(openspiel_mcts.PeerUnavailable, match="was not built .*pip install -e"):
        openspiel_mcts.OpenSpielMCTS()
    lines = []
    out = mcts.run_mcts_bench(["tictactoe"], batch=2, simulations=8, seconds=0.05, twin_seconds=0.05, threads=2,
                              thread_batch=2, log=lines.append)
    assert any(line.startswith("OpenSpiel C++ peer unavailable, its rows are left out: ") for line in lines)
    assert set(out["tictactoe"]) == {"trivial_vs_twin", "thread_scaling"}
