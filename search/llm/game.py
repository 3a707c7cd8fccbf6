"""A causal LM plus a task as a game for the unchanged search core (azero.search.mcts.MCTS).

State = prompt + generated tokens; one player (to_play is always 0, so values are never negated);
terminal = <eos>, the step limit or the token limit (Task.finished). The engine (a
PrefixEngine, e.g. azero.train.llm.engine.LMEngine) runs the model, caches keys/values by prefix
and meters the compute.

Token level: actions are token ids (A = vocabulary size); the legal actions of a prefix are the
top_k next tokens (ties to the lower id). Priors: softmax(logits / prior_temperature) over them.

Step level: actions are 0..k-1, the k candidate steps (tokens up to and including a newline or
<eos>, or up to the answer's token limit) sampled from the LM at `step_temperature` for that
prefix. How they are stored, so that apply / apply_paths are deterministic: the first time a
prefix (an engine node) needs its candidates, they are sampled and kept in
`LLMGame.candidates[node]` for the rest of the engine's epoch; candidate j of a prefix is drawn
with uniforms from numpy's generator seeded by (seed, BLAKE2b hash of the prefix's tokens, j), so
even a fresh engine with the same seed reproduces them. A candidate equal to an earlier one of
the same prefix is illegal (duplicates would split one step's visits). Priors:
p(step)^(1 / prior_temperature), normalised over the legal candidates, p the LM's probability of
the step's tokens.

Values (player to move's view, in [-1, 1]): non-terminal leaves get 2 v - 1 with v the value
head's P(correct) ('value_head'), the verifier's reward of one sampled completion ('rollout'), or
the value head's P(correct) at the end of one sampled completion ('rollout_value': verifier-free,
so any task; every simulation then reaches a finished answer, kept in LLMGame.finished for a vote
over the tree, as AlphaGo's rollouts played each leaf to the end);
terminal leaves get 2 r - 1 with r the verifier's reward ('verifier', only for self-checkable
tasks: elsewhere the verifier would hand the search the answer) or the value head again
('value_head'). Every leaf prefix, terminal or not, is run through the model once. Generated tokens of a search:
token level, one per distinct prefix it expanded (a tree node is produced once, also across the
fresh trees of successive Gumbel searches); step level, every token of every sampled candidate
(duplicates included, as sampling baselines pay for every sample), plus rollout tokens.
"""

from __future__ import annotations

import hashlib
from typing import Sequence

import numpy as np

from azero.games.base import NO_ACTION, GameSpec, IllegalActionError, check_actions, check_index, check_out
from azero.search.llm.decode import generate, log_softmax
from azero.search.llm.protocol import NO_NODE, PrefixEngine
from azero.search.llm.tasks import Problem, Task
from azero.search.llm.vocab import vocab_of

LEVELS = ("token", "step")
TERMINAL_VALUES = ("verifier", "value_head")
VALUE_SOURCES = ("value_head", "rollout", "rollout_value")


def _prefix_hash(tokens: np.ndarray) -> int:
    return int.from_bytes(hashlib.blake2b(np.asarray(tokens, np.int64).tobytes(), digest_size=8).digest(), "little")


