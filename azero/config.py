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

from hydra import compose, initialize_config_dir
from hydra.core.config_store import ConfigStore
from hydra.errors import HydraException
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from azero.games.config import GameConfig

CONFIG_DIR = Path(__file__).resolve().parent.parent / "configs"


@dataclasses.dataclass
class AzeroConfig:
    """Root of every azero configuration."""

    game: GameConfig = dataclasses.field(default_factory=GameConfig)
    """The game and its rule parameters (group `game`)."""
    seed: int = 0
    """Seed of every random source in a run."""


class ConfigError(ValueError):
    """A configuration that cannot be composed: unknown option, key or value type."""


def register_configs() -> None:
    cs = ConfigStore.instance()
    cs.store(name="azero_schema", node=AzeroConfig)


def load_config(overrides: list[str] | None = None, config_name: str = "config") -> DictConfig:
    """Compose configs/<config_name>.yaml with hydra overrides; raise ConfigError on bad input."""
    register_configs()
    if not CONFIG_DIR.is_dir():
        raise ConfigError(f"config directory not found: {CONFIG_DIR}")
    try:
        with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
            cfg = compose(config_name=config_name, overrides=list(overrides or []))
    except (HydraException, OmegaConfBaseException) as e:
        raise ConfigError(_explain(e, list(overrides or []))) from e
    return cfg


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
