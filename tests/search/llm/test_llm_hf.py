"""HuggingFace transformers causal LMs through LMEngine (search/llm/hf.py): tiny randomly initialised
models written with save_pretrained into a temporary folder and loaded back local-only.

Checks: the KV reuse is exact (cached == uncached logits, also for a rotary, grouped-query Llama),
greedy decoding through the engine equals transformers' own generate / a plain argmax loop (with
the task vocabulary as the model's, or mapped through a locally built tokenizer), one-simulation
token-level MCTS is greedy, and `azero llm train|solve|compare --hf-model` run end to end.
"""

import json
import os
import random

import numpy as np
import pytest
import torch

transformers = pytest.importorskip("transformers")

from azero.llm_cli import main as llm_main  # noqa: E402
from azero.search.llm.baselines import greedy_decode  # noqa: E402
from azero.search.llm.compare import METHODS  # noqa: E402
from azero.search.llm.engine import LMEngine  # noqa: E402
from azero.search.llm.hf import HFModelError, load_hf_model  # noqa: E402
from azero.search.llm.searchers import TreeSearchConfig, mcts_decode  # noqa: E402
from azero.search.llm.tasks import BOS, CHARS, EOS, GENERATABLE, NEWLINE, PAD, VOCAB_SIZE  # noqa: E402


def _peaked(lm, seed: int, std: float = 0.4):
    # Large weights: peaked next-token distributions, so no argmax ties between code paths.
    torch.manual_seed(seed)
    with torch.no_grad():
        for p in lm.parameters():
            p.normal_(0.0, std)
    return lm.eval()


def _gpt2(vocab: int, seed: int = 0, **ids):
    cfg = transformers.GPT2Config(vocab_size=vocab, n_positions=64, n_embd=32, n_layer=2, n_head=2, **ids)
    return _peaked(transformers.GPT2LMHeadModel(cfg), seed)


@pytest.fixture(scope="module")
def gpt2_dir(tmp_path_factory):
    """A GPT-2 whose vocabulary is the task vocabulary (no tokenizer: identity map)."""
    torch.set_num_threads(1)
    path = tmp_path_factory.mktemp("gpt2-task-vocab")
    _gpt2(VOCAB_SIZE, bos_token_id=BOS, eos_token_id=EOS, pad_token_id=PAD).save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def tok_dir(tmp_path_factory):
    """A GPT-2 with its own (word-level, shuffled) tokenizer of 25 tokens, built locally."""
    from tokenizers import Tokenizer, models

    chars = list(CHARS)
    random.Random(0).shuffle(chars)
    vocab = {"<unk>": 0, "<|endoftext|>": 1}
    for w in ["a", "b", "hello"] + chars + ["x", "y"]:
        vocab[w] = len(vocab)
    tok = transformers.PreTrainedTokenizerFast(
        tokenizer_object=Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>")),
        unk_token="<unk>", eos_token="<|endoftext|>", bos_token="<|endoftext|>")
    path = tmp_path_factory.mktemp("gpt2-own-tokenizer")
    tok.save_pretrained(path)
    _gpt2(len(vocab), seed=1, bos_token_id=1, eos_token_id=1).save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def hf_model(gpt2_dir):
    return load_hf_model(gpt2_dir)


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


def test_hf_loading_is_local_and_maps_the_vocabulary(gpt2_dir, tok_dir, hf_model, monkeypatch):
    import socket

    def no_network(*args, **kwargs):
        raise AssertionError("network access while loading a local model")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    assert load_hf_model(tok_dir).cfg.model_vocab_size == 25
    assert os.environ.get("HF_HUB_OFFLINE") == "1"
    assert hf_model.to_model.tolist() == list(range(VOCAB_SIZE)) and not hf_model.has_value_head
    assert hf_model.kv_shape == (2, 2, 16) and hf_model.cfg.max_len == 64
    tok = transformers.AutoTokenizer.from_pretrained(tok_dir, local_files_only=True)
    m = load_hf_model(tok_dir)
    mapped = m.to_model.tolist()
    assert mapped[EOS] == mapped[BOS] == tok.eos_token_id == 1
    assert [mapped[3 + i] for i in range(len(CHARS))] == [tok.convert_tokens_to_ids(c) for c in CHARS]
    # An untrained value head is exactly uninformative.
    eng = LMEngine(m)
    nodes = eng.extend([[BOS, 4, 5], [BOS, 6]], [1, 1])
    assert (eng.values(nodes) == 0.5).all()


