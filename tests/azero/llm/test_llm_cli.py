"""Smoke runs of `azero llm train | solve | compare` with tiny budgets: a TinyGPT checkpoint, and a
local transformers GPT-2 (--hf-model) with and without a trained value head."""

import json

import pytest

from azero.llm.cli import _value_defaults
from azero.llm.cli import main as llm_main
from azero.llm.compare import METHODS
from azero.search.llm.tasks import BOS, VOCAB_SIZE
from azero.train.llm.engine import LMEngine

from llmutil import gpt2


def test_cli_train_solve_compare(tmp_path, capsys):
    ckpt = tmp_path / "cd.safetensors"
    rc = llm_main(["train", "--task", "countdown", "--out", str(ckpt), "--steps", "3", "--batch", "8",
                   "--d-model", "32", "--layers", "1", "--heads", "2", "--value-problems", "4", "--rollouts", "2",
                   "--value-steps", "3", "--eval-problems", "4", "--eval-every", "0", "--threads", "1"])
    assert rc == 0 and ckpt.is_file() and ckpt.with_suffix(".log").is_file()
    assert "[value] done" in ckpt.with_suffix(".log").read_text()
    rc = llm_main(["solve", "--ckpt", str(ckpt), "--method", "puct-step", "--sims", "2", "-n", "2"])
    assert rc == 0 and "correct; per problem" in capsys.readouterr().out
    rc = llm_main(["solve", "--ckpt", str(ckpt), "--method", "rebase", "--width", "3", "-n", "2"])
    assert rc == 0 and "correct; per problem" in capsys.readouterr().out
    assert llm_main(["solve", "--ckpt", str(ckpt), "--method", "rebase", "--width", "0", "-n", "2"]) == 2
    assert "--width (REBASE's finished answers) must be >= 1" in capsys.readouterr().err
    assert llm_main(["compare", "--ckpt", str(ckpt), "--methods", "rebase", "--balance-temperature", "0",
                     "--out", str(tmp_path / "bad")]) == 2
    assert "balance temperature (REBASE) must be > 0" in capsys.readouterr().err
    out = tmp_path / "cmp"
    rc = llm_main(["compare", "--ckpt", str(ckpt), "--budgets", "16", "--problems", "2", "--batch", "2",
                   "--methods", "greedy,bon-value,puct-token", "--out", str(out)])
    assert rc == 0
    doc = json.loads((out / "compare.json").read_text())
    assert set(doc["methods"]) == {"greedy", "bon-value", "puct-token"} and (out / "compare.png").is_file()
    assert llm_main(["compare", "--ckpt", str(tmp_path / "none.safetensors")]) == 2
    assert llm_main(["compare", "--ckpt", str(ckpt), "--methods", "nope", "--out", str(out)]) == 2
    assert llm_main(["compare", "--ckpt", str(ckpt), "--task", "arith", "--out", str(out)]) == 2


def test_hf_value_defaults(hf_model, countdown, arith):
    from azero.train.llm.hf import load_hf_model

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
    from azero.train.llm.hf import load_hf_model, load_value_head

    m = load_hf_model(gpt2_dir)
    assert load_value_head(m, head)["task"] == "countdown" and m.has_value_head
    eng = LMEngine(m)
    assert (eng.values(eng.extend([[BOS, 4, 5], [BOS, 6, 7, 8]], [1, 1])) != 0.5).any()  # trained: not constant


def test_hf_cli_errors(gpt2_dir, tmp_path, capsys):
    transformers = pytest.importorskip("transformers")
    from azero.train.llm.hf import HFModelError, load_hf_model

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
        gpt2(VOCAB_SIZE + 5).save_pretrained(wrong)
        load_hf_model(wrong)


def test_bench_llm_times_both_heads_on_the_same_samples(gpt2_dir, capsys):
    from azero.bench.llm import run_llm_bench

    out = run_llm_bench(str(gpt2_dir), task_name="countdown", batch=2, length=8, problems=2, budget=16, rounds=1,
                        threads=1)
    # The task head and transformers' own forward draw the same seeded samples, so both time one workload.
    assert out["same_samples"] == 2
    assert all(out[w]["full"] > 0 and out[w]["task"] > 0 for w in ("prefill", "sampling"))
    assert "sampling: task head over full vocabulary:" in capsys.readouterr().out
    with pytest.raises(ValueError, match="must be >= 1"):
        run_llm_bench(str(gpt2_dir), budget=0)
