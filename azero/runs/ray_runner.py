"""The Ray runner: the roles of roles.py as Ray actors; the bookkeeping is orchestration.py's.

    driver ──play(moves, weights)──> SelfPlay × run.workers  (SelfPlayWorker inside)
       │   <── finished GameRecords ──┘        │ evaluate (run.evaluator=server)
       │                                        v
       │                              Server (InferenceServer inside, threaded actor)
       ├──add(shard)──> Buffer (ReplayBuffer inside; sole writer of RUN_DIR/replay)
       └──train(k)────> Learner (Trainer inside) ──sample──> Buffer
                              └── checkpoints to RUN_DIR/checkpoints, new weights back to the driver

Unlike the local runner, the workers run on their own: the driver stores each one's games as
they come and asks the learner for the next steps as soon as it is free, so self-play and
training overlap. run.max_cpu_minutes is refused (config.validate): the roles' CPU time is spent
in other processes, on other nodes; run.max_minutes bounds a Ray run.

`run.ray_address` null starts a local Ray instance; 'auto' or host:port joins an
existing cluster (`ray start --head` on one node, `ray start --address=...` on
the others). The run directory must be on storage every node sees.

Fault tolerance: every role is an actor created with max_restarts=-1, and the
driver survives each one's death. A call that meets a dead or restarting actor
(ActorDiedError, ActorUnavailableError, or a task that failed because an actor
it called died) is retried until the actor is back (`_retry`, bounded by
ROLE_RESTART_TIMEOUT_S):
  - self-play worker: its in-progress games are lost (never half-written); the
    restarted actor gets the current weights with its next `play` call. One death
    is counted once, however many calls fail while it restarts.
  - trainer: restarts from its newest checkpoint (steps since then are redone).
  - buffer: reloads its shards. A shard whose `add` failed is written again only
    if the buffer's game ids show it was not written before the death, so no
    position is lost or duplicated.
  - inference server: restarts with fresh weights; the driver sends it the
    current ones as soon as a worker's call through it fails.
Weights travel as one object in the Ray object store per version, shared by all
workers.
"""

from __future__ import annotations

import time

import ray
from ray.exceptions import RayActorError, RayTaskError

from azero.config import AzeroConfig
from azero.games.config import game_from_config
from azero.runs.orchestration import Budget, RunBook, choose_evaluator_mode, inference_options, init_source, \
    start_message
from azero.runs.progress import RunLogger
from azero.runs.roles import Buffer, Learner, SelfPlay, Server
from azero.runs.run_dir import RunDir
from azero.selfplay.network_evaluator import pick_device


ROLE_RESTART_TIMEOUT_S = 300.0
"""How long the driver waits for a dead role's actor to come back before giving up."""


def is_role_death(error: BaseException) -> bool:
    """An actor died or is restarting, directly or inside the task that called it (a learner whose
    buffer died mid-sample), as opposed to an error raised by the role's own code."""
    if isinstance(error, RayActorError):
        return True
    return isinstance(error, RayTaskError) and isinstance(getattr(error, "cause", None), RayActorError)


class RemoteBuffer:
    """What Learner.train needs of a buffer, forwarded to a Buffer actor (it travels with the call:
    an actor handle pickles)."""

    def __init__(self, handle):
        self.handle = handle

    def can_sample(self, batch_size: int) -> bool:
        return ray.get(self.handle.can_sample.remote(batch_size))

    def sample(self, batch_size: int, rng) -> dict:
        return ray.get(self.handle.sample.remote(batch_size, int(rng.integers(0, 2 ** 63))))


class ServerClient:
    """The evaluator protocol, forwarded to a Server actor."""

    def __init__(self, handle, has_score: bool):
        self.handle = handle
        self.has_score = has_score

    def evaluate(self, obs, legal):
        return ray.get(self.handle.evaluate.remote(obs, legal))

    def evaluate_with_score(self, obs, legal):
        return ray.get(self.handle.evaluate_with_score.remote(obs, legal))


