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


def scrambled_tiny_net(spec, seed: int = 0) -> PolicyValueNet:
    """A tiny network for `spec` with every weight drawn from N(0, 0.3), in eval mode: unlike the
    initialisation's zero (identity) tower, every layer changes the output, so precision tests see
    each layer's rounding."""
    torch.manual_seed(seed)
    net = PolicyValueNet(spec, NetworkConfig.tiny()).eval()
    with torch.no_grad():
        for p in net.parameters():
            p.normal_(0.0, 0.3)
    return net


def load_experiment(name: str) -> ModuleType:
    """experiments/<name>.py as a module: the lab scripts are not a package, their tests load them by path."""
    path = Path(__file__).resolve().parents[1] / "experiments" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