class LLMGame:
    """Rules of the LM-as-game: the engine, the task and how children and values are defined."""

    def __init__(self, engine: PrefixEngine, task: Task, *, level: str = "token", top_k: int = 4,
                 num_candidates: int = 4, prior_temperature: float = 1.0, step_temperature: float = 1.0,
                 terminal_value: str = "verifier", value_source: str = "value_head", seed: int = 0):
        if level not in LEVELS:
            raise ValueError(f"level must be one of {LEVELS}, got {level!r}")
        if terminal_value not in TERMINAL_VALUES or value_source not in VALUE_SOURCES:
            raise ValueError(f"terminal_value must be one of {TERMINAL_VALUES} and value_source one of "
                             f"{VALUE_SOURCES}, got {terminal_value!r}, {value_source!r}")
        if (terminal_value == "verifier" or value_source == "rollout") and not task.self_checkable:
            raise ValueError(f"task {task.name!r} is not self-checkable: its verifier knows the answer, so a "
                             f"search may not use it (use terminal_value='value_head', value_source='value_head')")
        if top_k < 1 or num_candidates < 1 or prior_temperature <= 0 or step_temperature <= 0:
            raise ValueError("top_k and num_candidates must be >= 1, temperatures > 0")
        self.engine, self.task, self.level = engine, task, level
        self.vocab = vocab_of(engine)
        self.top_k = min(top_k, int(self.vocab.generatable.sum()))
        self.num_candidates = num_candidates
        self.prior_temperature, self.step_temperature = prior_temperature, step_temperature
        self.terminal_value, self.value_source, self.seed = terminal_value, value_source, seed
        max_len = engine.cfg.max_len
        A = self.vocab.size if level == "token" else num_candidates
        self.spec = GameSpec(name=f"llm-{task.name}-{level}", num_actions=A, obs_shape=(1, 1, max_len),
                             board_shape=(1, max_len),
                             max_moves=task.max_new_tokens if level == "token" else task.max_steps,
                             params={"top_k": self.top_k, "num_candidates": num_candidates})
        self.candidates: dict[int, list[tuple[list[int], int, float] | None]] = {}
        """Step level, per engine node: k entries (tokens, end node, log p) or None for a duplicate."""
        self._candidates_epoch = engine.epoch
        self._rollout_rng = np.random.default_rng([seed, 99])
        self.finished: dict[str, dict[int, list]] = {}
        """Per problem key, every finished answer a search reached: engine node -> [answer tokens, the
        value head's P(correct), how often reached (a simulation ending at it, or a rollout)], in
        the order first reached (what a vote over the tree reads)."""

    def keep_finished(self, key: str, node: int, answer: list[int], value: float) -> None:
        """Count one more arrival at the finished answer `node` of problem `key` (LLMGame.finished)."""
        leaves = self.finished.setdefault(key, {})
        if node in leaves:
            leaves[node][2] += 1
        else:
            leaves[node] = [answer, value, 1]

    def states(self, problems: Sequence[Problem]) -> "LLMStates":
        """A batch holding the prompt of each problem."""
        return LLMStates(self, list(problems))

    def new_states(self, batch: int):
        raise TypeError("LLMGame positions depend on a problem: use game.states(problems)")

    def action_to_str(self, action: int) -> str:
        return repr(self.vocab.token_text(action)) if self.level == "token" else f"step{action}"

    # ------------------------------------------------------------------ step candidates
    def _check_epoch(self) -> None:
        if self._candidates_epoch != self.engine.epoch:
            self.candidates.clear()
            self._candidates_epoch = self.engine.epoch

    def ensure_candidates(self, nodes: np.ndarray, prompt_lens: np.ndarray) -> None:
        """Sample (once) the k candidate steps of every node in `nodes` (non-terminal prefixes)."""
        self._check_epoch()
        need = [i for i, n in enumerate(nodes) if int(n) not in self.candidates]
        need = list(dict.fromkeys(int(nodes[i]) for i in need))  # unique nodes, first-seen order
        if not need:
            return
        k = self.num_candidates
        node_of = {int(n): int(pl) for n, pl in zip(nodes, prompt_lens)}
        prefixes, p_lens, starts, uniforms = [], [], [], []
        for n in need:
            toks = self.engine.tokens_of(n)
            h = _prefix_hash(toks)
            for j in range(k):
                prefixes.append(toks)
                p_lens.append(node_of[n])
                starts.append(n)
                uniforms.append(np.random.default_rng([self.seed, h, j]).random(self.task.max_new_tokens))
        gen = generate(self.engine, self.task, prefixes, p_lens, temperature=self.step_temperature,
                       stop_at_newline=True, uniforms=np.stack(uniforms), starts=np.array(starts))
        for i, n in enumerate(need):
            entries: list[tuple[list[int], int, float] | None] = []
            seen: set[tuple[int, ...]] = set()
            for j in range(k):
                r = i * k + j
                key = tuple(gen.tokens[r])
                if key in seen:
                    entries.append(None)
                else:
                    seen.add(key)
                    entries.append((gen.tokens[r], int(gen.nodes[r]), float(gen.logprob[r])))
            self.candidates[n] = entries


