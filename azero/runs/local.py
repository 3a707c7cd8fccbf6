"""The local runner: every role in this process (roles.py), self-play workers as threads.

One round = every worker plays `run.moves_per_round` lockstep moves; finished
games go to the buffer as one shard; then the learner takes as many steps as
the replay budget allows (replay.max_samples_per_position) and the
self-play network receives the new weights. With one worker and the
in-process evaluator a run is deterministic for its seed.

Placement: the workers are threads sharing one evaluator, either a
NetworkEvaluator that they call in their own threads (run.evaluator=inprocess)
or a Server that batches their calls together (server); or, with
run.worker_processes, child processes with a network each (processes.py),
and then the learner trains while they play: a round's games use the weights
of one round earlier, and the run is deterministic for its seed with any
number of workers (run.async_reload=false). The learner samples the
ReplayBuffer directly.

Resume: the newest checkpoint restores the learner exactly (weights,
optimizer, RNG, samples trained on); the buffer reloads its shards; games
that were in progress when the run stopped are lost (never half-written),
so no position is lost or duplicated (orchestration.RunBook).
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import torch

from azero.config import AzeroConfig
from azero.games.config import game_from_config
from azero.runs.orchestration import Budget, RunBook, choose_evaluator_mode, inference_options, init_source, \
    start_message
from azero.runs.processes import WorkerProcess, children_cpu_seconds, numpy_weights
from azero.runs.progress import RunLogger
from azero.runs.roles import Learner, SelfPlay, Server, network_evaluator
from azero.runs.run_dir import RunDir
from azero.selfplay.network_evaluator import pick_device
from azero.train.replay import ReplayBuffer

AUX_LOSSES = (("ownership_loss", "own"), ("score_loss", "score"), ("opponent_policy_loss", "opp"))
"""The auxiliary heads' training metrics the progress line shows when the net has them, and their labels."""


