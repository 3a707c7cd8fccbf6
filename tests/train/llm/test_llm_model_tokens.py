"""A pretrained model's own tokens (search/llm/vocab.py ModelVocabulary through train/llm/hf.py):
a byte-level BPE tokenizer trained here on task-like text, so it has multi-character tokens
('12', '=1', ...), with a chat template, over a tiny random GPT-2.

Checks: the answer alphabet is a constraint on the detokenised text; answers round-trip through
the model's own tokenisation; prompts are the chat template's text; greedy decoding and a
one-simulation token search through the cached engine equal a plain argmax loop over the model's
allowed ids; bad tokenizers and files get errors that name the problem.
"""

import numpy as np
import pytest
import torch

transformers = pytest.importorskip("transformers")

from azero.llm.baselines import greedy_decode  # noqa: E402
from azero.search.llm.searchers import mcts_decode, tree_search_config  # noqa: E402
from azero.search.llm.tasks import CHARS, EOS, make_task  # noqa: E402
from azero.train.llm.engine import LMEngine  # noqa: E402
from azero.train.llm.hf import HFModelError, load_hf_model  # noqa: E402

from llmutil import gpt2  # noqa: E402

TEMPLATE = ("{% for m in messages %}[{{ m['role'] }}] {{ m['content'] }}\n{% endfor %}"
            "{% if add_generation_prompt %}[assistant] {% endif %}")


def _bpe_folder(path, *, chat=True):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    tok.decoder = decoders.ByteLevel()
    rng = np.random.default_rng(0)
    corpus = [f"{a}+{b}={a + b}\n{a + b}*{c}={(a + b) * c}" for a, b, c in rng.integers(1, 30, size=(400, 3))]
    corpus += ["Compute one addition at a time, with no spaces and no other text."] * 20
    trainer = trainers.BpeTrainer(vocab_size=420, special_tokens=["<|endoftext|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train_from_iterator(corpus, trainer)
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|endoftext|>",
                                                bos_token="<|endoftext|>")
    if chat:
        fast.chat_template = TEMPLATE
    fast.save_pretrained(path)
    eos = fast.eos_token_id
    # chat prompts with two worked examples are ~200 tokens long
    gpt2(len(fast), seed=3, bos_token_id=eos, eos_token_id=eos, n_positions=512).save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def bpe_dir(tmp_path_factory):
    torch.set_num_threads(1)
    return _bpe_folder(tmp_path_factory.mktemp("gpt2-bpe-chat"))


@pytest.fixture(scope="module")
def bpe_model(bpe_dir):
    return load_hf_model(bpe_dir)


def test_the_alphabet_constrains_the_detokenised_text(bpe_model):
    vocab = bpe_model.vocab
    assert vocab.kind == "model" and vocab.chat
    ids = np.flatnonzero(vocab.generatable)
    texts = [vocab.token_text(i) for i in ids if i != EOS]
    assert all(t and set(t) <= set(CHARS) and "\n" not in t[:-1] for t in texts)
    assert max(len(t) for t in texts) >= 3, "the BPE has multi-character tokens, and they are allowed"
    assert set(CHARS) <= set(texts), "every task character is a token by itself"
    assert vocab.step_end[ids].sum() == sum(t.endswith("\n") for t in texts)
    # The map to model ids is one to one on the generatable ids.
    assert len(set(vocab.to_model[ids].tolist())) == len(ids)


def test_answers_round_trip_in_the_models_own_tokens(bpe_model):
    vocab = bpe_model.vocab
    text = "12+7=19\n19*3=57"
    ids = vocab.encode_answer(text)
    assert vocab.text(ids + [EOS, ids[0]]) == text
    assert len(ids) < len(text), "the model's tokenisation merges characters"
    assert vocab.lines(ids) == 1
    with pytest.raises(ValueError, match=r"'a'.*not in the task alphabet"):
        vocab.encode_answer("12+a=3")


def test_prompts_are_the_chat_template(bpe_dir, bpe_model):
    task = make_task("sum3")
    p = task.problems("test", 1, seed=0)[0]
    prompt = bpe_model.vocab.prompt(task, p)
    tok = transformers.AutoTokenizer.from_pretrained(bpe_dir, local_files_only=True)
    msgs = []
    for q, a in task.examples():
        msgs += [{"role": "user", "content": q}, {"role": "assistant", "content": a}]
    msgs.append({"role": "user", "content": task.instruction(p)})
    expected = tok.encode(tok.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True),
                          add_special_tokens=False)
    assert bpe_model.vocab.to_model[list(prompt)].tolist() == expected
    assert tok.decode(expected).endswith("[assistant] ")
    assert "+".join(map(str, p.numbers)) in tok.decode(expected)
    # Prompt-only tokens (letters, spaces) exist and can never be generated.
    assert not bpe_model.vocab.generatable[[t for t in prompt if bpe_model.vocab.to_model[t] not in
                                            bpe_model.vocab.to_model[bpe_model.vocab.generatable]]].any()


