"""End to end: a tiny comparison run produces every method's numbers (JSON + PNG); the sample pool
behind best-of-N; per-method search overrides."""

import json
from pathlib import Path

import numpy as np
import pytest

from azero.llm.baselines import SamplePool, sample_pool
from azero.llm.compare import METHODS, CompareConfig, run_compare, search_config
from azero.llm.report import format_table, write_outputs
from azero.train.llm.engine import LMEngine


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
    # A search and its vote over the tree's finished answers are one run: one meter, two answers.
    for base in ("puct-step", "gumbel-step"):
        for pa, pv in zip(doc["methods"][base]["points"], doc["methods"][base + "-weighted"]["points"]):
            assert pv["generated_tokens"] == pa["generated_tokens"] and pv["finished_answers"] >= 1
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
        # each sample's text is what its reward and answer key were read from
        assert len(pool.texts[i]) == len(pool.keys[i]) == len(pool.rewards[i])
        assert [countdown.verify(problems[i], t) for t in pool.texts[i]] == pool.rewards[i].tolist()
        assert [countdown.answer_key(problems[i], t) for t in pool.texts[i]] == pool.keys[i]
        # one log-probability per generated token, each a probability's log (the confidence judge)
        assert [len(lp) for lp in pool.token_logprobs[i]] == pool.lengths[i].tolist()
        assert [len(t) for t in pool.tokens[i]] == pool.lengths[i].tolist()
        assert [countdown.verify_tokens(problems[i], t) for t in pool.tokens[i]] == pool.rewards[i].tolist()
        assert all(((lp <= 0) & np.isfinite(lp)).all() for lp in pool.token_logprobs[i])
    handmade = SamplePool([np.array([5, 5, 5])], [np.array([0.0, 1.0, 1.0])], [np.array([0.9, 0.1, 0.5])],
                          [["a", "b", "b"]])
    assert handmade.count_for_budget(0, 12) == 2 and handmade.count_for_budget(0, 3) == 1
    assert handmade.select(0, 3, "value") == (0.0, 15)
    assert handmade.select(0, 3, "majority") == (1.0, 15)
    assert handmade.select(0, 1, "oracle") == (0.0, 5)
    # weighted vote: "a" has one vote worth 0.9, "b" two worth 0.1 + 0.5 = 0.6; majority picks "b"
    assert handmade.select(0, 3, "weighted") == (0.0, 15)
    heavier = SamplePool([np.array([5, 5, 5])], [np.array([0.0, 1.0, 1.0])], [np.array([0.5, 0.3, 0.4])],
                         [["a", "b", "b"]])
    assert heavier.select(0, 3, "weighted") == (1.0, 15) and heavier.select(0, 3, "value") == (0.0, 15)
    # value ** 4: "a" 0.0625 against "b" 0.0081 + 0.0256; the sharper weight follows the single best value
    assert heavier.select(0, 3, "weighted", power=4.0) == (0.0, 15)
    # Another judge's scores in the values' place: their AUC over the samples within the budget and
    # the vote they weigh (budget 10: the first two samples only).
    assert heavier.judge([np.array([0.1, 0.6, 0.2])], 15) == (1.0, 100.0)
    assert heavier.judge([np.array([0.9, 0.1, 0.0])], 10) == (0.0, 0.0)
    assert heavier.judge([np.array([0.2, 0.2, 0.9])], 10) == (0.5, 0.0)  # a tie counts half; "a" drawn first


def test_search_config_overrides_apply_per_method():
    cfg = CompareConfig(search_overrides={"gumbel-token": {"gumbel_c_scale": 0.1, "gumbel_rescale_q": False}})
    g = search_config("gumbel-token", cfg)
    assert (g.search.algorithm, g.level, g.search.gumbel_c_scale, g.search.gumbel_rescale_q) == \
        ("gumbel", "token", 0.1, False)
    assert g.search.gumbel_scale == 0.0  # SEARCH_DEFAULTS still apply where not overridden
    p = search_config("puct-step", cfg)
    assert (p.search.algorithm, p.level, p.search.gumbel_c_scale) == ("puct", "step", 1.0)
    # Command-line values arrive as floats: each is cast to its field's type.
    s = search_config("puct-token", CompareConfig(search_overrides={"puct-token": {"leaves_per_game": 2.0}}))
    assert s.search.leaves_per_game == 2 and isinstance(s.search.leaves_per_game, int)
    with pytest.raises(ValueError, match="no field 'nonsense'"):
        search_config("puct-token", CompareConfig(search_overrides={"puct-token": {"nonsense": 1}}))


