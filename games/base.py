"""The one game interface used by search, self-play, arena and tests.

A `Game` describes the rules and their parameters; a `States` object holds a
batch of B positions of that game. Every operation works on the whole batch in
one call: native games (Go, connect four, tic-tac-toe) implement it in Cython
with no Python per state, the OpenSpiel adapter implements it in Python.

Conventions (written once here, relied on everywhere):

- Players are 0 and 1; player 0 moves first (Black in Go, X in tic-tac-toe,
  the first player in connect four).
- `outcome()` of a terminal state is from player 0's point of view:
  +1 player 0 won, -1 player 1 won, 0 draw. Non-terminal states report 0.
- Search values are from the perspective of the player to move;
  `value_for_player_to_move` converts an outcome into that frame.
- Actions are integers in [0, A). `NO_ACTION` (-1) in an action array means
  "leave this state as it is" (used to pad action paths of unequal length).
- Legal masks of terminal states are all False.
- Observations are float32 `[B, C, H, W]`, always from the perspective of the
  player to move (own stones first).
- Buffers passed as `out=` must have exactly the documented shape and dtype and
  be C-contiguous; anything else raises ValueError naming the expected shape.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Protocol, runtime_checkable

import numpy as np

NO_ACTION = -1


class IllegalActionError(ValueError):
    """An action that is out of range, illegal in its position, or played in a finished game."""


@dataclasses.dataclass(frozen=True)
class GameSpec:
    """Static facts about a game, enough to size networks and buffers."""

    name: str
    """Canonical name with parameters, e.g. 'go9x9', 'connect4', 'openspiel:hex(board_size=7)'."""
    num_actions: int
    """A: size of the action space (policy vector length)."""
    obs_shape: tuple[int, int, int]
    """(C, H, W) of one encoded observation."""
    board_shape: tuple[int, int]
    """(H, W) of the board, used by symmetries and displays."""
    max_moves: int
    """Upper bound on the number of moves in a game (tree and buffer sizing)."""
    pass_action: int | None = None
    """Index of the pass action, or None for games without passing."""
    symmetry: str = "none"
    """Symmetry group of observations and policies: 'dihedral8', 'mirror_lr' or 'none'."""
    params: dict[str, Any] = dataclasses.field(default_factory=dict)
    """The rule parameters (board size, komi, ...) this game was built with."""
    area_scoring: bool = False
    """Finished games are counted by area (Tromp-Taylor): they have a score and a final owner per point."""
    sgf: bool = False
    """Games are recorded as Go SGF and understood by GTP engines (vertices, 'B+3.5' results)."""
    colour_names: tuple[str, str] | None = None
    """What players 0 and 1 are called ('Black', 'White'), or None for 'first' / 'second'."""

    @property
    def has_pass(self) -> bool:
        """Whether the game has a pass move (`pass_action`)."""
        return self.pass_action is not None


@runtime_checkable
class States(Protocol):
    """A batch of B game positions that all operations act on at once."""

    spec: GameSpec

    def __len__(self) -> int: ...

    def copy(self) -> "States":
        """An independent deep copy of the whole batch."""

    def take(self, index: np.ndarray) -> "States":
        """A new batch of len(index) states: result[k] = self[index[k]] (int64 indices)."""

    def put(self, index: np.ndarray, src: "States") -> None:
        """Overwrite self[index[k]] = src[k] for every k; len(src) == len(index)."""

    def reset(self, index: np.ndarray | None = None) -> None:
        """Return the chosen states (all when None) to the initial position."""

    def apply(self, actions: np.ndarray) -> None:
        """Play actions[b] (int32 [B]) in state b; NO_ACTION leaves b unchanged.

        Raises IllegalActionError naming the batch index and the action if any
        action is out of range or illegal; in that case no state is modified.
        """

    def apply_paths(self, paths: np.ndarray) -> None:
        """Play paths[b, 0], paths[b, 1], ... (int32 [B, L], NO_ACTION-padded) in state b."""

    def legal_mask(self, out: np.ndarray | None = None) -> np.ndarray:
        """bool [B, A]: which actions are legal in each state (all False when terminal)."""

    def terminal(self, out: np.ndarray | None = None) -> np.ndarray:
        """bool [B]: whether each game is over."""

    def to_play(self, out: np.ndarray | None = None) -> np.ndarray:
        """int8 [B]: the player to move (0 or 1)."""

    def outcome(self, out: np.ndarray | None = None) -> np.ndarray:
        """float32 [B]: result from player 0's view (+1 / 0 / -1); 0 when not terminal."""

    def num_moves(self, out: np.ndarray | None = None) -> np.ndarray:
        """int32 [B]: moves played so far (passes included)."""

    def encode(self, out: np.ndarray | None = None) -> np.ndarray:
        """float32 [B, C, H, W]: observations from the perspective of the player to move."""

    def random_playout(self, seed: int, out: np.ndarray | None = None) -> np.ndarray:
        """Play uniformly random legal moves to the end, in place; return outcome() (float32 [B]).

        State b draws from a generator seeded by (seed, b), so results are
        reproducible and independent of the batch size.
        """

    def render(self, index: int) -> str:
        """A human-readable picture of state `index`."""


