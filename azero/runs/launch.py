"""`azero selfplay`: turn command-line arguments into a configured run and start it."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from omegaconf import OmegaConf
from omegaconf.errors import OmegaConfBaseException

from azero.config import CONFIG_DIR, AzeroConfig, ConfigError, check_overrides, load_config, validate
from azero.runs.run_dir import RunDir


def compose_new(overrides: list[str], game: str | None):
    overrides = list(overrides)
    if game:
        overrides.insert(0, f"game={game}")
        if (CONFIG_DIR / "preset" / f"{game}.yaml").exists() and not any(o.startswith("preset=") for o in overrides):
            overrides.insert(1, f"preset={game}")
    return load_config(overrides)


def compose_resume(run_dir: RunDir, overrides: list[str]):
    """The saved config of a run, with dotted overrides (e.g. train.steps=5000) on top."""
    check_overrides(overrides)
    for o in overrides:
        if o.split("=", 1)[0] in ("game", "preset"):
            raise ConfigError(f"override {o!r} cannot be used with --resume (only key.path=value, and not the game)")
    try:
        cfg = OmegaConf.merge(OmegaConf.structured(AzeroConfig), OmegaConf.create(run_dir.load_config_text()),
                              OmegaConf.from_dotlist(overrides))
    except OmegaConfBaseException as e:
        raise ConfigError(f"cannot resume {run_dir.path}: {e}") from e
    validate(cfg)
    return cfg


def ray_auth_mode(run) -> None:
    """A local Ray instance (run.ray_address null) uses token authentication, said explicitly: Ray
    2.60 turns it on for local clusters anyway and warns on every run while the mode is unset. A
    mode the user set (RAY_AUTH_MODE=disabled, say) is kept. Called before ray is imported: the
    driver reads the mode once, at import, while the processes it starts read the environment."""
    if run.runner == "ray" and run.ray_address is None and "ray" not in sys.modules:
        os.environ.setdefault("RAY_AUTH_MODE", "token")


def check_heads(model, game) -> None:
    """A head whose target the game never records would stay untrained (or learn a constant) and
    still be read: refuse it before anything is written."""
    if model.score_head and not game.spec.area_scoring:
        raise ConfigError(f"model.score_head needs a game with a final score (area scoring, Go); "
                          f"{game.spec.name} has none")
    if model.ownership_head and not hasattr(game.new_states(1), "ownership"):
        raise ConfigError(f"model.ownership_head needs a game that records each point's final owner "
                          f"(Go, connect four, tic-tac-toe); {game.spec.name} does not")


def launch_selfplay(*, overrides: list[str], game: str | None, run_dir: str | None, resume: str | None) -> dict:
    if resume:
        if run_dir or game:
            raise ConfigError("--resume takes the run directory and its game from the saved run; "
                              "drop --run-dir/--game")
        rd = RunDir(resume)
        if rd.path.exists() and not rd.path.is_dir():
            raise ConfigError(f"--resume: {rd.path} is a file, not a run directory")
        if not rd.path.is_dir():
            raise ConfigError(f"--resume: {rd.path} does not exist")
        cfg = compose_resume(rd, overrides)
    else:
        cfg = compose_new(overrides, game)
        path = Path(run_dir or cfg.run.run_dir or RunDir.default_name(cfg.game.name))
        rd = RunDir(path)
        if path.exists() and not path.is_dir():
            raise ConfigError(f"--run-dir {path} is a file, not a folder")
        if rd.config_file.exists():
            raise ConfigError(f"{path} already holds a run; continue it with --resume {path} "
                              "or choose another --run-dir")
        cfg.run.run_dir = str(path)
    obj = validate(cfg)
    # Errors that only building the game finds (a board size out of range, an unknown OpenSpiel
    # game) must come before anything is written: a half-made run directory would make the retry
    # say "already holds a run", and --resume would fail again on the saved bad config.
    from azero.games.config import game_from_config

    try:
        game = game_from_config(obj.game)
    except (ValueError, KeyError, RuntimeError) as e:
        raise ConfigError(f"bad game configuration: {e}") from e
    check_heads(obj.model, game)
    fresh = not rd.path.exists()
    rd.create()
    try:
        if obj.run.runner == "ray":
            ray_auth_mode(obj.run)
            from azero.runs.ray_runner import RayRun

            runner = RayRun(obj, rd)
        else:
            from azero.runs.local import LocalRun

            runner = LocalRun(obj, rd)
    except BaseException:
        if fresh and not any(rd.checkpoints.iterdir()) and not any(rd.replay.iterdir()):
            shutil.rmtree(rd.path, ignore_errors=True)  # nothing of value was written: leave no half-made run
        raise
    # Saved only once the run's files have loaded: a resume refused for a corrupt checkpoint, shard
    # or state.json leaves the saved configuration as it was.
    rd.save_config(cfg)
    summary = runner.run()
    print(f"done: {summary['step']} train steps, {summary['games']} games, {summary['positions']:,} positions; "
          f"run dir {rd.path}", file=sys.stdout)
    return summary
