"""LLMGame / LLMStates as azero.games.base.States for the unchanged MCTS core: batch plumbing,
legality, deterministic step candidates, terminal values, evaluator output; the greedy-equivalence
sanity test; every search variant; the TreeSearchConfig over the core's SearchConfig."""

import numpy as np
import pytest

from azero.games.base import NO_ACTION, IllegalActionError, States
from azero.search.llm.decode import generate, log_softmax
from azero.search.llm.game import LLMEvaluator, LLMGame
from azero.search.llm.searchers import candidates_for_budget, mcts_decode, mcts_search, tree_search_config
from azero.search.llm.tasks import EOS, GENERATABLE, NEWLINE, make_task
from azero.search.llm.vocab import vocab_of
from azero.train.llm.engine import LMEngine



def _game(model, task, **kw):
    return LLMGame(LMEngine(model), task, **kw)


def test_states_protocol_and_batch_plumbing(model, countdown):
    game = _game(model, countdown, top_k=3)
    problems = countdown.problems("test", 4, seed=0)
    s = game.states(problems)
    assert isinstance(s, States) and len(s) == 4
    legal = s.legal_mask()
    assert legal.shape == (4, game.spec.num_actions) and (legal.sum(axis=1) == 3).all()
    assert not (legal & ~GENERATABLE).any()
    first = np.argmax(np.where(legal, 1, 0), axis=1).astype(np.int32)  # lowest legal token id
    snapshot = s.copy()
    s.apply(first)
    assert (s.num_moves() == 1).all() and all(len(s.answer(b)) == 1 for b in range(4))
    assert all(len(snapshot.answer(b)) == 0 for b in range(4))   # copies are independent
    sub = s.take(np.array([2, 0]))
    assert sub.problems == [problems[2], problems[0]] and sub.answer(0) == s.answer(2)
    snapshot.put(np.array([1]), s.take(np.array([3])))
    assert snapshot.problems[1] == problems[3] and snapshot.answer(1) == s.answer(3)
    obs = s.encode()
    assert obs.shape == (4, 1, 1, model.cfg.max_len) and obs[0, 0, 0, len(problems[0].prompt)] == first[0]
    assert (s.to_play() == 0).all() and not s.terminal().any() and (s.outcome() == 0).all()
    s.reset(np.array([0]))
    assert s.answer(0) == [] and len(s.answer(1)) == 1


def test_illegal_actions_raise_and_change_nothing(model, countdown):
    game = _game(model, countdown, top_k=2)
    s = game.states(countdown.problems("test", 2, seed=0))
    legal = s.legal_mask()
    illegal = int(np.flatnonzero(~legal[1] & GENERATABLE)[0])
    ok = int(np.flatnonzero(legal[0])[0])
    before = s.copy()
    with pytest.raises(IllegalActionError, match="batch index 1"):
        s.apply(np.array([ok, illegal], np.int32))
    with pytest.raises(IllegalActionError):
        s.apply(np.array([ok, 10_000], np.int32))
    assert s.answer(0) == before.answer(0) == [] and (s.num_moves() == 0).all()
    s.apply(np.array([NO_ACTION, NO_ACTION], np.int32))
    assert (s.num_moves() == 0).all()


def test_apply_paths_equals_sequential_applies(model, countdown):
    game = _game(model, countdown, top_k=3)
    problems = countdown.problems("test", 3, seed=2)
    rng = np.random.default_rng(0)
    a, paths = game.states(problems), []
    for _ in range(4):
        legal = a.legal_mask()
        acts = np.array([rng.choice(np.flatnonzero(row)) if row.any() else NO_ACTION for row in legal], np.int32)
        acts[1] = NO_ACTION if len(paths) == 3 else acts[1]  # ragged path
        a.apply(acts)
        paths.append(acts)
    b = game.states(problems)
    b.apply_paths(np.stack(paths, axis=1))
    assert [a.answer(i) for i in range(3)] == [b.answer(i) for i in range(3)]


def test_step_candidates_are_deterministic_across_engines(model, countdown):
    problems = countdown.problems("test", 3, seed=4)
    answers = []
    for _ in range(2):
        game = _game(model, countdown, level="step", num_candidates=4, seed=11)
        s = game.states(problems)
        legal = s.legal_mask()
        assert legal.shape == (3, 4) and legal[:, 0].all()   # candidate 0 is never a duplicate
        path = np.zeros((3, 2), np.int32)
        path[:, 1] = NO_ACTION
        s.apply_paths(path)
        answers.append([s.answer(b) for b in range(3)])
        cands = [game.candidates[int(n)] for n in game.states(problems).nodes()]
        for c in cands:
            seen = [tuple(e[0]) for e in c if e is not None]
            assert len(seen) == len(set(seen))
    assert answers[0] == answers[1]