class Game(Protocol):
    """Rules plus parameters; a factory for batches of states."""

    spec: GameSpec

    def new_states(self, batch: int) -> States:
        """A batch of `batch` initial positions."""

    def action_to_str(self, action: int) -> str:
        """Human notation of an action ('D4' / 'pass' in Go, '4' in connect four)."""

    def str_to_action(self, text: str) -> int:
        """Inverse of action_to_str; raises IllegalActionError on malformed text."""


class DigitGame:
    """The half of a Game shared by games whose n <= 10 actions are written as one digit each,
    str(action + first_digit) (connect four: columns '1'..'7', tic-tac-toe: cells '0'..'8').

    A subclass sets `spec` in its __init__, and as class attributes `states` (its native States
    class, built as states(batch, spec)), `first_digit` and the two error texts, which name the
    action ("... action must be a column") and the notation ("... move must be a column number
    '1'..'7'").
    """

    spec: GameSpec
    states: type
    first_digit: int = 0
    bad_action: str
    bad_move: str

    def new_states(self, batch: int) -> States:
        return self.states(batch, self.spec)

    def action_to_str(self, action: int) -> str:
        n = self.spec.num_actions
        if not 0 <= action < n:
            raise IllegalActionError(f"{self.bad_action} in [0, {n}), got {action}")
        return str(action + self.first_digit)

    def str_to_action(self, text: str) -> int:
        t = text.strip()
        if len(t) != 1 or not str(self.first_digit) <= t <= str(self.first_digit + self.spec.num_actions - 1):
            raise IllegalActionError(f"{self.bad_move}, got {text!r}")
        return int(t) - self.first_digit


def value_for_player_to_move(outcome: np.ndarray, to_play: np.ndarray) -> np.ndarray:
    """Convert player-0 outcomes to the frame of the player to move: v = z if to_play == 0 else -z."""
    return np.where(to_play == 0, outcome, -outcome).astype(np.float32)


_INT32 = np.dtype(np.int32)
_INT64 = np.dtype(np.int64)


def check_out(out: np.ndarray | None, shape: tuple[int, ...], dtype, name: str) -> np.ndarray:
    """Return `out` validated against shape/dtype/contiguity, or a fresh zeroed array."""
    if out is None:
        return np.zeros(shape, dtype=dtype)
    if not isinstance(out, np.ndarray):
        raise ValueError(f"{name}: out must be a numpy array of shape {shape} and dtype {np.dtype(dtype)}")
    if out.shape != tuple(shape) or out.dtype != np.dtype(dtype) or not out.flags.c_contiguous:
        raise ValueError(
            f"{name}: out must be a C-contiguous array of shape {tuple(shape)} and dtype "
            f"{np.dtype(dtype)}, got shape {out.shape} dtype {out.dtype}"
            + ("" if out.flags.c_contiguous else " (not C-contiguous)")
        )
    return out