def test_step_beam_and_dvts_return_answers_and_spend_tokens(model, countdown):
    from azero.llm.baselines import dvts_decode, step_beam_decode

    problems = countdown.problems("test", 3, seed=0)
    engine = LMEngine(model)
    answers = step_beam_decode(engine, countdown, problems, width=2, expand=2, seed=1)
    spent = engine.meter.generated_tokens
    assert len(answers) == 3 and spent > 0 and all(isinstance(a, list) for a in answers)
    again = step_beam_decode(LMEngine(model), countdown, problems, width=2, expand=2, seed=1)
    assert again == answers  # seeded
    # The width buys compute: beams are not merged, so a confident model's identical steps do not
    # collapse a wide beam into a narrow one that stops early.
    wide = LMEngine(model)
    step_beam_decode(wide, countdown, problems, width=8, expand=2, seed=1)
    assert wide.meter.generated_tokens >= 3 * spent
    trees = dvts_decode(engine, countdown, problems, trees=3, expand=2, seed=1)
    assert len(trees) == 3 and engine.meter.generated_tokens > spent
    for a in answers + trees:
        assert countdown.verify_tokens(problems[0], a) in (0.0, 1.0)
    with pytest.raises(ValueError, match=">= 1"):
        step_beam_decode(engine, countdown, problems, width=0)


def test_step_answers_by_value_or_weighted_vote_under_each_aggregation(countdown):
    from azero.llm.baselines import aggregate_steps, choose_answer
    from azero.search.llm.tasks import EOS, encode_text
    from azero.search.llm.vocab import CHAR_VOCAB

    assert [aggregate_steps([0.9, 0.2, 0.5], how) for how in ("last", "min", "prod")] == \
        pytest.approx([0.5, 0.2, 0.09])
    with pytest.raises(ValueError, match="step aggregation"):
        aggregate_steps([0.5], "mean")
    problem = countdown.problems("test", 1, seed=0)[0]
    vocab = CHAR_VOCAB
    good, bad = encode_text(countdown.solutions(problem)[0]) + [EOS], encode_text("1+1=2") + [EOS]
    assert countdown.verify_tokens(problem, good) == 1.0 and countdown.verify_tokens(problem, bad) == 0.0
    # One over-rated wrong answer against two fairly rated copies of the right one.
    finals = [(bad, [0.5, 0.9]), (good, [0.6, 0.5]), (good, [0.8, 0.5])]
    assert choose_answer(countdown, problem, vocab, finals, select="value") == bad
    assert choose_answer(countdown, problem, vocab, finals, select="value", aggregate="prod") == bad  # .45 > .4
    for how in ("last", "min", "prod"):
        assert choose_answer(countdown, problem, vocab, finals, select="weighted", aggregate=how) == good
    # by the product the two right answers no longer outvote a wrong one rated 0.9 at both steps
    assert choose_answer(countdown, problem, vocab, [(bad, [0.9, 0.9])] + finals[1:], select="weighted",
                         aggregate="prod") == bad
    assert choose_answer(countdown, problem, vocab, [], select="weighted") == []
    with pytest.raises(ValueError, match="selection"):
        choose_answer(countdown, problem, vocab, finals, select="best")


def test_protocol_groups_a_step_baseline_with_its_vote():
    from azero.llm.evaluation import method_groups

    assert method_groups(["greedy", "dvts", "bon-weighted", "step-beam-weighted", "dvts-weighted", "gumbel-step",
                          "rebase-weighted", "step-beam", "rebase"]) == [
        ("greedy", "bon-weighted"), ("dvts", "dvts-weighted"), ("step-beam-weighted", "step-beam"), ("gumbel-step",),
        ("rebase-weighted", "rebase")]