def test_hf_adapter_forward_equals_the_plain_model(tok_dir):
    m = load_hf_model(tok_dir)
    tokens = torch.tensor([[BOS, 4, 5, 20, 7, NEWLINE, 9], [BOS, 12, 13, 14, 3, 3, 19]])
    with torch.no_grad():
        logits, hidden, (k, v) = m(tokens)
        ref = m.lm(input_ids=m.to_model[tokens])
    torch.testing.assert_close(logits, ref.logits[..., m.to_model])
    assert hidden.shape == (2, 7, 32) and k.shape == v.shape == (2, 2, 2, 7, 16)


@pytest.mark.parametrize("arch", ["gpt2", "llama"])
def test_hf_cached_logits_equal_uncached(arch, gpt2_dir, countdown, tmp_path):
    if arch == "gpt2":
        path = gpt2_dir
    else:  # rotary positions, grouped-query attention (2 key/value heads for 4 query heads)
        cfg = transformers.LlamaConfig(vocab_size=VOCAB_SIZE, hidden_size=32, intermediate_size=64,
                                       num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                                       max_position_embeddings=64, bos_token_id=BOS, eos_token_id=EOS,
                                       pad_token_id=PAD)
        _peaked(transformers.LlamaForCausalLM(cfg), seed=2, std=0.3).save_pretrained(tmp_path)
        path = tmp_path
    model = load_hf_model(path)
    if arch == "llama":
        assert model.kv_shape == (2, 2, 8)
    problems = countdown.problems("test", 4, seed=3)
    cfg = TreeSearchConfig(level="token", algorithm="puct", simulations=4, top_k=3)
    cached, uncached = LMEngine(model), LMEngine(model, use_cache=False)
    a = mcts_decode(cached, countdown, problems, cfg)
    b = mcts_decode(uncached, countdown, problems, cfg)
    assert a == b
    assert _all_nodes_agree(cached, uncached) > 50
    assert uncached.meter.forward_tokens == cached.meter.forward_tokens_uncached
    assert uncached.meter.forward_tokens >= 3 * cached.meter.forward_tokens


def test_hf_greedy_equals_transformers_generate(gpt2_dir, hf_model, countdown):
    lm = transformers.AutoModelForCausalLM.from_pretrained(gpt2_dir, local_files_only=True).eval()
    problems = countdown.problems("test", 6, seed=9)
    answers = greedy_decode(LMEngine(hf_model), countdown, problems)
    for p, ans in zip(problems, answers):
        assert ans
        with torch.no_grad():
            out = lm.generate(torch.tensor([p.prompt]), max_new_tokens=len(ans), do_sample=False,
                              suppress_tokens=[PAD, BOS], eos_token_id=EOS, pad_token_id=PAD)
        assert out[0, len(p.prompt):].tolist() == ans


def test_hf_greedy_with_own_tokenizer_equals_an_argmax_loop(tok_dir, countdown):
    model = load_hf_model(tok_dir)
    tok = transformers.AutoTokenizer.from_pretrained(tok_dir, local_files_only=True)
    lm = transformers.AutoModelForCausalLM.from_pretrained(tok_dir, local_files_only=True).eval()
    problems = countdown.problems("test", 4, seed=1)
    answers = greedy_decode(LMEngine(model), countdown, problems)
    back = {int(model.to_model[t]): t for t in np.flatnonzero(GENERATABLE)}  # model id -> task id
    allowed = torch.tensor(sorted(back))
    for p, ans in zip(problems, answers):
        # The prompt as text through the model's own tokenizer (character by character).
        text = "".join(CHARS[t - 3] for t in p.prompt[1:])
        ids = [tok.bos_token_id] + tok.encode(text, add_special_tokens=False)
        out, lines = [], 0
        while not countdown.finished(len(out), lines, out[-1] if out else -1):
            with torch.no_grad():
                logits = lm(input_ids=torch.tensor([ids])).logits[0, -1]
            best = int(allowed[int(torch.argmax(logits[allowed]))])
            ids.append(best)
            out.append(back[best])
            lines += back[best] == NEWLINE
        assert out == ans


@pytest.mark.parametrize("terminal", ["value_head", "verifier"])
def test_hf_one_simulation_token_search_is_greedy(hf_model, countdown, terminal):
    problems = countdown.problems("test", 8, seed=9)
    greedy = greedy_decode(LMEngine(hf_model), countdown, problems)
    searched = mcts_decode(LMEngine(hf_model), countdown, problems,
                           TreeSearchConfig(level="token", algorithm="puct", simulations=1, terminal_value=terminal))
    assert searched == greedy


