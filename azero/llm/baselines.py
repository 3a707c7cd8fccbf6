"""Decoding baselines at a generated-token budget: greedy, sampling (pass@1), best-of-N selected by
the value head, by majority vote or by value-weighted vote, oracle pass@N, token beam search, and
the step-level searches the field compares with: a step beam ranked by the value head, DVTS and
REBASE's reward-balanced tree, each answering with its best answer by value or by a value-weighted
vote over its answers, with the step values aggregated by the last, the lowest or their product.

Sampling-based methods share one pool of i.i.d. samples per problem (`SamplePool`): the method at
budget G uses the first N_G samples, N_G the largest n whose token lengths sum to at most G
(at least one). Every budget is thus evaluated on nested prefixes of the same samples, which
keeps the curves' noise correlated across budgets without changing any single point's
distribution. A sample costs its full length in generated tokens (each sample is generated on
its own, as best-of-N is); the engine's meter, which shares prefixes between identical samples,
is reported next to it.

    best-of-N (value)     the sample with the highest value-head P(correct) after its last token
    best-of-N (majority)  the most frequent Task.answer_key among the samples (ties: earliest)
    weighted vote         the answer whose samples' value-head P(correct) sum highest (ties: earliest):
                          majority vote with each vote weighted by the value head (search-and-learn's
                          weighted best-of-N), which stays sane as N grows where best-of-N (value)
                          follows the one most over-rated sample
    pass@N (oracle)       whether any sample is correct: needs the verifier; shown separately
"""

from __future__ import annotations

import dataclasses
from typing import Sequence

import numpy as np

from azero.search.llm.decode import generate, log_softmax
from azero.search.llm.protocol import PrefixEngine
from azero.search.llm.searchers import Final
from azero.search.llm.tasks import Problem, Task
from azero.search.llm.vocab import vocab_of


def prompts_of(engine: PrefixEngine, task: Task, problems: Sequence[Problem]) -> list[list[int]]:
    """Each problem's prompt ids in the engine's vocabulary."""
    vocab = vocab_of(engine)
    return [list(vocab.prompt(task, p)) for p in problems]


def greedy_decode(engine: PrefixEngine, task: Task, problems: Sequence[Problem]) -> list[list[int]]:
    prompts = prompts_of(engine, task, problems)
    gen = generate(engine, task, prompts, [len(p) for p in prompts], greedy=True)
    return gen.tokens


def beam_decode(engine: PrefixEngine, task: Task, problems: Sequence[Problem], *, width: int) -> list[list[int]]:
    """Token-level beam search by summed log-probability; returns each problem's best finished answer.

    All problems advance in lockstep; each step feeds every live beam's new token (width tokens per
    problem and step). A finished hypothesis leaves the beam; the search for a problem ends when
    `width` hypotheses have finished or no live beam is left, and the best finished one (highest
    log-probability; if none finished, the best live one) is the answer. Generated tokens: each
    distinct hypothesis prefix it extends, as tree searches count their nodes.
    """
    if width < 1:
        raise ValueError(f"width must be >= 1, got {width}")
    vocab = vocab_of(engine)
    prompts = prompts_of(engine, task, problems)
    roots = engine.extend(prompts, [len(p) for p in prompts])
    # Per problem: live beams (tokens, node, score) and finished (tokens, score).
    live = [[([], int(roots[i]), 0.0)] for i in range(len(problems))]
    finished: list[list[tuple[list[int], float]]] = [[] for _ in problems]
    while any(live):
        cand_prefix, cand_meta = [], []
        for i, beams in enumerate(live):
            if not beams:
                continue
            nodes = np.array([b[1] for b in beams])
            lp = log_softmax(engine.next_logits(nodes), generatable=vocab.generatable)
            scores = np.array([b[2] for b in beams])[:, None] + lp
            flat = np.argsort(-scores, axis=None, kind="stable")[:width]
            for f in flat:
                bi, t = divmod(int(f), lp.shape[1])
                if not np.isfinite(scores[bi, t]):
                    continue
                toks = beams[bi][0] + [t]
                cand_prefix.append(prompts[i] + toks)
                cand_meta.append((i, toks, float(scores[bi, t]), int(beams[bi][1]), len(prompts[i]) + len(toks) - 1))
        nodes = engine.extend(cand_prefix, [len(prompts[m[0]]) for m in cand_meta],
                              starts=[(m[3], m[4]) for m in cand_meta], count_new=True)
        live = [[] for _ in problems]
        for (i, toks, score, _, _), node in zip(cand_meta, nodes):
            lines = vocab.lines(toks)
            if task.finished(len(toks), lines, toks[-1]):
                finished[i].append((toks, score))
            elif len(finished[i]) < width:
                live[i].append((toks, int(node), score))
        for i in range(len(problems)):
            if len(finished[i]) >= width:
                live[i] = []
    out = []
    for i in range(len(problems)):
        pool = finished[i]
        out.append(max(pool, key=lambda x: x[1])[0] if pool else [])
    return out


