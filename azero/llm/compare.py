"""Raw decoding vs tree search at equal generated-token budgets, on held-out test problems.

Every method runs on its own LMEngine (fresh prefix cache and meter) over the same problems.
For each method and budget the result holds the accuracy with a 95% Wilson interval over
problems and, per problem, the generated tokens (the x axis: what the method produced), the
forward tokens actually run (prefill included), the forward tokens re-encoding would have run,
model calls and wall time. Budget-free methods (greedy, sampling pass@1) are one point each.

Methods (names used in --methods and in the JSON):
    greedy, sample            raw decoding (sample = mean pass@1 of the pool's samples)
    bon-value, bon-majority, bon-weighted   best-of-N from the sample pool (azero.llm.baselines)
    step-beam, dvts, rebase
                      step-level beam ranked by the value head, DVTS and REBASE's reward-balanced tree
                      (azero.llm.baselines): the answer with the best value; step-beam-weighted,
                      dvts-weighted, rebase-weighted: the value-weighted vote over the same run's answers
                      (step values aggregated by step_aggregate)
    oracle                    pass@N of the same samples (needs the verifier; a reference only)
    beam                      beam search, width = budget / typical answer length
    puct-token, gumbel-token, puct-step, gumbel-step
                              MCTS over LLMGame (azero.search.llm.searchers); value head at every leaf
                              (terminal ones too) unless --terminal verifier; the answer its moves reach
    puct-step-weighted, gumbel-step-weighted
                              the same search answering with the value-weighted vote over every finished
                              answer its trees evaluated (the step beam's and DVTS's weighted rule; the
                              value head's values, never the verifier's): one run gives both points
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np

from azero.eval.stats import wilson_interval
from azero.llm.baselines import (STEP_AGGREGATES, beam_decode, choose_answers, dvts_finals, greedy_decode,
                                 rebase_finals, sample_pool, step_beam_finals)
from azero.llm.report import kv_reuse_lines
from azero.search.llm.protocol import ComputeMeter
from azero.search.llm.searchers import (TreeSearchConfig, candidates_for_budget, mcts_decode, mcts_search,
                                        simulations_for_budget, tree_search_config)
from azero.search.llm.tasks import Problem, Task
from azero.search.llm.vocab import vocab_of
from azero.train.llm.engine import LMEngine

if TYPE_CHECKING:
    from azero.train.llm.hf import HFCausalLM
    from azero.train.llm.model import TinyGPT

SEARCH_METHODS = ("puct-token", "gumbel-token", "puct-step", "gumbel-step")
SEARCH_DEFAULTS: dict[str, dict] = {
    # mctx's default value_scale. With the paper's c_scale = 1 the completed-Q term
    # (c_visit + max N) * c_scale * q_hat outweighs the log-priors by ~50 nats, so the root picks
    # whatever token the value head likes best, prior or not: 0% accuracy at every budget on
    # countdown3 (the value head rates garbage prefixes highly); 0.1 keeps the LM's prior in play.
    # Test-time search: no Gumbel noise (a sampled root pick is sampling decoding: 44% vs greedy's
    # 54% at 4 simulations per token), and Q mapped linearly from [-1, 1] instead of min-max
    # rescaled, which stretched the value head's small differences between sibling tokens to the
    # whole [0, 1] and let them override the LM (100 countdown3 problems, budgets 64..4096:
    # min-max 44/45/52/47/46/44/18%, linear 57/59/61/63/58/57/50%).
    "gumbel-token": {"gumbel_c_scale": 0.1, "gumbel_scale": 0.0, "gumbel_rescale_q": False},
    "gumbel-step": {"gumbel_c_scale": 0.1, "gumbel_scale": 0.0, "gumbel_rescale_q": False},
}
"""Per search method, fields (TreeSearchConfig.replace names) that differ from the defaults."""
VOTED_SEARCH_METHODS = ("puct-step-weighted", "gumbel-step-weighted")
"""A search method answering with the value-weighted vote over its trees' finished answers."""
METHODS = ("greedy", "sample", "bon-value", "bon-majority", "bon-weighted", "oracle", "beam", "step-beam",
           "step-beam-weighted", "dvts", "dvts-weighted", "rebase", "rebase-weighted") \
    + SEARCH_METHODS + VOTED_SEARCH_METHODS


