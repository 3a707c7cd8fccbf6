"""The training loop end to end: learning, resume after SIGKILL, bad files, Ray."""

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from matches import play_match
from azero.agents.mcts import MctsPlayer
from azero.agents.simple import RandomPlayer, RawNetworkPlayer
from azero.games import make_game
from azero.search.config import SearchConfig
from azero.selfplay.network_evaluator import NetworkEvaluator
from azero.train.checkpoint import latest_checkpoint, network_from_checkpoint

AZERO = [sys.executable, "-m", "azero.cli"]
# Small and fast: tic-tac-toe preset with a short budget.
TINY = ["run.log_every_s=1", "model.blocks=1", "model.channels=16", "model.value_hidden=16",
        "search.simulations=16", "selfplay.games_in_parallel=32", "replay.min_positions=200"]


def azero(args, timeout=600, **kw):
    return subprocess.run(AZERO + args, capture_output=True, text=True, timeout=timeout, **kw)


def start_tiny_run(run: Path, *settings: str) -> subprocess.Popen:
    """`azero selfplay` of a tiny tic-tac-toe run in the background, its output on stdout."""
    args = ["selfplay", "--game", "tictactoe", "--run-dir", str(run), *settings, *TINY]
    return subprocess.Popen(AZERO + args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def wait_until(condition, timeout_s: float = 300.0) -> bool:
    """Poll `condition` until it holds or `timeout_s` has passed; its last value."""
    deadline = time.time() + timeout_s
    while time.time() < deadline and not condition():
        time.sleep(0.2)
    return condition()


def shard_positions(run: Path):
    ids = []
    for f in sorted((run / "replay").glob("shard_*.npz")):
        with np.load(f, allow_pickle=False) as d:
            ids.extend(zip(d["game_id"].tolist(), d["move"].tolist()))
    return ids


@pytest.fixture(scope="module")
def trained_run(tmp_path_factory):
    run = tmp_path_factory.mktemp("ttt") / "run"
    # run.async_reload=false: the same games and weights on every run of the suite (a background
    # compile lands at a batch that depends on the machine's load)
    r = azero(["selfplay", "--game", "tictactoe", "--run-dir", str(run), "train.steps=250",
               "train.checkpoint_every=50", "seed=1", "run.async_reload=false"])
    assert r.returncode == 0, r.stdout + r.stderr
    return run, r.stdout


def test_run_dir_layout_and_progress(trained_run):
    run, out = trained_run
    for sub in ("config.yaml", "state.json", "checkpoints", "replay", "logs/progress.log", "logs/metrics.jsonl", "tb"):
        assert (run / sub).exists(), sub
    assert list((run / "tb").iterdir()), "no TensorBoard event file"
    assert "step 250/250" in out and "ETA" in out and "evals/s" in out
    metrics = [json.loads(l) for l in (run / "logs" / "metrics.jsonl").read_text().splitlines()]
    assert metrics[-1]["step"] == 250 and metrics[-1]["games"] > 0


def _loss_on(net, data) -> float:
    import torch

    from azero.train.network import masked_log_softmax

    net.eval()
    with torch.no_grad():
        logits, value = net(torch.from_numpy(data["obs"]))
        logp = masked_log_softmax(logits, torch.from_numpy(data["legal"]))
        pi = torch.from_numpy(data["pi"])
        # KL(pi || p) rather than cross-entropy: the targets' own entropy is a floor no
        # network can go below, and it would hide how much of the rest was learned.
        entropy = -(pi * torch.log(pi.clamp_min(1e-12))).sum(dim=1).mean()
        kl = -(pi * logp).sum(dim=1).mean() - entropy
        return float(kl + torch.mean((value - torch.from_numpy(data["z"])) ** 2))


def test_loss_goes_down(trained_run):
    # The trained network against a fresh one of the same shape, on the same self-play
    # positions: a comparison on fixed data, not on the moving targets of the progress log.
    import torch

    from azero.train.network import NetworkConfig, PolicyValueNet
    from azero.train.replay import ReplayBuffer

    run, _ = trained_run
    game = make_game("tictactoe")
    data = ReplayBuffer(run / "replay", game.spec).window_data()
    trained = network_from_checkpoint(latest_checkpoint(run / "checkpoints"))
    torch.manual_seed(0)
    fresh = PolicyValueNet(game.spec, NetworkConfig(**trained.cfg.__dict__))
    before, after = _loss_on(fresh, data), _loss_on(trained, data)
    print(f"KL + value MSE on {len(data['z'])} positions: fresh {before:.3f}, trained {after:.3f}")
    assert after < 0.85 * before, (before, after)  # measured: 0.751 -> 0.550 (seed 1)
    metrics = [json.loads(l) for l in (run / "logs" / "metrics.jsonl").read_text().splitlines()]
    assert any("loss" in m for m in metrics)


def test_trained_agent_beats_random(trained_run):
    run, _ = trained_run
    game = make_game("tictactoe")
    net = network_from_checkpoint(latest_checkpoint(run / "checkpoints"))
    evaluator = NetworkEvaluator(net, device="cpu")
    # 200 games, colours alternating. Random vs random scores 0.5 on average with a standard
    # deviation of about 0.03 over 200 games; 0.75 is about 8 deviations above it.
    mcts = MctsPlayer(game.spec, evaluator, SearchConfig(simulations=16))
    result = play_match(game, mcts, RandomPlayer(seed=3), games=200, seed=4)
    assert result.score > 0.75, result
    # The raw policy alone: 0.695-0.72 over seeds and precisions (f32 torch 0.71, bf16 OpenVINO
    # 0.695-0.715); 0.65 is 5 deviations above random.
    raw = play_match(game, RawNetworkPlayer(evaluator), RandomPlayer(seed=5), games=200, opening_moves=1, seed=6)
    assert raw.score > 0.65, raw


def test_resume_after_sigkill_loses_and_duplicates_nothing(tmp_path):
    run = tmp_path / "run"
    proc = start_tiny_run(run, "train.steps=400", "train.checkpoint_every=20")
    try:
        # Wait for the first checkpoint, then kill without warning.
        assert wait_until(lambda: latest_checkpoint(run / "checkpoints") is not None), \
            "no checkpoint before the deadline"
        time.sleep(1.0)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    before = shard_positions(run)
    ckpt = latest_checkpoint(run / "checkpoints")
    step_at_kill = int(ckpt.stem.split("_")[1])
    assert before and len(before) == len(set(before))
    clock_at_kill = json.loads((run / "state.json").read_text())["clock"]
    assert clock_at_kill["wall_s"] > 0 and clock_at_kill["starts"] == 1

    r = azero(["selfplay", "--resume", str(run), "train.steps=" + str(step_at_kill + 30)])
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"resumed from {ckpt.name}" in r.stdout
    after = shard_positions(run)
    assert after[: len(before)] == before, "positions written before the kill changed"
    assert len(after) == len(set(after)), "duplicated positions after resume"
    assert latest_checkpoint(run / "checkpoints").stem.endswith(f"{step_at_kill + 30:09d}")
    clock = json.loads((run / "state.json").read_text())["clock"]  # kept across the restart
    assert clock["starts"] == 2 and clock["wall_s"] > clock_at_kill["wall_s"] and clock["cpu_s"] > clock_at_kill["cpu_s"]


def test_sigterm_stops_with_a_checkpoint_of_the_last_step(tmp_path):
    run = tmp_path / "run"
    proc = start_tiny_run(run, "train.steps=100000", "train.checkpoint_every=100000")
    try:
        progress = run / "logs" / "progress.log"
        # until the trainer has taken steps (no periodic checkpoint: every 100000)
        wait_until(lambda: progress.exists() and "loss " in progress.read_text())
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, out
    assert "SIGTERM: stopping after this round with a checkpoint" in out
    ckpt = latest_checkpoint(run / "checkpoints")
    assert ckpt is not None and int(ckpt.stem.split("_")[1]) > 0, out


def test_existing_run_dir_and_bad_keys_are_refused(tmp_path, trained_run):
    run, _ = trained_run
    r = azero(["selfplay", "--game", "tictactoe", "--run-dir", str(run)])
    assert r.returncode == 2 and "--resume" in r.stderr
    r = azero(["selfplay", "--game", "tictactoe", "--run-dir", str(tmp_path / "x"), "train.stepz=3"])
    assert r.returncode == 2 and "train.stepz" in r.stderr
    r = azero(["selfplay", "--game", "tictactoe", "--run-dir", str(tmp_path / "y"), "search.simulations=lots"])
    assert r.returncode == 2 and "search.simulations" in r.stderr
    r = azero(["selfplay", "--resume", str(tmp_path / "nowhere")])
    assert r.returncode == 2 and "nowhere" in r.stderr
    # a head the game has no target for: tic-tac-toe has a final board but no score
    r = azero(["selfplay", "--game", "tictactoe", "--run-dir", str(tmp_path / "s"), "model.score_head=true"])
    assert r.returncode == 2 and "model.score_head" in r.stderr and "tictactoe" in r.stderr, r.stderr
    assert not (tmp_path / "s").exists()


def test_gpu_run_resumed_without_cuda_names_the_device(tmp_path, trained_run):
    """A run that ran a GPU burst saved run.device=cuda; resuming it on a CPU machine must say so
    before touching anything, and run.device=cpu continues it."""
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA: the refusal is for machines without it")
    run = _copy_run(trained_run[0], tmp_path / "gpu")
    config = run / "config.yaml"
    text = config.read_text()
    assert "device: auto" in text
    config.write_text(text.replace("device: auto", "device: cuda", 1))
    before = sorted(p.name for p in (run / "checkpoints").iterdir())
    r = azero(["selfplay", "--resume", str(run), "train.steps=260"])
    assert r.returncode == 2, r.stdout + r.stderr
    assert "run.device='cuda'" in r.stderr and "run.device=cpu" in r.stderr and "Traceback" not in r.stderr
    assert sorted(p.name for p in (run / "checkpoints").iterdir()) == before
    assert "device: cuda" in config.read_text()
    r = azero(["selfplay", "--resume", str(run), "run.device=cpu", "train.steps=260"])
    assert r.returncode == 0, r.stdout + r.stderr
    r = azero(["selfplay", "--game", "tictactoe", "--run-dir", str(tmp_path / "z"), "run.device=gpu"])
    assert r.returncode == 2 and "run.device='gpu'" in r.stderr, r.stderr


def _copy_run(src: Path, dst: Path) -> Path:
    import shutil

    shutil.copytree(src, dst)
    return dst


def test_corrupt_checkpoint_and_shard_are_named(tmp_path, trained_run):
    run = _copy_run(trained_run[0], tmp_path / "c1")
    ckpt = latest_checkpoint(run / "checkpoints")
    ckpt.write_bytes(ckpt.read_bytes()[: ckpt.stat().st_size // 2])  # truncated
    r = azero(["selfplay", "--resume", str(run), "train.steps=260"])
    assert r.returncode == 2 and ckpt.name in r.stderr, r.stderr

    run = _copy_run(trained_run[0], tmp_path / "c2")
    shard = sorted((run / "replay").glob("shard_*.npz"))[-1]
    shard.write_bytes(b"not a zip file at all")
    r = azero(["selfplay", "--resume", str(run), "train.steps=260"])
    assert r.returncode == 2 and shard.name in r.stderr, r.stderr


@pytest.mark.timeout(900)
def test_ray_run_survives_the_death_of_every_role(tmp_path):
    """A worker, the inference server, the trainer and the buffer are each killed once while the
    run is under way; it still reaches its steps with every finished game stored exactly once."""
    ray = pytest.importorskip("ray")
    import threading

    from azero.config import load_config, validate
    from azero.runs.ray_runner import RayRun
    from azero.runs.run_dir import RunDir

    cfg = validate(load_config(["game=tictactoe", "preset=tictactoe", "run.runner=ray", "run.workers=2",
                                "run.evaluator=server", "train.steps=120", "train.checkpoint_every=10", *TINY]))
    ray.init(num_cpus=4, include_dashboard=False, log_to_driver=False)
    killed = []
    try:
        runner = RayRun(cfg, RunDir(tmp_path / "ray"), echo=lambda line: None)

        def kill_each_role():
            # one role at a time, each once games have moved on since the previous kill
            deadline = time.time() + 600
            for name, victim in (("worker", runner.workers[0]), ("server", runner.server),
                                 ("trainer", runner.learner), ("buffer", runner.buffer)):
                seen = runner.games_total
                while runner.games_total <= seen and time.time() < deadline:
                    time.sleep(0.1)
                ray.kill(victim, no_restart=False)
                killed.append(name)
                time.sleep(1.0)

        threading.Thread(target=kill_each_role, daemon=True).start()
        summary = runner.run()
        # A kill between a replay shard and state.json leaves the saved game counter behind the
        # buffer: the resumed run must continue after the newest shard's game ids anyway.
        state_path = tmp_path / "ray" / "state.json"
        state = json.loads(state_path.read_text())
        state["games_total"] = 0
        state_path.write_text(json.dumps(state))
        resumed = RayRun(cfg, RunDir(tmp_path / "ray"), echo=lambda line: None)
        assert resumed.games_total == summary["games"]
    finally:
        ray.shutdown()
    assert killed == ["worker", "server", "trainer", "buffer"]
    assert summary["step"] == 120
    assert summary["worker_failures"] == 1  # one kill, counted once
    # Whether the driver itself meets the trainer's, the server's or the buffer's death depends on
    # timing (a call may just queue while the actor restarts), so the counts are reported, not
    # asserted: what must hold is the run reaching its steps with nothing lost or duplicated.
    assert set(summary["role_restarts"]) == {"trainer", "buffer", "server"}
    positions = shard_positions(tmp_path / "ray")
    assert len(positions) == len(set(positions)) == summary["positions"]  # nothing duplicated
    assert {g for g, _ in positions} == set(range(summary["games"]))      # no stored game lost
    assert latest_checkpoint(tmp_path / "ray" / "checkpoints") is not None


@pytest.mark.parametrize("inference", [["run.async_reload=false"], ["run.backend=torch"]],
                         ids=["default-backend-sync-reload", "torch"])
def test_local_run_is_deterministic_for_a_seed(tmp_path, inference):
    from safetensors.numpy import load_file

    from azero.runs.launch import launch_selfplay

    args = ["train.steps=20", "train.checkpoint_every=20", "replay.min_positions=100", *TINY, *inference]
    for name in ("a", "b"):
        launch_selfplay(overrides=args, game="tictactoe", run_dir=str(tmp_path / name), resume=None)
    a = load_file(str(latest_checkpoint(tmp_path / "a" / "checkpoints")))
    b = load_file(str(latest_checkpoint(tmp_path / "b" / "checkpoints")))
    assert a.keys() == b.keys()
    for k in a:
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)
    assert shard_positions(tmp_path / "a") == shard_positions(tmp_path / "b")
