"""The model behind every LLM method: a prefix trie of cached keys/values over a torch model,
metered; it implements azero.search.llm.protocol.PrefixEngine.

Every method (greedy, sampling, best-of-N, beam, MCTS at token or step level) asks the engine
for the next-token logits and value of token prefixes; the engine runs the model only on what it
has not computed before, so all methods are metered the same way.

The model is a TinyGPT (model.py) or a local HuggingFace causal LM wrapped by hf.HFCausalLM: both
take explicit per-layer past keys/values (TinyGPT.forward's contract), a value() head, a cfg with
vocab_size and max_len, and kv_shape = (layers, key/value heads, head size) of one position.

Prefix trie. A trie node is one token position of one prefix (a prompt token or a generated
one): node n stores the token, its parent, its depth (prefix length), the next-token logits and
the value head's output after that prefix, and, while it holds one, the keys/values of its own
position in a KV slot (`slot[n]`) of the pools k_pool / v_pool (float32 [L, slots, H, D]). The
keys/values of a whole prefix are the slots along its path from the root (`path(n)`, kept per
node), gathered with one index operation. `extend(prefixes)` finds each prefix's deepest cached
ancestor (walking the child dictionary {(parent, token): child}), runs one batched forward over
just the missing suffixes with the ancestors' keys/values as the past, and inserts the new nodes.
With use_cache=False the engine instead re-encodes every new node's whole prefix (the baseline
the KV reuse is measured against); the trie then only memoises outputs, never keys/values.

Memory bound. Keys/values cost L*H*D*2 floats per position (the outputs memoised per node are
small next to them for the built-in models), so `kv_budget` bounds the positions holding a slot.
When a forward call needs more slots than are free, the least recently used slot holders with no
slot-holding child are evicted (their outputs stay memoised, so a lookup of an evicted prefix is
still free); the slot holders therefore always form whole prefixes (an evicted node's descendants
were evicted before it). Extending a prefix whose tail lost its slots re-runs those positions in
the same forward call (`recomputed_tokens`) and gives them slots again. The positions a call reads
as its past are never evicted by that call; a budget smaller than one call's past plus new
positions is an error.

The meter (azero.search.llm.protocol.ComputeMeter) counts every forward call: model calls, rows,
forward tokens with and without the cache, prefill, evictions and recomputed positions; the
methods add the tokens they generate.

Memory: trie nodes (and their memoised outputs) are never freed individually; callers mark
`num_nodes` and `truncate(mark)` after a batch (baselines) or `clear()` after a set of problems
(searches). Keys/values are bounded by kv_budget (above).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np
import torch

from azero.search.llm.protocol import NO_NODE, ComputeMeter
from azero.search.llm.vocab import vocab_of
from azero.train.llm.model import TinyGPT

if TYPE_CHECKING:
    from azero.train.llm.hf import HFCausalLM


class LMEngine:
    """A model plus its prefix trie and meter; one engine per thread of work (not thread-safe)."""

    def __init__(self, model: "TinyGPT | HFCausalLM", *, use_cache: bool = True, meter: ComputeMeter | None = None,
                 capacity: int = 4096, kv_budget: int | None = None, keep_hidden: bool = False):
        if kv_budget is not None and kv_budget < 1:
            raise ValueError(f"kv_budget must be a positive number of positions or None, got {kv_budget}")
        self.model = model.eval()
        self.cfg = model.cfg
        self.keep_hidden = keep_hidden
        """Memoise each node's final hidden state too (hidden_of): the features a frozen LM's value head
        is fitted on, without running the LM again."""
        self.vocab = vocab_of(model)
        """The ids the model reads and writes (search/llm/vocab.py; TinyGPT: the task's characters)."""
        self.use_cache = use_cache
        self.kv_budget = kv_budget
        """Most positions holding keys/values at once (None: unbounded)."""
        self.meter = meter if meter is not None else ComputeMeter()
        self.epoch = 0
        """Incremented by clear() and truncate(): node ids held elsewhere are valid only within an epoch."""
        self._kv_shape = tuple(model.kv_shape)  # (layers, key/value heads, head size) of one position
        self._cap = 0
        self._grow(max(16, capacity))
        self.num_nodes = 0
        self._children: dict[tuple[int, int], int] = {}
        self._paths: list[np.ndarray] = []
        L, H, D = self._kv_shape
        slots = max(16, capacity) if kv_budget is None else min(max(16, capacity), kv_budget)
        self.k_pool = torch.zeros(L, slots if use_cache else 1, H, D)
        self.v_pool = torch.zeros_like(self.k_pool)
        self._free_slots: list[int] = []
        self._slots_issued = 0   # slots 0.._slots_issued-1 have been handed out at least once
        self.kv_held = 0
        """Positions holding keys/values now."""
        self._tick = 0

    # ------------------------------------------------------------------ storage
    def _grow(self, cap: int) -> None:
        V = self.cfg.vocab_size
        old = self._cap
        parent = np.full(cap, NO_NODE, np.int64)
        token = np.zeros(cap, np.int64)
        depth = np.zeros(cap, np.int64)
        logits = np.zeros((cap, V), np.float32)
        value = np.zeros(cap, np.float32)
        slot = np.full(cap, -1, np.int64)
        kv_children = np.zeros(cap, np.int32)
        last_used = np.zeros(cap, np.int64)
        hidden = np.zeros((cap, self.cfg.d_model) if self.keep_hidden else (0, 0), np.float32)
        if old:
            if self.keep_hidden:
                hidden[:old] = self.hidden_table[:old]
            parent[:old], token[:old], depth[:old] = self.parent[:old], self.token[:old], self.depth[:old]
            logits[:old], value[:old] = self.logits_table[:old], self.value_table[:old]
            slot[:old], kv_children[:old], last_used[:old] = self.slot, self.kv_children, self.last_used
        self.parent, self.token, self.depth = parent, token, depth
        self.logits_table, self.value_table = logits, value
        self.hidden_table = hidden
        """float32 [capacity, V] / [capacity]: next-token logits and P(correct) after each node's prefix."""
        self.slot = slot
        """int64 [capacity]: each node's KV slot, -1 when it holds none (evicted, or use_cache=False)."""
        self.kv_children = kv_children  # children holding a slot (a node with none may be evicted)
        self.last_used = last_used      # extend() call that last touched the node's prefix (LRU order)
        self._cap = cap

    def _take_slot(self) -> int:
        if self._free_slots:
            s = self._free_slots.pop()
        else:
            s = self._slots_issued
            if s >= self.k_pool.shape[1]:
                size = 2 * self.k_pool.shape[1]
                if self.kv_budget is not None:
                    size = min(size, self.kv_budget)
                if s >= size:  # make_room() guarantees this never happens
                    raise RuntimeError("LMEngine: no free KV slot")
                k = torch.zeros(self.k_pool.shape[0], size, *self.k_pool.shape[2:])
                v = torch.zeros_like(k)
                k[:, :s], v[:, :s] = self.k_pool, self.v_pool
                self.k_pool, self.v_pool = k, v
            self._slots_issued = s + 1
        self.kv_held += 1
        return s

    def _make_room(self, need: int, pinned: np.ndarray) -> None:
        """Evict least recently used slot holders until `need` more positions fit in kv_budget."""
        if self.kv_budget is None:
            return
        short = self.kv_held + need - self.kv_budget
        n = self.num_nodes
        keep = np.zeros(n, np.bool_)
        keep[pinned] = True
        while short > 0:
            cand = np.flatnonzero((self.slot[:n] >= 0) & (self.kv_children[:n] == 0) & ~keep)
            if len(cand) == 0:
                raise ValueError(f"kv_budget {self.kv_budget} is too small: a forward call reads "
                                 f"{int(keep.sum())} cached positions and needs {need} new ones")
            cand = cand[np.argsort(self.last_used[cand], kind="stable")[:short]]
            self._release(cand)
            self.meter.evicted_tokens += len(cand)
            short -= len(cand)

    def _release(self, nodes: np.ndarray) -> None:
        """Free the slots of `nodes` (evicted or forgotten) and tell their parents."""
        held = nodes[self.slot[nodes] >= 0]
        self._free_slots.extend(int(x) for x in self.slot[held])
        self.kv_held -= len(held)
        parents = self.parent[held]
        np.subtract.at(self.kv_children, parents[parents != NO_NODE], 1)
        self.slot[nodes] = -1
        self.kv_children[nodes] = 0

    def clear(self) -> None:
        """Forget every node (the meter keeps counting)."""
        n = self.num_nodes
        self.slot[:n], self.kv_children[:n] = -1, 0
        self._free_slots.clear()
        self._slots_issued = self.kv_held = 0
        self.num_nodes = 0
        self._children.clear()
        self._paths.clear()
        self.epoch += 1

    def truncate(self, mark: int) -> None:
        """Forget the nodes created since num_nodes was `mark` (children always outlive no parent)."""
        if not 0 <= mark <= self.num_nodes:
            raise ValueError(f"truncate: mark {mark} outside [0, {self.num_nodes}]")
        for n in range(mark, self.num_nodes):
            del self._children[(int(self.parent[n]), int(self.token[n]))]
        self._release(np.arange(mark, self.num_nodes))
        del self._paths[mark:]
        self.num_nodes = mark
        self.epoch += 1

    def path(self, node: int) -> np.ndarray:
        """int64 [depth]: node ids of the prefix ending at `node`, first token first."""
        return self._paths[node]

    def tokens_of(self, node: int) -> np.ndarray:
        return self.token[self._paths[node]]

    def child(self, node: int, token: int) -> int:
        """The node of prefix(node) + [token], or NO_NODE if not computed."""
        return self._children.get((node, token), NO_NODE)

    def _kv_depth(self, node: int, depth: int) -> int:
        """How many leading positions of the prefix ending at `node` hold keys/values."""
        if not self.use_cache or node == NO_NODE:
            return 0
        if self.slot[node] >= 0:  # slot holders form whole prefixes
            return depth
        missing = self.slot[self._paths[node]] < 0
        return int(np.argmax(missing))

    # ------------------------------------------------------------------ lookups and forward
    def find(self, tokens: Sequence[int], start: int = NO_NODE, start_len: int = 0) -> tuple[int, int]:
        """(deepest cached node on `tokens`' path, its depth), walking down from `start` at depth start_len."""
        node, depth = start, start_len
        get = self._children.get
        for t in tokens[start_len:]:
            nxt = get((node, int(t)))
            if nxt is None:
                break
            node, depth = nxt, depth + 1
        return node, depth

    def extend(self, prefixes: Sequence[Sequence[int]], prompt_lens: Sequence[int], *,
               starts: Sequence[tuple[int, int]] | None = None, count_new: bool = False) -> np.ndarray:
        """int64 [n]: the node of every prefix, computing whatever is missing in one forward call.

        prompt_lens[i]: how many leading tokens of prefixes[i] are prompt (for the meter).
        starts[i]: an optional (node, depth) already known to lie on prefixes[i]'s path.
        count_new: add every newly computed position after the prompt to generated_tokens
        (tree searches and beams; decoders count the tokens they emit themselves).
        """
        n = len(prefixes)
        out = np.empty(n, np.int64)
        todo: list[tuple[int, int, int]] = []  # (row, cached node, cached depth)
        first: dict[tuple, int] = {}           # identical missing suffixes run once
        dups: list[tuple[int, int]] = []       # (row, row computing the same prefix)
        for i, prefix in enumerate(prefixes):
            if len(prefix) == 0:
                raise ValueError("extend: empty prefix (every sequence starts with <bos>)")
            s_node, s_len = starts[i] if starts is not None else (NO_NODE, 0)
            node, depth = self.find(prefix, s_node, s_len)
            if depth == len(prefix):
                out[i] = node
                continue
            key = (node, tuple(int(t) for t in prefix[depth:]))
            j = first.get(key)
            if j is None:
                first[key] = i
                todo.append((i, node, depth))
            else:
                dups.append((i, j))
        if todo:
            self._compute(prefixes, prompt_lens, todo, out, count_new)
        for i, j in dups:
            out[i] = out[j]
        if self.kv_budget is not None:  # LRU order only matters when something may be evicted
            self._tick += 1
            for node in out:
                self.last_used[self._paths[node]] = self._tick
        return out

    def _compute(self, prefixes, prompt_lens, todo, out, count_new: bool) -> None:
        cfg = self.cfg
        rows = len(todo)
        # Row r runs positions starts[r].. of its prefix: with the cache, from the first position
        # without keys/values (evicted ones are recomputed); without it, the whole prefix.
        starts = [self._kv_depth(node, depth) for _, node, depth in todo]
        lens = [len(prefixes[i]) - s for (i, _, _), s in zip(todo, starts)]
        T = max(lens)
        P = max(starts)
        if max(len(prefixes[i]) for i, _, _ in todo) > cfg.max_len:
            raise ValueError(f"extend: a prefix is longer than the model's max_len {cfg.max_len}")
        if self.use_cache:
            pasts = [self._paths[node][:s] if s else np.zeros(0, np.int64) for (_, node, _), s in zip(todo, starts)]
            self._make_room(int(sum(lens)), np.concatenate(pasts))
        tokens = np.zeros((rows, T), np.int64)
        positions = np.zeros((rows, T), np.int64)
        new_valid = np.zeros((rows, T), np.bool_)
        past_idx = np.zeros((rows, max(P, 1)), np.int64)
        past_valid = np.zeros((rows, max(P, 1)), np.bool_)
        for r, ((i, node, depth), s, ln) in enumerate(zip(todo, starts, lens)):
            tokens[r, :ln] = prefixes[i][s:]
            positions[r, :ln] = np.arange(s, s + ln)
            positions[r, ln:] = s  # padding: any valid position
            new_valid[r, :ln] = True
            if s:
                past_idx[r, :s] = self.slot[pasts[r]]
                past_valid[r, :s] = True
        past = None
        if P:
            idx = torch.from_numpy(past_idx)
            # [L, rows, P, H, D] -> [L, rows, H, P, D]
            past = (self.k_pool[:, idx].transpose(2, 3), self.v_pool[:, idx].transpose(2, 3),
                    torch.from_numpy(past_valid))
        with torch.no_grad():
            logits, hidden, (k_new, v_new) = self.model(
                torch.from_numpy(tokens), positions=torch.from_numpy(positions), past=past,
                new_valid=torch.from_numpy(new_valid))
            values = self.model.value(hidden)
        m = self.meter
        m.model_calls += 1
        m.forward_rows += rows
        m.forward_tokens += int(sum(lens))
        m.forward_tokens_uncached += int(sum(s + ln for s, ln in zip(starts, lens)))

        # Insert the computed positions that are new to the trie and give slots to those without
        # one (new or recomputed; a row whose prefix shares positions with an earlier row of the
        # same call reuses that row's nodes and slots).
        logits_np = logits.numpy()
        values_np = values.numpy()
        new_ids, src_r, src_t = [], [], []
        kv_ids, kv_r, kv_t = [], [], []
        children = self._children
        for r, ((i, node, depth), s, ln) in enumerate(zip(todo, starts, lens)):
            prefix = prefixes[i]
            p_len = int(prompt_lens[i])
            cur = self._paths[node][s - 1] if s else NO_NODE
            for pos in range(s, s + ln):
                t = int(prefix[pos])
                nxt = children.get((cur, t))
                if nxt is None:
                    nxt = self._new_node(cur, t, pos + 1)
                    children[(cur, t)] = nxt
                    new_ids.append(nxt)
                    src_r.append(r)
                    src_t.append(pos - s)
                    if pos < p_len:
                        m.prefill_tokens += 1
                    elif count_new:
                        m.generated_tokens += 1
                elif self.use_cache and self.slot[nxt] < 0:
                    m.recomputed_tokens += 1
                if self.use_cache and self.slot[nxt] < 0:
                    self.slot[nxt] = self._take_slot()
                    if cur != NO_NODE:
                        self.kv_children[cur] += 1
                    kv_ids.append(int(self.slot[nxt]))
                    kv_r.append(r)
                    kv_t.append(pos - s)
                cur = nxt
            out[i] = cur
        if new_ids:
            self.logits_table[new_ids] = logits_np[src_r, src_t]
            self.value_table[new_ids] = values_np[src_r, src_t]
            if self.keep_hidden:
                self.hidden_table[new_ids] = hidden.numpy()[src_r, src_t]
        if kv_ids:
            ids = torch.as_tensor(kv_ids)
            rr, tt = torch.as_tensor(kv_r), torch.as_tensor(kv_t)
            # k_new [L, rows, H, T, D] -> [rows, T, L, H, D] -> the (row, position) pairs [n, L, H, D]
            self.k_pool[:, ids] = k_new.permute(1, 3, 0, 2, 4)[rr, tt].transpose(0, 1)
            self.v_pool[:, ids] = v_new.permute(1, 3, 0, 2, 4)[rr, tt].transpose(0, 1)

    def _new_node(self, parent: int, token: int, depth: int) -> int:
        n = self.num_nodes
        if n >= self._cap:
            self._grow(2 * self._cap)
        self.parent[n], self.token[n], self.depth[n] = parent, token, depth
        self._paths.append(np.append(self._paths[parent], n) if parent != NO_NODE else np.array([n], np.int64))
        self.num_nodes = n + 1
        return n

    # ------------------------------------------------------------------ outputs
    def next_logits(self, nodes: np.ndarray) -> np.ndarray:
        """float32 [n, V]: next-token logits after each node's prefix."""
        return self.logits_table[np.asarray(nodes, np.int64)]

    def hidden_of(self, nodes: np.ndarray) -> np.ndarray:
        """float32 [n, d_model]: the final hidden state after each node's prefix (keep_hidden=True only)."""
        if not self.keep_hidden:
            raise ValueError("hidden_of: build the engine with keep_hidden=True")
        return self.hidden_table[np.asarray(nodes, np.int64)]

    def values(self, nodes: np.ndarray) -> np.ndarray:
        """float32 [n]: the value head's P(correct) after each node's prefix."""
        return self.value_table[np.asarray(nodes, np.int64)]