@dataclasses.dataclass
class CompareConfig:
    """What `azero llm compare` runs."""

    budgets: tuple[int, ...] = (64, 128, 256, 512, 1024, 2048, 4096)
    """Generated-token budgets per problem."""
    problems: int = 100
    """Test problems."""
    methods: tuple[str, ...] = METHODS
    """Methods to run (see the module docstring)."""
    batch: int = 50
    """Problems searched in lockstep by the tree searches (memory: the prefix trie holds about
    batch x budget positions)."""
    top_k: int = 4
    """Token-level children per node."""
    num_candidates: int = 4
    """Step-level sampled children per node."""
    prior_temperature: float = 1.0
    """Search priors: softmax(log p / T)."""
    temperature: float = 1.0
    """Sampling temperature of everything that samples: the best-of-N pool, the step beam's and
    DVTS's steps and the step-level searches' candidate steps (search-and-learn samples at 0.8; a
    small pretrained model's samples at 1.0 are far worse than its greedy answer)."""
    terminal: str = "value_head"
    """Terminal leaves of the searches: 'value_head' (verifier-free) or 'verifier'."""
    value_source: str = "value_head"
    """Non-terminal leaves of the searches: 'value_head' or 'rollout' (one verified sampled completion;
    what a local HF model without a trained value head uses)."""
    max_beam_width: int = 64
    """Token-level beam widths above this are not run (cost grows with width x vocabulary in Python)."""
    step_aggregate: str = "last"
    """Step-beam and DVTS: an answer's score from its step values, 'last', 'min' or 'prod' (each point
    also records the accuracy under all three as accuracy_last / _min / _prod)."""
    max_step_width: int = 256
    """Step-beam widths and DVTS tree counts above this are not run, nor REBASE above this x
    num_candidates answers (memory: a round samples up to that many steps a problem, `batch`
    problems at a time)."""
    balance_temperature: float = 0.2
    """REBASE: next steps are shared among live partial answers by softmax(value / T) (0.2: chosen on
    problems outside the protocol, countdown3's test problems 501-1,000 and game24's value split;
    README, "A tree that spends its whole budget")."""
    search_overrides: dict = dataclasses.field(default_factory=dict)
    """Per search method, fields to set by name (TreeSearchConfig's or its SearchConfig's), e.g.
    {'gumbel-token': {'gumbel_c_scale': 0.1}}; applied on top of SEARCH_DEFAULTS."""
    step_widening: bool = True
    """Step level: candidates per node grow with the budget (searchers.candidates_for_budget);
    False keeps num_candidates at every budget (the tree then saturates at a few hundred tokens)."""
    kv_budget: int | None = None
    """KV positions a search's engine may hold (LMEngine.kv_budget: least recently used evicted and
    recomputed when needed); None: unbounded. Answers do not depend on it, compute does."""
    kv_check: bool = True
    """Rerun puct-token without the cache (and with a bounded one) to check the answers agree and
    measure the reuse on real searches. Re-encoding every prefix costs prompt length x nodes, which
    for a long chat prompt on a real model is hours; without the check the meters still report
    forward tokens with and without reuse (`forward_tokens_uncached`) for every method."""
    kv_check_budget: int = 0
    """If > 0: rerun puct-token at this budget without the KV cache to measure the reuse ratio
    (forward tokens re-encoding / with cache) on real searches; 0 uses the smallest budget."""
    seed: int = 0
    """Seed of every method's random draws (and of the problems unless problem_seed is set)."""
    problem_seed: int | None = None
    """Seed of the test problems drawn (None: `seed`); azero.llm.protocol keeps it fixed across seeds."""


def _point(rewards: Sequence[float], meter: ComputeMeter, n: int, *, generated: float | None = None,
           **extra) -> dict:
    k = float(np.sum(rewards))
    lo, hi = wilson_interval(k / n, n)
    out = {"accuracy": k / n, "ci": [lo, hi], "rewards": [float(r) for r in rewards],
           "generated_tokens": (meter.generated_tokens / n) if generated is None else generated,
           "forward_tokens": meter.forward_tokens / n, "forward_tokens_uncached": meter.forward_tokens_uncached / n,
           "model_calls": meter.model_calls / n, "wall_s": meter.wall_s / n}
    out.update(extra)
    return out


