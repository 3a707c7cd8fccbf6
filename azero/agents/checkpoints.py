"""From --checkpoint to an evaluator: the one resolver and the one loader every command uses.

--checkpoint's convention, the same for every command and every player spec's CKPT:

    (not given) or 'shipped'   the network shipped with azero for the game (azero/models), else
                               none (an explicit 'shipped' for a game without one is an error)
    'none'                     no network: search on random rollouts (or a uniform evaluator)
    FILE                       that checkpoint (.safetensors)
    DIR                        a run directory or a checkpoints folder: its newest checkpoint

A network reads one board size and one feature set. Go's feature sets extend one
another (basic = the first planes of extended), so the game is built with the
richest set among the networks that play (`game_for`), and a network that reads
fewer planes gets the leading ones (FirstPlanes).
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Iterable

import numpy as np

SHIPPED = "shipped"
NO_NETWORK = "none"
NO_NETWORK_EVALUATORS = ("rollouts", "uniform")


def resolve_checkpoint(checkpoint: str | os.PathLike | None, game: str | None = None) -> Path | None:
    """The checkpoint file `checkpoint` stands for (module docstring), or None for no network.

    `game`: the game name whose shipped network 'shipped' (or nothing) means; without it only files
    and directories resolve. FileNotFoundError for a path that is not there or holds no checkpoint;
    ValueError for an explicit 'shipped' with nothing shipped."""
    from azero.models import shipped_checkpoint, shipped_games

    text = None if checkpoint is None else os.fspath(checkpoint)
    if text == NO_NETWORK:
        return None
    if text is None or text == SHIPPED:
        path = shipped_checkpoint(_canonical(game)) if game is not None else None
        if path is None and text == SHIPPED:
            raise ValueError(f"--checkpoint shipped: no network is shipped for {game!r} "
                             f"(shipped: {', '.join(shipped_games()) or 'none'})")
        return path
    return newest_checkpoint(text)


def _canonical(game: str) -> str:
    """The name a game's spec carries ('go' -> 'go9x9'): shipped networks are filed under it."""
    from azero.games import make_game

    try:
        return make_game(game).spec.name
    except (ValueError, ImportError):
        return game


def newest_checkpoint(path: str | os.PathLike) -> Path:
    """A checkpoint file as given; for a run directory or a checkpoints folder, its newest checkpoint."""
    from azero.train.checkpoint import latest_checkpoint

    p = Path(path)
    if p.is_file():
        return p
    if p.is_dir():
        for folder in (p / "checkpoints", p):
            found = latest_checkpoint(folder)
            if found is not None:
                return found
        raise FileNotFoundError(f"{p}: no checkpoint (ckpt_*.safetensors) in it or in {p / 'checkpoints'}")
    raise FileNotFoundError(f"checkpoint {p} does not exist (expected a checkpoint file, a run directory, "
                            f"'{SHIPPED}' or '{NO_NETWORK}')")


def checkpoint_planes(path: str | os.PathLike) -> int:
    """Observation planes (C) of the network a checkpoint holds (a file, or a run's newest one)."""
    from azero.train.checkpoint import load_checkpoint

    return int(load_checkpoint(newest_checkpoint(path)).metadata["network"]["obs_shape"][0])


def game_for(name: str, planes: Iterable[int] = ()):
    """make_game(name), built with the feature set of the richest network that will play it
    (`planes`: the networks' observation planes); networks reading fewer get the leading ones."""
    from azero.games import make_game

    game = make_game(name)
    richest = max(planes, default=0)
    if richest > game.spec.obs_shape[0] and hasattr(game, "with_planes"):
        try:
            game = game.with_planes(richest)
        except ValueError:
            pass    # no feature set of this game has that many planes: a network of another game,
            # which the caller's shape check (load_evaluator, LoadedEvaluator.fits) names
    return game


class FirstPlanes:
    """An evaluator for a network that reads the first `planes` planes of a game's richer
    observations (Go basic inside extended: see games/go.py); everything else passes through."""

    def __init__(self, evaluator, planes: int):
        self.inner = evaluator
        self.planes = planes

    @property
    def has_score(self) -> bool:
        return bool(getattr(self.inner, "has_score", False))

    def evaluate(self, obs, legal):
        return self.inner.evaluate(np.ascontiguousarray(obs[:, : self.planes]), legal)

    def evaluate_with_score(self, obs, legal):
        return self.inner.evaluate_with_score(np.ascontiguousarray(obs[:, : self.planes]), legal)

    def ownership(self, obs):
        owner = getattr(self.inner, "ownership", None)
        return owner(np.ascontiguousarray(obs[:, : self.planes])) if owner is not None else None

    def __getattr__(self, name):
        return getattr(self.inner, name)


