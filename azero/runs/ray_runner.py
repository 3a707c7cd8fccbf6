"""The Ray runner: the same worker, server, buffer and trainer classes as Ray actors.

    driver ──play(moves, weights)──> SelfPlayActor × run.workers  (SelfPlayWorker inside)
       │   <── finished GameRecords ──┘        │ evaluate (run.evaluator=server)
       │                                        v
       │                              InferenceActor (InferenceServer inside, threaded)
       ├──add(shard)──> BufferActor (ReplayBuffer inside; sole writer of RUN_DIR/replay)
       └──train(k)────> TrainerActor (Trainer inside) ──sample──> BufferActor
                              └── checkpoints to RUN_DIR/checkpoints, new weights back to the driver

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

import os
import time

import numpy as np
import ray
import torch
from ray.exceptions import RayActorError, RayTaskError

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


ROLE_RESTART_TIMEOUT_S = 300.0
"""How long the driver waits for a dead role's actor to come back before giving up."""


def is_role_death(error: BaseException) -> bool:
    """An actor died or is restarting, directly or inside the task that called it (a trainer whose
    buffer died mid-sample), as opposed to an error raised by the role's own code."""
    if isinstance(error, RayActorError):
        return True
    return isinstance(error, RayTaskError) and isinstance(getattr(error, "cause", None), RayActorError)


def _cpu_state(net: torch.nn.Module) -> dict:
    return {k: v.detach().to("cpu").clone() for k, v in net.state_dict().items()}


class BufferActor:
    """ReplayBuffer behind an actor; sampling is seeded by the caller so training stays reproducible."""

    def __init__(self, directory: str, spec, cfg, samples_drawn: int):
        self.buffer = ReplayBuffer(directory, spec, cfg=cfg, samples_drawn=samples_drawn)

    def add(self, arrays: dict) -> str:
        return str(self.buffer.add(**arrays))

    def can_sample(self, batch_size: int) -> bool:
        return self.buffer.can_sample(batch_size)

    def sample(self, batch_size: int, seed: int) -> dict:
        return self.buffer.sample(batch_size, np.random.default_rng(seed))

    def stats(self):
        return self.buffer.stats()

    def next_game_id(self) -> int:
        return self.buffer.next_game_id()


class _RemoteBuffer:
    """What Trainer.train_from needs of a buffer, forwarded to a BufferActor."""

    def __init__(self, handle):
        self.handle = handle

    def can_sample(self, batch_size: int) -> bool:
        return ray.get(self.handle.can_sample.remote(batch_size))

    def sample(self, batch_size: int, rng: np.random.Generator) -> dict:
        return ray.get(self.handle.sample.remote(batch_size, int(rng.integers(0, 2 ** 63))))


class TrainerActor:
    def __init__(self, spec, model_cfg, train_cfg, device: str, checkpoint_dir: str, seed: int):
        torch.manual_seed(seed)
        self.trainer = Trainer(PolicyValueNet(spec, model_cfg), train_cfg, device=pick_device(device))
        self.checkpoint_dir = checkpoint_dir
        ckpt = latest_checkpoint(checkpoint_dir)
        if ckpt is not None:
            self.trainer.load(ckpt)

    def status(self) -> dict:
        return {"step": self.trainer.step, "samples_seen": self.trainer.samples_seen}

    def weights(self) -> dict:
        return _cpu_state(self.trainer.net)

    def train(self, buffer_handle, max_steps: int) -> dict:
        history = self.trainer.train_from(_RemoteBuffer(buffer_handle), max_steps=max_steps,
                                          checkpoint_dir=self.checkpoint_dir)
        return {"steps": len(history), "step": self.trainer.step, "last": history[-1] if history else {}}

    def save(self) -> str:
        return str(self.trainer.save(self.checkpoint_dir))


class InferenceActor:
    """InferenceServer in a threaded actor: concurrent evaluate() calls are batched together."""

    def __init__(self, spec, model_cfg, device: str, max_batch: int, max_wait_ms: float, inference: dict):
        net = PolicyValueNet(spec, model_cfg)
        self.server = InferenceServer(NetworkEvaluator(net, device=device, **inference), max_batch=max_batch,
                                      max_wait_ms=max_wait_ms).start()
        self.version = -1

    def set_weights(self, weights: dict, version: int) -> None:
        if version != self.version:
            self.server.reload(weights)
            self.version = version

    def evaluate(self, obs, legal):
        return self.server.evaluate(obs, legal)

    def evaluate_with_score(self, obs, legal):
        return self.server.evaluate_with_score(obs, legal)

    def stats(self) -> dict:
        return self.server.stats()


