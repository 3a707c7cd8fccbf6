"""The evaluation tests run torch on one thread (the tiny networks are in tests/conftest.py)."""

from __future__ import annotations

import pytest
import torch


@pytest.fixture(scope="session", autouse=True)
def one_torch_thread():
    # Tiny batches on a shared 2-core machine: more threads only add contention.
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
