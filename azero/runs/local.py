"""The local runner: self-play, replay buffer and trainer in one process.

One round = every worker plays `run.moves_per_round` lockstep moves; finished
games go to the buffer as one shard; then the trainer takes as many steps as
the replay budget allows (replay.max_samples_per_position) and the
self-play network receives the new weights. With one worker and the
in-process evaluator a run is deterministic for its seed.

Resume: the newest checkpoint restores the trainer exactly (weights,
optimizer, RNG, samples trained on); the buffer reloads its shards; games
that were in progress when the run stopped are lost (never half-written),
so no position is lost or duplicated.
"""

from __future__ import annotations

import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch

from azero.config import AzeroConfig
from azero.games.config import game_from_config
from azero.runs.progress import RunLogger
from azero.runs.records import GameStats, stack_records, write_game_sgf
from azero.runs.run_dir import RunDir
from azero.selfplay.inference_server import InferenceServer
from azero.selfplay.network_evaluator import NetworkEvaluator, pick_device
from azero.selfplay.worker import SelfPlayWorker
from azero.train.checkpoint import latest_checkpoint
from azero.train.network import PolicyValueNet
from azero.train.replay import ReplayBuffer
from azero.train.trainer import Trainer
from azero.train.warm_start import warm_start


def init_source(init_from: str, game: str) -> str:
    """run.init_from as a checkpoint file, by --checkpoint's convention (agents/checkpoints.py)."""
    from azero.agents.checkpoints import resolve_checkpoint

    path = resolve_checkpoint(init_from, game)
    if path is None:
        raise ValueError(f"run.init_from={init_from}: names no network")
    return str(path)


def choose_evaluator_mode(requested: str, device: torch.device) -> str:
    """'auto': in-process on CPU (no hand-off cost; `azero bench selfplay` measures both), server on CUDA."""
    if requested != "auto":
        return requested
    return "server" if device.type == "cuda" else "inprocess"