class _ServerClient:
    def __init__(self, handle, has_score: bool):
        self.handle = handle
        self.has_score = has_score

    def evaluate(self, obs, legal):
        return ray.get(self.handle.evaluate.remote(obs, legal))

    def evaluate_with_score(self, obs, legal):
        return ray.get(self.handle.evaluate_with_score.remote(obs, legal))


class SelfPlayActor:
    def __init__(self, game_cfg, model_cfg, search_cfg, selfplay_cfg, device: str, seed: int, server=None,
                 threads: int | None = 1, inference: dict | None = None):
        if threads:
            torch.set_num_threads(threads)
        game = game_from_config(game_cfg)
        self.local = None
        if server is None:
            self.local = NetworkEvaluator(PolicyValueNet(game.spec, model_cfg), device=device, threads=threads,
                                          **(inference or {}))
            evaluator = self.local
        else:
            evaluator = _ServerClient(server, bool(model_cfg.score_head))
        self.worker = SelfPlayWorker(game, evaluator, search_cfg, selfplay_cfg, seed=seed)
        self.version = -1

    def play(self, moves: int, weights, version: int, resign_enabled: bool = True):
        if self.local is not None and version != self.version:
            self.local.load_state_dict(weights)
            self.version = version
        self.worker.resign_enabled = resign_enabled
        records = self.worker.play(moves)
        return records, self.worker.evaluations