def test_terminal_values_and_evaluator_output(model, countdown):
    game = _game(model, countdown, top_k=4)
    problems = countdown.problems("test", 3, seed=5)
    s = game.states(problems)
    # Force a correct answer into row 0 and a wrong finished one into row 1.
    sol = countdown.solutions(problems[0])[0]
    from azero.search.llm.tasks import encode_text

    for b, text in ((0, sol), (1, "1+1=2")):
        toks = encode_text(text) + [EOS]
        pl = len(problems[b].prompt)
        s.tokens[b, pl: pl + len(toks)] = toks
        s.length[b] = pl + len(toks)
        s.done[b] = True
    assert s.terminal().tolist() == [True, True, False]
    assert s.outcome().tolist() == [1.0, -1.0, 0.0]
    legal = s.legal_mask()
    assert not legal[:2].any() and legal[2].sum() == 4
    game.terminal_value = "value_head"
    v = game.engine.values(s.nodes(np.array([0, 1])))
    np.testing.assert_allclose(s.outcome()[:2], 2 * v - 1, rtol=1e-6)
    live = s.take(np.array([2]))
    priors, values = LLMEvaluator(game).evaluate(live.encode(), live.legal_mask(), states=live)
    assert priors.dtype == np.float32 and values.dtype == np.float32
    assert priors[0][~legal[2]].sum() == 0 and abs(priors[0].sum() - 1) < 1e-5
    assert values[0] == pytest.approx(2 * game.engine.values(live.nodes())[0] - 1, abs=1e-6)


def test_verifier_is_refused_where_it_knows_the_answer(model, arith):
    with pytest.raises(ValueError, match="self-checkable"):
        _game(model, arith, terminal_value="verifier")
    _game(model, arith, terminal_value="value_head")


@pytest.fixture(params=["tinygpt", "hf-gpt2"])
def any_model(request):
    """The TinyGPT, and a transformers GPT-2 behind the same cache API (train/llm/hf.py)."""
    return request.getfixturevalue("model" if request.param == "tinygpt" else "hf_model")


@pytest.mark.parametrize("terminal", ["value_head", "verifier"])
def test_one_simulation_token_search_is_greedy_decoding(any_model, countdown, terminal):
    """Sanity: PUCT, one simulation per token, no root noise, token level == greedy, exactly."""
    problems = countdown.problems("test", 12, seed=9)
    greedy = generate(LMEngine(any_model), countdown, [p.prompt for p in problems],
                      [len(p.prompt) for p in problems], greedy=True).tokens
    searched = mcts_decode(LMEngine(any_model), countdown, problems,
                           tree_search_config(level="token", algorithm="puct", simulations=1, terminal_value=terminal))
    assert searched == greedy
    assert all(len(a) > 0 for a in greedy)


def test_generation_logs_each_token_probability(model, countdown):
    """The per-token log-probabilities are the model's (temperature 1) and sum to the row's logprob,
    also when the rows sample at another temperature."""
    problems = countdown.problems("test", 6, seed=4)
    gen = generate(LMEngine(model), countdown, [p.prompt for p in problems], [len(p.prompt) for p in problems],
                   temperature=0.7, rng=np.random.default_rng(0))
    assert [len(lp) for lp in gen.token_logprobs] == [len(t) for t in gen.tokens]
    assert np.allclose([sum(lp) for lp in gen.token_logprobs], gen.logprob)
    first = LMEngine(model)
    nodes = first.extend([p.prompt for p in problems], [len(p.prompt) for p in problems])
    lp0 = log_softmax(first.next_logits(nodes), generatable=vocab_of(first).generatable)
    assert np.allclose([lp[0] for lp in gen.token_logprobs], lp0[np.arange(6), [t[0] for t in gen.tokens]])


@pytest.mark.parametrize("level,algorithm", [("token", "gumbel"), ("step", "puct"), ("step", "gumbel")])
def test_every_search_variant_finishes_every_answer(model, countdown, level, algorithm):
    problems = countdown.problems("test", 4, seed=6)
    eng = LMEngine(model)
    answers = mcts_decode(eng, countdown, problems, tree_search_config(level=level, algorithm=algorithm,
                                                                        simulations=4, num_candidates=3))
    for a in answers:
        assert 0 < len(a) <= countdown.max_new_tokens
        assert countdown.finished(len(a), sum(1 for t in a if t == NEWLINE), a[-1])
    assert eng.meter.generated_tokens > 0