def test_hf_value_defaults(hf_model, countdown, arith):
    from azero.llm_cli import _value_defaults

    # No trained value head: verified rollouts and the verifier where the task allows them.
    assert _value_defaults(hf_model, countdown, None, None) == ("verifier", "rollout")
    assert _value_defaults(hf_model, arith, None, None) == ("value_head", "value_head")
    assert _value_defaults(hf_model, countdown, "value_head", None) == ("value_head", "rollout")
    trained = load_hf_model(hf_model.cfg.path)
    trained.has_value_head = True
    assert _value_defaults(trained, countdown, None, None) == ("value_head", "value_head")


def test_hf_cli_compare_train_solve(gpt2_dir, tmp_path, capsys):
    out = tmp_path / "cmp"
    # Leaf values from the (constant) head keep this quick; rollouts are exercised by `solve` below.
    rc = llm_main(["compare", "--hf-model", str(gpt2_dir), "--task", "countdown", "--budgets", "16",
                   "--problems", "2", "--batch", "2", "--top-k", "3", "--candidates", "2", "--threads", "1",
                   "--value-source", "value_head", "--out", str(out)])
    assert rc == 0
    doc = json.loads((out / "compare.json").read_text())
    assert set(doc["methods"]) == set(METHODS) and doc["model"] == str(gpt2_dir)
    assert doc["config"]["value_source"] == "value_head" and doc["config"]["terminal"] == "verifier"
    assert doc["kv_reuse"]["same_answers"]
    for name, entry in doc["methods"].items():
        assert entry["points"], name
        for p in entry["points"]:
            assert 0.0 <= p["accuracy"] <= 1.0 and p["generated_tokens"] > 0, name
    capsys.readouterr()
    rc = llm_main(["solve", "--hf-model", str(gpt2_dir), "--method", "puct-step", "--sims", "2", "-n", "2",
                   "--candidates", "2", "--threads", "1"])  # defaults: rollout values, verifier at the end
    assert rc == 0 and "correct; per problem" in capsys.readouterr().out

    head = tmp_path / "value.safetensors"
    rc = llm_main(["train", "--hf-model", str(gpt2_dir), "--task", "countdown", "--out", str(head),
                   "--value-problems", "4", "--rollouts", "2", "--value-steps", "3", "--batch", "8",
                   "--threads", "1"])
    assert rc == 0 and head.is_file() and "[value] done" in head.with_suffix(".log").read_text()
    capsys.readouterr()
    rc = llm_main(["solve", "--hf-model", str(gpt2_dir), "--value-head", str(head), "--method", "puct-token",
                   "--sims", "2", "-n", "2", "--threads", "1"])
    assert rc == 0 and "correct; per problem" in capsys.readouterr().out
    from azero.search.llm.hf import load_value_head

    m = load_hf_model(gpt2_dir)
    assert load_value_head(m, head)["task"] == "countdown" and m.has_value_head
    eng = LMEngine(m)
    assert (eng.values(eng.extend([[BOS, 4, 5], [BOS, 6, 7, 8]], [1, 1])) != 0.5).any()  # trained: not constant


def test_hf_cli_errors(gpt2_dir, tmp_path, capsys):
    assert llm_main(["compare", "--hf-model", str(tmp_path / "missing")]) == 2
    assert "no model folder" in capsys.readouterr().err
    not_lm = tmp_path / "vit"
    transformers.ViTConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                           intermediate_size=32).save_pretrained(not_lm)
    assert llm_main(["solve", "--hf-model", str(not_lm)]) == 2
    assert "not loadable as a causal LM" in capsys.readouterr().err
    empty = tmp_path / "empty"
    empty.mkdir()
    assert llm_main(["solve", "--hf-model", str(empty)]) == 2
    assert "no readable transformers config" in capsys.readouterr().err
    assert llm_main(["solve", "--hf-model", str(gpt2_dir), "--ckpt", "x.safetensors"]) == 2
    assert llm_main(["train", "--hf-model", str(gpt2_dir), "--value-mode", "joint"]) == 2
    with pytest.raises(HFModelError, match="no tokenizer"):
        wrong = tmp_path / "wrong-vocab"
        _gpt2(VOCAB_SIZE + 5).save_pretrained(wrong)
        load_hf_model(wrong)
