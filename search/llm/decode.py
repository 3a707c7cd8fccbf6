"""Batched decoding through a PrefixEngine (protocol.py): greedy and sampling, of whole answers or
single steps (LLMGame's step candidates and rollouts; the baselines in azero.llm).

Every generated token is run through the model once (including the last one, so the value head
can score the finished prefix). generate() adds every token it emits to the meter's
generated_tokens, even one that repeats an earlier sample's prefix (the prefix trie then makes it
cheap, which shows in forward_tokens).

Sampling draws token t of row r by inverse CDF from uniforms[r, t], which the caller may pass
(pre-drawn per row from its own seeded stream), so a row's sample does not depend on which
other rows share the batch.
"""

from __future__ import annotations

import dataclasses
from typing import Sequence

import numpy as np

from azero.search.llm.protocol import PrefixEngine
from azero.search.llm.tasks import GENERATABLE, Task
from azero.search.llm.vocab import vocab_of

_NEG = np.float32(-1e30)


def log_softmax(logits: np.ndarray, temperature: float = 1.0, generatable: np.ndarray | None = None) -> np.ndarray:
    """float64 log-probabilities over the generatable tokens (others -inf) of logits [..., V]
    (`generatable`: the vocabulary's mask, bool [V]; the character vocabulary's by default)."""
    mask = GENERATABLE if generatable is None else generatable
    x = np.where(mask, logits.astype(np.float64) / max(temperature, 1e-8), -np.inf)
    x = x - x.max(axis=-1, keepdims=True)
    return x - np.log(np.exp(x).sum(axis=-1, keepdims=True))


@dataclasses.dataclass
class Generation:
    """Rows of generated continuations."""

    tokens: list[list[int]]
    """Generated token ids of each row (after its prefix)."""
    nodes: np.ndarray
    """int64 [n]: engine node of prefix + generated tokens (every token was fed)."""
    logprob: np.ndarray
    """float64 [n]: sum of the model's (temperature 1) log-probabilities of the generated tokens."""
    done: np.ndarray
    """bool [n]: the answer is finished (Task.finished), not just the step."""
    token_logprobs: list[list[float]] = dataclasses.field(default_factory=list)
    """Each row's per-token model log-probabilities (temperature 1; logprob is their sum): the
    generator's own confidence, token by token."""


def generate(engine: PrefixEngine, task: Task, prefixes: Sequence[Sequence[int]], prompt_lens: Sequence[int], *,
             temperature: float = 1.0, greedy: bool = False, stop_at_newline: bool = False,
             uniforms: np.ndarray | None = None, rng: np.random.Generator | None = None,
             starts: np.ndarray | None = None) -> Generation:
    """Continue every prefix until its answer is finished (or, with stop_at_newline, its step ends).

    greedy: argmax (lowest token id on ties). Otherwise sample at `temperature` using
    uniforms [n, task.max_new_tokens] (drawn from `rng` when not given).
    starts: optional engine nodes of the prefixes (skips the trie walk).
    """
    n = len(prefixes)
    vocab = vocab_of(engine)
    allowed, step_end = vocab.generatable, vocab.step_end
    seqs = [list(map(int, p)) for p in prefixes]
    p_lens = np.asarray(prompt_lens, np.int64)
    gen_len = np.array([len(s) - pl for s, pl in zip(seqs, p_lens)], np.int64)
    lines = np.array([vocab.lines(s[pl:]) for s, pl in zip(seqs, p_lens)], np.int64)
    if not greedy and uniforms is None:
        uniforms = (rng if rng is not None else np.random.default_rng()).random((n, task.max_new_tokens))
    nodes = np.asarray(starts, np.int64) if starts is not None else engine.extend(seqs, p_lens)
    out_tokens: list[list[int]] = [[] for _ in range(n)]
    out_lps: list[list[float]] = [[] for _ in range(n)]
    logprob = np.zeros(n, np.float64)
    done = np.zeros(n, np.bool_)
    active = np.array([not task.finished(int(g), int(k), s[-1] if g > 0 else -1)
                       for g, k, s in zip(gen_len, lines, seqs)], np.bool_)
    done[:] = ~active
    step = 0
    while active.any():
        rows = np.flatnonzero(active)
        logits = engine.next_logits(nodes[rows])
        lp_model = log_softmax(logits, generatable=allowed)
        if greedy:
            tok = np.argmax(np.where(allowed, logits, _NEG), axis=1)
        else:
            p = np.exp(log_softmax(logits, temperature, allowed))
            cdf = np.cumsum(p, axis=1)
            u = uniforms[rows, np.minimum(step, uniforms.shape[1] - 1)]
            tok = np.minimum((cdf < (u * cdf[:, -1])[:, None]).sum(axis=1), p.shape[1] - 1)
            # Floating error can land on a zero-probability token at the end of the CDF.
            bad = ~allowed[tok]
            if bad.any():
                tok[bad] = np.argmax(p[bad], axis=1)
        lp_tok = lp_model[np.arange(len(rows)), tok]
        logprob[rows] += lp_tok
        engine.meter.generated_tokens += len(rows)
        new_prefixes = []
        for j, r in enumerate(rows):
            t = int(tok[j])
            seqs[r].append(t)
            out_tokens[r].append(t)
            out_lps[r].append(float(lp_tok[j]))
            gen_len[r] += 1
            lines[r] += bool(step_end[t])
            new_prefixes.append(seqs[r])
        nodes[rows] = engine.extend(new_prefixes, p_lens[rows],
                                    starts=[(int(nodes[r]), len(seqs[r]) - 1) for r in rows])
        for j, r in enumerate(rows):
            t = int(tok[j])
            if task.finished(int(gen_len[r]), int(lines[r]), t):
                active[r] = False
                done[r] = True
            elif stop_at_newline and step_end[t]:
                active[r] = False
        step += 1
    return Generation(out_tokens, nodes, logprob, done, out_lps)