@pytest.mark.parametrize("algorithm", ["puct", "gumbel"])
@pytest.mark.parametrize("terminal", ["value_head", "verifier"])
def test_search_keeps_every_finished_answer_once_with_its_value_head_value(model, countdown, algorithm, terminal):
    problems = countdown.problems("test", 3, seed=6)
    cfg = tree_search_config(level="step", algorithm=algorithm, simulations=6, num_candidates=3, terminal_value=terminal)
    eng = LMEngine(model)
    answers, finals = mcts_search(eng, countdown, problems, cfg)
    assert answers == mcts_decode(LMEngine(model), countdown, problems, cfg)  # the vote reads, never steers
    for p, a, fin in zip(problems, answers, finals):
        toks = [t for t, _ in fin]
        assert a in toks                                  # the path's own answer votes too
        # each finished prefix as often as reached, its arrivals together
        distinct = list(dict.fromkeys(tuple(t) for t in toks))
        assert [tuple(t) for t in toks] == [d for d in distinct for _ in range(toks.count(list(d)))]
        for t, (v,) in fin:
            assert countdown.finished(len(t), sum(1 for x in t if x == NEWLINE), t[-1])
            node = eng.extend([list(p.prompt) + t], [len(p.prompt)])[0]
            # the value head's P(correct), with the verifier as the search's terminal value too
            assert v == pytest.approx(float(eng.values(np.array([node]))[0]), abs=1e-6)
    assert sum(len(f) for f in finals) > len(problems)  # the trees hold more than the paths


def test_rollout_value_scores_a_sampled_completion_by_the_value_head_and_keeps_it(model, countdown):
    problems = countdown.problems("test", 3, seed=9)
    game = _game(model, countdown, level="step", num_candidates=3, value_source="rollout_value", seed=2)
    s = game.states(problems)
    before = game.engine.meter.generated_tokens
    _, values = LLMEvaluator(game).evaluate(s.encode(), s.legal_mask(), states=s)
    assert game.engine.meter.generated_tokens > before       # the completions are paid for
    for b, p in enumerate(problems):
        (toks, v, count), = game.finished[p.key].values()    # one finished answer per leaf
        assert count == 1
        assert countdown.finished(len(toks), sum(1 for x in toks if x == NEWLINE), toks[-1])
        node = game.engine.extend([list(p.prompt) + toks], [len(p.prompt)])[0]
        assert v == pytest.approx(float(game.engine.values(np.array([node]))[0]), abs=1e-6)
        assert values[b] == pytest.approx(2 * v - 1, abs=1e-6)
    # Not the verifier: allowed on a task whose verifier knows the answer.
    LLMGame(LMEngine(model), make_task("arith"), value_source="rollout_value", terminal_value="value_head")
    # A search with rollout values reaches a finished answer at every simulation: more to vote over.
    cfg = tree_search_config(level="step", algorithm="gumbel", simulations=4, num_candidates=3)
    _, plain = mcts_search(LMEngine(model), countdown, problems, cfg)
    _, rolled = mcts_search(LMEngine(model), countdown, problems, cfg.replace(value_source="rollout_value"))
    assert sum(map(len, rolled)) > sum(map(len, plain))


def test_rollout_values_are_verified_samples_and_cost_tokens(model, countdown):
    problems = countdown.problems("test", 3, seed=8)
    game = _game(model, countdown, value_source="rollout", seed=1)
    s = game.states(problems)
    before = game.engine.meter.generated_tokens
    _, values = LLMEvaluator(game).evaluate(s.encode(), s.legal_mask(), states=s)
    assert set(values.tolist()) <= {-1.0, 1.0}   # one verified completion per leaf: 2 r - 1
    assert game.engine.meter.generated_tokens > before
    answers = mcts_decode(LMEngine(model), countdown, problems,
                          tree_search_config(simulations=2, value_source="rollout", terminal_value="verifier"))
    assert all(answers)


def test_tree_search_config_embeds_the_search_config():
    """One SearchConfig inside: fields are set by name on either level, validated, and the
    defaults are test-time search (no root noise, most visited move, 16 simulations)."""
    cfg = tree_search_config(level="step", algorithm="gumbel", simulations=8, gumbel_c_scale=0.1, num_candidates=3)
    assert (cfg.level, cfg.num_candidates) == ("step", 3)
    assert (cfg.search.algorithm, cfg.search.simulations, cfg.search.gumbel_c_scale) == ("gumbel", 8, 0.1)
    assert cfg.get("gumbel_c_scale") == 0.1 and cfg.get("top_k") == 4
    default = tree_search_config().search
    assert (default.simulations, default.dirichlet_weight, default.temperature, default.seed) == (16, 0.0, 0.0, 0)
    with pytest.raises(ValueError, match="no field 'nonsense'"):
        cfg.replace(nonsense=1)
    with pytest.raises(ValueError, match="simulations"):
        cfg.replace(simulations=0)


def test_step_candidates_grow_with_the_budget(countdown):
    cfg = tree_search_config(level="step", num_candidates=4)
    ks = [candidates_for_budget(countdown, b, cfg, step_tokens=7.5) for b in (64, 256, 1024, 4096)]
    assert ks[0] == 4 and ks == sorted(ks) and ks[-1] >= 16