@dataclasses.dataclass
class SamplePool:
    """Per problem, samples in draw order: lengths, rewards, value-head scores, answer keys and texts."""

    lengths: list[np.ndarray]
    rewards: list[np.ndarray]
    values: list[np.ndarray]
    keys: list[list[str]]
    texts: list[list[str]] | None = None
    """The samples' decoded answers (sample_pool fills them: what an analysis of the misses reads)."""
    token_logprobs: list[list[np.ndarray]] | None = None
    """Each sample's per-token log-probabilities under the model (sample_pool fills them)."""
    tokens: list[list[list[int]]] | None = None
    """Each sample's generated token ids, <eos> included where it finished (sample_pool fills them:
    what another judge reads to score the same samples)."""

    def count_for_budget(self, i: int, budget: float) -> int:
        """N_G of problem i: the longest prefix of samples whose lengths sum to at most `budget` (>= 1)."""
        csum = np.cumsum(self.lengths[i])
        return max(1, int(np.searchsorted(csum, budget, side="right")))

    def select(self, i: int, n: int, method: str, *, power: float = 1.0) -> tuple[float, int]:
        """(reward of the method's choice among the first n samples of problem i, tokens spent).
        power: the weighted vote weighs each sample by value ** power (1: search-and-learn's vote)."""
        r, spent = self.rewards[i][:n], int(self.lengths[i][:n].sum())
        if method == "oracle":
            return float(r.max()), spent
        if method == "value":
            return float(r[int(np.argmax(self.values[i][:n]))]), spent
        if method in ("majority", "weighted"):
            counts: dict[str, float] = {}
            first: dict[str, int] = {}
            for j, k in enumerate(self.keys[i][:n]):
                if k:
                    weight = 1.0 if method == "majority" else max(float(self.values[i][j]), 0.0) ** power
                    counts[k] = counts.get(k, 0.0) + weight
                    first.setdefault(k, j)
            if not counts:
                return 0.0, spent
            best = max(counts, key=lambda k: (counts[k], -first[k]))
            return float(r[first[best]]), spent
        raise ValueError(f"unknown selection {method!r}")

    def judge(self, scores: Sequence[np.ndarray], budget: float) -> tuple[float, float]:
        """How well another judge's `scores` (one per sample, laid out as `values`) pick answers at
        `budget` generated tokens: (AUC of the scores over the first N_G samples of every problem,
        accuracy % of the vote weighted by them instead of the value head)."""
        from azero.train.llm.train import roc_auc

        firsts = [self.count_for_budget(i, budget) for i in range(len(self.lengths))]
        judged = dataclasses.replace(self, values=[np.asarray(s, np.float64) for s in scores])
        vote = 100 * np.mean([judged.select(i, n, "weighted")[0] for i, n in enumerate(firsts)])
        auc = roc_auc(np.concatenate([s[:n] for s, n in zip(judged.values, firsts)]),
                      np.concatenate([r[:n] for r, n in zip(self.rewards, firsts)]))
        return auc, float(vote)


