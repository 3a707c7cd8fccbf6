"""The roles of a training run as small entry points (STYLE item 11).

    SelfPlay  actor: a SelfPlayWorker over a shared evaluator, or over a network of its own
    Learner   learner: the Trainer, restored from the newest checkpoint or warm-started
    Buffer    the ReplayBuffer behind a process boundary (the caller's RNG draws the seed)
    Server    the InferenceServer over a network evaluator of its own

Each class runs the same in the driver's process (the local runner) and as a Ray actor (the Ray
runner: `ray.remote(Learner)`): its arguments are configs, paths and plain tensors, its seeds are
passed in, and what a method returns crosses a process boundary (CPU tensors, records, dicts).
Where the roles run and how they reach each other is the runners' business (local.py,
ray_runner.py); the bookkeeping both share is in orchestration.py.
"""

from __future__ import annotations

import numpy as np
import torch

from azero.games.config import game_from_config
from azero.selfplay.inference_server import InferenceServer
from azero.selfplay.network_evaluator import NetworkEvaluator, pick_device
from azero.selfplay.worker import SelfPlayWorker
from azero.train.checkpoint import latest_checkpoint
from azero.train.network import PolicyValueNet
from azero.train.replay import ReplayBuffer
from azero.train.trainer import Trainer
from azero.train.warm_start import warm_start


def network_evaluator(spec, model_cfg, weights: dict | None = None, *, device, threads: int | None = None,
                      precision: str = "auto", backend: str = "auto", async_reload: bool = True,
                      streams: int = 1, pinning: bool = False, reload_duty: float = 0.25) -> NetworkEvaluator:
    """A fresh network of `model_cfg` holding `weights` (its random initialisation when None), ready to
    evaluate. The weights go in before the evaluator is built, so a compiled backend starts from them."""
    net = PolicyValueNet(spec, model_cfg)
    if weights is not None:
        net.load_state_dict(weights)
    return NetworkEvaluator(net, device=device, threads=threads, precision=precision, backend=backend,
                            async_reload=async_reload, streams=streams, pinning=pinning, reload_duty=reload_duty)


class SelfPlay:
    """Actor: plays `moves` lockstep moves per call and returns the games that finished.

    `evaluator` given: the worker evaluates through it (an evaluator or server shared with other
    workers, or a client of a remote server) and whoever owns it loads new weights. None: the worker
    runs its own network of `model_cfg`, loading the weights that `play` brings when their version
    changes; `weights` are its first ones (None: a random initialisation). `threads`: torch threads of
    this process (None leaves them as they are)."""

    def __init__(self, game_cfg, search_cfg, selfplay_cfg, *, seed: int, evaluator=None, model_cfg=None,
                 device: str = "cpu", threads: int | None = None, inference: dict | None = None,
                 weights: dict | None = None):
        if threads:
            torch.set_num_threads(threads)
        game = game_from_config(game_cfg)
        self.own = None
        if evaluator is None:
            self.own = network_evaluator(game.spec, model_cfg, weights, device=device, threads=threads,
                                         **(inference or {}))
            evaluator = self.own
        self.worker = SelfPlayWorker(game, evaluator, search_cfg, selfplay_cfg, seed=seed)
        self.version = -1

    def play(self, moves: int, weights: dict | None = None, version: int = -1, resign_below: float | None = None):
        """(finished GameRecords, the worker's network evaluations so far); `resign_below`: the resignation
        threshold for this round (RunBook.resign_below), None: nobody resigns."""
        if self.own is not None and weights is not None and version != self.version:
            self.own.load_state_dict(weights)
            self.version = version
        self.worker.resign_below = resign_below
        records = self.worker.play(moves)
        return records, self.worker.evaluations

    def close(self) -> None:
        if self.own is not None:
            self.own.close()


class Learner:
    """Learner: the Trainer of a run, seeded, restored from the newest checkpoint in `checkpoint_dir`;
    a run with none starts from `init_from`'s weights when given (run.init_from, train/warm_start.py).
    A learner restarted by Ray comes back the same way: from its newest checkpoint."""

    def __init__(self, spec, model_cfg, train_cfg, *, device: str, checkpoint_dir: str, seed: int,
                 init_from: str | None = None):
        torch.manual_seed(seed)
        self.trainer = Trainer(PolicyValueNet(spec, model_cfg), train_cfg, device=pick_device(device))
        self.checkpoint_dir = checkpoint_dir
        ckpt = latest_checkpoint(checkpoint_dir)
        self.resumed_from = None if ckpt is None else ckpt.name
        self.warm_started = None
        if ckpt is not None:
            self.trainer.load(ckpt)
        elif init_from is not None:
            self.warm_started = warm_start(self.trainer.net, init_from)

    def status(self) -> dict:
        return {"step": self.trainer.step, "samples_seen": self.trainer.samples_seen,
                "resumed_from": self.resumed_from, "warm_started": self.warm_started,
                "params": sum(p.numel() for p in self.trainer.net.parameters())}

    def weights(self, cpu: bool = True) -> dict:
        """A copy of the current weights; `cpu` for a copy that leaves the process (Ray), else on the
        trainer's device (the local runner hands it to an evaluator on the same device)."""
        return {k: (v.detach().to("cpu") if cpu else v.detach()).clone()
                for k, v in self.trainer.net.state_dict().items()}

    def train(self, buffer, max_steps: int) -> dict:
        """As many steps as the replay budget allows, at most `max_steps`; `buffer` needs only
        can_sample(batch) and sample(batch, rng) (a ReplayBuffer, or ray_runner's RemoteBuffer)."""
        history = self.trainer.train_from(buffer, max_steps=max_steps, checkpoint_dir=self.checkpoint_dir)
        return {"steps": len(history), "step": self.trainer.step, "last": history[-1] if history else {}}

    def save(self) -> str:
        return str(self.trainer.save(self.checkpoint_dir))


class Buffer:
    """The ReplayBuffer behind a process boundary: sampling takes a seed drawn from the learner's RNG
    (a Generator does not travel), so training stays reproducible for its seed."""

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


class Server:
    """The InferenceServer over a network evaluator of its own; concurrent evaluate() calls (worker
    threads, or a threaded Ray actor's calls) are batched together."""

    def __init__(self, spec, model_cfg, *, device: str, max_batch: int, max_wait_ms: float,
                 weights: dict | None = None, threads: int | None = None, inference: dict | None = None):
        evaluator = network_evaluator(spec, model_cfg, weights, device=device, threads=threads, **(inference or {}))
        self.server = InferenceServer(evaluator, max_batch=max_batch, max_wait_ms=max_wait_ms).start()
        self.version = -1 if weights is None else 0

    @property
    def has_score(self) -> bool:
        return self.server.has_score

    def set_weights(self, weights: dict, version: int) -> None:
        """Queue new weights (they take effect before the next batch), once per version."""
        if version != self.version:
            self.server.reload(weights)
            self.version = version

    def evaluate(self, obs, legal):
        return self.server.evaluate(obs, legal)

    def evaluate_with_score(self, obs, legal):
        return self.server.evaluate_with_score(obs, legal)

    def stats(self) -> dict:
        return self.server.stats()

    def close(self) -> None:
        self.server.stop()
        self.server.evaluator.close()
