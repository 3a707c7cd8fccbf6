"""What the local and the Ray runner decide the same way: one orchestration, two placements.

The driver of a run (either runner) keeps the run's book: the game counter, the game statistics
and state.json, and it stores each batch of finished games as one replay shard plus a sample of
SGF files. It also decides the evaluator mode, the self-play workers' seeds, when the run's
budget is spent, and how SIGTERM stops it. The roles themselves are in roles.py; the runners only
place them (local.py: in this process, ray_runner.py: as actors).

Resume epoch: `state.json["resumes"]` counts the starts of a run directory that already held
progress, a checkpoint or a stored game (the buffer's game ids count even when a kill left
state.json behind the shards). It enters every worker's seed, so a resumed run does not replay
the games of its previous start.
"""

from __future__ import annotations

import signal
import threading
import time

import torch

from azero.runs.records import GameStats, stack_records, write_game_sgf
from azero.runs.run_dir import RunDir
from azero.selfplay.resign import ResignCalibrator


def choose_evaluator_mode(requested: str, device: torch.device) -> str:
    """'auto': in-process on CPU (no hand-off cost; `azero bench selfplay` measures both), server on CUDA."""
    if requested != "auto":
        return requested
    return "server" if device.type == "cuda" else "inprocess"


def worker_seed(seed: int, worker: int, epoch: int) -> int:
    """Self-play worker `worker`'s seed in resume epoch `epoch` of a run seeded `seed`: distinct per
    worker and per resume."""
    return seed * 1_000_003 + 7919 * worker + 104_729 * epoch


def inference_options(run) -> dict:
    """How every network evaluator of a run executes (run.precision, run.backend, run.async_reload,
    run.cpu_pinning)."""
    return {"precision": run.precision, "backend": run.backend, "async_reload": run.async_reload,
            "pinning": run.cpu_pinning}


def init_source(init_from: str, game: str) -> str:
    """run.init_from as a checkpoint file, by --checkpoint's convention (agents/checkpoints.py)."""
    from azero.agents.checkpoints import resolve_checkpoint

    path = resolve_checkpoint(init_from, game)
    if path is None:
        raise ValueError(f"run.init_from={init_from}: names no network")
    return str(path)