class RayRun:
    def __init__(self, cfg: AzeroConfig, run_dir: RunDir, *, echo=None):
        self.cfg = cfg
        self.run_dir = run_dir
        run_dir.create()
        self.spec = game_from_config(cfg.game).spec
        if not ray.is_initialized():
            # RAY_AUTH_MODE for a local instance: launch.ray_auth_mode, before ray is imported
            ray.init(address=cfg.run.ray_address, include_dashboard=False, log_to_driver=False,
                     configure_logging=False)
        device = cfg.run.device
        self.logger = None
        self.role_restarts = {"trainer": 0, "buffer": 0, "server": 0}
        restart = {"max_restarts": -1}
        # The checkpoint to warm-start from is resolved here; the run directory (and so a run it
        # names) is on storage every node sees.
        init = None if cfg.run.init_from is None else init_source(cfg.run.init_from, self.spec.name)
        self.learner = ray.remote(**restart)(Learner).remote(
            self.spec, cfg.model, cfg.train, device=device, checkpoint_dir=str(run_dir.checkpoints), seed=cfg.seed,
            init_from=init)
        self.learner_status = self._retry("trainer", lambda: self.learner.status.remote())
        self.start_step = self.learner_status["step"]
        self.buffer = ray.remote(**restart)(Buffer).remote(
            str(run_dir.replay), self.spec, cfg.replay, self.learner_status["samples_seen"])
        self.book = RunBook(run_dir, self.spec, cfg.selfplay, resumed=self.learner_status["resumed_from"] is not None,
                            stored_games=self._retry("buffer", lambda: self.buffer.next_game_id.remote()),
                            warm_started=self.learner_status["warm_started"])
        self.mode = choose_evaluator_mode(cfg.run.evaluator, pick_device(device))
        self.server = None
        if self.mode == "server":
            self.server = ray.remote(max_concurrency=max(4, 2 * cfg.run.workers), **restart)(Server).remote(
                self.spec, cfg.model, device=device, max_batch=cfg.run.server_max_batch,
                max_wait_ms=cfg.run.server_max_wait_ms, inference=inference_options(cfg.run))
        worker_cls = ray.remote(**restart)(SelfPlay)
        evaluator = None if self.server is None else ServerClient(self.server, bool(cfg.model.score_head))
        self.worker_seeds = [self.book.worker_seed(cfg.seed, i) for i in range(cfg.run.workers)]
        self.workers = [worker_cls.remote(cfg.game, cfg.search, cfg.selfplay, seed=seed, evaluator=evaluator,
                                          model_cfg=cfg.model, device=device, threads=cfg.run.threads or 1,
                                          inference=inference_options(cfg.run))
                        for seed in self.worker_seeds]
        self.version = 0
        self.weights_ref = ray.put(self._retry("trainer", lambda: self.learner.weights.remote()))
        if self.server is not None:
            self._retry("server", lambda: self.server.set_weights.remote(self.weights_ref, self.version))
        self.logger = RunLogger(run_dir.logs, run_dir.tensorboard, every_s=cfg.run.log_every_s,
                                total_steps=cfg.train.steps, start_step=self.start_step, echo=echo)
        self.budget = Budget(cfg.run, spent=self.book.clock_before)
        self.logger.time_left = self.budget.seconds_left
        self.worker_failures = 0
        self._worker_down = [False] * cfg.run.workers  # True from a worker's failed call to its next success
        self.evaluations = [0] * cfg.run.workers

    @property
    def games_total(self) -> int:
        return self.book.games_total

    def _message(self, text: str) -> None:
        if self.logger is not None:
            self.logger.message(text)

    def _retry(self, role: str, submit, *, timeout_s: float = ROLE_RESTART_TIMEOUT_S):
        """ray.get(submit()), submitted again while `role`'s actor is dead or restarting."""
        deadline = time.perf_counter() + timeout_s
        down = False
        while True:
            try:
                return ray.get(submit())
            except (RayActorError, RayTaskError) as e:
                if not is_role_death(e) or time.perf_counter() > deadline:
                    raise
                if not down:  # one death, one count, however many retries it takes
                    down = True
                    self.role_restarts[role] += 1
                    self._message(f"{role} actor unavailable ({type(e).__name__}); waiting for its restart")
                time.sleep(0.5)

    def _add_shard(self, arrays: dict) -> None:
        """Write one shard, exactly once even if the buffer dies around the write."""
        last_game = int(arrays["game_id"].max())
        try:
            ray.get(self.buffer.add.remote(arrays))
            return
        except (RayActorError, RayTaskError) as e:
            if not is_role_death(e):
                raise
        # Did the shard reach the disk before the death? The restarted buffer reloads its shards.
        if int(self._retry("buffer", lambda: self.buffer.next_game_id.remote())) > last_game:
            return
        self._retry("buffer", lambda: self.buffer.add.remote(arrays))

    def _worker_failed(self, i: int, error: BaseException) -> None:
        if isinstance(error, RayTaskError) and is_role_death(error):
            # the worker lives; an actor it called (the inference server) died under its play() task
            if self.server is not None:
                self.role_restarts["server"] += 1
                self._message(f"self-play worker {i}: the inference server died; it restarts with the current "
                              "weights and the run continues")
                self.server.set_weights.remote(self.weights_ref, self.version)
            return
        if not self._worker_down[i]:
            self._worker_down[i] = True
            self.worker_failures += 1
            self._message(f"self-play worker {i} failed ({type(error).__name__}); it restarts and the run continues")
        if self.server is not None:
            # the failure may be the server's own death: a restarted server needs the weights again
            self.server.set_weights.remote(self.weights_ref, self.version)

    def run(self) -> dict:
        cfg = self.cfg
        self.logger.message(start_message(" (ray)", cfg, self.spec, self.run_dir, self.learner_status, mode=self.mode,
                                          where=f"on {cfg.run.device}, cluster {cfg.run.ray_address or 'local'}",
                                          clock=self.book.state.get("clock")))
        moves = cfg.run.moves_per_round
        resign = self.book.resign_below(self.start_step)
        pending = {w.play.remote(moves, self.weights_ref, self.version, resign): i
                   for i, w in enumerate(self.workers)}
        train_future = None
        step = self.start_step
        last = {}
        t0 = time.perf_counter()
        self.book.start_clock()
        self.budget.start()
        restore = self.budget.stop_on_signals(self.logger.message)
        try:
            while step < cfg.train.steps and not self.budget.stopped.is_set():
                why = self.budget.spent()
                if why is not None:
                    self.logger.message(why)
                    break
                ready, _ = ray.wait(list(pending), num_returns=1, timeout=1.0)
                for ref in ready:
                    i = pending.pop(ref)
                    try:
                        records, evals = ray.get(ref)
                    except (RayActorError, RayTaskError) as e:
                        # The actor restarts by itself (max_restarts=-1); its unfinished games are lost.
                        self._worker_failed(i, e)
                    else:
                        self._worker_down[i] = False
                        self.evaluations[i] = evals
                        self.book.store(records, step=step, add_shard=self._add_shard, logger=self.logger)
                    pending[self.workers[i].play.remote(
                        moves, self.weights_ref, self.version, self.book.resign_below(step))] = i
                if train_future is None:
                    train_future = self.learner.train.remote(RemoteBuffer(self.buffer), cfg.train.steps - step)
                elif ray.wait([train_future], timeout=0)[0]:
                    try:
                        out = ray.get(train_future)
                    except (RayActorError, RayTaskError) as e:
                        if not is_role_death(e):
                            raise
                        # the trainer (or the buffer it samples) died: ask again once it is back; a
                        # restarted trainer continues from its newest checkpoint
                        train_future = None
                        step = self._retry("trainer", lambda: self.learner.status.remote())["step"]
                        continue
                    train_future = None
                    step = out["step"]
                    if out["steps"]:
                        last = out["last"]
                        self.logger.scalars(step, {f"train/{k}": v for k, v in last.items() if k != "step"})
                        self.version += 1
                        self.weights_ref = ray.put(self._retry("trainer", lambda: self.learner.weights.remote()))
                        if self.server is not None:
                            self.server.set_weights.remote(self.weights_ref, self.version)
                elapsed = max(time.perf_counter() - t0, 1e-9)
                fields = {
                    "games": self.book.games_field(),
                    "loss": f"loss {last['loss']:.3f}" if last else "waiting for positions",
                    "evals": f"{sum(self.evaluations) / elapsed:,.0f} evals/s",
                    "fail": ", ".join(f"{n} {role} restart{'s' if n > 1 else ''}" for role, n in
                                      (("worker", self.worker_failures), *self.role_restarts.items()) if n),
                }
                self.logger.tick(step, fields, {"games": self.games_total, **last,
                                                "worker_failures": self.worker_failures})
            if train_future is not None:
                try:
                    step = ray.get(train_future)["step"]
                except (RayActorError, RayTaskError) as e:
                    if not is_role_death(e):
                        raise
            path = self._retry("trainer", lambda: self.learner.save.remote())
            step = self._retry("trainer", lambda: self.learner.status.remote())["step"]
            self.logger.message(f"checkpoint {path}")
            stats = self._retry("buffer", lambda: self.buffer.stats.remote())
        finally:
            restore()
            self.book.save_clock()
            self.logger.close()
        return {"step": step, "games": self.games_total, "positions": stats.positions_total, "last_train": last,
                "worker_failures": self.worker_failures, "role_restarts": dict(self.role_restarts)}

    def shutdown(self) -> None:
        ray.shutdown()