@dataclasses.dataclass
class LoadedEvaluator:
    """An evaluator and what it can play."""

    evaluator: object
    description: str
    """For logs and GTP's version: the checkpoint and its step, or the network-free evaluator."""
    obs_shape: tuple[int, int, int] | None = None
    """The network's input (C, H, W); None when any game fits (no network)."""
    num_actions: int | None = None
    path: Path | None = None
    """The checkpoint file; None without a network."""

    def fits(self, spec) -> bool:
        """Whether this evaluator reads exactly the observations of `spec` (a network is trained for one
        board size and one feature set)."""
        if self.obs_shape is None:
            return True
        return tuple(spec.obs_shape) == self.obs_shape and spec.num_actions == self.num_actions


def load_evaluator(checkpoint: str | os.PathLike | None, *, game=None, device: str = "auto", seed: int = 0,
                   threads: int | None = 1, precision: str = "auto", backend: str = "auto",
                   no_network: str = "rollouts", streams: int = 1) -> LoadedEvaluator:
    """The evaluator of a resolved checkpoint file (resolve_checkpoint), or for None the network-free
    `no_network` one: 'rollouts' (uniform priors, value = one random game from the leaf, so a search
    plays sensible moves with no network) or 'uniform' (value 0: the search sees only terminal
    positions).

    `game`: the game it will evaluate; a network for another board, action set or feature set is then
    a ValueError naming both, and one reading fewer planes than the game writes gets FirstPlanes.
    `threads`: torch CPU threads (process-wide). One by default: searches evaluate small batches, for
    which the thread pool's hand-offs cost more than they save (about 5x on a busy 2-core machine
    with a tiny network); None leaves torch's default. `streams`: threads that will evaluate at the
    same time (OpenVINO runs that many requests in parallel). CheckpointError for an unusable file."""
    if checkpoint is None:
        from azero.search.evaluators import RandomRolloutEvaluator, UniformEvaluator

        if no_network not in NO_NETWORK_EVALUATORS:
            raise ValueError(f"no_network must be one of {NO_NETWORK_EVALUATORS}, got {no_network!r}")
        if no_network == "uniform":
            return LoadedEvaluator(UniformEvaluator(), "uniform evaluator (no network)")
        return LoadedEvaluator(RandomRolloutEvaluator(rollouts=1, seed=seed), "random rollouts (no network)")
    from azero.selfplay.network_evaluator import NetworkEvaluator
    from azero.train.checkpoint import load_checkpoint, network_from_checkpoint_data

    ckpt = load_checkpoint(checkpoint)
    net = network_from_checkpoint_data(ckpt).eval()
    evaluator = NetworkEvaluator(net, device=device, threads=threads, precision=precision, backend=backend,
                                 streams=streams)
    loaded = LoadedEvaluator(evaluator, f"{ckpt.path.name} (step {ckpt.step}, {evaluator.describe})",
                             tuple(int(x) for x in net.obs_shape), int(net.num_actions), Path(ckpt.path))
    if game is not None:
        spec = game.spec
        planes, shape = loaded.obs_shape[0], tuple(spec.obs_shape)
        prefix = (planes < shape[0] and loaded.obs_shape[1:] == shape[1:]
                  and getattr(game, "planes_prefix_ok", lambda _: False)(planes))
        if not (loaded.fits(spec) or prefix) or loaded.num_actions != spec.num_actions:
            raise ValueError(f"checkpoint {ckpt.path} is a network for observations {loaded.obs_shape} and "
                             f"{loaded.num_actions} actions; game {spec.name} has {shape} and {spec.num_actions}")
        if prefix:
            loaded.evaluator = FirstPlanes(evaluator, planes)
        calibrate_int8(loaded, game, seed=seed)
    return loaded


def calibrate_int8(loaded: LoadedEvaluator, game, *, seed: int = 0) -> None:
    """Precision int8: quantize the network now, on random-play positions of `game` (the game it will
    play), so that its first real position already runs int8 rather than the 256 rows after it;
    no-op at other precisions and without a network."""
    evaluator = getattr(loaded.evaluator, "inner", loaded.evaluator)  # FirstPlanes wraps the network's
    if getattr(evaluator, "precision", None) != "int8" or loaded.obs_shape is None:
        return
    from azero.selfplay.network_evaluator import random_play_observations

    evaluator.calibrate(random_play_observations(game, seed=seed)[:, :loaded.obs_shape[0]])