def _argmax_loop(model, task, problem):
    """Greedy decoding straight on the transformers model (no cache, no trie), over the allowed ids."""
    vocab = model.vocab
    prompt = list(vocab.prompt(task, problem))
    ids = vocab.to_model[prompt].tolist()
    allowed = torch.tensor(vocab.to_model[np.flatnonzero(vocab.generatable)])
    back = {int(vocab.to_model[t]): int(t) for t in np.flatnonzero(vocab.generatable)}
    out = []
    while not task.finished(len(out), vocab.lines(out), out[-1] if out else -1):
        with torch.no_grad():
            logits = model.lm(input_ids=torch.tensor([ids])).logits[0, -1]
        best = int(allowed[int(torch.argmax(logits[allowed]))])
        ids.append(best)
        out.append(back[best])
    return out


def test_greedy_and_one_simulation_search_equal_an_argmax_loop(bpe_model):
    task = make_task("sum3")
    problems = task.problems("test", 3, seed=4)
    expected = [_argmax_loop(bpe_model, task, p) for p in problems]
    assert greedy_decode(LMEngine(bpe_model), task, problems) == expected
    searched = mcts_decode(LMEngine(bpe_model), task, problems,
                           tree_search_config(level="token", algorithm="puct", simulations=1,
                                              terminal_value="value_head", value_source="value_head"))
    assert searched == expected
    assert any(len(bpe_model.vocab.token_text(t)) > 1 for a in expected for t in a) or all(expected)


def test_step_search_runs_in_model_tokens(bpe_model):
    task = make_task("sum3")
    problems = task.problems("test", 2, seed=5)
    eng = LMEngine(bpe_model)
    answers = mcts_decode(eng, task, problems, tree_search_config(level="step", algorithm="gumbel", simulations=4,
                                                                   num_candidates=3, terminal_value="value_head",
                                                                   value_source="value_head"))
    vocab = bpe_model.vocab
    for a in answers:
        assert a and task.finished(len(a), vocab.lines(a), a[-1])
        assert set(vocab.text(a)) <= set(CHARS)
    assert eng.meter.forward_tokens < eng.meter.forward_tokens_uncached


def test_rebase_runs_in_model_tokens(bpe_model):
    """REBASE's rounds end at a model token that closes a line, as the MCTS step level's do."""
    from azero.llm.baselines import rebase_finals

    task = make_task("sum3")
    problems = task.problems("test", 2, seed=5)
    finals = rebase_finals(LMEngine(bpe_model), task, problems, answers=5, seed=3)
    vocab = bpe_model.vocab
    assert [len(f) for f in finals] == [5, 5]
    for f in finals:
        for toks, values in f:
            assert task.finished(len(toks), vocab.lines(toks), toks[-1]) and set(vocab.text(toks)) <= set(CHARS)
            assert 1 <= len(values) <= vocab.lines(toks) + 1  # one value per step


def test_a_tokenizer_missing_a_task_character_is_named(tmp_path):
    from tokenizers import Tokenizer, models

    vocab = {"<|endoftext|>": 0, "hello": 1}
    for c in CHARS.replace("7", ""):
        vocab[c] = len(vocab)
    tok = transformers.PreTrainedTokenizerFast(tokenizer_object=Tokenizer(models.WordLevel(vocab, unk_token="hello")),
                                               eos_token="<|endoftext|>", unk_token="hello")
    tok.chat_template = TEMPLATE
    tok.save_pretrained(tmp_path)
    gpt2(len(vocab), seed=1, bos_token_id=0, eos_token_id=0).save_pretrained(tmp_path)
    with pytest.raises(HFModelError, match=r"no token for the task character\(s\) '7'"):
        load_hf_model(tmp_path, tokens="model")
    with pytest.raises(HFModelError, match=r"cannot encode the task character '7' \(it gives the unknown token"):
        load_hf_model(tmp_path, tokens="chars")


def test_missing_and_corrupt_model_files_are_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="no GGUF file"):
        load_hf_model(tmp_path / "absent.gguf")
    with pytest.raises(FileNotFoundError, match="no model folder"):
        load_hf_model(tmp_path / "absent")
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"not a model at all")
    pytest.importorskip("gguf")
    with pytest.raises(HFModelError, match="not a GGUF file"):
        load_hf_model(bad)
    truncated = tmp_path / "cut.gguf"
    truncated.write_bytes(b"GGUF" + bytes(60))
    with pytest.raises(HFModelError, match="cut.gguf"):
        load_hf_model(truncated)
    (tmp_path / "folder").mkdir()
    (tmp_path / "folder" / "config.json").write_text('{"model_type": "gpt2", ')
    with pytest.raises(HFModelError, match="no readable transformers config"):
        load_hf_model(tmp_path / "folder")


def test_memoised_hidden_states_are_the_models(bpe_model):
    """keep_hidden: the engine's memo (what a frozen LM's value head is fitted on) equals the hidden
    states of one plain forward over the whole sequence, prompt and answer positions alike."""
    task = make_task("sum3")
    problems = task.problems("test", 2, seed=8)
    eng = LMEngine(bpe_model, keep_hidden=True)
    answers = greedy_decode(eng, task, problems)
    for p, a in zip(problems, answers):
        seq = list(bpe_model.vocab.prompt(task, p)) + a
        node = eng.extend([seq], [len(seq) - len(a)])[0]
        with torch.no_grad():
            _, hidden, _ = bpe_model(torch.tensor([seq]))
        np.testing.assert_allclose(eng.hidden_of(eng.path(int(node))), hidden[0].numpy(), atol=2e-4, rtol=1e-4)
    with pytest.raises(ValueError, match="keep_hidden"):
        LMEngine(bpe_model).hidden_of([0])
