"""Helpers shared by the evaluation tests (imported by conftest.py and test modules)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import torch

from azero.games import make_game
from azero.train.checkpoint import model_tensors, network_metadata, save_checkpoint
from azero.train.network import NetworkConfig, PolicyValueNet


def save_tiny(directory: Path, game_name: str, step: int, seed: int) -> Path:
    """An untrained tiny network for `game_name`, saved as ckpt_<step> in `directory`."""
    torch.manual_seed(seed)
    net = PolicyValueNet(make_game(game_name).spec, NetworkConfig.tiny())
    return save_checkpoint(directory, step=step, tensors=model_tensors(net),
                           metadata={"network": network_metadata(net)})


def load_experiment(name: str) -> ModuleType:
    """experiments/<name>.py as a module: the lab scripts are not a package, their tests load them by path."""
    path = Path(__file__).resolve().parents[1] / "experiments" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
