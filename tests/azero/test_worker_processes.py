"""run.worker_processes: self-play workers in child processes, the learner training beside them."""

import json
import os
import signal

import numpy as np
import pytest

from azero.config import ConfigError, load_config, validate
from azero.games.config import GameConfig
from azero.runs.processes import WorkerProcess, WorkerProcessError
from azero.search.config import SearchConfig
from azero.selfplay.config import SelfPlayConfig
from azero.train.checkpoint import latest_checkpoint
from azero.train.network import NetworkConfig, PolicyValueNet
from azero.games import make_game

TINY = ["run.log_every_s=1", "model.blocks=1", "model.channels=16", "model.value_hidden=16",
        "search.simulations=16", "selfplay.games_in_parallel=16", "replay.min_positions=100"]


def _run(tmp_path, name: str, *extra: str) -> dict:
    from azero.runs.launch import launch_selfplay

    args = ["train.steps=24", "train.checkpoint_every=24", "run.worker_processes=true", "run.workers=2",
            "run.async_reload=false", *TINY, *extra]
    return launch_selfplay(overrides=args, game="tictactoe", run_dir=str(tmp_path / name), resume=None)


def test_two_worker_processes_train_and_are_deterministic_for_a_seed(tmp_path):
    from safetensors.numpy import load_file

    summary = _run(tmp_path, "a", "seed=4")
    _run(tmp_path, "b", "seed=4")
    assert summary["step"] == 24 and summary["games"] > 0
    a = load_file(str(latest_checkpoint(tmp_path / "a" / "checkpoints")))
    b = load_file(str(latest_checkpoint(tmp_path / "b" / "checkpoints")))
    for k in a:
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)
    # Both workers' games were stored, each game once.
    ids = []
    for f in sorted((tmp_path / "a" / "replay").glob("shard_*.npz")):
        with np.load(f, allow_pickle=False) as d:
            ids.extend(zip(d["game_id"].tolist(), d["move"].tolist()))
    assert len(ids) == len(set(ids)) == summary["positions"]
    state = json.loads((tmp_path / "a" / "state.json").read_text())
    assert state["games_total"] == summary["games"]


def _worker(weights, *, seed=0):
    return WorkerProcess(0, GameConfig(name="tictactoe"), SearchConfig(simulations=8), SelfPlayConfig(games_in_parallel=4),
                         NetworkConfig(blocks=1, channels=16, value_hidden=8, global_pool_every=0), seed=seed, weights=weights,
                         inference={"backend": "torch", "precision": "f32", "async_reload": False})


def _weights():
    spec = make_game("tictactoe").spec
    return PolicyValueNet(spec, NetworkConfig(blocks=1, channels=16, value_hidden=8, global_pool_every=0)).state_dict()


def test_worker_process_plays_rounds_and_reports_its_work():
    w = _worker(_weights())
    try:
        games = []
        for _ in range(4):  # tic-tac-toe ends within 9 moves: 12 moves finish every game at least once
            w.start(3, None, 0, resign_below=None)
            games += w.result()
        assert games and all(len(g.actions) <= 9 for g in games)
        assert w.evaluations > 0 and w.batches > 0 and w.cpu_seconds > 0
        with pytest.raises(WorkerProcessError, match="no round in progress"):
            w.result()
    finally:
        w.close()
    assert not w.process.is_alive()


def test_worker_whose_network_cannot_be_built_names_itself_and_why():
    bad = {k: v for k, v in _weights().items() if not k.startswith("value")}  # missing the value head
    w = _worker(bad)
    try:
        with pytest.raises(WorkerProcessError, match=r"self-play worker 0 failed:(.|\n)*value"):
            w.start(1, None, 0, resign_below=None)
            w.result()
    finally:
        w.close()


def test_killed_worker_is_reported_with_its_exit_code():
    w = _worker(_weights())
    try:
        w.start(1, None, 0, resign_below=None)
        w.result()  # the child is up and has played
        os.kill(w.process.pid, signal.SIGKILL)
        w.process.join(timeout=10)
        with pytest.raises(WorkerProcessError, match=r"self-play worker 0 \(pid \d+\) died \(exit code -9\)"):
            w.start(1, None, 0, resign_below=None)
            w.result()
    finally:
        w.close()


@pytest.mark.parametrize("override, message", [
    ("run.runner=ray", "local-runner placement"),
    ("run.evaluator=server", "a network of its own"),
])
def test_placements_that_cannot_combine_are_refused(override, message):
    with pytest.raises(ConfigError, match=message):
        validate(load_config(["run.worker_processes=true", override]))


def test_run_clock_and_cpu_budget_count_the_cpu_meter_they_are_given(tmp_path):
    # The local runner's meter is its own process time plus its worker processes' reports.
    from azero.config import RunConfig
    from azero.runs.orchestration import Budget, RunBook
    from azero.runs.run_dir import RunDir

    spent = [100.0]
    meter = lambda: spent[0]  # noqa: E731
    run_dir = RunDir(str(tmp_path / "run"))
    run_dir.create()
    book = RunBook(run_dir, make_game("tictactoe").spec, SelfPlayConfig(), resumed=False, stored_games=0, cpu=meter)
    book.start_clock()
    budget = Budget(RunConfig(max_cpu_minutes=1.0), cpu=meter)
    budget.start()
    spent[0] += 59.0
    assert book.clock()["cpu_s"] == 59.0 and budget.spent() is None
    spent[0] += 2.0
    assert book.clock()["cpu_s"] == 61.0 and "max_cpu_minutes" in budget.spent()


def test_close_kills_a_worker_that_hangs_mid_round(monkeypatch):
    import azero.runs.processes as processes

    monkeypatch.setattr(processes, "ROUND_WAIT_S", 0.5)
    monkeypatch.setattr(processes, "CLOSE_TIMEOUT_S", 0.5)
    w = _worker(_weights())
    try:
        w.start(1, None, 0, resign_below=None)
        w.result()  # the child is up
        os.kill(w.process.pid, signal.SIGSTOP)  # hung: it neither answers nor exits
        w.start(1, None, 0, resign_below=None)
    finally:
        w.close()
    assert not w.process.is_alive()
    assert w.process.exitcode == -signal.SIGKILL