def test_balanced_widths_share_the_steps_by_value():
    from azero.llm.baselines import balanced_widths

    values = np.array([0.2, 0.9, 0.5, 0.9])
    for t in (0.01, 0.2, 1.0, 100.0):
        w = balanced_widths(values, 10, t)
        assert w.sum() == 10 and (w >= 0).all()
        assert w[1] >= w[2] >= w[0]  # a higher value never gets fewer steps
    assert balanced_widths(values, 10, 1e-3).tolist() == [0, 5, 0, 5]  # the best two share it all
    assert balanced_widths(values, 8, 1e3).tolist() == [2, 2, 2, 2]  # evenly: i.i.d. sampling
    assert balanced_widths(values, 3, 1e3).tolist() == [0, 1, 1, 1]  # the remainders to the larger shares
    with pytest.raises(ValueError, match="balance temperature"):
        balanced_widths(values, 10, 0.0)


def test_rebase_finishes_its_answers_and_pays_for_each_step(model, countdown):
    from azero.llm.baselines import rebase_decode, rebase_finals

    problems = countdown.problems("test", 3, seed=0)
    engine = LMEngine(model)
    finals = rebase_finals(engine, countdown, problems, answers=6, seed=1)
    assert [len(f) for f in finals] == [6, 6, 6]
    # Every sampled step is paid once; answers that share a step share its tokens.
    spent = engine.meter.generated_tokens
    assert 0 < spent <= sum(len(toks) for f in finals for toks, _ in f)
    assert all(values and all(0.0 <= v <= 1.0 for v in values) for f in finals for _, values in f)
    again = rebase_finals(LMEngine(model), countdown, problems, answers=6, seed=1)
    assert again == finals  # seeded
    answers = rebase_decode(LMEngine(model), countdown, problems, answers=6, seed=1)
    assert len(answers) == 3 and all(isinstance(a, list) and a for a in answers)
    with pytest.raises(ValueError, match=">= 1"):
        rebase_finals(engine, countdown, problems, answers=0)
    with pytest.raises(ValueError, match="balance temperature"):
        rebase_finals(engine, countdown, problems, answers=4, balance_temperature=-1.0)


def test_rebase_follows_the_value_at_a_low_balance_temperature(countdown):
    """At a tiny temperature every answer that goes past its first step descends from the best-valued
    first step; at a huge one the tree spreads like i.i.d. sampling. (The shipped countdown3 model:
    the random test model never ends a line, so its answers have one step.)"""
    import torch

    from azero.llm.baselines import rebase_finals
    from azero.search.llm.vocab import CHAR_VOCAB
    from azero.train.llm.model import load_checkpoint

    torch.set_num_threads(1)
    trained, _ = load_checkpoint(Path(__file__).parents[3] / "docs/llm/value8x/countdown.safetensors")
    problems = countdown.problems("test", 4, seed=0)

    def first_steps(t):
        finals = rebase_finals(LMEngine(trained), countdown, problems, answers=12, balance_temperature=t, seed=2)
        return [{CHAR_VOCAB.text(toks).split("\n")[0] for toks, values in f if len(values) > 1} for f in finals]

    sharp, flat = first_steps(1e-4), first_steps(1e4)
    assert [len(s) for s in sharp] == [1, 1, 1, 1]
    assert sum(len(s) for s in flat) >= 2 * len(problems)


@pytest.mark.parametrize("field, value, message", [("temperature", 0.0, "sampling temperature must be > 0"),
                                                    ("balance_temperature", 0.0, "balance temperature"),
                                                    ("budgets", (0, 64), "budget of 0")])
def test_compare_refuses_bad_settings_before_any_compute(model, countdown, field, value, message):
    cfg = CompareConfig(problems=2, methods=("greedy", "rebase-weighted"), **{field: value})
    with pytest.raises(ValueError, match=message):
        run_compare(model, countdown, cfg, log=lambda _: None)
