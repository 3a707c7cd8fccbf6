"""The engine's KV reuse on real searches, for every kind of model behind it: token-level PUCT with
and without the cache gives the same answers and the same logits at every node, and the cache
runs at least 3x fewer forward tokens (TinyGPT; transformers GPT-2; a rotary, grouped-query Llama)."""

import numpy as np
import pytest

from azero.search.llm.searchers import mcts_decode, tree_search_config
from azero.search.llm.tasks import BOS, EOS, PAD, VOCAB_SIZE
from azero.train.llm.engine import LMEngine

from llmutil import peaked, tiny_model


def _all_nodes_agree(a: LMEngine, b: LMEngine) -> int:
    """Compare logits of every prefix engine a holds with engine b's (same prefix); returns how many."""
    n = 0
    for node in range(a.num_nodes):
        toks = a.tokens_of(node)
        other, depth = b.find(toks)
        assert depth == len(toks)
        np.testing.assert_allclose(a.next_logits([node]), b.next_logits([other]), atol=2e-5, rtol=1e-5)
        n += 1
    return n


def _model(arch: str, request, tmp_path):
    if arch == "tinygpt":
        return tiny_model(seed=1)
    if arch == "gpt2":
        return request.getfixturevalue("hf_model")
    transformers = pytest.importorskip("transformers")
    from azero.train.llm.hf import load_hf_model

    # Rotary positions, grouped-query attention (2 key/value heads for 4 query heads).
    cfg = transformers.LlamaConfig(vocab_size=VOCAB_SIZE, hidden_size=32, intermediate_size=64,
                                   num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                                   max_position_embeddings=64, bos_token_id=BOS, eos_token_id=EOS, pad_token_id=PAD)
    peaked(transformers.LlamaForCausalLM(cfg), seed=2, std=0.3).save_pretrained(tmp_path)
    model = load_hf_model(tmp_path)
    assert model.kv_shape == (2, 2, 8)
    return model


@pytest.mark.parametrize("arch,n_problems,simulations", [("tinygpt", 6, 6), ("gpt2", 4, 4), ("llama", 4, 4)])
def test_kv_reuse_on_real_searches(arch, n_problems, simulations, countdown, request, tmp_path):
    model = _model(arch, request, tmp_path)
    problems = countdown.problems("test", n_problems, seed=3)
    cfg = tree_search_config(level="token", algorithm="puct", simulations=simulations, top_k=3)
    cached, uncached = LMEngine(model), LMEngine(model, use_cache=False)
    a = mcts_decode(cached, countdown, problems, cfg)
    b = mcts_decode(uncached, countdown, problems, cfg)
    assert a == b
    assert _all_nodes_agree(cached, uncached) > 50
    assert cached.meter.generated_tokens == uncached.meter.generated_tokens
    assert uncached.meter.forward_tokens == cached.meter.forward_tokens_uncached
    assert uncached.meter.forward_tokens >= 3 * cached.meter.forward_tokens
