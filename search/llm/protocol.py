"""What the LM-as-a-game adapter needs of a language model: a prefix engine, and the meter every
decoding method counts its compute into.

The adapter (game.py, decode.py, searchers.py) never runs a model itself. It asks a `PrefixEngine`
for the next-token logits and the value of token prefixes, each prefix named by an engine node id;
the engine runs the model only on what it has not computed before. azero.train.llm.engine.LMEngine
(a prefix trie of cached keys/values over a torch model) is the implementation; anything with
these members works, so the search layer needs numpy only.

Node ids are valid within one engine `epoch`: clear() and truncate() start a new one, and holders
of node ids (LLMStates, LLMGame's step candidates) drop theirs when the epoch changes.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from typing import Iterator, Protocol, Sequence

import numpy as np

NO_NODE = -1
"""Parent of a first token; also 'not in the trie'."""


@dataclasses.dataclass
class ComputeMeter:
    """Compute spent by one method. The engine counts its forward calls; the methods count the
    tokens they produce (one definition for all of them)."""

    model_calls: int = 0
    """Batched forward invocations."""
    forward_rows: int = 0
    """Sequences in those calls."""
    forward_tokens: int = 0
    """Token positions actually run through the model (prefill included)."""
    forward_tokens_uncached: int = 0
    """What re-encoding each computed position's whole prefix would cost: per row and call, past
    length + new length."""
    prefill_tokens: int = 0
    """First computations of prompt positions."""
    recomputed_tokens: int = 0
    """Positions run again because their keys/values had been evicted (the engine's kv_budget)."""
    evicted_tokens: int = 0
    """Positions whose keys/values were evicted."""
    generated_tokens: int = 0
    """Tokens the method produced. Decoding (greedy, sampling, step candidates) counts every token
    it emits, also one identical to a token another sample already produced (the engine then saves
    its compute, which shows in forward_tokens); a tree search or beam counts every distinct prefix
    it expands (extend(..., count_new=True)): a node is one token, produced once."""
    wall_s: float = 0.0
    """Time spent inside the methods that use the meter's timer."""

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def copy(self) -> "ComputeMeter":
        return dataclasses.replace(self)

    def minus(self, other: "ComputeMeter") -> "ComputeMeter":
        return ComputeMeter(**{k: getattr(self, k) - getattr(other, k) for k in self.to_dict()})

    @contextlib.contextmanager
    def timer(self) -> Iterator[None]:
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.wall_s += time.perf_counter() - t0


class ModelShape(Protocol):
    """The part of a model's config the adapter reads."""

    vocab_size: int
    max_len: int
    """Longest prefix (prompt + answer) the engine can hold."""


class PrefixEngine(Protocol):
    """A language model behind node ids of token prefixes (see the module docstring)."""

    cfg: ModelShape
    meter: ComputeMeter
    epoch: int
    num_nodes: int

    def extend(self, prefixes: Sequence[Sequence[int]], prompt_lens: Sequence[int], *,
               starts: Sequence[tuple[int, int]] | None = None, count_new: bool = False) -> np.ndarray:
        """int64 [n]: the node of every prefix, computing whatever is missing.

        prompt_lens[i]: leading prompt tokens of prefixes[i] (for the meter); starts[i]: a (node,
        depth) known to lie on prefixes[i]'s path; count_new: add every newly computed position
        after the prompt to meter.generated_tokens."""
        ...

    def child(self, node: int, token: int) -> int:
        """The node of prefix(node) + [token], or NO_NODE if not computed."""
        ...

    def tokens_of(self, node: int) -> np.ndarray:
        """int64 [depth]: the tokens of the prefix ending at `node`."""
        ...

    def next_logits(self, nodes: np.ndarray) -> np.ndarray:
        """float32 [n, V]: next-token logits after each node's prefix."""
        ...

    def values(self, nodes: np.ndarray) -> np.ndarray:
        """float32 [n]: the model's P(correct) after each node's prefix."""
        ...

    def truncate(self, mark: int) -> None:
        """Forget the nodes created since num_nodes was `mark` (a new epoch)."""
        ...

    def clear(self) -> None:
        """Forget every node (a new epoch; the meter keeps counting)."""
        ...
