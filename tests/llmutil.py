"""Tiny language models shared by the LLM tests (tests/search/llm, tests/train/llm, tests/azero/llm):
a randomly initialised TinyGPT and a GPT-2 written with save_pretrained, no training needed.

The weights are drawn with a large standard deviation so next-token distributions are peaked:
argmax ties, which float rounding could break differently in two code paths, do not occur.
Each folder's conftest re-exports the fixtures it needs.
"""

from __future__ import annotations

import pytest

from azero.search.llm.tasks import BOS, EOS, PAD, VOCAB_SIZE, make_task


def peaked(module, seed: int | None, std: float = 0.4):
    """`module` with every parameter redrawn from N(0, std^2) (after seeding torch, unless seed is
    None), in eval mode."""
    import torch

    if seed is not None:
        torch.manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.normal_(0.0, std)
    return module.eval()


def tiny_model(seed: int = 0, std: float = 0.4):
    import torch

    from azero.train.llm.model import GPTConfig, TinyGPT

    torch.manual_seed(seed)  # before the construction, whose initialisation draws come first
    return peaked(TinyGPT(GPTConfig(d_model=32, n_layer=2, n_head=2, d_ff=64, value_hidden=16)), None, std)


def gpt2(vocab: int, seed: int = 0, **ids):
    """A 2-layer GPT-2 (transformers) over `vocab` tokens, peaked like tiny_model."""
    import transformers

    positions = ids.pop("n_positions", 64)
    cfg = transformers.GPT2Config(vocab_size=vocab, n_positions=positions, n_embd=32, n_layer=2, n_head=2, **ids)
    return peaked(transformers.GPT2LMHeadModel(cfg), seed)


@pytest.fixture(scope="session")
def model():
    import torch

    torch.set_num_threads(1)
    return tiny_model()


@pytest.fixture(scope="session")
def gpt2_dir(tmp_path_factory):
    """A GPT-2 whose vocabulary is the task vocabulary (no tokenizer: identity map)."""
    pytest.importorskip("transformers")
    import torch

    torch.set_num_threads(1)
    path = tmp_path_factory.mktemp("gpt2-task-vocab")
    gpt2(VOCAB_SIZE, bos_token_id=BOS, eos_token_id=EOS, pad_token_id=PAD).save_pretrained(path)
    return path


@pytest.fixture(scope="session")
def hf_model(gpt2_dir):
    from azero.train.llm.hf import load_hf_model

    return load_hf_model(gpt2_dir)


@pytest.fixture(scope="session")
def countdown():
    return make_task("countdown")


@pytest.fixture(scope="session")
def arith():
    return make_task("arith")