def check_actions(actions: np.ndarray, batch: int, name: str = "actions") -> np.ndarray:
    """Validate an int action array of shape [B]; returns it as C-contiguous int32."""
    if type(actions) is np.ndarray and actions.dtype == _INT32 and actions.shape == (batch,) \
            and actions.flags.c_contiguous:
        return actions  # the search's own buffers: nothing to convert (engines range-check in C)
    a = np.asarray(actions)
    if a.shape != (batch,):
        raise ValueError(f"{name}: expected shape ({batch},), got {a.shape}")
    if not np.issubdtype(a.dtype, np.integer):
        raise ValueError(f"{name}: expected integer actions, got dtype {a.dtype}")
    # Range-check before narrowing: int32 conversion would silently wrap 2**32 + 3 to 3.
    if a.dtype.itemsize > 4 or a.dtype == np.uint32:
        bad = (a < NO_ACTION) | (a > np.iinfo(np.int32).max)
        if bad.any():
            b = int(np.flatnonzero(bad.reshape(-1))[0])
            raise IllegalActionError(f"{name}: action {int(a.reshape(-1)[b])} at flat index {b} is out of range")
    return np.ascontiguousarray(a, dtype=np.int32)


def check_paths(paths: np.ndarray, batch: int, name: str = "paths") -> np.ndarray:
    """Validate an int action-path array of shape [B, L] (NO_ACTION-padded); returns C-contiguous int32."""
    if type(paths) is np.ndarray and paths.dtype == _INT32 and paths.ndim == 2 and paths.shape[0] == batch \
            and paths.flags.c_contiguous:
        return paths
    p = np.asarray(paths)
    if p.ndim != 2 or p.shape[0] != batch or not np.issubdtype(p.dtype, np.integer):
        raise ValueError(f"{name}: expected an integer array of shape ({batch}, L), got shape {p.shape} dtype {p.dtype}")
    return check_actions(p.reshape(-1), p.size, name).reshape(p.shape)


def check_query(n: int, batch: int, num_actions: int, legal: np.ndarray, terminal: np.ndarray,
                to_play: np.ndarray, outcome: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Validate the buffers of States.query; returns (legal, terminal) viewed as uint8 for Cython."""
    if not 0 <= n <= batch:
        raise ValueError(f"query: n must lie in [0, {batch}], got {n}")
    for what, arr, dtypes, shape in (("legal", legal, (np.bool_, np.uint8), (num_actions,)),
                                     ("terminal", terminal, (np.bool_, np.uint8), ()),
                                     ("to_play", to_play, (np.int8,), ()),
                                     ("outcome", outcome, (np.float32,), ())):
        if (type(arr) is not np.ndarray or arr.dtype not in dtypes or arr.ndim != 1 + len(shape)
                or arr.shape[0] < n or arr.shape[1:] != shape or not arr.flags.c_contiguous):
            raise ValueError(f"query: {what} must be a C-contiguous {'/'.join(np.dtype(d).name for d in dtypes)} "
                             f"array of shape (>= {n}{''.join(f', {x}' for x in shape)}), got "
                             f"{getattr(arr, 'dtype', type(arr).__name__)} {getattr(arr, 'shape', '')}")
    return legal.view(np.uint8), terminal.view(np.uint8)


def check_index(index: np.ndarray, batch: int, name: str = "index") -> np.ndarray:
    """Validate batch indices (1-D ints in [0, batch)); returns C-contiguous int64."""
    if type(index) is np.ndarray and index.dtype == _INT64 and index.ndim == 1 and index.flags.c_contiguous:
        idx = index  # np.flatnonzero's output: nothing to convert
    else:
        idx = np.asarray(index)
        if idx.ndim != 1 or not np.issubdtype(idx.dtype, np.integer):
            raise ValueError(f"{name}: expected a 1-D integer array, got shape {idx.shape} dtype {idx.dtype}")
    if idx.size:
        # A handful of indices (games that just ended) is checked faster in Python than by
        # two numpy reductions, whose call overhead dominates for small arrays.
        lo, hi = (min(v := idx.tolist()), max(v)) if idx.size <= 64 else (idx.min(), idx.max())
        if lo < 0 or hi >= batch:
            raise ValueError(f"{name}: indices must lie in [0, {batch}), got range [{lo}, {hi}]")
    return np.ascontiguousarray(idx, dtype=np.int64)
