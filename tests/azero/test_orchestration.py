"""The orchestration both runners share: the resume epoch and the workers' seeds (azero/runs/orchestration.py)."""

import json
import shutil

import pytest

from azero.config import load_config, validate
from azero.games import make_game
from azero.runs.orchestration import RunBook, worker_seed
from azero.runs.run_dir import RunDir
from azero.selfplay.config import SelfPlayConfig

TINY = ["run.log_every_s=1", "model.blocks=1", "model.channels=16", "model.value_hidden=16",
        "search.simulations=16", "selfplay.games_in_parallel=32", "replay.min_positions=100"]


def _book(path, *, resumed=False, stored_games=0):
    return RunBook(RunDir(path), make_game("tictactoe").spec, SelfPlayConfig(), resumed=resumed,
                   stored_games=stored_games)


def test_resume_epoch_counts_each_start_that_found_progress(tmp_path):
    rd = RunDir(tmp_path / "run")
    rd.create()
    assert _book(rd.path).epoch == 0                        # a fresh run
    assert _book(rd.path, resumed=True).epoch == 1          # a checkpoint and nothing else
    # Shards ahead of state.json (a kill between the two writes): the buffer's game ids count.
    book = _book(rd.path, stored_games=40)
    assert (book.epoch, book.games_total) == (1, 40)
    rd.save_state({"games_total": 40, "resumes": 1})
    assert _book(rd.path).epoch == 2                        # state.json's games count too
    seeds = [_book(rd.path).worker_seed(7, i) for i in range(3)]
    assert seeds == [worker_seed(7, i, 2) for i in range(3)] and len(set(seeds)) == 3
    assert worker_seed(7, 0, 2) != worker_seed(7, 0, 1)     # a resumed run does not replay old games


@pytest.mark.timeout(600)
def test_local_and_ray_runners_agree_on_resume_epoch_and_worker_seeds(tmp_path):
    ray = pytest.importorskip("ray")
    from azero.runs.launch import launch_selfplay
    from azero.runs.local import LocalRun
    from azero.runs.ray_runner import RayRun

    def seeds(path, runner):
        cfg = validate(load_config(["game=tictactoe", "preset=tictactoe", f"run.runner={runner}", "run.workers=2",
                                    "run.evaluator=inprocess", "seed=3", *TINY]))
        if runner == "local":
            run = LocalRun(cfg, RunDir(path), echo=lambda line: None)
            run.close()
        else:
            run = RayRun(cfg, RunDir(path), echo=lambda line: None)
            run.logger.close()
        return run.book.epoch, run.worker_seeds

    def both(path):
        local = seeds(path, "local")
        ray_view = seeds(path, "ray")
        assert local == ray_view, (local, ray_view)
        return local

    launch_selfplay(overrides=["train.steps=10", "train.checkpoint_every=10", "seed=3", *TINY], game="tictactoe",
                    run_dir=str(tmp_path / "done"), resume=None)
    ray.init(num_cpus=4, include_dashboard=False, log_to_driver=False)
    try:
        assert both(tmp_path / "fresh")[0] == 0
        assert both(tmp_path / "done")[0] == 1      # checkpoint, shards and state.json: one earlier start
        # The drift the runners had: shards on disk but state.json without its game count and no
        # checkpoint (killed between a shard and the state's save, before the first checkpoint).
        shutil.rmtree(tmp_path / "done" / "checkpoints")
        state_path = tmp_path / "done" / "state.json"
        state = json.loads(state_path.read_text())
        state.update(games_total=0, resumes=0)
        state_path.write_text(json.dumps(state))
        assert both(tmp_path / "done")[0] == 1
    finally:
        ray.shutdown()


@pytest.mark.timeout(600)
def test_ray_selfplay_from_the_command_line_warm_starts(tmp_path):
    """`azero selfplay run.runner=ray` on a local instance (token authentication, set before ray is
    imported), warm-started from a local run (run.init_from works for both runners)."""
    pytest.importorskip("ray")
    import subprocess
    import sys

    def selfplay(name, *settings):
        r = subprocess.run([sys.executable, "-m", "azero.cli", "selfplay", "--game", "tictactoe", "--run-dir",
                            str(tmp_path / name), "train.steps=5", *settings, *TINY],
                           capture_output=True, text=True, timeout=500)
        assert r.returncode == 0, r.stdout + r.stderr
        return r.stdout

    selfplay("local")
    out = selfplay("ray", "run.runner=ray", "run.workers=2", f"run.init_from={tmp_path / 'local'}")
    assert "azero selfplay (ray): tictactoe" in out and "warm start from" in out, out
    state = json.loads((tmp_path / "ray" / "state.json").read_text())
    assert state["warm_start"]["step"] == 5 and state["games_total"] > 0


def test_the_budget_counts_what_earlier_starts_spent():
    import time

    from azero.config import RunConfig
    from azero.runs.orchestration import Budget

    run = RunConfig(max_minutes=10.0, max_cpu_minutes=10.0)
    fresh, resumed, over = Budget(run), Budget(run, spent=(540.0, 60.0)), Budget(run, spent=(601.0, 0.0))
    for b in (fresh, resumed, over):
        b.start()
    assert fresh.spent() is None and resumed.spent() is None
    assert abs((fresh.deadline - resumed.deadline) - 540.0) < 1.0
    assert abs((fresh.cpu_deadline - resumed.cpu_deadline) - 60.0) < 1.0
    assert "max_minutes=10.0 reached" in over.spent()  # the run's total is already spent
    assert time.perf_counter() < fresh.deadline


def test_the_eta_is_the_sooner_of_the_steps_and_the_time_budgets(tmp_path):
    import time

    from azero.config import RunConfig
    from azero.runs.orchestration import Budget
    from azero.runs.progress import RunLogger

    assert Budget(RunConfig()).seconds_left() is None
    b = Budget(RunConfig(max_cpu_minutes=10.0))
    b.start()
    # As if this start had run 100 s of wall clock on 50 s of CPU, with 30 CPU seconds left: 60 s.
    now, cpu = time.perf_counter(), time.process_time()
    b._started, b.cpu_deadline = (now - 100.0, cpu - 50.0), cpu + 30.0
    assert 55.0 < b.seconds_left() < 65.0
    b.deadline = time.perf_counter() + 20.0  # a wall budget ending sooner wins
    assert 15.0 < b.seconds_left() <= 20.0
    lines = []
    log = RunLogger(tmp_path / "logs", None, every_s=0.0, total_steps=1000, echo=lines.append)
    log.t0 -= 1000.0  # 1,000 s for 10 steps: the steps alone would say 27 hours
    log.time_left = lambda: 125.0
    log.tick(10, {}, {})
    assert lines[-1].endswith("ETA 2:05"), lines
    log.time_left = None
    log.tick(20, {}, {}, force=True)
    assert "ETA 13:36:" in lines[-1], lines  # 980 steps left x 1000 s / 20 steps = 13:36:40
    log.close()


def test_the_run_clock_is_read_back_and_saved_with_the_state(tmp_path):
    rd = RunDir(tmp_path / "run")
    rd.create()
    rd.save_state({"clock": {"wall_s": 100.0, "cpu_s": 150.0, "starts": 1}, "resumes": 0})
    book = _book(rd.path, resumed=True)
    assert book.clock_before == (100.0, 150.0)
    book.start_clock()
    book.save_clock()
    clock = json.loads((rd.path / "state.json").read_text())["clock"]
    assert clock["wall_s"] >= 100.0 and clock["cpu_s"] >= 150.0 and clock["starts"] == 2
