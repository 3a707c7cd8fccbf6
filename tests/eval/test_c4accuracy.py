"""azero c4-accuracy: seeded solved test sets, the metric on perfect and random players, cache, CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest

from azero.cli import main
from azero.eval import c4accuracy
from azero.eval.c4accuracy import (SolverPlayer, build_test_set, candidate_positions, choose_moves, evaluate_agents,
                                   expected_random, load_test_set, run_c4_accuracy)
from azero.agents.simple import RandomPlayer
from azero.games.c4solver import Solver, parse_moves


@pytest.fixture(scope="module")
def sets():
    return [build_test_set(3, 14, 25, workers=2), build_test_set(3, 18, 25, workers=1)]


def test_candidates_are_seeded_distinct_and_playable():
    take = lambda seed, depth: [m for _, m in zip(range(40), candidate_positions(seed, depth))]  # noqa: E731
    a, b, other = take(0, 10), take(0, 10), take(1, 10)
    assert a == b and a != other
    for m in a:
        assert len(m) == 10
        parse_moves(m)  # raises for finished games and illegal moves
    # Distinct up to mirroring (by board: a transposed move order is the same position).
    boards = {min(parse_moves(m), parse_moves("".join(str(8 - int(ch)) for ch in m))) for m in a}
    assert len(boards) == len(a)


def test_tiny_depths_run_out_instead_of_looping(monkeypatch):
    monkeypatch.setattr(c4accuracy, "MAX_BARREN_BATCHES", 5)
    assert len(list(candidate_positions(0, 1))) == 4  # one move: 7 columns, 4 up to mirroring
    # Solving 1-stone positions takes minutes: a stand-in solver where only column 4 keeps a win.
    monkeypatch.setattr(c4accuracy, "_solve_one", lambda moves: (1, np.arange(7) == 3))
    ts = build_test_set(0, 1, 50)
    assert ts.exhausted and len(ts) == ts.candidates == 4 and (ts.value == 1).all()


def test_test_sets_hold_only_positions_where_the_choice_matters(sets):
    solver = Solver(1 << 20)
    for ts in sets:
        assert len(ts) == 25 and ts.candidates >= 25 and not ts.exhausted
        assert set(np.unique(ts.value)) <= {0, 1}  # lost positions never qualify
        for moves, value, keeps in zip(ts.moves, ts.value, ts.keeps):
            values = solver.move_values(moves)
            legal = ~np.isnan(values)
            assert np.nanmax(values) == value
            np.testing.assert_array_equal(keeps, values == value)
            assert keeps.any() and (keeps != legal).any()
    # The same (seed, depth) gives the same set however many threads solved it.
    again = build_test_set(3, 18, 25, workers=2)
    assert again.moves == sets[1].moves and (again.keeps == sets[1].keeps).all()


def test_perfect_player_scores_100_and_random_far_less(sets):
    records = evaluate_agents([SolverPlayer(), RandomPlayer(seed=0)], sets, batch=16)
    perfect, rnd = records
    assert perfect["name"] == "solver"
    assert (perfect["overall"]["n"], perfect["overall"]["correct"], perfect["overall"]["accuracy"]) == (50, 50, 1.0)
    assert 0.9 < perfect["overall"]["ci95"][0] < 1.0 == perfect["overall"]["ci95"][1]
    assert rnd["overall"]["accuracy"] < 0.75
    assert rnd["overall"]["ci95"][1] < perfect["overall"]["ci95"][0]
    assert sum(t["n"] for t in rnd["by_depth"].values()) == 50
    assert rnd["by_value"]["win"]["n"] + rnd["by_value"]["draw"]["n"] == 50
    # A random move keeps the value with probability (#keeping / #legal); the sample sits near it.
    expected = np.concatenate([expected_random(ts) for ts in sets]).mean()
    assert 0.1 < expected < 0.75
    assert abs(rnd["overall"]["accuracy"] - expected) < 0.25


def test_choose_moves_returns_legal_moves_and_the_metric_counts_them(sets):
    ts = sets[0]
    chosen = choose_moves(RandomPlayer(seed=1), list(ts.moves), batch=7)  # uneven last batch
    for m, a in zip(ts.moves, chosen):
        assert 0 <= a < 7 and m.count(str(a + 1)) < 6  # a column with room
    # A player that always throws the value away (first legal column that does not keep it) scores 0.
    rec = evaluate_agents([WorstPlayer()], [ts], batch=10)[0]
    assert rec["overall"]["correct"] == 0 and rec["overall"]["ci95"][0] == 0.0


class WorstPlayer(SolverPlayer):
    name = "worst"

    def act(self, slots, states):
        solver = Solver(1 << 18)
        legal = states.legal_mask()
        return np.array([np.flatnonzero(legal[b] & ~solver.optimal_moves(states.board(b))[1])[0]
                         for b in range(len(states))], np.int32)


def test_cache_is_written_then_read(tmp_path, monkeypatch):
    ts, path = load_test_set(5, 20, 6, cache_dir=tmp_path)
    assert path.is_file() and json.loads(path.read_text())["format"] == c4accuracy.TESTSET_FORMAT

    def no_solving(*a, **k):
        raise AssertionError("the cached set should have been used")

    monkeypatch.setattr(c4accuracy, "build_test_set", no_solving)
    cached, again = load_test_set(5, 20, 6, cache_dir=tmp_path)
    assert again == path and cached.moves == ts.moves and (cached.keeps == ts.keeps).all()
    assert (cached.value == ts.value).all() and cached.candidates == ts.candidates
    monkeypatch.undo()
    path.write_text("{not json")  # a damaged cache file is rebuilt, not trusted
    rebuilt, _ = load_test_set(5, 20, 6, cache_dir=tmp_path)
    assert rebuilt.moves == ts.moves and json.loads(path.read_text())["count"] == 6


def test_run_without_checkpoint_searches_a_uniform_evaluator(tmp_path):
    import io

    out, err = io.StringIO(), io.StringIO()
    doc = run_c4_accuracy(checkpoint="none", simulations=[64], positions=6, depths=[20], seed=2, cache_dir=tmp_path,
                          extra_agents=[SolverPlayer()], stdout=out, stderr=err)
    names = [r["name"] for r in doc["agents"]]
    assert names == ["random", "uniform+puct@64", "solver"]
    proving = run_c4_accuracy(checkpoint="none", simulations=[64], positions=6, depths=[20], seed=2,
                              cache_dir=tmp_path, solver=True, stdout=io.StringIO(), stderr=io.StringIO())
    assert [r["name"] for r in proving["agents"]] == ["random", "uniform+puct+solver@64"] and proving["solver"]
    assert doc["agents"][2]["overall"]["accuracy"] == 1.0
    assert "uniform evaluator" in err.getvalue()
    assert "uniform+puct@64" in out.getvalue() and "solver" in out.getvalue()


def test_cli_smoke_with_a_tiny_checkpoint(c4_run, tmp_path, capsys):
    out = tmp_path / "acc.json"
    rc = main(["c4-accuracy", "--checkpoint", str(c4_run), "--positions", "8", "--depths", "16,20", "--sims", "4,8",
               "--seed", "1", "--cache-dir", str(tmp_path / "cache"), "--out", str(out)])
    assert rc == 0
    doc = json.loads(out.read_text())
    assert doc["format"] == c4accuracy.REPORT_FORMAT and doc["depths"] == [16, 20] and doc["simulations"] == [4, 8]
    assert [r["name"] for r in doc["agents"]] == ["random", "raw", "puct@4", "puct@8"]
    for rec in doc["agents"]:
        assert set(rec["by_depth"]) == {"16", "20"} and rec["overall"]["n"] == 16
        for t in list(rec["by_depth"].values()) + [rec["overall"]]:
            lo, hi = t["ci95"]
            assert 0 <= lo <= t["accuracy"] <= hi <= 1 and t["correct"] == round(t["accuracy"] * t["n"])
    assert doc["test_sets"]["16"]["positions"] == 8 and doc["test_sets"]["16"]["cache"].endswith("_n8.json")
    table = capsys.readouterr().out
    assert "raw" in table and "puct@8" in table and "  all" in table
    # Same command again: the test sets come from the cache, the results are identical.
    assert main(["c4-accuracy", "--checkpoint", str(c4_run), "--positions", "8", "--depths", "16,20", "--sims",
                 "4,8", "--seed", "1", "--cache-dir", str(tmp_path / "cache"), "--out", str(out)]) == 0
    assert json.loads(out.read_text())["agents"] == doc["agents"]


def test_cli_scores_extra_agents_given_as_player_specs(c4_run, tmp_path, monkeypatch):
    import azero.agents.checkpoints as checkpoints
    import azero.agents.factory as factory

    loads = []

    def counting(load):
        def wrapped(path, **kw):
            loads.append(path)
            return load(path, **kw)
        return wrapped

    # The network of --checkpoint and of an --agent naming the same file is loaded once.
    monkeypatch.setattr(checkpoints, "load_evaluator", counting(checkpoints.load_evaluator))
    monkeypatch.setattr(factory, "load_evaluator", counting(factory.load_evaluator))
    out = tmp_path / "acc.json"
    tuned = f"mcts:{c4_run}@8:c_init=3.0:fpu_reduction=0.3"
    assert main(["c4-accuracy", "--checkpoint", str(c4_run), "--positions", "8", "--depths", "20", "--sims", "8",
                 "--cache-dir", str(tmp_path / "cache"), "--out", str(out), "--agent", tuned,
                 "--agent", "random"]) == 0
    records = json.loads(out.read_text())["agents"]
    assert [r["name"] for r in records] == ["random", "raw", "puct@8", tuned, "random"]
    assert records[3]["overall"]["n"] == 8
    assert len(loads) == 1


def test_cli_rejects_a_bad_agent_spec_before_solving_anything(tmp_path, capsys):
    assert main(["c4-accuracy", "--positions", "3", "--cache-dir", str(tmp_path / "cache"),
                 "--agent", "mcts:shipped@8:c_int=2"]) == 2
    assert "c_int" in capsys.readouterr().err
    assert not (tmp_path / "cache").exists()


def test_cli_rejects_bad_arguments(capsys):
    assert main(["c4-accuracy", "--depths", "0", "--positions", "3", "--no-cache"]) == 2
    assert "depth must lie in" in capsys.readouterr().err


def test_smaller_set_is_the_prefix_of_a_larger_cached_one(tmp_path, monkeypatch):
    big, _ = load_test_set(5, 20, 8, cache_dir=tmp_path)

    def no_solving(*a, **k):
        raise AssertionError("the larger cached set should have been used")

    monkeypatch.setattr(c4accuracy, "build_test_set", no_solving)
    small, path = load_test_set(5, 20, 3, cache_dir=tmp_path)
    assert path.name.endswith("_n8.json") and small.moves == big.moves[:3] and small.candidates == -1
    assert (small.keeps == big.keeps[:3]).all() and (small.value == big.value[:3]).all()
    monkeypatch.undo()
    # The same as solving the small set afresh: the candidate stream depends on (seed, depth) only.
    fresh, _ = load_test_set(5, 20, 3, cache_dir=None)
    assert fresh.moves == small.moves


def test_shipped_sets_come_first_and_are_never_solved_again(tmp_path, monkeypatch):
    shipped = tmp_path / "shipped"
    made, _ = load_test_set(5, 20, 6, cache_dir=shipped, shipped_dir=None)

    def no_solving(*a, **k):
        raise AssertionError("the shipped set should have been used")

    monkeypatch.setattr(c4accuracy, "build_test_set", no_solving)
    got, path = load_test_set(5, 20, 6, cache_dir=tmp_path / "cache", shipped_dir=shipped)
    assert path.parent == shipped and got.moves == made.moves and (got.keeps == made.keeps).all()
    smaller, _ = load_test_set(5, 20, 2, cache_dir=None, shipped_dir=shipped)
    assert smaller.moves == made.moves[:2]
    assert not (tmp_path / "cache").exists()  # nothing written to the cache for a shipped set


def test_a_larger_set_extends_a_smaller_cached_one(tmp_path, monkeypatch):
    small, _ = load_test_set(5, 20, 3, cache_dir=tmp_path, shipped_dir=None)
    solved = []
    real = c4accuracy._solve_one
    monkeypatch.setattr(c4accuracy, "_solve_one", lambda moves: solved.append(moves) or real(moves))
    big, path = load_test_set(5, 20, 6, cache_dir=tmp_path, shipped_dir=None)
    assert path.name.endswith("_n6.json") and big.moves[:3] == small.moves
    assert small.moves[-1] not in solved  # the smaller set's candidates were not solved again
    monkeypatch.undo()
    fresh = c4accuracy.build_test_set(5, 20, 6)
    assert fresh.moves == big.moves and fresh.candidates == big.candidates and (fresh.keeps == big.keeps).all()


def test_the_shipped_test_sets_are_complete_and_right():
    from azero.games.c4solver import thread_solver

    for depth in (8, 12, 16, 20):
        ts, path = load_test_set(0, depth, 1000, cache_dir=None)
        assert path.parent == c4accuracy.SHIPPED_DIR and len(ts) == 1000 and ts.candidates > 1000
        assert all(len(m) == depth for m in ts.moves)
    # The deepest set is cheap to solve again: its first positions agree with the solver.
    ts, _ = load_test_set(0, 20, 12, cache_dir=None)
    for moves, value, keeps in zip(ts.moves, ts.value, ts.keeps):
        solved_value, solved_keeps = thread_solver().optimal_moves(moves)
        assert solved_value == value and (solved_keeps == keeps).all()


def test_the_table_fits_long_agent_names():
    tally = {"n": 2, "accuracy": 0.5, "ci95": [0.1, 0.9]}
    names = ["raw", "mcts:shipped@800:graph=true:final_q_share=0.5"]
    doc = {"seed": 0, "depths": [8], "random_expected": {"8": 0.4, "all": 0.4},
           "agents": [{"name": n, "overall": tally, "by_depth": {"8": tally}} for n in names]}
    rows = [line for line in c4accuracy.format_report(doc).splitlines() if "50.0%" in line]
    assert len(rows) == 4 and len({line.index("50.0%") for line in rows}) == 1
