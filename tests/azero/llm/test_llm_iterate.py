"""Expert iteration (`azero llm iterate`, azero/llm/iterate.py) on a tiny TinyGPT trained for a few
seconds on sum3: the traces it distils are verified answers of train problems, distillation makes
them likelier, the record holds every round, and a rerun resumes instead of redoing work."""

import json

import numpy as np
import pytest
import torch

from azero.llm.iterate import IterateConfig, format_record, run_iterate
from azero.search.llm.tasks import make_task
from azero.train.llm.model import GPTConfig, load_checkpoint, save_checkpoint
from azero.train.llm.train import TrainConfig, train_lm

CFG = dict(problems=24, budget=192, lm_steps=30, lm_batch=32, lm_lr=3e-3, value_problems=16, value_steps=5,
           eval_problems=16, eval_budget=48, batch=12, seed=3)


@pytest.fixture(scope="module")
def start(tmp_path_factory):
    torch.set_num_threads(1)
    task = make_task("sum3")
    model = train_lm(task, TrainConfig(steps=300, batch=64, eval_problems=10, eval_every=0, warmup=20, seed=1),
                     model_cfg=GPTConfig(d_model=32, n_layer=2, n_head=2, d_ff=64, value_hidden=16),
                     log=lambda s: None)
    path = tmp_path_factory.mktemp("iterate") / "start.safetensors"
    save_checkpoint(path, model, task="sum3")
    return path


def _nll(model, seqs, pls):
    total, count = 0.0, 0
    with torch.no_grad():
        for s, pl in zip(seqs, pls):
            logits, _, _ = model(torch.tensor([s]))
            lp = torch.log_softmax(logits[0, pl - 1: len(s) - 1], -1)
            total -= float(lp[torch.arange(len(s) - pl), torch.tensor(s[pl:])].sum())
            count += len(s) - pl
    return total / count


def test_rounds_distil_verified_traces_and_resume(start, tmp_path):
    task = make_task("sum3")
    out = tmp_path / "run"
    doc = run_iterate(start, out, IterateConfig(rounds=1, **CFG), log=lambda s: None)
    assert [r["round"] for r in doc["rounds"]] == [0, 1]
    r1 = doc["rounds"][1]
    traces = r1["_traces"]
    assert r1["search"]["solved"] >= 3 and len(traces) == r1["distil"]["traces"] == r1["search"]["solved"]
    by_key = {p.key: p for p in task.problems("train", CFG["problems"], seed=CFG["seed"] * 1000 + 1)}
    for key, seq, pl in traces:
        assert key in by_key and task.verify_tokens(by_key[key], seq[pl:]) == 1.0
    # Distillation made the traces likelier than they were under the starting network.
    before, start_meta = load_checkpoint(start)
    after, meta = load_checkpoint(out / "round_1.safetensors")
    # a round's checkpoint names its task as the start does, so `azero llm compare --ckpt` loads it
    assert meta["task"] == start_meta["task"] and make_task(meta["task"]).name == task.name
    assert make_task("countdown3").name == make_task("countdown").name == "countdown3"
    seqs, pls = [t[1] for t in traces], [t[2] for t in traces]
    assert _nll(after, seqs, pls) < _nll(before, seqs, pls)
    assert meta["info"]["iterate_round"] == 1
    for r in doc["rounds"]:
        e = r["eval"]
        assert 0 <= e["greedy_ci"][0] <= e["greedy"] <= e["greedy_ci"][1] <= 1 and r["cpu_hours"] >= 0
    assert "greedy" in format_record(doc)

    # A rerun with the same settings does nothing new; one more round adds only round 2.
    same = json.dumps(doc["rounds"])  # (as text: a NaN AUC, with one class only, is not equal to itself)
    again = run_iterate(start, out, IterateConfig(rounds=1, **CFG), log=lambda s: None)
    assert json.dumps(again["rounds"]) == json.dumps(json.loads((out / "iterate.json").read_text())["rounds"]) == same
    more = run_iterate(start, out, IterateConfig(rounds=2, **CFG), log=lambda s: None)
    assert [r["round"] for r in more["rounds"]] == [0, 1, 2]
    assert json.dumps(more["rounds"][:2]) == same
    with pytest.raises(ValueError, match="other settings.*budget"):
        run_iterate(start, out, IterateConfig(rounds=2, **{**CFG, "budget": 64}), log=lambda s: None)


def test_bad_settings_are_named():
    with pytest.raises(ValueError, match="budget must be >= 1.*no room"):
        IterateConfig(budget=0).check()
    with pytest.raises(ValueError, match="method must be one of"):
        IterateConfig(method="beam").check()
    assert np.isfinite(IterateConfig().lm_lr)


def test_train_search_terminal_follows_the_task():
    from azero.llm.iterate import train_terminal

    countdown, sum3 = make_task("countdown"), make_task("sum3")
    assert train_terminal(countdown, IterateConfig()) == "verifier"      # self-checkable: the rules score it
    assert train_terminal(sum3, IterateConfig()) == "value_head"         # its verifier knows the answer
    assert train_terminal(countdown, IterateConfig(terminal="value_head")) == "value_head"
    with pytest.raises(ValueError, match="not self-checkable"):
        train_terminal(sum3, IterateConfig(terminal="verifier"))
    with pytest.raises(ValueError, match="terminal must be"):
        IterateConfig(terminal="oracle").check()


def test_more_problems_than_the_split_is_an_error_before_any_work(start, tmp_path):
    log = []
    with pytest.raises(ValueError, match="could not draw 1200 distinct train problems"):
        run_iterate(start, tmp_path / "big", IterateConfig(rounds=1, **{**CFG, "problems": 1200}), log=log.append)
    assert log == [] and not (tmp_path / "big" / "iterate.json").exists()


def test_joint_value_refit_trains_the_lm_on_the_given_sequences(start):
    from azero.search.llm.vocab import vocab_of
    from azero.train.llm.engine import LMEngine
    from azero.train.llm.train import train_value

    task = make_task("sum3")
    model, _ = load_checkpoint(start)
    vocab = vocab_of(LMEngine(model))
    rng = np.random.default_rng(0)
    probs = task.problems("train", 8, seed=4)
    # Sequences the ground truth would never teach: each prompt with another problem's answer.
    seqs, pls = [], []
    for p, q in zip(probs, probs[1:] + probs[:1]):
        prompt = list(vocab.prompt(task, p))
        answer = task.training_sequence(q, rng)[len(q.prompt):]
        seqs.append(prompt + list(answer))
        pls.append(len(prompt))
    before = _nll(model, seqs, pls)
    cfg = TrainConfig(value_problems=16, value_steps=40, value_mode="joint", batch=32, seed=1)
    summary = train_value(model, task, cfg, log=lambda s: None, lm_sequences=(seqs, pls))
    assert summary["mode"] == "joint" and _nll(model, seqs, pls) < before
    with pytest.raises(ValueError, match="no sequence"):
        train_value(model, task, cfg, log=lambda s: None, lm_sequences=([], []))
    with pytest.raises(ValueError, match="value_mode must be"):
        IterateConfig(value_mode="lm").check()
