"""Fixtures of the LLM-adapter tests: a tiny randomly initialised model (no training needed).

The weights are drawn with a large standard deviation so next-token distributions are peaked:
argmax ties, which float rounding could break differently in two code paths, do not occur.
"""

from __future__ import annotations

import pytest
import torch

from azero.search.llm.model import GPTConfig, TinyGPT
from azero.search.llm.tasks import make_task


def tiny_model(seed: int = 0, std: float = 0.4) -> TinyGPT:
    torch.manual_seed(seed)
    model = TinyGPT(GPTConfig(d_model=32, n_layer=2, n_head=2, d_ff=64, value_hidden=16))
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0.0, std)
    return model.eval()


@pytest.fixture(scope="session")
def model() -> TinyGPT:
    torch.set_num_threads(1)
    return tiny_model()


@pytest.fixture(scope="session")
def countdown():
    return make_task("countdown")


@pytest.fixture(scope="session")
def arith():
    return make_task("arith")