class LocalRun:
    def __init__(self, cfg: AzeroConfig, run_dir: RunDir, *, echo=None):
        self.cfg = cfg
        self.run_dir = run_dir
        run_dir.create()
        if cfg.run.threads:
            torch.set_num_threads(cfg.run.threads)
        self.spec = game_from_config(cfg.game).spec
        self.device = pick_device(cfg.run.device)

        init = None if cfg.run.init_from is None else init_source(cfg.run.init_from, self.spec.name)
        self.learner = Learner(self.spec, cfg.model, cfg.train, device=cfg.run.device,
                               checkpoint_dir=str(run_dir.checkpoints), seed=cfg.seed, init_from=init)
        status = self.learner.status()
        self.buffer = ReplayBuffer(run_dir.replay, self.spec, cfg=cfg.replay, samples_drawn=status["samples_seen"])
        self.processes: list[WorkerProcess] = []
        self.book = RunBook(run_dir, self.spec, cfg.selfplay, resumed=status["resumed_from"] is not None,
                            stored_games=self.buffer.next_game_id(), warm_started=status["warm_started"],
                            cpu=self._cpu_seconds)

        self.mode = "processes" if cfg.run.worker_processes else choose_evaluator_mode(cfg.run.evaluator, self.device)
        weights = self.learner.weights(cpu=False)
        self.server = self.evaluator = None
        self.worker_seeds = [self.book.worker_seed(cfg.seed, i) for i in range(cfg.run.workers)]
        self.workers = []
        if self.mode == "processes":
            # The children's weights version: the trainer's step (0 before any, as the child starts).
            self._weights_out, self._version = None, 0
            # Each child compiles every new version of the weights itself: together they get the
            # share of a core that one shared evaluator's compiles get.
            inference = {**inference_options(cfg.run), "reload_duty": 0.25 / cfg.run.workers}
            self.processes = [WorkerProcess(i, cfg.game, cfg.search, cfg.selfplay, cfg.model, seed=seed,
                                            weights=weights, device=str(self.device), threads=cfg.run.threads,
                                            inference=inference)
                              for i, seed in enumerate(self.worker_seeds)]
        elif self.mode == "server":
            self.server = Server(self.spec, cfg.model, device=self.device, max_batch=cfg.run.server_max_batch,
                                 max_wait_ms=cfg.run.server_max_wait_ms, weights=weights, threads=cfg.run.threads,
                                 inference=inference_options(cfg.run))
            shared = self.server.server
        else:
            self.evaluator = network_evaluator(self.spec, cfg.model, weights, device=self.device,
                                               threads=cfg.run.threads, streams=cfg.run.workers,
                                               **inference_options(cfg.run))
            shared = self.evaluator
        if self.mode != "processes":
            self.workers = [SelfPlay(cfg.game, cfg.search, cfg.selfplay, seed=seed, evaluator=shared)
                            for seed in self.worker_seeds]
        self.pool = ThreadPoolExecutor(len(self.workers)) if len(self.workers) > 1 else None
        self.logger = RunLogger(run_dir.logs, run_dir.tensorboard, every_s=cfg.run.log_every_s,
                                total_steps=cfg.train.steps, start_step=status["step"], echo=echo)
        self.budget = Budget(cfg.run, spent=self.book.clock_before, cpu=self._cpu_seconds)
        self.logger.time_left = self.budget.seconds_left
        self._last_train = {}

    @property
    def trainer(self):
        return self.learner.trainer

    @property
    def games_total(self) -> int:
        return self.book.games_total

    def _cpu_seconds(self) -> float:
        """This process's CPU time plus what its worker processes reported."""
        return time.process_time() + children_cpu_seconds(self.processes)

    # ------------------------------------------------------------------ pieces
    def _play_and_train(self) -> None:
        """One round: the workers' lockstep moves, their finished games stored, the learner's steps.
        Worker processes play while the learner trains on what was stored before the round."""
        if not self.processes:
            for records in self._play_round():
                self._store(records)
            self._train()
            return
        resign = self.book.resign_below(self.trainer.step)
        for p in self.processes:
            p.start(self.cfg.run.moves_per_round, self._weights_out, self._version, resign_below=resign)
        self._train()
        for p in self.processes:
            self._store(p.result())

    def _play_round(self):
        moves = self.cfg.run.moves_per_round
        resign = self.book.resign_below(self.trainer.step)
        if self.pool is None:
            return [self.workers[0].play(moves, resign_below=resign)[0]]
        return [records for records, _ in self.pool.map(lambda w: w.play(moves, resign_below=resign), self.workers)]

    def _store(self, records) -> None:
        self.book.store(records, step=self.trainer.step, add_shard=lambda arrays: self.buffer.add(**arrays),
                        logger=self.logger)

    def _train(self) -> int:
        remaining = self.cfg.train.steps - self.trainer.step
        if remaining <= 0:
            return 0
        out = self.learner.train(self.buffer, remaining)
        if out["steps"]:
            self._last_train = last = out["last"]
            self.logger.scalars(self.trainer.step, {f"train/{k}": v for k, v in last.items() if k != "step"})
            weights = self.learner.weights(cpu=False)
            if self.processes:
                self._weights_out, self._version = numpy_weights(weights), self.trainer.step
            elif self.server is not None:
                self.server.set_weights(weights, self.trainer.step)
            else:
                self.evaluator.load_state_dict(weights)
        return out["steps"]

    def _evaluations(self) -> tuple[int, float]:
        if self.processes:
            evals = sum(p.evaluations for p in self.processes)
            return evals, evals / max(sum(p.batches for p in self.processes), 1)
        if self.server is not None:
            s = self.server.stats()
            return s["evaluations"], s["mean_batch"]
        return self.evaluator.evaluations, self.evaluator.evaluations / max(self.evaluator.batches, 1)

    def _progress(self, force: bool = False) -> None:
        evals, mean_batch = self._evaluations()
        elapsed = max(self.logger.elapsed(), 1e-9)
        b = self.buffer.stats()
        t = self._last_train
        fields = {
            "games": self.book.games_field(),
            "buffer": f"positions {b.positions_total:,} window {b.positions_in_window:,}",
            "loss": (f"loss {t['loss']:.3f} (pol {t['policy_loss']:.3f} val {t['value_loss']:.3f}"
                     + "".join(f" {label} {t[key]:.3f}" for key, label in AUX_LOSSES if key in t) + ")" if t else
                     f"waiting for {self.cfg.replay.min_positions:,} positions"),
            "evals": f"{evals / elapsed:,.0f} evals/s batch {mean_batch:.0f}",
        }
        metrics = {"games": self.games_total, "positions": b.positions_total, "window": b.positions_in_window,
                   "evals_per_s": evals / elapsed, "mean_batch": mean_batch, **self.book.stats.to_dict(), **t}
        self.logger.tick(self.trainer.step, fields, metrics, force=force)
        self.logger.scalars(self.trainer.step, {"selfplay/evals_per_s": evals / elapsed,
                                                "selfplay/mean_batch": mean_batch})

    # ------------------------------------------------------------------ main loop
    def run(self) -> dict:
        cfg = self.cfg
        self.logger.message(start_message("", cfg, self.spec, self.run_dir, self.learner.status(), mode=self.mode,
                                          where=f"on {self.device}", clock=self.book.state.get("clock")))
        self.book.start_clock()
        self.budget.start()
        restore = self.budget.stop_on_signals(self.logger.message)
        try:
            while self.trainer.step < cfg.train.steps and not self.budget.stopped.is_set():
                why = self.budget.spent()
                if why is not None:
                    self.logger.message(why)
                    break
                self._play_and_train()
                self._progress()
            self._progress(force=True)
            path = self.learner.save()
            self.logger.message(f"checkpoint {path}")
        finally:
            restore()
            self.book.save_clock()
            self.close()
        return {"step": self.trainer.step, "games": self.games_total,
                "positions": self.buffer.stats().positions_total, "last_train": self._last_train}

    def stop(self) -> None:
        """Finish the current round, save a checkpoint and return from run() (thread-safe)."""
        self.budget.stop()

    def close(self) -> None:
        if self.server is not None:
            self.server.close()
            self.server = None
        if self.evaluator is not None:
            self.evaluator.close()
        if self.pool is not None:
            self.pool.shutdown()
            self.pool = None
        for p in self.processes:
            p.close()
        self.logger.close()