class LLMStates:
    """A batch of B token prefixes (azero.games.base.States); see the module docstring."""

    def __init__(self, game: LLMGame, problems: list[Problem]):
        self.game = game
        self.spec = game.spec
        B = len(problems)
        self.problems = problems
        max_len = game.engine.cfg.max_len
        self.tokens = np.zeros((B, max_len), np.int64)          # prompt + generated, padded with 0
        self.length = np.zeros(B, np.int64)
        self.prompt_len = np.zeros(B, np.int64)
        for b, p in enumerate(problems):
            prompt = game.vocab.prompt(game.task, p)
            if len(prompt) + game.task.max_new_tokens > max_len:
                raise ValueError(f"prompt of {len(prompt)} tokens + {game.task.max_new_tokens} answer tokens "
                                 f"exceed the model's max_len {max_len}")
            self.tokens[b, : len(prompt)] = prompt
            self.length[b] = self.prompt_len[b] = len(prompt)
        self.lines = np.zeros(B, np.int64)       # newlines generated
        self.moves = np.zeros(B, np.int32)       # actions applied
        self.done = np.zeros(B, np.bool_)        # Task.finished
        # Deepest engine node known on each row's path, and its depth: a cheap start for trie walks.
        self.anc = np.full(B, NO_NODE, np.int64)
        self.anc_len = np.zeros(B, np.int64)
        self.epoch = game.engine.epoch

    # ------------------------------------------------------------------ batch plumbing
    def __len__(self) -> int:
        return len(self.problems)

    _FIELDS = ("tokens", "length", "prompt_len", "lines", "moves", "done", "anc", "anc_len")

    def _sub(self, idx: np.ndarray) -> "LLMStates":
        out = LLMStates.__new__(LLMStates)
        out.game, out.spec, out.epoch = self.game, self.spec, self.epoch
        out.problems = [self.problems[int(i)] for i in idx]
        for f in self._FIELDS:
            setattr(out, f, getattr(self, f)[idx].copy())
        return out

    def copy(self) -> "LLMStates":
        return self._sub(np.arange(len(self)))

    def take(self, index) -> "LLMStates":
        return self._sub(check_index(index, len(self)))

    def put(self, index, src: "LLMStates") -> None:
        idx = check_index(index, len(self))
        if len(src) != len(idx):
            raise ValueError(f"put: {len(idx)} indices but {len(src)} states")
        self._sync()
        src._sync()
        for k, i in enumerate(idx):
            self.problems[int(i)] = src.problems[k]
        for f in self._FIELDS:
            getattr(self, f)[idx] = getattr(src, f)

    def reset(self, index=None) -> None:
        idx = np.arange(len(self)) if index is None else check_index(index, len(self))
        fresh = LLMStates(self.game, [self.problems[int(i)] for i in idx])
        self.put(idx, fresh)

    def _sync(self) -> None:
        """Drop node ids of an older engine epoch (the trie was cleared or truncated)."""
        if self.epoch != self.game.engine.epoch:
            self.anc[:] = NO_NODE
            self.anc_len[:] = 0
            self.epoch = self.game.engine.epoch

    def answer(self, b: int) -> list[int]:
        """Generated tokens of row b."""
        return self.tokens[b, self.prompt_len[b]: self.length[b]].tolist()

    # ------------------------------------------------------------------ model access
    def nodes(self, rows: np.ndarray | None = None) -> np.ndarray:
        """int64 [n]: engine nodes of the rows' full prefixes, computing any that are missing."""
        self._sync()
        rows = np.arange(len(self)) if rows is None else np.asarray(rows, np.int64)
        missing = rows[self.anc_len[rows] != self.length[rows]]
        if missing.size:
            eng = self.game.engine
            # A tree's new leaf is one produced token (count_new); step candidates were counted
            # by the decoder that sampled them and are already in the trie.
            ids = eng.extend([self.tokens[b, : self.length[b]] for b in missing], self.prompt_len[missing],
                             starts=[(int(self.anc[b]), int(self.anc_len[b])) for b in missing], count_new=True)
            self.anc[missing] = ids
            self.anc_len[missing] = self.length[missing]
        return self.anc[rows]

    def _legal_tokens(self, rows: np.ndarray) -> np.ndarray:
        """bool [n, V]: the top_k generatable next tokens of each row (ties to the lower id)."""
        logits = self.game.engine.next_logits(self.nodes(rows))
        masked = np.where(self.game.vocab.generatable, logits, -np.inf)
        order = np.argsort(-masked, axis=1, kind="stable")[:, : self.game.top_k]
        legal = np.zeros((len(rows), self.game.vocab.size), np.bool_)
        np.put_along_axis(legal, order, True, axis=1)
        return legal

    def _candidates(self, rows: np.ndarray) -> list[list]:
        nodes = self.nodes(rows)
        self.game.ensure_candidates(nodes, self.prompt_len[rows])
        return [self.game.candidates[int(n)] for n in nodes]

    # ------------------------------------------------------------------ moves
    def apply(self, actions) -> None:
        a = check_actions(actions, len(self))
        rows = np.flatnonzero(a != NO_ACTION)
        if rows.size == 0:
            return
        if self.done[rows].any():
            b = int(rows[self.done[rows]][0])
            raise IllegalActionError(f"action {int(a[b])} at batch index {b}: the answer is finished")
        if (a[rows] >= self.spec.num_actions).any() or (a[rows] < 0).any():
            b = int(rows[(a[rows] >= self.spec.num_actions) | (a[rows] < 0)][0])
            raise IllegalActionError(f"action {int(a[b])} at batch index {b} is out of range")
        task = self.game.task
        if self.game.level == "token":
            legal = self._legal_tokens(rows)
            ok = legal[np.arange(len(rows)), a[rows]]
            if not ok.all():
                b = int(rows[~ok][0])
                raise IllegalActionError(f"token {int(a[b])} at batch index {b} is not among the top {self.game.top_k}")
            t = a[rows].astype(np.int64)
            self.tokens[rows, self.length[rows]] = t
            self.length[rows] += 1
            self.lines[rows] += self.game.vocab.step_end[t]
            # anc is each row's full prefix here (nodes() ran above); move it to the child if computed.
            get = self.game.engine.child
            child = np.array([get(x, y) for x, y in zip(self.anc[rows].tolist(), t.tolist())], np.int64)
            found = rows[child != NO_NODE]
            self.anc[found] = child[child != NO_NODE]
            self.anc_len[found] = self.length[found]
        else:
            cands = self._candidates(rows)
            for j, b in enumerate(rows):
                if cands[j][int(a[b])] is None:
                    raise IllegalActionError(f"step {int(a[b])} at batch index {b} duplicates an earlier candidate")
            for j, b in enumerate(rows):
                toks, node, _ = cands[j][int(a[b])]
                n = len(toks)
                self.tokens[b, self.length[b]: self.length[b] + n] = toks
                self.length[b] += n
                self.lines[b] += self.game.vocab.lines(toks)
                self.anc[b], self.anc_len[b] = node, self.length[b]
        self.moves[rows] += 1
        self.done[rows] = task.finished_array(self.length[rows] - self.prompt_len[rows], self.lines[rows],
                                              self.tokens[rows, self.length[rows] - 1])

    def apply_paths(self, paths) -> None:
        p = np.asarray(paths)
        if p.ndim != 2 or p.shape[0] != len(self):
            raise ValueError(f"paths: expected shape ({len(self)}, L), got {p.shape}")
        trial = self.copy()
        for col in range(p.shape[1]):
            trial.apply(p[:, col])
        self.put(np.arange(len(self)), trial)

    # ------------------------------------------------------------------ queries
    def legal_mask(self, out=None):
        out = check_out(out, (len(self), self.spec.num_actions), np.bool_, "legal_mask")
        out[:] = False
        # Every prefix is run through the model, terminal ones included (see the module docstring).
        self.nodes()
        live = np.flatnonzero(~self.done)
        if live.size == 0:
            return out
        if self.game.level == "token":
            out[live] = self._legal_tokens(live)
        else:
            for j, c in enumerate(self._candidates(live)):
                out[live[j]] = [e is not None for e in c]
        return out

    def _per_row(self, out, dtype, name: str, value):
        """[B] array of `value` (written into `out` when given, after checking it)."""
        out = check_out(out, (len(self),), dtype, name)
        out[:] = value
        return out

    def terminal(self, out=None):
        return self._per_row(out, np.bool_, "terminal", self.done)

    def to_play(self, out=None):
        return self._per_row(out, np.int8, "to_play", 0)

    def reward(self) -> np.ndarray:
        """float32 [B]: the verifier's reward (0 / 1) of each row's answer as it stands."""
        task = self.game.task
        vocab = self.game.vocab
        return np.array([task.verify_tokens(p, self.answer(b), vocab) for b, p in enumerate(self.problems)],
                        np.float32)

    def outcome(self, out=None):
        out = self._per_row(out, np.float32, "outcome", 0.0)
        term = np.flatnonzero(self.done)
        if term.size:
            if self.game.terminal_value == "verifier":
                task = self.game.task
                r = np.array([task.verify_tokens(self.problems[b], self.answer(b), self.game.vocab) for b in term],
                             np.float32)
            else:
                r = self.game.engine.values(self.nodes(term))
            out[term] = 2.0 * r - 1.0
            self._record_finished(term, r if self.game.terminal_value == "value_head" else None)
        return out

    def _record_finished(self, rows: np.ndarray, values: np.ndarray | None) -> None:
        """Keep the finished answers of `rows` with their value-head values (LLMGame.finished)."""
        nodes = self.nodes(rows)
        if values is None:
            values = self.game.engine.values(nodes)
        for b, node, v in zip(rows, nodes, values):
            self.game.keep_finished(self.problems[int(b)].key, int(node), self.answer(int(b)), float(v))

    def num_moves(self, out=None):
        return self._per_row(out, np.int32, "num_moves", self.moves)

    def encode(self, out=None):
        # The evaluator reads the prefixes from the states (needs_states); the observation is just
        # the token ids (-1 after the prefix), enough to tell positions apart in logs and tests.
        out = check_out(out, (len(self), *self.spec.obs_shape), np.float32, "encode")
        ar = np.arange(self.tokens.shape[1])
        out[:, 0, 0, :] = np.where(ar[None, :] < self.length[:, None], self.tokens, -1)
        return out

    def random_playout(self, seed: int, out=None):
        rngs = [np.random.default_rng([seed, b]) for b in range(len(self))]
        while not self.done.all():
            legal = self.legal_mask()
            a = np.full(len(self), NO_ACTION, np.int32)
            for b in np.flatnonzero(~self.done):
                a[b] = int(rngs[b].choice(np.flatnonzero(legal[b])))
            self.apply(a)
        return self.outcome(out)

    def render(self, index: int) -> str:
        p, vocab = self.problems[index], self.game.vocab
        return (self.game.task.prompt_text(p) + "|" + vocab.text(self.answer(index))
                + ("<eos>" if self.done[index] else ""))