def sample_pool(engine: PrefixEngine, task: Task, problems: Sequence[Problem], *, budget: int,
                temperature: float = 1.0, seed: int = 0, rows_per_call: int = 512) -> SamplePool:
    """Draw samples for every problem until their lengths sum to at least `budget` tokens."""
    if budget < 1:
        raise ValueError(f"a budget of {budget} generated tokens leaves no room for an answer (need >= 1)")
    rng = np.random.default_rng([seed, 3])
    n = len(problems)
    lengths = [[] for _ in range(n)]
    rewards = [[] for _ in range(n)]
    values = [[] for _ in range(n)]
    keys: list[list[str]] = [[] for _ in range(n)]
    answers: list[list[str]] = [[] for _ in range(n)]
    token_lps: list[list[np.ndarray]] = [[] for _ in range(n)]
    token_ids: list[list[list[int]]] = [[] for _ in range(n)]
    spent = np.zeros(n, np.int64)
    # The prompts stay cached; each round's samples are dropped from the trie afterwards (memory).
    vocab = vocab_of(engine)
    texts = prompts_of(engine, task, problems)
    prompts = engine.extend(texts, [len(p) for p in texts])
    mark = engine.num_nodes
    while (spent < budget).any():
        need = np.flatnonzero(spent < budget)
        mean_len = max(np.mean([np.mean(l) for l in lengths if l] or [task.max_new_tokens / 2]), 1.0)
        per = int(np.clip(np.ceil((budget - spent[need].min()) / mean_len), 1, max(1, rows_per_call // len(need))))
        rows = np.repeat(need, per)
        gen = generate(engine, task, [texts[i] for i in rows], [len(texts[i]) for i in rows],
                       temperature=temperature, rng=rng, starts=prompts[rows])
        vals = engine.values(gen.nodes)
        for j, i in enumerate(rows):
            toks = gen.tokens[j]
            lengths[i].append(len(toks))
            rewards[i].append(task.verify_tokens(problems[i], toks, vocab))
            values[i].append(float(vals[j]))
            answers[i].append(vocab.text(toks))
            token_lps[i].append(np.asarray(gen.token_logprobs[j], np.float64))
            token_ids[i].append(list(toks))
            keys[i].append(task.answer_key(problems[i], answers[i][-1]))
            spent[i] += len(toks)
        engine.truncate(mark)
        prompts = engine.extend(texts, [len(p) for p in texts])
    return SamplePool([np.array(x, np.int64) for x in lengths], [np.array(x, np.float64) for x in rewards],
                      [np.array(x, np.float64) for x in values], keys, answers, token_lps, token_ids)



STEP_AGGREGATES = ("last", "min", "prod")
"""How a step search scores an answer from its step values (search-and-learn's PRM aggregations): the
value after the last step, the lowest along the way, or their product."""

"""A step search's answer: its tokens and the value head's P(correct) after each of its steps."""


def aggregate_steps(values: Sequence[float], how: str = "last") -> float:
    """One score from an answer's step values (STEP_AGGREGATES)."""
    if how not in STEP_AGGREGATES:
        raise ValueError(f"unknown step aggregation {how!r}; choose from {STEP_AGGREGATES}")
    if not values:
        return -1.0
    if how == "last":
        return float(values[-1])
    return float(min(values)) if how == "min" else float(np.prod(values))


def choose_answer(task: Task, problem: Problem, vocab, finals: Sequence[Final], *, select: str = "value",
                  aggregate: str = "last") -> list[int]:
    """A step search's answer among its finished ones: the best by aggregated step value ('value'),
    or the value-weighted vote over their answer keys ('weighted', ties: earliest; answers without
    a key do not vote, and with no key at all the best by value is taken)."""
    if not finals:
        return []
    scores = [aggregate_steps(v, aggregate) for _, v in finals]
    if select == "weighted":
        counts: dict[str, float] = {}
        first: dict[str, int] = {}
        for j, (toks, _) in enumerate(finals):
            key = task.answer_key(problem, vocab.text(toks))
            if key:
                counts[key] = counts.get(key, 0.0) + max(scores[j], 0.0)
                first.setdefault(key, j)
        if counts:
            return finals[first[max(counts, key=lambda k: (counts[k], -first[k]))]][0]
    elif select != "value":
        raise ValueError(f"unknown selection {select!r}; choose 'value' or 'weighted'")
    return finals[int(np.argmax(scores))][0]


def choose_answers(task: Task, problems: Sequence[Problem], vocab, finals: Sequence[Sequence[Final]], *,
                   select: str = "value", aggregate: str = "last") -> list[list[int]]:
    """choose_answer for every problem."""
    return [choose_answer(task, p, vocab, f, select=select, aggregate=aggregate) for p, f in zip(problems, finals)]


Frontier = list[tuple[list[int], int, list[float], int]]
"""A step search's live partial answers of one problem: (tokens, engine node, step values, how many
next steps to sample from it)."""


def _grow(engine: PrefixEngine, task: Task, problems: Sequence[Problem], *, first: int, target: int,
          keep, temperature: float, rng: np.random.Generator) -> list[list[Final]]:
    """The loop every step search shares. From each problem's root `first` next steps are sampled;
    a round samples, from every live partial answer, as many next steps (one line each, through
    generate(stop_at_newline)) as its frontier entry asks, scores each by the value head's
    P(correct) after its step and sets the finished answers aside. `keep(candidates, left)` turns a
    problem's live candidates (tokens, node, step values) into its next frontier, `left` being
    `target` minus its finished answers; a problem's search ends when `target` answers are finished
    or nothing is live. Returns each problem's finished answers with their step values (the best
    live one when none finished)."""
    prompts = prompts_of(engine, task, problems)
    roots = engine.extend(prompts, [len(p) for p in prompts])
    live: list[Frontier] = [[([], int(roots[i]), [], first)] for i in range(len(problems))]
    finished: list[list[Final]] = [[] for _ in problems]
    best_live: list[Final] = [([], []) for _ in problems]
    while any(live):
        rows = [(i, toks, node, vals) for i, frontier in enumerate(live) for toks, node, vals, count in frontier
                for _ in range(count)]
        gen = generate(engine, task, [prompts[i] + toks for i, toks, _, _ in rows],
                       [len(prompts[i]) for i, _, _, _ in rows], temperature=temperature, rng=rng,
                       stop_at_newline=True, starts=np.array([node for _, _, node, _ in rows], np.int64))
        values = engine.values(gen.nodes)
        candidates: list[list[tuple[list[int], int, list[float]]]] = [[] for _ in problems]
        for j, (i, toks, _, vals) in enumerate(rows):
            new, new_vals = toks + gen.tokens[j], vals + [float(values[j])]
            if gen.done[j]:
                finished[i].append((new, new_vals))
            else:
                candidates[i].append((new, int(gen.nodes[j]), new_vals))
        live = [[] for _ in problems]
        for i, cands in enumerate(candidates):
            left = target - len(finished[i])
            if left <= 0 or not cands:
                continue
            live[i] = keep(cands, left)
            top = max(cands, key=lambda c: c[2][-1])
            if aggregate_steps(top[2]) > aggregate_steps(best_live[i][1]):
                best_live[i] = (top[0], top[2])
    return [f if f else [best_live[i]] for i, f in enumerate(finished)]


def _step_search(engine: PrefixEngine, task: Task, problems: Sequence[Problem], *, width: int, expand: int,
                 temperature: float, rng: np.random.Generator) -> list[list[Final]]:
    """Step-level beam search ranked by the value head (search-and-learn's beam search with a PRM).

    Each problem keeps `width` live partial answers. A round samples `expand` next steps from every
    live beam, scores every candidate by the value head's P(correct) after its step, sets finished
    answers aside and keeps the `width` best live candidates. As in search-and-learn, identical
    candidates are not merged and the live beams are refilled to `width` by repeating the best ones
    when fewer survive: a confident model's beams then differ only later, and the search spends its
    budget (merging them let it stop after a few hundred tokens whatever the width). The search of a
    problem ends when `width` answers are finished or nothing is live (_grow)."""

    def keep(cands, left):
        # ranked by the newest step's value; stable, so a seeded run repeats
        ranked = sorted(cands, key=lambda c: -c[2][-1])[:width]
        return [(toks, node, vals, expand) for toks, node, vals in (ranked * (width // len(ranked) + 1))[:width]]

    return _grow(engine, task, problems, first=width * expand, target=width, keep=keep, temperature=temperature,
                 rng=rng)


def balanced_widths(values: np.ndarray, total: int, temperature: float) -> np.ndarray:
    """REBASE's expansion widths: `total` next steps shared among candidates in proportion to
    softmax(value / temperature), rounded by largest remainder so they sum to `total` exactly (ties:
    the earlier candidate). A low temperature gives everything to the best candidate; a high one
    spreads it evenly, which is i.i.d. sampling with the vote's answers."""
    if not temperature > 0:
        raise ValueError(f"the balance temperature must be > 0, got {temperature}")
    v = np.asarray(values, np.float64)
    share = np.exp((v - v.max()) / temperature)
    share = share / share.sum() * total
    widths = np.floor(share).astype(np.int64)
    order = np.argsort(-(share - widths), kind="stable")
    widths[order[: total - int(widths.sum())]] += 1
    return widths


def rebase_finals(engine: PrefixEngine, task: Task, problems: Sequence[Problem], *, answers: int,
                  balance_temperature: float = 0.2, temperature: float = 1.0, seed: int = 0) -> list[list[Final]]:
    """Reward-balanced search (REBASE, Wu et al. 2024, "Inference Scaling Laws"): per problem, a tree
    that finishes `answers` answers. The root is expanded `answers` times; every later round shares the
    answers still to be finished among all live partial answers by softmax(value / balance_temperature)
    of the value head after their last step (balanced_widths) and samples that many next steps from
    each. Unlike the step beam, no candidate is cut by rank: a low-valued one keeps its share while
    the rounding gives it one, so the tree keeps the sampling's diversity and leans towards the value.
    Every sampled step is paid for; an answer costs its length, as a sample does."""
    if answers < 1:
        raise ValueError(f"answers must be >= 1, got {answers}")
    if not balance_temperature > 0:  # before any compute, not at the first round's widths
        raise ValueError(f"the balance temperature must be > 0, got {balance_temperature}")
    rng = np.random.default_rng([seed, 8])

    def keep(cands, left):
        widths = balanced_widths(np.array([vals[-1] for _, _, vals in cands]), left, balance_temperature)
        return [(toks, node, vals, int(w)) for (toks, node, vals), w in zip(cands, widths) if w > 0]

    return _grow(engine, task, problems, first=answers, target=answers, keep=keep, temperature=temperature, rng=rng)


def step_beam_finals(engine: PrefixEngine, task: Task, problems: Sequence[Problem], *, width: int, expand: int = 4,
                     temperature: float = 1.0, seed: int = 0) -> list[list[Final]]:
    """Per problem, the finished answers of a value-ranked step beam search (_step_search)."""
    if width < 1 or expand < 1:
        raise ValueError(f"width and expand must be >= 1, got {width} and {expand}")
    rng = np.random.default_rng([seed, 5])
    return _step_search(engine, task, problems, width=width, expand=expand, temperature=temperature, rng=rng)


def dvts_finals(engine: PrefixEngine, task: Task, problems: Sequence[Problem], *, trees: int, expand: int = 4,
                temperature: float = 1.0, seed: int = 0) -> list[list[Final]]:
    """Diverse verifier tree search (Beeching et al., search-and-learn): `trees` independent subtrees
    per problem, each expanded greedily by the value head (a step beam of width 1 with `expand`
    samples per step). Returns per problem each subtree's answer (its best finished one by value).
    Independent subtrees keep the diversity a shared beam loses when one early step dominates."""
    if trees < 1 or expand < 1:
        raise ValueError(f"trees and expand must be >= 1, got {trees} and {expand}")
    rng = np.random.default_rng([seed, 6])
    copies = [p for p in problems for _ in range(trees)]
    found = _step_search(engine, task, copies, width=1, expand=expand, temperature=temperature, rng=rng)
    best = [max(f, key=lambda x: aggregate_steps(x[1])) for f in found]
    return [best[k * trees:(k + 1) * trees] for k in range(len(problems))]


def step_beam_decode(engine: PrefixEngine, task: Task, problems: Sequence[Problem], *, width: int, expand: int = 4,
                     temperature: float = 1.0, seed: int = 0, select: str = "value",
                     aggregate: str = "last") -> list[list[int]]:
    """The answer of a value-ranked step beam search per problem (choose_answer over its finals)."""
    finals = step_beam_finals(engine, task, problems, width=width, expand=expand, temperature=temperature, seed=seed)
    return choose_answers(task, problems, vocab_of(engine), finals, select=select, aggregate=aggregate)


def rebase_decode(engine: PrefixEngine, task: Task, problems: Sequence[Problem], *, answers: int,
                  balance_temperature: float = 0.2, temperature: float = 1.0, seed: int = 0, select: str = "weighted",
                  aggregate: str = "last") -> list[list[int]]:
    """REBASE's answer per problem: the value-weighted vote over its finished answers (the paper's
    best rule), or the best by value."""
    finals = rebase_finals(engine, task, problems, answers=answers, balance_temperature=balance_temperature,
                           temperature=temperature, seed=seed)
    return choose_answers(task, problems, vocab_of(engine), finals, select=select, aggregate=aggregate)


def dvts_decode(engine: PrefixEngine, task: Task, problems: Sequence[Problem], *, trees: int, expand: int = 4,
                temperature: float = 1.0, seed: int = 0, select: str = "value",
                aggregate: str = "last") -> list[list[int]]:
    """DVTS's answer per problem: the subtrees' best by value, or their value-weighted vote."""
    finals = dvts_finals(engine, task, problems, trees=trees, expand=expand, temperature=temperature, seed=seed)
    return choose_answers(task, problems, vocab_of(engine), finals, select=select, aggregate=aggregate)