def run_compare(model: "TinyGPT | HFCausalLM", task: Task, cfg: CompareConfig, *, log: Callable[[str], None] = print) -> dict:
    """Run every method of `cfg` and return the results document (report.write_outputs writes it)."""
    unknown = set(cfg.methods) - set(METHODS)
    if unknown:
        raise ValueError(f"unknown methods {sorted(unknown)}; choose from {METHODS}")
    budgets = sorted(set(int(b) for b in cfg.budgets))
    if not budgets or budgets[0] < 1:
        raise ValueError(f"budgets must be positive numbers of generated tokens per problem, got {list(cfg.budgets)} "
                         f"(a budget of 0 leaves no room for an answer)")
    if not cfg.temperature > 0:
        raise ValueError(f"the sampling temperature must be > 0 (greedy decoding is its own method), "
                         f"got {cfg.temperature}")
    if not cfg.balance_temperature > 0:
        raise ValueError(f"the balance temperature (REBASE) must be > 0, got {cfg.balance_temperature}")
    if cfg.step_aggregate not in STEP_AGGREGATES:
        raise ValueError(f"step_aggregate must be one of {STEP_AGGREGATES}, got {cfg.step_aggregate!r}")
    problems = task.problems("test", cfg.problems, seed=cfg.seed if cfg.problem_seed is None else cfg.problem_seed)
    n = len(problems)
    doc = {"task": task.name, "problems": n, "budgets": budgets, "config": dataclasses.asdict(cfg),
           "model_params": model.num_params(),
           "model": getattr(model.cfg, "path", "") or "TinyGPT", "methods": {}}
    methods = doc["methods"]

    def verify_all(answers) -> list[float]:
        return [task.verify_tokens(p, a, vocab) for p, a in zip(problems, answers)]

    # Greedy first: its mean answer length sets the simulations-per-budget plan of the searches.
    eng = LMEngine(model)
    vocab = vocab_of(eng)
    with eng.meter.timer():
        answers = greedy_decode(eng, task, problems)
    rewards = verify_all(answers)
    answer_tokens = float(np.mean([len(a) for a in answers]))
    step_tokens = answer_tokens / task.max_steps
    doc["answer_tokens_greedy"] = answer_tokens
    if "greedy" in cfg.methods:
        methods["greedy"] = {"points": [_point(rewards, eng.meter, n)]}
        log(f"greedy: {np.mean(rewards):.3f} ({answer_tokens:.1f} tokens per answer)")

    pool_methods = {"bon-value": "value", "bon-majority": "majority", "bon-weighted": "weighted", "oracle": "oracle"}
    if any(m in cfg.methods for m in ("sample",) + tuple(pool_methods)):
        eng = LMEngine(model)
        with eng.meter.timer():
            pool = sample_pool(eng, task, problems, budget=budgets[-1], seed=cfg.seed, temperature=cfg.temperature)
        total_samples = sum(len(x) for x in pool.lengths)
        total_tokens = sum(int(x.sum()) for x in pool.lengths)
        log(f"sample pool: {total_samples} samples, {total_tokens / n:.0f} tokens per problem, "
            f"{eng.meter.forward_tokens / n:.0f} forward tokens per problem with the prefix cache")
        doc["pass_rate"] = [float(r.mean()) for r in pool.rewards]  # each problem's sampled pass@1
        if "sample" in cfg.methods:
            per_problem = [float(r.mean()) for r in pool.rewards]
            mean_len = total_tokens / total_samples
            # pass@1 of one sample: the pool's mean per problem (same expectation, less noise).
            scale = mean_len * n / max(total_tokens, 1)
            m = ComputeMeter(**{k: v * scale for k, v in eng.meter.to_dict().items()})
            methods["sample"] = {"points": [_point(per_problem, m, n, generated=mean_len)]}
            log(f"sample pass@1: {np.mean(per_problem):.3f}")
        for name, how in pool_methods.items():
            if name not in cfg.methods:
                continue
            pts = []
            for b in budgets:
                picks = [pool.select(i, pool.count_for_budget(i, b), how) for i in range(n)]
                spent = float(np.mean([s for _, s in picks]))
                # Compute of this budget's share of the pool: the pool's meter scaled by the share of
                # its sampled tokens used (forward tokens only approximately: prefix sharing varies).
                frac = spent * n / max(total_tokens, 1)
                m = ComputeMeter(**{k: v * frac for k, v in eng.meter.to_dict().items()})
                pts.append(_point([r for r, _ in picks], m, n, generated=spent, budget=b,
                                  samples=float(np.mean([pool.count_for_budget(i, b) for i in range(n)]))))
            methods[name] = {"points": pts}
            log(f"{name}: " + " ".join(f"{b}:{p['accuracy']:.3f}" for b, p in zip(budgets, pts)))

    if "beam" in cfg.methods:
        pts = []
        for b in budgets:
            width = max(1, int(b // max(answer_tokens, 1.0)))
            if width > cfg.max_beam_width:
                continue
            eng = LMEngine(model)
            with eng.meter.timer():
                answers = beam_decode(eng, task, problems, width=width)
            pts.append(_point(verify_all(answers), eng.meter, n, budget=b, width=width))
            log(f"beam width {width} (budget {b}): {pts[-1]['accuracy']:.3f}, "
                f"{pts[-1]['generated_tokens']:.0f} tokens")
        methods["beam"] = {"points": pts}

    # Step-level value-guided baselines: a round samples `expand` steps per beam, so an answer costs
    # about width x expand x answer_tokens generated tokens; width (trees for DVTS) follows the budget.
    # REBASE finishes `answers` answers, each paid in full as a sample is: answers = budget / answer length.
    # One run answers both ways: by the best value and by the value-weighted vote (`-weighted`).
    expand = cfg.num_candidates
    for base in ("step-beam", "dvts", "rebase"):
        names = [m for m in (base, base + "-weighted") if m in cfg.methods]
        if not names:
            continue
        pts: dict[str, list] = {m: [] for m in names}
        for b in budgets:
            per_width = 1 if base == "rebase" else expand  # steps a round samples per unit of width
            width = max(1, int(round(b / max(per_width * answer_tokens, 1.0))))
            if width * per_width > cfg.max_step_width * expand:
                continue
            eng = LMEngine(model)
            finals = []
            with eng.meter.timer():
                for i in range(0, n, cfg.batch):  # `batch` problems at a time: the trie's memory
                    finals += _step_finals(base, eng, task, problems[i: i + cfg.batch], width, cfg)
                    eng.clear()
            for name in names:
                select = "weighted" if name.endswith("-weighted") else "value"

                # every step aggregation of the same answers, for the record (one run, three choices)
                rewards = {how: verify_all(choose_answers(task, problems, vocab, finals, select=select, aggregate=how))
                           for how in STEP_AGGREGATES}
                others = {f"accuracy_{how}": float(np.mean(r)) for how, r in rewards.items()}
                pts[name].append(_point(rewards[cfg.step_aggregate], eng.meter, n, budget=b, width=width, **others))
                log(f"{name} width {width} (budget {b}): {pts[name][-1]['accuracy']:.3f}, "
                    f"{pts[name][-1]['generated_tokens']:.0f} tokens ("
                    + ", ".join(f"{how} {others['accuracy_' + how]:.3f}" for how in STEP_AGGREGATES) + ")")
        for name in names:
            methods[name] = {"points": pts[name]}

    for name in SEARCH_METHODS:
        voted = f"{name}-weighted"
        wanted = [m for m in (name, voted) if m in cfg.methods]
        if not wanted:
            continue
        pts: dict[str, list] = {m: [] for m in wanted}
        for b in budgets:
            tcfg = budget_search_config(name, cfg, task, b, answer_tokens=answer_tokens)
            eng = LMEngine(model, kv_budget=cfg.kv_budget)
            answers, finals = [], []
            with eng.meter.timer():
                for i in range(0, n, cfg.batch):
                    got, fin = mcts_search(eng, task, problems[i: i + cfg.batch], tcfg)
                    answers += got
                    finals += fin
                    eng.clear()
            chosen = {name: answers}
            if voted in wanted:
                chosen[voted] = choose_answers(task, problems, vocab, finals, select="weighted")
            widen = f", {tcfg.num_candidates} candidates" if tcfg.level == "step" else ""
            for m in wanted:
                pts[m].append(_point(verify_all(chosen[m]), eng.meter, n, budget=b,
                                     simulations=tcfg.search.simulations,
                                     finished_answers=float(np.mean([len(f) for f in finals])),
                                     **({"candidates": tcfg.num_candidates} if tcfg.level == "step" else {})))
                log(f"{m} budget {b} ({tcfg.search.simulations} sims/move{widen}): {pts[m][-1]['accuracy']:.3f}, "
                    f"{pts[m][-1]['generated_tokens']:.0f} tokens, {pts[m][-1]['finished_answers']:.1f} finished "
                    f"answers, {pts[m][-1]['wall_s']:.2f}s/problem")
        for m in wanted:
            methods[m] = {"points": pts[m]}

    if cfg.kv_check and any(m in cfg.methods for m in SEARCH_METHODS):
        doc["kv_reuse"] = kv_reuse_check(model, task, problems[: cfg.batch], cfg.kv_check_budget or budgets[0],
                                         answer_tokens=answer_tokens, cfg=cfg)
        for line in kv_reuse_lines(doc["kv_reuse"]):
            log(line)
    return doc


def _step_finals(base: str, engine: LMEngine, task: Task, problems: Sequence[Problem], width: int,
                 cfg: CompareConfig):
    """The finished answers of step baseline `base` at `width` (beams, trees or answers)."""
    common = {"seed": cfg.seed, "temperature": cfg.temperature}
    if base == "rebase":
        return rebase_finals(engine, task, problems, answers=width, balance_temperature=cfg.balance_temperature,
                             **common)
    if base == "step-beam":
        return step_beam_finals(engine, task, problems, width=width, expand=cfg.num_candidates, **common)
    return dvts_finals(engine, task, problems, trees=width, expand=cfg.num_candidates, **common)


def budget_search_config(name: str, cfg: CompareConfig, task: Task, budget: int, *,
                         answer_tokens: float) -> TreeSearchConfig:
    """search_config(name, cfg) sized to spend about `budget` generated tokens per problem, given the
    greedy answers' mean length (step level: candidates widen with the budget when cfg.step_widening)."""
    step_tokens = answer_tokens / task.max_steps
    tcfg = search_config(name, cfg)
    if tcfg.level == "step" and cfg.step_widening:
        tcfg = tcfg.replace(num_candidates=candidates_for_budget(task, budget, tcfg, step_tokens=step_tokens))
    return tcfg.replace(simulations=simulations_for_budget(task, budget, tcfg, answer_tokens=answer_tokens,
                                                           step_tokens=step_tokens))


def search_config(name: str, cfg: CompareConfig) -> TreeSearchConfig:
    """The TreeSearchConfig of search method `name` ('puct-token', ...) under `cfg` (simulations unset)."""
    algorithm, level = name.split("-")
    tcfg = tree_search_config(level=level, algorithm=algorithm, top_k=cfg.top_k, num_candidates=cfg.num_candidates,
                              prior_temperature=cfg.prior_temperature, step_temperature=cfg.temperature,
                              terminal_value=cfg.terminal,
                              value_source=cfg.value_source, seed=cfg.seed)
    fields = {**SEARCH_DEFAULTS.get(name, {}), **cfg.search_overrides.get(name, {})}
    try:
        # Overrides from the command line are floats or bools: cast each to its field's type.
        return tcfg.replace(**{key: type(tcfg.get(key))(value) for key, value in fields.items()})
    except ValueError as e:
        raise ValueError(f"{name}: {e}") from None


def kv_reuse_check(model: "TinyGPT | HFCausalLM", task: Task, problems: Sequence[Problem], budget: int, *,
                   answer_tokens: float, cfg: CompareConfig) -> dict:
    """Run token-level PUCT with the KV cache, without it, and with a quarter of the cache's peak
    size as its memory bound: forward tokens of each (the bounded run also counts the positions it
    recomputed after evicting them), and whether the answers agree (they must, up to
    floating-point ties)."""
    tcfg = tree_search_config(level="token", algorithm="puct", top_k=cfg.top_k, terminal_value=cfg.terminal,
                              value_source=cfg.value_source, prior_temperature=cfg.prior_temperature, seed=cfg.seed)
    tcfg = tcfg.replace(simulations=simulations_for_budget(task, budget, tcfg, answer_tokens=answer_tokens,
                                                           step_tokens=1.0))

    def run(**engine_kw):
        eng = LMEngine(model, **engine_kw)
        with eng.meter.timer():
            answers = mcts_decode(eng, task, problems, tcfg)
        return answers, eng.meter.copy(), eng.kv_held

    cached_answers, cached, peak = run()
    uncached_answers, uncached, _ = run(use_cache=False)
    bounded = None
    for share in (4, 2, 1.33):  # a quarter of the peak; more where one forward call needs more
        kv_budget = max(1, int(peak / share))
        try:
            b_answers, b_meter, _ = run(kv_budget=kv_budget)
        except ValueError:
            continue
        bounded = {"kv_budget": kv_budget, "forward_tokens": b_meter.forward_tokens,
                   "recomputed_tokens": b_meter.recomputed_tokens, "evicted_tokens": b_meter.evicted_tokens,
                   "ratio": uncached.forward_tokens / max(b_meter.forward_tokens, 1), "wall_s": b_meter.wall_s,
                   "same_answers": b_answers == cached_answers}
        break
    return {"budget": budget, "simulations": tcfg.search.simulations, "problems": len(problems),
            "forward_tokens_cached": cached.forward_tokens, "forward_tokens_uncached": uncached.forward_tokens,
            "ratio": uncached.forward_tokens / max(cached.forward_tokens, 1),
            "wall_s_cached": cached.wall_s, "wall_s_uncached": uncached.wall_s,
            "same_answers": cached_answers == uncached_answers, "kv_peak": peak, "bounded": bounded}