class LocalRun:
    def __init__(self, cfg: AzeroConfig, run_dir: RunDir, *, echo=None):
        self.cfg = cfg
        self.run_dir = run_dir
        run_dir.create()
        if cfg.run.threads:
            torch.set_num_threads(cfg.run.threads)
        torch.manual_seed(cfg.seed)
        self.game = game_from_config(cfg.game)
        self.spec = self.game.spec
        self.device = pick_device(cfg.run.device)

        net = PolicyValueNet(self.spec, cfg.model)
        self.trainer = Trainer(net, cfg.train, device=self.device)
        ckpt = latest_checkpoint(run_dir.checkpoints)
        self.resumed_from = None
        if ckpt is not None:
            self.trainer.load(ckpt)
            self.resumed_from = ckpt
        self.state = run_dir.load_state()
        self.warm_started = None
        if ckpt is None and cfg.run.init_from is not None:
            self.warm_started = warm_start(self.trainer.net, init_source(cfg.run.init_from, self.spec.name))
            self.state["warm_start"] = self.warm_started  # the run's record says where it began
        self.buffer = ReplayBuffer(run_dir.replay, self.spec, cfg=cfg.replay, samples_drawn=self.trainer.samples_seen)
        # Positions written after the last checkpoint stay in the buffer; the counters follow the buffer.
        # state.json is saved after each shard: a kill in between leaves it behind the buffer.
        self.games_total = max(int(self.state.get("games_total", 0)), self.buffer.next_game_id())
        self.stats = GameStats(**self.state.get("game_stats", {}))

        self.eval_net = PolicyValueNet(self.spec, cfg.model)
        self.eval_net.load_state_dict(self.trainer.net.state_dict())
        self.mode = choose_evaluator_mode(cfg.run.evaluator, self.device)
        self.evaluator = NetworkEvaluator(self.eval_net, device=self.device, threads=cfg.run.threads,
                                          precision=cfg.run.precision, backend=cfg.run.backend,
                                          async_reload=cfg.run.async_reload,
                                          streams=cfg.run.workers if self.mode == "inprocess" else 1)
        self.server = None
        worker_eval = self.evaluator
        if self.mode == "server":
            self.server = InferenceServer(self.evaluator, max_batch=cfg.run.server_max_batch,
                                          max_wait_ms=cfg.run.server_max_wait_ms).start()
            worker_eval = self.server
        # Workers' seeds differ per worker and per resume, so a resumed run does not replay old games.
        if ckpt is not None or self.games_total:
            self.state["resumes"] = int(self.state.get("resumes", 0)) + 1
        epoch = int(self.state.get("resumes", 0))
        self.workers = [
            SelfPlayWorker(self.game, worker_eval, cfg.search, cfg.selfplay,
                           seed=cfg.seed * 1_000_003 + 7919 * i + 104_729 * epoch)
            for i in range(cfg.run.workers)
        ]
        self.pool = ThreadPoolExecutor(len(self.workers)) if len(self.workers) > 1 else None
        self.logger = RunLogger(run_dir.logs, run_dir.tensorboard, every_s=cfg.run.log_every_s,
                                total_steps=cfg.train.steps, start_step=self.trainer.step, echo=echo)
        self._last_train = {}
        self._stop = threading.Event()

    # ------------------------------------------------------------------ pieces
    def _play_round(self):
        moves = self.cfg.run.moves_per_round
        if self.pool is None:
            return [self.workers[0].play(moves)]
        return list(self.pool.map(lambda w: w.play(moves), self.workers))

    def _store(self, records) -> None:
        if not records:
            return
        arrays = stack_records(records, self.games_total)
        if arrays is not None:
            self.buffer.add(**arrays)
        sgf_every = self.cfg.selfplay.sgf_every
        if sgf_every and self.spec.sgf:
            for i, r in enumerate(records):
                gid = self.games_total + i
                if gid % sgf_every == 0:
                    write_game_sgf(self.run_dir.sgf, gid, r, board_size=self.spec.params["board_size"],
                                   komi=self.spec.params["komi"], player=f"azero-step{self.trainer.step}")
        self.games_total += len(records)
        self.stats.add(records)
        self.state.update(games_total=self.games_total, game_stats=self.stats.to_dict())
        self.run_dir.save_state(self.state)
        self.logger.scalars(self.trainer.step, {
            "selfplay/game_length": self.stats.mean_length,
            "selfplay/resign_rate": self.stats.resign_rate,
            "selfplay/false_resign_rate": self.stats.false_resign_rate,
            "selfplay/games": self.games_total,
        })

    def _train(self) -> int:
        remaining = self.cfg.train.steps - self.trainer.step
        if remaining <= 0:
            return 0
        history = self.trainer.train_from(self.buffer, max_steps=remaining,
                                          checkpoint_dir=self.run_dir.checkpoints)
        if history:
            last = history[-1]
            self._last_train = last
            self.logger.scalars(self.trainer.step, {f"train/{k}": v for k, v in last.items() if k != "step"})
            state = {k: v.detach().clone() for k, v in self.trainer.net.state_dict().items()}
            if self.server is not None:
                self.server.reload(state)
            else:
                self.evaluator.load_state_dict(state)
        return len(history)

    def _evaluations(self) -> tuple[int, float]:
        if self.server is not None:
            s = self.server.stats()
            return s["evaluations"], s["mean_batch"]
        return self.evaluator.evaluations, self.evaluator.evaluations / max(self.evaluator.batches, 1)

    def _progress(self, force: bool = False) -> None:
        evals, mean_batch = self._evaluations()
        elapsed = max(self.logger.elapsed(), 1e-9)
        b = self.buffer.stats()
        t = self._last_train
        fr = self.stats.false_resign_rate
        fields = {
            "games": f"games {self.games_total} (len {self.stats.mean_length:.0f}, resign {100 * self.stats.resign_rate:.0f}%"
                     + (f", false {100 * fr:.0f}%" if fr is not None else "") + ")",
            "buffer": f"positions {b.positions_total:,} window {b.positions_in_window:,}",
            "loss": (f"loss {t['loss']:.3f} (pol {t['policy_loss']:.3f} val {t['value_loss']:.3f}"
                     + (f" own {t['ownership_loss']:.3f}" if "ownership_loss" in t else "")
                     + (f" score {t['score_loss']:.3f}" if "score_loss" in t else "") + ")" if t else
                     f"waiting for {self.cfg.replay.min_positions:,} positions"),
            "evals": f"{evals / elapsed:,.0f} evals/s batch {mean_batch:.0f}",
        }
        metrics = {"games": self.games_total, "positions": b.positions_total, "window": b.positions_in_window,
                   "evals_per_s": evals / elapsed, "mean_batch": mean_batch, **self.stats.to_dict(), **t}
        self.logger.tick(self.trainer.step, fields, metrics, force=force)
        self.logger.scalars(self.trainer.step, {"selfplay/evals_per_s": evals / elapsed,
                                                "selfplay/mean_batch": mean_batch})

    # ------------------------------------------------------------------ main loop
    def run(self) -> dict:
        cfg = self.cfg
        deadline = None if cfg.run.max_minutes is None else time.perf_counter() + 60 * cfg.run.max_minutes
        cpu_deadline = None if cfg.run.max_cpu_minutes is None else time.process_time() + 60 * cfg.run.max_cpu_minutes
        params = sum(p.numel() for p in self.trainer.net.parameters())
        self.logger.message(
            f"azero selfplay: {self.spec.name}, run dir {self.run_dir.path}, net {cfg.model.blocks}x{cfg.model.channels} "
            f"({params:,} params), {cfg.search.algorithm} {cfg.search.simulations} sims, "
            f"{cfg.run.workers} worker(s) x {cfg.selfplay.games_in_parallel} games, evaluator {self.mode} on {self.device}"
            + (f", resumed from {self.resumed_from.name}" if self.resumed_from else "")
            + (f", warm start from {self.warm_started['from']} (step {self.warm_started['step']}"
               + (f"; fresh: {', '.join(self.warm_started['fresh'])}" if self.warm_started["fresh"] else "")
               + (f"; {'; '.join(self.warm_started['widened'])}" if self.warm_started["widened"] else "") + ")"
               if self.warm_started else ""))
        restore = self._stop_on_signals()
        try:
            while self.trainer.step < cfg.train.steps and not self._stop.is_set():
                if deadline is not None and time.perf_counter() > deadline:
                    self.logger.message(f"run.max_minutes={cfg.run.max_minutes} reached; stopping")
                    break
                if cpu_deadline is not None and time.process_time() > cpu_deadline:
                    self.logger.message(f"run.max_cpu_minutes={cfg.run.max_cpu_minutes} reached; stopping")
                    break
                for w in self.workers:
                    w.resign_enabled = self.trainer.step >= cfg.selfplay.resign_after_steps
                for records in self._play_round():
                    self._store(records)
                self._train()
                self._progress()
            self._progress(force=True)
            path = self.trainer.save(self.run_dir.checkpoints)
            self.logger.message(f"checkpoint {path}")
        finally:
            restore()
            self.close()
        return {"step": self.trainer.step, "games": self.games_total,
                "positions": self.buffer.stats().positions_total, "last_train": self._last_train}

    def stop(self) -> None:
        """Finish the current round, save a checkpoint and return from run() (thread-safe)."""
        self._stop.set()

    def _stop_on_signals(self):
        """SIGTERM / SIGINT stop the run after the current round, with a checkpoint, instead of
        losing the steps since the last periodic one; a second signal interrupts at once.
        Returns the function that restores the previous handlers (main thread only)."""
        if threading.current_thread() is not threading.main_thread():
            return lambda: None
        previous = {}

        def handler(signum, frame):
            if self._stop.is_set():
                raise KeyboardInterrupt
            self.logger.message(f"{signal.Signals(signum).name}: stopping after this round with a checkpoint "
                                f"(send it again to stop at once)")
            self._stop.set()

        for sig in (signal.SIGTERM, signal.SIGINT):
            previous[sig] = signal.signal(sig, handler)

        def restore():
            for sig, h in previous.items():
                signal.signal(sig, h)
        return restore

    def close(self) -> None:
        if self.server is not None:
            self.server.stop()
            self.server = None
        self.evaluator.close()
        if self.pool is not None:
            self.pool.shutdown()
            self.pool = None
        self.logger.close()
