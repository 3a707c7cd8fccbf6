"""The multi-seed protocol (azero/llm/evaluation.py): the bootstrap interval covers problems and
seeds, difficulty bins split by sampled pass@1, and `azero llm compare --seeds` runs it end to end
on the same problems for every seed."""

import json

import numpy as np
import pytest

from azero.llm.cli import main as llm_main
from azero.llm.evaluation import bootstrap_interval, difficulty_bins, merge_seeds


def test_bootstrap_interval_widens_with_seed_disagreement():
    rng = np.random.default_rng(0)
    base = (rng.random(200) < 0.5).astype(float)
    agree = np.stack([base, base, base])
    lo, hi = bootstrap_interval(agree)
    assert lo < base.mean() < hi and 0.08 < hi - lo < 0.2  # about 2 x 1.96 x sqrt(.25 / 200)
    # Seeds that disagree on every problem: the problem-level spread is gone, the seed-level one shows.
    noisy = np.stack([np.ones(200), np.zeros(200), np.ones(200)])
    lo2, hi2 = bootstrap_interval(noisy)
    assert lo2 < 2 / 3 < hi2 and hi2 - lo2 > 0.4
    assert bootstrap_interval(np.ones((3, 50))) == (1.0, 1.0)


def test_difficulty_bins_are_equal_count_quantiles():
    rate = np.array([0.9, 0.0, 0.5, 0.5, 0.1, 1.0, 0.3, 0.7, 0.2, 0.0])
    bins = difficulty_bins(rate, bins=5)
    assert np.bincount(bins).tolist() == [2] * 5
    assert bins[1] == bins[9] == 0 and bins[5] == 4  # the never-solved are hardest, the always-solved easiest
    assert all(rate[bins == b].max() <= rate[bins == b + 1].min() for b in range(4))


def test_merge_averages_seeds_and_bins():
    def doc(rewards, rate):
        pts = [{"budget": 64, "accuracy": float(np.mean(rewards)), "ci": [0, 1], "rewards": rewards,
                "generated_tokens": 60.0}]
        return {"task": "t", "problems": 5, "budgets": [64], "methods": {"m": {"points": pts}}, "pass_rate": rate}

    merged = merge_seeds([doc([1, 0, 0, 1, 1], [0, .2, .4, .6, .8]), doc([1, 1, 0, 0, 1], [0, .2, .4, .6, .8])],
                         [0, 1])
    p = merged["methods"]["m"]["points"][0]
    assert p["accuracy"] == pytest.approx(0.6) and p["seed_accuracy"] == [0.6, 0.6]
    assert p["rewards"] == [1.0, 0.5, 0.0, 0.5, 1.0] and p["generated_tokens"] == 60.0
    assert p["by_bin"] == [1.0, 0.5, 0.0, 0.5, 1.0]
    assert merged["seeds"] == [0, 1] and merged["bins"]["problems"] == [1] * 5


def test_compare_with_seeds_runs_the_protocol(tmp_path, capsys):
    ckpt = tmp_path / "s.safetensors"
    assert llm_main(["train", "--task", "sum3", "--out", str(ckpt), "--steps", "3", "--batch", "8", "--d-model", "32",
                     "--layers", "1", "--heads", "2", "--value-problems", "4", "--rollouts", "2", "--value-steps", "2",
                     "--eval-problems", "4", "--eval-every", "0", "--threads", "1"]) == 0
    out = tmp_path / "cmp"
    rc = llm_main(["compare", "--ckpt", str(ckpt), "--budgets", "32,64", "--problems", "10", "--batch", "5",
                   "--methods", "greedy,sample,bon-weighted,gumbel-step", "--seeds", "0,1,2", "--no-kv-check",
                   "--out", str(out)])
    assert rc == 0
    doc = json.loads((out / "compare.json").read_text())
    assert doc["seeds"] == [0, 1, 2] and doc["bins"]["problems"] == [2] * 5 and "kv_reuse" not in doc
    for name in ("bon-weighted", "gumbel-step"):
        for p in doc["methods"][name]["points"]:
            assert len(p["seed_accuracy"]) == 3 and len(p["rewards"]) == 10 and len(p["by_bin"]) == 5
            assert p["ci"][0] <= p["accuracy"] <= p["ci"][1]
    text = capsys.readouterr().out
    # Each seed's method groups were saved as they finished: a rerun reuses them all, and a lost part
    # (a stop mid-protocol) is the only work run again.
    parts = sorted(p.name for p in (out / "parts").iterdir())
    assert parts == [f"seed{s}-{g}.json" for s in (0, 1, 2) for g in ("greedy+sample+bon-weighted", "gumbel-step")]
    (out / "parts" / "seed1-gumbel-step.json").unlink()
    assert llm_main(["compare", "--ckpt", str(ckpt), "--budgets", "32,64", "--problems", "10", "--batch", "5",
                     "--methods", "greedy,sample,bon-weighted,gumbel-step", "--seeds", "0,1,2", "--no-kv-check",
                     "--out", str(out)]) == 0
    log = (out / "compare.log").read_text()
    assert log.count("done before") == 5 and "seed 1: gumbel-step done before" not in log
    again = json.loads((out / "compare.json").read_text())
    for name in ("bon-weighted", "gumbel-step"):
        assert [p["rewards"] for p in again["methods"][name]["points"]] == \
            [p["rewards"] for p in doc["methods"][name]["points"]]
    # Another model in the same file: no saved part is reused.
    assert llm_main(["train", "--task", "sum3", "--out", str(ckpt), "--steps", "3", "--batch", "8", "--d-model", "32",
                     "--layers", "1", "--heads", "2", "--value-problems", "4", "--rollouts", "2", "--value-steps", "2",
                     "--eval-problems", "4", "--eval-every", "0", "--threads", "1", "--seed", "1"]) == 0
    assert llm_main(["compare", "--ckpt", str(ckpt), "--budgets", "32,64", "--problems", "10", "--batch", "5",
                     "--methods", "greedy,sample,bon-weighted,gumbel-step", "--seeds", "0,1,2", "--no-kv-check",
                     "--out", str(out)]) == 0
    log = (out / "compare.log").read_text()
    assert log.count("done before") == 5 and log.count("was run with other settings") == 6
    assert "difficulty bin" in text and "bootstrap over problems and seeds" in text
    for bad in (["--seeds", "0,-1"], ["--budgets", "0,64"]):
        with pytest.raises(SystemExit) as e:
            llm_main(["compare", "--ckpt", str(ckpt), *bad])
        assert e.value.code == 2
    err = capsys.readouterr().err
    assert "seeds >= 0" in err and "a budget of 0 generated tokens leaves no room" in err


def test_saved_part_keys_default_the_settings_they_lack():
    from azero.llm.evaluation import _same_key

    key = {"problems": 500, "temperature": 1.0, "model": "m"}
    assert _same_key({"problems": 500, "model": "m"}, key)  # saved before `temperature` existed
    assert not _same_key({"problems": 500, "model": "m"}, {**key, "temperature": 0.7})
    assert not _same_key({"problems": 100, "temperature": 1.0, "model": "m"}, key)
    assert not _same_key({**key, "removed_setting": 1}, key)