class RunBook:
    """The driver's record of a run: games stored so far, their statistics, state.json.

    `resumed` (the learner found a checkpoint) and `stored_games` (the buffer's next game id) say
    whether this start continues a run; see the module docstring for the resume epoch."""

    def __init__(self, run_dir: RunDir, spec, selfplay_cfg, *, resumed: bool, stored_games: int,
                 warm_started: dict | None = None, cpu=time.process_time):
        """`cpu`: the run's CPU seconds now (this process's, plus its worker processes' when it has some)."""
        self.run_dir = run_dir
        self._cpu = cpu
        self.spec = spec
        self.sgf_every = selfplay_cfg.sgf_every
        self.state = run_dir.load_state()
        # Positions written after the last checkpoint stay in the buffer; the counter follows the
        # buffer. state.json is saved after each shard: a kill in between leaves it behind the
        # buffer, and its game ids would be handed out twice.
        self.games_total = max(int(self.state.get("games_total", 0)), int(stored_games))
        self.stats = GameStats(**self.state.get("game_stats", {}))
        self.selfplay_cfg = selfplay_cfg
        self.resign = None
        if selfplay_cfg.resign_threshold is not None and selfplay_cfg.resign_false_target is not None:
            self.resign = ResignCalibrator(selfplay_cfg.resign_threshold, selfplay_cfg.resign_false_target,
                                           selfplay_cfg.resign_window,
                                           pairs=self.state.get("resign", {}).get("pairs"))
        if resumed or self.games_total:
            self.state["resumes"] = int(self.state.get("resumes", 0)) + 1
        self.epoch = int(self.state.get("resumes", 0))
        if warm_started is not None:
            self.state["warm_start"] = warm_started  # the run's record says where it began
        # The run's clock, kept across resumes (Budget and the record count the total).
        clock = self.state.get("clock", {})
        self.clock_before = (float(clock.get("wall_s", 0.0)), float(clock.get("cpu_s", 0.0)))
        self._t0, self._c0 = time.perf_counter(), self._cpu()

    def start_clock(self) -> None:
        """This start's share of the clock counts from here (the main loop's start)."""
        self._t0, self._c0 = time.perf_counter(), self._cpu()

    def clock(self) -> dict:
        """The run's total wall and CPU seconds (the `cpu` meter's: on Ray, the driver's only)."""
        wall, cpu = self.clock_before
        return {"wall_s": round(wall + time.perf_counter() - self._t0, 1),
                "cpu_s": round(cpu + self._cpu() - self._c0, 1), "starts": self.epoch + 1}

    def save_clock(self) -> None:
        self.state["clock"] = self.clock()
        self.run_dir.save_state(self.state)

    def worker_seed(self, seed: int, worker: int) -> int:
        return worker_seed(seed, worker, self.epoch)

    def resign_below(self, step: int) -> float | None:
        """The resignation threshold the workers play the next round with at trainer step `step`; None:
        nobody resigns (resigning off, or the network not yet trained enough to judge)."""
        cfg = self.selfplay_cfg
        if cfg.resign_threshold is None or step < cfg.resign_after_steps:
            return None
        return self.resign.threshold if self.resign is not None else cfg.resign_threshold

    def store(self, records, *, step: int, add_shard, logger=None) -> None:
        """Finished games -> one shard through `add_shard(arrays)`, every selfplay.sgf_every-th Go game
        as SGF, then the counters and state.json (after the shard: see __init__)."""
        if not records:
            return
        arrays = stack_records(records, self.games_total)
        if arrays is not None:
            add_shard(arrays)
        if self.sgf_every and self.spec.sgf:
            for i, r in enumerate(records):
                gid = self.games_total + i
                if gid % self.sgf_every == 0:
                    write_game_sgf(self.run_dir.sgf, gid, r, board_size=self.spec.params["board_size"],
                                   komi=self.spec.params["komi"], player=f"azero-step{step}")
        self.games_total += len(records)
        self.stats.add(records)
        self.state.update(games_total=self.games_total, game_stats=self.stats.to_dict(), clock=self.clock())
        scalars = {}
        if self.resign is not None:
            self.resign.add(records)
            self.state["resign"] = self.resign.state()
            false, would = self.resign.false_rate()
            scalars = {"selfplay/resign_threshold": self.resign.threshold,
                       "selfplay/false_resign_rate_window": false / would if would else None}
        self.run_dir.save_state(self.state)
        if logger is not None:
            logger.scalars(step, {
                "selfplay/game_length": self.stats.mean_length,
                "selfplay/resign_rate": self.stats.resign_rate,
                "selfplay/false_resign_rate": self.stats.false_resign_rate,
                "selfplay/games": self.games_total,
                **scalars,
            })

    def games_field(self) -> str:
        """The progress line's games field."""
        fr = self.stats.false_resign_rate
        below = f" below {self.resign.threshold:.2f}" if self.resign is not None else ""
        return (f"games {self.games_total} (len {self.stats.mean_length:.0f}, resign {100 * self.stats.resign_rate:.0f}%"
                + below + (f", false {100 * fr:.0f}%" if fr is not None else "") + ")")


def start_message(runner: str, cfg, spec, run_dir: RunDir, learner: dict, *, mode: str, where: str,
                  clock: dict | None = None) -> str:
    """The run's first progress line; `learner` is Learner.status(), `clock` the run's clock so far."""
    warm = learner["warm_started"]
    return (f"azero selfplay{runner}: {spec.name}, run dir {run_dir.path}, net {cfg.model.blocks}x{cfg.model.channels} "
            f"({learner['params']:,} params), {cfg.search.algorithm} {cfg.search.simulations} sims, "
            f"{cfg.run.workers} worker(s) x {cfg.selfplay.games_in_parallel} games, evaluator {mode} {where}"
            + (f", resumed from {learner['resumed_from']}" if learner["resumed_from"] else "")
            + (f" (clock so far {clock['wall_s'] / 3600:.2f} h wall, {clock['cpu_s'] / 3600:.2f} CPU h)"
               if learner["resumed_from"] and clock else "")
            + (f", warm start from {warm['from']} (step {warm['step']}"
               + (f"; fresh: {', '.join(warm['fresh'])}" if warm["fresh"] else "")
               + (f"; {'; '.join(warm['widened'])}" if warm["widened"] else "") + ")"
               if warm else ""))


