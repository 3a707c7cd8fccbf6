"""Hydra structured configs: the schema lives in dataclasses registered here,
the named options (game=go9x9, game=connect4, ...) in the YAML files of configs/.

Nothing is read from the environment at import time; `load_config` composes a
config from overrides such as ["game=connect4", "seed=3"] and turns hydra's
errors about unknown or ill-typed keys into a ConfigError naming the key.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Optional

from hydra import compose, initialize_config_dir
from hydra.core.config_store import ConfigStore
from hydra.errors import HydraException
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from azero.games.config import GameConfig
from azero.search.config import SearchConfig
from azero.selfplay.config import SelfPlayConfig
from azero.train.network import NetworkConfig
from azero.train.precision import BACKENDS, INFERENCE_PRECISIONS
from azero.train.replay import ReplayConfig
from azero.train.trainer import TrainConfig

CONFIG_DIR = Path(__file__).resolve().parent.parent / "configs"


@dataclasses.dataclass
class RunConfig:
    """Where and how a self-play training run executes."""

    runner: str = "local"
    """'local': everything in this process (deterministic for a seed); 'ray': workers, server,
    buffer and trainer as Ray actors."""
    run_dir: Optional[str] = None
    """Run directory; null makes runs/<game>-<timestamp>."""
    device: str = "auto"
    """Network device for self-play and training: 'auto' (CUDA if present), 'cpu', 'cuda'."""
    precision: str = "auto"
    """Network arithmetic for self-play inference: 'auto' (bf16 where the device has native bf16:
    CUDA, or a CPU with avx512_bf16 / AMX; f32 elsewhere), 'f32', 'bf16', 'int8' (OpenVINO on a
    CPU: a copy quantized by NNCF on the positions just evaluated, 1.6-2.2x OpenVINO float32's
    evaluations/s on a CPU without bf16). Search, targets and checkpoints stay float32 (train.precision sets the trainer's)."""
    backend: str = "auto"
    """Inference engine: 'auto' (OpenVINO on a CPU where it is installed, else torch), 'torch',
    'openvino' (CPU only; falls back to torch with a warning if it is missing or fails)."""
    async_reload: bool = True
    """OpenVINO: compile each training round's new weights in a background thread and swap them in
    between batches (~1 s per compile off the self-play path). false compiles in place: slower,
    but a one-worker run is then deterministic for its seed with every backend."""
    cpu_pinning: bool = False
    """OpenVINO binds its inference threads to cores. Off: each compiled model pins to the first
    cores, so two worker processes' models share one core (measured on connect four: 1.2 of 2
    cores busy with it, 1.7 without), and a pinned thread cannot move to a core a Python thread
    left free (`azero bench run` measures both)."""
    evaluator: str = "auto"
    """'inprocess' (each worker runs the net itself), 'server' (a shared batching inference
    server), or 'auto' (in-process on CPU, server on CUDA; see `azero bench selfplay`)."""
    workers: int = 1
    """Self-play workers (threads for the local runner, actors for ray)."""
    worker_processes: bool = False
    """Local runner: each self-play worker in a process of its own with its own network (spawned
    children, azero/runs/processes.py), and the learner training in this process while they play
    (a round's games use the weights of one round earlier). Deterministic for a seed with any
    number of workers when run.async_reload=false. Connect four (`azero bench run`): 1.08x the
    positions/s of threads, inside the noise. false: worker threads sharing one evaluator."""
    moves_per_round: int = 4
    """Lockstep self-play moves per worker call: between two training phases (local runner); between
    two weight checks of a worker actor, which trains alongside (ray)."""
    log_every_s: float = 5.0
    """Seconds between progress lines."""
    max_minutes: Optional[float] = None
    """Stop (with a checkpoint) after this much wall time even if train.steps is not reached. The
    run's clock (state.json `clock`) is kept across resumes, so this is the run's total: a resumed
    run gets what its earlier starts left (raise it to extend the run)."""
    init_from: Optional[str] = None
    """Warm start: a NEW run's network starts from this checkpoint's weights (a file, a run directory,
    or 'shipped' for the game's shipped network); new heads start fresh and extra input planes at
    zero (train/warm_start.py). Step, optimizer and replay start fresh; a resume ignores it.
    Both runners (Ray: the learner actor reads the file, so it must be on storage every node sees)."""
    max_cpu_minutes: Optional[float] = None
    """Stop (with a checkpoint) after the run's process has used this much CPU time (all its
    threads, and its worker processes with run.worker_processes; the total across resumes, as max_minutes; local runner only: Ray's roles spend their CPU time in other processes, on other nodes,
    so run.runner=ray refuses the key and takes run.max_minutes). Ablation arms use it rather than max_minutes: on a shared
    machine the wall clock also counts other jobs, the CPU time only the arm's own work
    (2 idle cores: 90 CPU minutes ~ 45 minutes of wall clock)."""
    threads: Optional[int] = 1
    """torch CPU threads per process. 1 by default: the network shares the CPU with search and
    other processes, and OpenMP threads that must wait for a busy core slow a forward pass
    down by an order of magnitude (measured: 0.04 s -> 0.7 s per batch on 2 contended cores).
    null keeps torch's default (all cores) for an otherwise idle machine."""
    ray_address: Optional[str] = None
    """Ray: address of an existing cluster ('auto' or host:port); null starts a local instance."""
    server_max_batch: int = 1024
    """Inference server: largest batch it assembles."""
    server_max_wait_ms: float = 2.0
    """Inference server: longest a request waits for others to join its batch."""


@dataclasses.dataclass
class AzeroConfig:
    """Root of every azero configuration."""

    game: GameConfig = dataclasses.field(default_factory=GameConfig)
    """The game and its rule parameters (group `game`)."""
    model: NetworkConfig = dataclasses.field(default_factory=NetworkConfig)
    """Policy-value network size (group `model`)."""
    search: SearchConfig = dataclasses.field(default_factory=SearchConfig)
    """MCTS settings used by self-play (group `search`)."""
    selfplay: SelfPlayConfig = dataclasses.field(default_factory=SelfPlayConfig)
    """Self-play game generation."""
    replay: ReplayConfig = dataclasses.field(default_factory=ReplayConfig)
    """Replay buffer window and sample budget."""
    train: TrainConfig = dataclasses.field(default_factory=TrainConfig)
    """Optimisation; train.steps is the run's budget."""
    run: RunConfig = dataclasses.field(default_factory=RunConfig)
    """Runner, run directory, devices, logging."""
    seed: int = 0
    """Seed of every random source in a run."""


class ConfigError(ValueError):
    """A configuration that cannot be composed: unknown option, key or value type."""


def register_configs() -> None:
    cs = ConfigStore.instance()
    cs.store(name="azero_schema", node=AzeroConfig)


def load_config(overrides: list[str] | None = None, config_name: str = "config") -> DictConfig:
    """Compose configs/<config_name>.yaml with hydra overrides; raise ConfigError on bad input."""
    check_overrides(overrides or [])
    register_configs()
    if not CONFIG_DIR.is_dir():
        raise ConfigError(f"config directory not found: {CONFIG_DIR}")
    try:
        with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
            cfg = compose(config_name=config_name, overrides=list(overrides or []))
    except (HydraException, OmegaConfBaseException) as e:
        raise ConfigError(_explain(e, list(overrides or []))) from e
    validate(cfg)
    return cfg


def check_overrides(overrides: list[str]) -> None:
    """Each override is KEY=VALUE with a key: ConfigError naming the one that is not."""
    for o in overrides:
        key = o.split("=", 1)[0].lstrip("+~")
        if "=" not in o or not key.strip():
            raise ConfigError(f"override {o!r} is not of the form key=value with a key (e.g. train.steps=500)")


def validate(cfg: DictConfig) -> AzeroConfig:
    """Instantiate the dataclasses so their range checks (__post_init__) run; ConfigError on failure."""
    try:
        obj = OmegaConf.to_object(cfg)
    except (ValueError, OmegaConfBaseException) as e:
        raise ConfigError(f"bad configuration: {e}") from e
    if obj.run.runner not in ("local", "ray"):
        raise ConfigError(f"run.runner must be 'local' or 'ray', got {obj.run.runner!r}")
    for key, value, allowed in (("run.precision", obj.run.precision, INFERENCE_PRECISIONS),
                                ("run.backend", obj.run.backend, BACKENDS)):
        if value not in allowed:
            raise ConfigError(f"{key} must be one of {', '.join(allowed)}; got {value!r}")
    if obj.run.evaluator not in ("auto", "inprocess", "server"):
        raise ConfigError(f"run.evaluator must be 'auto', 'inprocess' or 'server', got {obj.run.evaluator!r}")
    if obj.run.worker_processes and obj.run.runner != "local":
        raise ConfigError("run.worker_processes is a local-runner placement (Ray's workers are processes "
                          "already); drop it or use run.runner=local")
    if obj.run.worker_processes and obj.run.evaluator == "server":
        raise ConfigError("run.worker_processes gives each worker a network of its own; run.evaluator=server "
                          "shares one in the driver: use one or the other")
    if obj.run.max_cpu_minutes is not None and obj.run.runner != "local":
        raise ConfigError("run.max_cpu_minutes counts this process's CPU time: local runner only (Ray's "
                          "roles spend theirs in other processes); use run.max_minutes with run.runner=ray")
    _check_device(obj.run.device)
    return obj


def _check_device(requested: str) -> None:
    """Fail before anything is written when run.device names a device this machine does not have
    (a run saved after a GPU burst keeps run.device=cuda; resumed on a CPU machine it must say so)."""
    if requested in ("auto", "cpu"):
        return
    from azero.selfplay.network_evaluator import pick_device

    try:
        pick_device(requested)
    except ValueError as e:
        raise ConfigError(f"run.device={e}; use run.device=auto or run.device=cpu (with --resume, add it after "
                          "the run directory to continue a GPU run on CPU)") from e


def _explain(error: Exception, overrides: list[str]) -> str:
    """One readable message from hydra's nested errors, naming the offending key."""
    text = str(error)
    m = re.search(r"Could not override '([^']+)'", text)
    if m:
        return f"unknown config key '{m.group(1)}' (overrides: {overrides}); see `azero config` for valid keys"
    # hydra wraps the useful detail (e.g. a failed type conversion) in __cause__.
    details = [text]
    cause = error.__cause__
    while cause is not None:
        details.append(str(cause))
        cause = cause.__cause__
    msg = "; ".join(d.split("\n    full_key")[0].strip() for d in details if d.strip())
    msg = msg.split("Config search path:")[0].strip()
    return f"bad configuration (overrides: {overrides}): {msg}"


def config_to_yaml(cfg: DictConfig) -> str:
    return OmegaConf.to_yaml(cfg, resolve=True)