class LLMEvaluator:
    """Priors from the LM, values from the value head or a verified rollout (see the module docstring)."""

    needs_states = True

    def __init__(self, game: LLMGame):
        self.game = game

    def evaluate(self, obs: np.ndarray, legal: np.ndarray, states: LLMStates | None = None):
        if states is None:
            raise ValueError("LLMEvaluator needs the leaf states: evaluate(obs, legal, states=...)")
        g = self.game
        nodes = states.nodes()
        if g.level == "token":
            lp = log_softmax(g.engine.next_logits(nodes), g.prior_temperature, g.vocab.generatable)
        else:
            cands = states._candidates(np.arange(len(states)))
            lp = np.array([[e[2] / g.prior_temperature if e is not None else -np.inf for e in c] for c in cands])
        lp = np.where(legal, lp, -np.inf)
        lp -= lp.max(axis=1, keepdims=True)
        priors = np.where(legal, np.exp(lp), 0.0)
        priors = (priors / priors.sum(axis=1, keepdims=True)).astype(np.float32)
        if g.value_source == "value_head":
            v = g.engine.values(nodes)
        elif g.value_source == "rollout":
            v = self._rollouts(states)
        else:
            v = self._rollout_values(states)
        return priors, (2.0 * v - 1.0).astype(np.float32)

    def _rollouts(self, states: LLMStates) -> np.ndarray:
        g = self.game
        prefixes = [states.tokens[b, : states.length[b]] for b in range(len(states))]
        gen = generate(g.engine, g.task, prefixes, states.prompt_len, temperature=1.0, rng=g._rollout_rng,
                       starts=states.nodes())
        return np.array([g.task.verify_tokens(p, states.answer(b) + t, g.vocab)
                         for b, (p, t) in enumerate(zip(states.problems, gen.tokens))], np.float32)

    def _rollout_values(self, states: LLMStates) -> np.ndarray:
        """One completion per leaf at the step temperature, valued by the value head at its end; the
        finished answers join LLMGame.finished (each arrival counted)."""
        g = self.game
        prefixes = [states.tokens[b, : states.length[b]] for b in range(len(states))]
        gen = generate(g.engine, g.task, prefixes, states.prompt_len, temperature=g.step_temperature,
                       rng=g._rollout_rng, starts=states.nodes())
        v = g.engine.values(gen.nodes)
        for b, (p, toks, node, value) in enumerate(zip(states.problems, gen.tokens, gen.nodes, v)):
            g.keep_finished(p.key, int(node), states.answer(b) + list(toks), float(value))
        return np.asarray(v, np.float32)