class Budget:
    """When a run stops before train.steps: run.max_minutes of wall clock, run.max_cpu_minutes of
    this process's CPU time plus its worker processes' (the local runner's roles all run in them; config.validate refuses the key
    for Ray, whose roles' CPU time is spent in other processes), or a stop request (`stop()`,
    SIGTERM / SIGINT while `stop_on_signals` is in force)."""

    def __init__(self, run_cfg, spent: tuple[float, float] = (0.0, 0.0), *, cpu=time.process_time):
        """`spent`: (wall, CPU) seconds the run's earlier starts used (RunBook.clock_before): the
        budgets are the run's totals. `cpu`: the run's CPU seconds now (as RunBook's)."""
        self.run_cfg = run_cfg
        self._cpu = cpu
        self.spent_before = spent
        self.deadline = self.cpu_deadline = None
        self._started: tuple[float, float] | None = None
        self.stopped = threading.Event()

    def start(self) -> None:
        """The budget counts from here (the main loop's start: building the roles is not charged)."""
        now, cpu = time.perf_counter(), self._cpu()
        self._started = (now, cpu)
        run = self.run_cfg
        wall_before, cpu_before = self.spent_before
        self.deadline = None if run.max_minutes is None else now + 60 * run.max_minutes - wall_before
        self.cpu_deadline = None if run.max_cpu_minutes is None else cpu + 60 * run.max_cpu_minutes - cpu_before

    def spent(self) -> str | None:
        """Why the budget ends the run now (a message to log), or None while it lasts; a stop
        request shows in `stopped`."""
        if self.deadline is not None and time.perf_counter() > self.deadline:
            return f"run.max_minutes={self.run_cfg.max_minutes} reached; stopping"
        if self.cpu_deadline is not None and self._cpu() > self.cpu_deadline:
            return f"run.max_cpu_minutes={self.run_cfg.max_cpu_minutes} reached; stopping"
        return None

    def seconds_left(self) -> float | None:
        """Wall seconds until a time budget ends the run, or None without one (or before start()).
        The CPU budget is turned into wall clock at the CPU rate this start has run at so far."""
        if self.deadline is None and self.cpu_deadline is None:
            return None
        now, cpu = time.perf_counter(), self._cpu()
        left = []
        if self.deadline is not None:
            left.append(max(0.0, self.deadline - now))
        if self.cpu_deadline is not None and self._started is not None:
            wall_used, cpu_used = now - self._started[0], cpu - self._started[1]
            if wall_used > 0 and cpu_used > 0:
                left.append(max(0.0, self.cpu_deadline - cpu) * wall_used / cpu_used)
        return min(left) if left else None

    def stop(self) -> None:
        """Finish the current round, save a checkpoint and return from run() (thread-safe)."""
        self.stopped.set()

    def stop_on_signals(self, message):
        """SIGTERM / SIGINT stop the run after the current round, with a checkpoint, instead of
        losing the steps since the last periodic one; a second signal interrupts at once.
        Returns the function that restores the previous handlers (main thread only)."""
        if threading.current_thread() is not threading.main_thread():
            return lambda: None
        previous = {}

        def handler(signum, frame):
            if self.stopped.is_set():
                raise KeyboardInterrupt
            message(f"{signal.Signals(signum).name}: stopping after this round with a checkpoint "
                    f"(send it again to stop at once)")
            self.stopped.set()

        for sig in (signal.SIGTERM, signal.SIGINT):
            previous[sig] = signal.signal(sig, handler)

        def restore():
            for sig, h in previous.items():
                signal.signal(sig, h)
        return restore
