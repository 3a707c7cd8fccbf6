"""The model's KV-cache API and the engine's prefix trie: cached logits equal uncached ones; the
meter counts what ran; checkpoints round-trip through safetensors."""

import numpy as np
import pytest
import torch

from azero.search.llm.protocol import NO_NODE
from azero.search.llm.tasks import BOS
from azero.train.llm.engine import LMEngine
from azero.train.llm.model import LLMCheckpointError, load_checkpoint, save_checkpoint

from llmutil import tiny_model


def _random_sequences(n, rng, max_len=40):
    return [[BOS] + rng.integers(2, 21, size=int(rng.integers(1, max_len))).tolist() for _ in range(n)]


def test_model_cached_forward_equals_full_forward(model):
    rng = np.random.default_rng(0)
    seqs = _random_sequences(6, rng)
    T = max(len(s) for s in seqs)
    with torch.no_grad():
        for s in seqs:
            full, hidden_full, _ = model(torch.tensor([s]))
            # Split at a random point: prefix without cache, then the rest with it.
            cut = int(rng.integers(1, len(s))) if len(s) > 1 else 1
            _, _, (k, v) = model(torch.tensor([s[:cut]]))
            rest = torch.tensor([s[cut:]])
            if rest.shape[1] == 0:
                continue
            pos = torch.arange(cut, len(s))[None]
            part, hidden_part, _ = model(rest, positions=pos, past=(k, v, torch.ones(1, cut, dtype=torch.bool)))
            torch.testing.assert_close(part[0], full[0, cut:], atol=1e-5, rtol=1e-5)
            torch.testing.assert_close(hidden_part[0], hidden_full[0, cut:], atol=1e-5, rtol=1e-5)
    assert T <= model.cfg.max_len


def test_engine_cached_logits_equal_uncached(model):
    """Prefixes of mixed lengths, extended token by token in ragged batches (padding in both the
    cached past and the new tokens), against one plain forward per sequence."""
    rng = np.random.default_rng(1)
    seqs = _random_sequences(24, rng)
    cached, uncached = LMEngine(model), LMEngine(model, use_cache=False)
    for length in range(1, max(len(s) for s in seqs) + 1, 3):
        batch = [s[:length] for s in seqs if len(s) >= length]
        cached.extend(batch, [2] * len(batch), count_new=True)
        uncached.extend(batch, [2] * len(batch), count_new=True)
    nodes_c = cached.extend(seqs, [2] * len(seqs), count_new=True)
    nodes_u = uncached.extend(seqs, [2] * len(seqs), count_new=True)
    with torch.no_grad():
        for s, nc, nu in zip(seqs, nodes_c, nodes_u):
            logits, hidden, _ = model(torch.tensor([s]))
            np.testing.assert_allclose(cached.next_logits([nc])[0], logits[0, -1].numpy(), atol=1e-5, rtol=1e-5)
            np.testing.assert_allclose(uncached.next_logits([nu])[0], logits[0, -1].numpy(), atol=1e-5, rtol=1e-5)
            np.testing.assert_allclose(cached.values([nc])[0], model.value(hidden[0, -1]).item(), atol=1e-5)
            assert cached.tokens_of(int(nc)).tolist() == s
    # Both computed every distinct position once; re-encoding paid for the whole prefix each time.
    distinct = len({tuple(s[:i]) for s in seqs for i in range(1, len(s) + 1)})
    for eng in (cached, uncached):
        assert eng.meter.prefill_tokens + eng.meter.generated_tokens == distinct == eng.num_nodes
    # Rows sharing part of a new suffix in one call each run it (only identical suffixes are merged).
    assert distinct <= cached.meter.forward_tokens < 1.2 * distinct
    assert uncached.meter.forward_tokens == cached.meter.forward_tokens_uncached > 3 * cached.meter.forward_tokens


def test_engine_reuses_cached_prefixes_and_counts_prompt_separately(model):
    eng = LMEngine(model)
    prompt = [BOS, 5, 6, 7]
    eng.extend([prompt], [4])
    assert (eng.meter.prefill_tokens, eng.meter.generated_tokens, eng.meter.model_calls) == (4, 0, 1)
    a = eng.extend([prompt + [8], prompt + [9, 10]], [4, 4], count_new=True)
    assert eng.meter.generated_tokens == 3 and eng.meter.forward_tokens == 7
    assert eng.meter.forward_tokens_uncached == 4 + 5 + 6
    again = eng.extend([prompt + [8], prompt + [9, 10]], [4, 4])
    assert (again == a).all() and eng.meter.model_calls == 2  # nothing new ran
    node = eng.find(prompt)[0]
    assert eng.child(node, 8) == a[0] and eng.child(node, 3) == NO_NODE


def test_truncate_and_clear_forget_nodes(model):
    eng = LMEngine(model, capacity=16)
    base = eng.extend([[BOS, 3, 4]], [3])
    mark = eng.num_nodes
    eng.extend([[BOS, 3, 4] + list(range(3, 20))] * 2, [3, 3])  # grows past the capacity
    epoch = eng.epoch
    eng.truncate(mark)
    assert eng.num_nodes == mark and eng.epoch > epoch
    assert eng.find([BOS, 3, 4, 3]) == (int(base[0]), 3)
    calls = eng.meter.model_calls
    again = eng.extend([[BOS, 3, 4, 3]], [3])
    assert eng.meter.model_calls == calls + 1 and eng.tokens_of(int(again[0])).tolist() == [BOS, 3, 4, 3]
    eng.clear()
    assert eng.num_nodes == 0 and eng.find([BOS]) == (NO_NODE, 0)


def test_checkpoint_roundtrip_and_errors(tmp_path):
    model = tiny_model(seed=3)
    path = save_checkpoint(tmp_path / "m.safetensors", model, task="countdown", info={"note": 1})
    loaded, meta = load_checkpoint(path)
    assert meta["task"] == "countdown" and meta["info"] == {"note": 1}
    x = torch.tensor([[BOS, 4, 5, 6]])
    with torch.no_grad():
        torch.testing.assert_close(loaded(x)[0], model(x)[0])
        torch.testing.assert_close(loaded.value(loaded(x)[1]), model.value(model(x)[1]))
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b"not a checkpoint")
    with pytest.raises(LLMCheckpointError):
        load_checkpoint(bad)
    with pytest.raises(FileNotFoundError):
        load_checkpoint(tmp_path / "missing.safetensors")
    import safetensors.torch

    other = tmp_path / "other.safetensors"
    safetensors.torch.save_file({"w": torch.zeros(2)}, str(other))
    with pytest.raises(LLMCheckpointError, match="format"):
        load_checkpoint(other)
