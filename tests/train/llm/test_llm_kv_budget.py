"""The engine's KV memory bound: evicting least recently used keys/values changes no output, only
what is recomputed; the slot holders always form whole prefixes; a budget too small for one
forward call is a clear error."""

import numpy as np
import pytest

from azero.search.llm.protocol import NO_NODE
from azero.search.llm.searchers import mcts_decode, tree_search_config
from azero.search.llm.tasks import BOS
from azero.train.llm.engine import LMEngine

from llmutil import tiny_model


def _check_invariants(eng: LMEngine) -> None:
    n = eng.num_nodes
    held = eng.slot[:n] >= 0
    assert held.sum() == eng.kv_held
    if eng.kv_budget is not None:
        assert eng.kv_held <= eng.kv_budget
    slots = eng.slot[:n][held]
    assert len(set(slots.tolist())) == len(slots)  # no slot shared by two nodes
    parents = eng.parent[:n]
    # A node holding keys/values has a parent holding them (whole prefixes) ...
    assert (held[parents[held & (parents != NO_NODE)]]).all()
    # ... and kv_children counts the children that hold them.
    expected = np.zeros(n, np.int64)
    np.add.at(expected, parents[held & (parents != NO_NODE)], 1)
    np.testing.assert_array_equal(eng.kv_children[:n], expected)


def test_bounded_engine_outputs_equal_unbounded(model):
    """Overlapping prefixes extended in ragged batches, revisited after eviction: identical logits
    and values, fewer positions held, and the evicted tails recomputed (and metered)."""
    rng = np.random.default_rng(4)
    stems = [[BOS] + rng.integers(2, 21, size=6).tolist() for _ in range(3)]
    seqs = [stems[i % 3] + rng.integers(2, 21, size=int(rng.integers(1, 25))).tolist() for i in range(18)]
    free, bounded = LMEngine(model), LMEngine(model, kv_budget=150)
    for round_ in range(2):  # the second round revisits prefixes whose keys/values were evicted
        for length in range(2, 40, 4):
            batch = [s[:length + round_] for s in seqs[(length // 4) % 3::2] if len(s) > length + round_]
            if not batch:
                continue
            a = free.extend(batch, [7] * len(batch), count_new=True)
            b = bounded.extend(batch, [7] * len(batch), count_new=True)
            np.testing.assert_allclose(bounded.next_logits(b), free.next_logits(a), atol=1e-5, rtol=1e-5)
            np.testing.assert_allclose(bounded.values(b), free.values(a), atol=1e-5)
            _check_invariants(bounded)
    m = bounded.meter
    assert m.evicted_tokens > 0 and m.recomputed_tokens > 0
    assert m.forward_tokens > free.meter.forward_tokens
    # Memoised outputs survive eviction: the same positions were created once in both engines.
    assert m.prefill_tokens + m.generated_tokens == free.meter.prefill_tokens + free.meter.generated_tokens
    assert bounded.num_nodes == free.num_nodes and bounded.kv_held <= 150 < free.kv_held
    assert free.meter.recomputed_tokens == free.meter.evicted_tokens == 0


def test_lookup_of_an_evicted_prefix_runs_nothing(model):
    eng = LMEngine(model, kv_budget=20)
    a = eng.extend([[BOS] + list(range(3, 15))], [1])
    eng.extend([[BOS, 20] + list(range(3, 15))], [1])  # evicts the tail of the first prefix
    assert eng.slot[a[0]] < 0 and eng.meter.evicted_tokens > 0
    calls = eng.meter.model_calls
    again = eng.extend([[BOS] + list(range(3, 15))], [1])
    assert again[0] == a[0] and eng.meter.model_calls == calls
    # One more token after it: the evicted tail is run again in the same call.
    before = eng.meter.recomputed_tokens
    eng.extend([[BOS] + list(range(3, 16))], [1])
    assert eng.meter.model_calls == calls + 1 and eng.meter.recomputed_tokens > before
    _check_invariants(eng)


def test_searches_with_a_memory_bound_give_the_same_answers(countdown):
    model = tiny_model(seed=1)
    problems = countdown.problems("test", 6, seed=3)
    cfg = tree_search_config(level="token", algorithm="puct", simulations=6, top_k=3)
    free, bounded = LMEngine(model), LMEngine(model, kv_budget=400)
    assert mcts_decode(bounded, countdown, problems, cfg) == mcts_decode(free, countdown, problems, cfg)
    assert bounded.meter.evicted_tokens > 0 and free.kv_held > 400 >= bounded.kv_held
    assert bounded.meter.generated_tokens == free.meter.generated_tokens
    _check_invariants(bounded)


def test_truncate_and_clear_free_slots(model):
    eng = LMEngine(model, kv_budget=30, capacity=16)
    eng.extend([[BOS, 3, 4]], [3])
    mark = eng.num_nodes
    eng.extend([[BOS, 3, 4] + list(range(3, 20))], [3])
    eng.truncate(mark)
    assert eng.kv_held == 3
    _check_invariants(eng)
    eng.extend([[BOS, 5] + list(range(3, 20))], [2])
    _check_invariants(eng)
    eng.clear()
    assert eng.kv_held == 0
    eng.extend([[BOS] + list(range(3, 21)) + list(range(3, 12))], [1])
    _check_invariants(eng)


def test_too_small_a_budget_is_an_error(model):
    with pytest.raises(ValueError, match="kv_budget"):
        LMEngine(model, kv_budget=0)
    eng = LMEngine(model, kv_budget=8)
    eng.extend([[BOS, 3, 4, 5, 6, 7]], [1])
    with pytest.raises(ValueError, match="kv_budget 8 is too small"):
        eng.extend([[BOS, 3, 4, 5, 6, 7, 8, 9, 10, 11]], [1])
