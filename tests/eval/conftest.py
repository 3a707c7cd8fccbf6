"""Tiny random-init networks saved as checkpoints, shared by the evaluation tests."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from evalutil import save_tiny


@pytest.fixture(scope="session", autouse=True)
def one_torch_thread():
    # Tiny batches on a shared 2-core machine: more threads only add contention.
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="session")
def ttt_run(tmp_path_factory) -> Path:
    """A run directory for tic-tac-toe with checkpoints at steps 1 and 2."""
    run = tmp_path_factory.mktemp("ttt_run")
    save_tiny(run / "checkpoints", "tictactoe", 1, seed=1)
    save_tiny(run / "checkpoints", "tictactoe", 2, seed=2)
    return run


@pytest.fixture(scope="session")
def c4_run(tmp_path_factory) -> Path:
    run = tmp_path_factory.mktemp("c4_run")
    save_tiny(run / "checkpoints", "connect4", 5, seed=5)
    return run
