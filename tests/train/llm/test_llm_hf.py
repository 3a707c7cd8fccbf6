"""HuggingFace transformers causal LMs through LMEngine (train/llm/hf.py): tiny randomly initialised
models written with save_pretrained into a temporary folder and loaded back local-only.

Checks: loading is local and maps the vocabulary, the adapter's forward is the plain model's, and
greedy decoding through the engine equals transformers' own generate / a plain argmax loop (with
the task vocabulary as the model's, or mapped through a locally built tokenizer). One-simulation
token-level MCTS equals greedy with these models too (tests/search/llm/test_llm_game.py), and
`azero llm ... --hf-model` runs end to end (tests/azero/llm/test_llm_cli.py); the KV reuse is
exact for them, also for a rotary, grouped-query Llama (test_llm_kv_reuse.py).
"""

import os
import random

import numpy as np
import pytest
import torch

transformers = pytest.importorskip("transformers")

from azero.search.llm.decode import generate  # noqa: E402
from azero.search.llm.tasks import BOS, CHARS, EOS, GENERATABLE, NEWLINE, PAD, VOCAB_SIZE  # noqa: E402
from azero.train.llm.engine import LMEngine  # noqa: E402
from azero.train.llm.hf import load_hf_model  # noqa: E402

from llmutil import gpt2, peaked  # noqa: E402


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
    gpt2(len(vocab), seed=1, bos_token_id=1, eos_token_id=1).save_pretrained(path)
    return path


def _greedy(engine, task, problems):
    return generate(engine, task, [p.prompt for p in problems], [len(p.prompt) for p in problems], greedy=True).tokens


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
        full = m.lm(input_ids=m.to_model[tokens], output_hidden_states=True)
    # The logits come from the task tokens' rows of the output layer alone: the same numbers.
    assert m.logits_head == "task"
    torch.testing.assert_close(logits, ref.logits[..., m.to_model])
    torch.testing.assert_close(hidden, full.hidden_states[-1])
    assert hidden.shape == (2, 7, 32) and k.shape == v.shape == (2, 2, 2, 7, 16)


def test_a_model_whose_logits_are_not_its_linear_head_keeps_its_own_forward():
    from azero.train.llm.hf import HFCausalLM

    class Scaled(transformers.GPT2LMHeadModel):
        """Logits scaled after the head (as soft-capping or logit_scale models do)."""

        def forward(self, *args, cache=None, **kwargs):
            out = super().forward(*args, cache=cache, **kwargs)
            out.logits = 2.0 * out.logits
            return out

    lm = peaked(Scaled(gpt2(VOCAB_SIZE, bos_token_id=BOS, eos_token_id=EOS, pad_token_id=PAD).config), 0).eval()
    m = HFCausalLM(lm, None, max_len=64)
    tokens = torch.tensor([[BOS, 4, 5, 20, 7]])
    assert m.logits_head == "full"
    with torch.no_grad():
        logits, _, _ = m(tokens)
        ref = lm(input_ids=tokens)
    torch.testing.assert_close(logits, ref.logits)


def test_hf_greedy_equals_transformers_generate(gpt2_dir, hf_model, countdown):
    lm = transformers.AutoModelForCausalLM.from_pretrained(gpt2_dir, local_files_only=True).eval()
    problems = countdown.problems("test", 6, seed=9)
    answers = _greedy(LMEngine(hf_model), countdown, problems)
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
    answers = _greedy(LMEngine(model), countdown, problems)
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


def test_bf16_runs_the_lm_in_bfloat16_and_hands_float32_to_the_engine(gpt2_dir, countdown):
    from azero.train.llm.hf import HFModelError

    f32, b16 = load_hf_model(gpt2_dir), load_hf_model(gpt2_dir, precision="bf16")
    assert next(b16.lm.parameters()).dtype == torch.bfloat16 and b16.logits_head == "task"
    tokens = torch.tensor([[BOS, 4, 5, 20, 7, NEWLINE, 9]])
    with torch.no_grad():
        (la, ha, (ka, _)), (lb, hb, (kb, _)) = f32(tokens), b16(tokens)
    assert lb.dtype == hb.dtype == kb.dtype == torch.float32
    torch.testing.assert_close(lb, la, rtol=0.05, atol=0.05 * float(la.abs().max()))
    # Through the engine's cache (float32 pools fed back in bfloat16), decoding still runs.
    problems = countdown.problems("test", 2, seed=4)
    assert all(_greedy(LMEngine(b16), countdown, problems))
    with pytest.raises(HFModelError, match="precision must be one of"):
        load_hf_model(gpt2_dir, precision="int4")
