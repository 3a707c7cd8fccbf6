"""End to end: a tiny comparison run produces every method's numbers (JSON + PNG), and the
`azero llm` commands train, solve and compare with tiny budgets."""

import json

import numpy as np
import pytest

from azero.llm_cli import main as llm_main
from azero.search.llm.baselines import SamplePool, sample_pool
from azero.search.llm.compare import METHODS, CompareConfig, format_table, run_compare, wilson, write_outputs
from azero.search.llm.engine import LMEngine


def test_tiny_comparison_reports_every_method(model, countdown, tmp_path):
    cfg = CompareConfig(budgets=(16, 32), problems=4, batch=4, top_k=3, num_candidates=2, kv_check_budget=128)
    doc = run_compare(model, countdown, cfg, log=lambda _: None)
    assert set(doc["methods"]) == set(METHODS)
    for name, entry in doc["methods"].items():
        pts = entry["points"]
        assert pts, name
        for p in pts:
            assert 0.0 <= p["ci"][0] <= p["accuracy"] <= p["ci"][1] <= 1.0
            for key in ("generated_tokens", "forward_tokens", "model_calls", "wall_s"):
                assert p[key] >= 0, (name, key)
            assert p["generated_tokens"] > 0, name
        if name not in ("greedy", "sample"):
            assert [p["budget"] for p in pts] == [16, 32][: len(pts)], name
    # Best-of-N never spends more than its budget; oracle pass@N bounds the selections.
    for b, pv, po in zip((16, 32), doc["methods"]["bon-value"]["points"], doc["methods"]["oracle"]["points"]):
        assert pv["generated_tokens"] <= b or pv["samples"] == 1
        assert po["accuracy"] >= pv["accuracy"]
    kv = doc["kv_reuse"]
    assert kv["same_answers"] and kv["ratio"] >= 3
    # With a fraction of the cache's peak: evictions (of abandoned branches first), the same answers.
    bounded = kv["bounded"]
    assert bounded["kv_budget"] < kv["kv_peak"] and bounded["same_answers"]
    assert bounded["evicted_tokens"] > 0
    assert bounded["forward_tokens"] >= kv["forward_tokens_cached"] + bounded["recomputed_tokens"]
    table = format_table(doc)
    assert "MCTS Gumbel, step" in table and "KV reuse" in table and "recomputed after eviction" in table
    json_path, png_path = write_outputs(doc, tmp_path)
    assert json.loads(json_path.read_text())["problems"] == 4
    assert png_path.stat().st_size > 1000


def test_sample_pool_budget_prefixes(model, countdown):
    problems = countdown.problems("test", 2, seed=0)
    pool = sample_pool(LMEngine(model), countdown, problems, budget=40, seed=1)
    for i in range(2):
        assert pool.lengths[i].sum() >= 40
        n = pool.count_for_budget(i, 40)
        assert pool.lengths[i][:n].sum() <= 40 or n == 1
    handmade = SamplePool([np.array([5, 5, 5])], [np.array([0.0, 1.0, 1.0])], [np.array([0.9, 0.1, 0.5])],
                          [["a", "b", "b"]])
    assert handmade.count_for_budget(0, 12) == 2 and handmade.count_for_budget(0, 3) == 1
    assert handmade.select(0, 3, "value") == (0.0, 15)
    assert handmade.select(0, 3, "majority") == (1.0, 15)
    assert handmade.select(0, 1, "oracle") == (0.0, 5)


def test_wilson_interval():
    lo, hi = wilson(50, 100)
    assert lo == pytest.approx(0.404, abs=1e-3) and hi == pytest.approx(0.596, abs=1e-3)
    assert wilson(0, 10)[0] == 0.0 and wilson(10, 10)[1] == 1.0


def test_cli_train_solve_compare(tmp_path, capsys):
    ckpt = tmp_path / "cd.safetensors"
    rc = llm_main(["train", "--task", "countdown", "--out", str(ckpt), "--steps", "3", "--batch", "8",
                   "--d-model", "32", "--layers", "1", "--heads", "2", "--value-problems", "4", "--rollouts", "2",
                   "--value-steps", "3", "--eval-problems", "4", "--eval-every", "0", "--threads", "1"])
    assert rc == 0 and ckpt.is_file() and ckpt.with_suffix(".log").is_file()
    assert "[value] done" in ckpt.with_suffix(".log").read_text()
    rc = llm_main(["solve", "--ckpt", str(ckpt), "--method", "puct-step", "--sims", "2", "-n", "2"])
    assert rc == 0 and "correct; per problem" in capsys.readouterr().out
    out = tmp_path / "cmp"
    rc = llm_main(["compare", "--ckpt", str(ckpt), "--budgets", "16", "--problems", "2", "--batch", "2",
                   "--methods", "greedy,bon-value,puct-token", "--out", str(out)])
    assert rc == 0
    doc = json.loads((out / "compare.json").read_text())
    assert set(doc["methods"]) == {"greedy", "bon-value", "puct-token"} and (out / "compare.png").is_file()
    assert llm_main(["compare", "--ckpt", str(tmp_path / "none.safetensors")]) == 2
    assert llm_main(["compare", "--ckpt", str(ckpt), "--methods", "nope", "--out", str(out)]) == 2
    assert llm_main(["compare", "--ckpt", str(ckpt), "--task", "arith", "--out", str(out)]) == 2


def test_search_config_overrides_apply_per_method():
    from azero.search.llm.compare import CompareConfig, search_config

    cfg = CompareConfig(search_overrides={"gumbel-token": {"gumbel_c_scale": 0.1, "gumbel_rescale_q": False}})
    g = search_config("gumbel-token", cfg)
    assert (g.algorithm, g.level, g.gumbel_c_scale, g.gumbel_rescale_q) == ("gumbel", "token", 0.1, False)
    p = search_config("puct-step", cfg)
    assert (p.algorithm, p.level, p.gumbel_c_scale) == ("puct", "step", 1.0)
    with pytest.raises(ValueError, match="no field 'nonsense'"):
        search_config("puct-token", CompareConfig(search_overrides={"puct-token": {"nonsense": 1}}))


def test_step_candidates_grow_with_the_budget(countdown):
    from azero.search.llm.searchers import TreeSearchConfig, candidates_for_budget
    cfg = TreeSearchConfig(level="step", num_candidates=4)
    ks = [candidates_for_budget(countdown, b, cfg, step_tokens=7.5) for b in (64, 256, 1024, 4096)]
    assert ks[0] == 4 and ks == sorted(ks) and ks[-1] >= 16