class RayRun:
    def __init__(self, cfg: AzeroConfig, run_dir: RunDir, *, echo=None):
        self.cfg = cfg
        self.run_dir = run_dir
        run_dir.create()
        self.game = game_from_config(cfg.game)
        self.spec = self.game.spec
        if not ray.is_initialized():
            if cfg.run.ray_address is None:
                # A local instance with token authentication, said explicitly: Ray 2.60 turns it on
                # for local clusters anyway and warns on every run while the mode is unset. A mode the
                # user set (RAY_AUTH_MODE=disabled, say) is kept.
                os.environ.setdefault("RAY_AUTH_MODE", "token")
            ray.init(address=cfg.run.ray_address, include_dashboard=False, log_to_driver=False,
                     configure_logging=False)
        device = cfg.run.device
        self.state = run_dir.load_state()
        self.games_total = int(self.state.get("games_total", 0))
        self.stats = GameStats(**self.state.get("game_stats", {}))
        epoch = int(self.state.get("resumes", 0)) + (1 if self.games_total else 0)
        self.state["resumes"] = epoch
        restart = {"max_restarts": -1}
        self.trainer = ray.remote(**restart)(TrainerActor).remote(
            self.spec, cfg.model, cfg.train, device, str(run_dir.checkpoints), cfg.seed)
        self.logger = None
        self.role_restarts = {"trainer": 0, "buffer": 0, "server": 0}
        status = self._retry("trainer", lambda: self.trainer.status.remote())
        self.start_step = status["step"]
        self.buffer = ray.remote(**restart)(BufferActor).remote(
            str(run_dir.replay), self.spec, cfg.replay, status["samples_seen"])
        # state.json is saved after each shard: a kill in between leaves it behind the buffer, and its
        # game ids would be handed out twice (as in the local runner).
        self.games_total = max(self.games_total, int(self._retry("buffer", lambda: self.buffer.next_game_id.remote())))
        mode = cfg.run.evaluator
        if mode == "auto":
            mode = "server" if pick_device(device).type == "cuda" else "inprocess"
        self.mode = mode
        self.server = None
        if mode == "server":
            self.server = ray.remote(max_concurrency=max(4, 2 * cfg.run.workers), **restart)(InferenceActor).remote(
                self.spec, cfg.model, device, cfg.run.server_max_batch, cfg.run.server_max_wait_ms,
                self._inference())
        self.worker_cls = ray.remote(**restart)(SelfPlayActor)
        self.workers = [self._make_worker(i, epoch) for i in range(cfg.run.workers)]
        self.version = 0
        self.weights_ref = ray.put(self._retry("trainer", lambda: self.trainer.weights.remote()))
        if self.server is not None:
            self._retry("server", lambda: self.server.set_weights.remote(self.weights_ref, self.version))
        self.logger = RunLogger(run_dir.logs, run_dir.tensorboard, every_s=cfg.run.log_every_s,
                                total_steps=cfg.train.steps, start_step=self.start_step, echo=echo)
        self.worker_failures = 0
        self._worker_down = [False] * cfg.run.workers  # True from a worker's failed call to its next success
        self.evaluations = [0] * cfg.run.workers

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

    def _make_worker(self, i: int, epoch: int):
        cfg = self.cfg
        return self.worker_cls.remote(cfg.game, cfg.model, cfg.search, cfg.selfplay, cfg.run.device,
                                      cfg.seed * 1_000_003 + 7919 * i + 104_729 * epoch, self.server,
                                      cfg.run.threads or 1, self._inference())

    def _inference(self) -> dict:
        """How every actor's NetworkEvaluator runs the network (precision, backend, reload)."""
        run = self.cfg.run
        return {"precision": run.precision, "backend": run.backend, "async_reload": run.async_reload}

    def _store(self, records, step: int) -> None:
        if not records:
            return
        arrays = stack_records(records, self.games_total)
        if arrays is not None:
            self._add_shard(arrays)
        every = self.cfg.selfplay.sgf_every
        if every and self.spec.sgf:
            for i, r in enumerate(records):
                if (self.games_total + i) % every == 0:
                    write_game_sgf(self.run_dir.sgf, self.games_total + i, r,
                                   board_size=self.spec.params["board_size"], komi=self.spec.params["komi"],
                                   player=f"azero-step{step}")
        self.games_total += len(records)
        self.stats.add(records)
        self.state.update(games_total=self.games_total, game_stats=self.stats.to_dict())
        self.run_dir.save_state(self.state)

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
        self.logger.message(
            f"azero selfplay (ray): {self.spec.name}, run dir {self.run_dir.path}, {cfg.run.workers} worker actor(s) "
            f"x {cfg.selfplay.games_in_parallel} games, evaluator {self.mode}, "
            f"cluster {cfg.run.ray_address or 'local'}")
        moves = cfg.run.moves_per_round
        resign = self.start_step >= cfg.selfplay.resign_after_steps
        pending = {w.play.remote(moves, self.weights_ref, self.version, resign): i
                   for i, w in enumerate(self.workers)}
        train_future = None
        step = self.start_step
        last = {}
        deadline = None if cfg.run.max_minutes is None else time.perf_counter() + 60 * cfg.run.max_minutes
        t0 = time.perf_counter()
        try:
            while step < cfg.train.steps:
                if deadline is not None and time.perf_counter() > deadline:
                    self.logger.message(f"run.max_minutes={cfg.run.max_minutes} reached; stopping")
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
                        self._store(records, step)
                    pending[self.workers[i].play.remote(
                        moves, self.weights_ref, self.version, step >= cfg.selfplay.resign_after_steps)] = i
                if train_future is None:
                    train_future = self.trainer.train.remote(self.buffer, cfg.train.steps - step)
                elif ray.wait([train_future], timeout=0)[0]:
                    try:
                        out = ray.get(train_future)
                    except (RayActorError, RayTaskError) as e:
                        if not is_role_death(e):
                            raise
                        # the trainer (or the buffer it samples) died: ask again once it is back; a
                        # restarted trainer continues from its newest checkpoint
                        train_future = None
                        step = self._retry("trainer", lambda: self.trainer.status.remote())["step"]
                        continue
                    train_future = None
                    step = out["step"]
                    if out["steps"]:
                        last = out["last"]
                        self.logger.scalars(step, {f"train/{k}": v for k, v in last.items() if k != "step"})
                        self.version += 1
                        self.weights_ref = ray.put(self._retry("trainer", lambda: self.trainer.weights.remote()))
                        if self.server is not None:
                            self.server.set_weights.remote(self.weights_ref, self.version)
                elapsed = max(time.perf_counter() - t0, 1e-9)
                fields = {
                    "games": f"games {self.games_total} (len {self.stats.mean_length:.0f}, "
                             f"resign {100 * self.stats.resign_rate:.0f}%)",
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
            path = self._retry("trainer", lambda: self.trainer.save.remote())
            step = self._retry("trainer", lambda: self.trainer.status.remote())["step"]
            self.logger.message(f"checkpoint {path}")
            stats = self._retry("buffer", lambda: self.buffer.stats.remote())
        finally:
            self.logger.close()
        return {"step": step, "games": self.games_total, "positions": stats.positions_total, "last_train": last,
                "worker_failures": self.worker_failures, "role_restarts": dict(self.role_restarts)}

    def shutdown(self) -> None:
        ray.shutdown()
