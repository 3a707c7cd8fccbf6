"""Shared pytest fixtures: a seeded rng, tiny random-init networks saved as checkpoints, GNU Go."""

from pathlib import Path

import numpy as np
import pytest


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.fixture(scope="session")
def ttt_run(tmp_path_factory) -> Path:
    """A run directory for tic-tac-toe with checkpoints at steps 1 and 2."""
    from evalutil import save_tiny

    run = tmp_path_factory.mktemp("ttt_run")
    save_tiny(run / "checkpoints", "tictactoe", 1, seed=1)
    save_tiny(run / "checkpoints", "tictactoe", 2, seed=2)
    return run


@pytest.fixture(scope="session")
def c4_run(tmp_path_factory) -> Path:
    from evalutil import save_tiny

    run = tmp_path_factory.mktemp("c4_run")
    save_tiny(run / "checkpoints", "connect4", 5, seed=5)
    return run


@pytest.fixture(scope="session")
def tiny_checkpoint(tmp_path_factory):
    """A randomly initialised tiny 9x9 network saved as a checkpoint (seeded)."""
    import torch

    from azero.games.go import GoGame
    from azero.train.checkpoint import model_tensors, network_metadata, save_checkpoint
    from azero.train.network import NetworkConfig, PolicyValueNet

    torch.manual_seed(0)
    net = PolicyValueNet(GoGame(9).spec, NetworkConfig.tiny())
    directory = tmp_path_factory.mktemp("ckpt")
    return save_checkpoint(directory, step=1, tensors=model_tensors(net),
                           metadata={"network": network_metadata(net)})


@pytest.fixture(scope="session")
def headed_checkpoint(tmp_path_factory):
    """A randomly initialised tiny 9x9 network with ownership and score heads (seeded), extended features."""
    import dataclasses

    import torch

    from azero.games.go import GoGame
    from azero.train.checkpoint import model_tensors, network_metadata, save_checkpoint
    from azero.train.network import NetworkConfig, PolicyValueNet

    torch.manual_seed(1)
    cfg = dataclasses.replace(NetworkConfig.tiny(), ownership_head=True, score_head=True)
    net = PolicyValueNet(GoGame(9, features="extended").spec, cfg)
    return save_checkpoint(tmp_path_factory.mktemp("headed"), step=1, tensors=model_tensors(net),
                           metadata={"network": network_metadata(net)})


@pytest.fixture
def gnugo():
    from azero.agents.gtp_player import find_gnugo

    path = find_gnugo()
    if path is None:
        pytest.skip("GNU Go is not installed (apt-get install gnugo); the GNU Go match tests need it")
    return path
