"""Any 2-player zero-sum perfect-information OpenSpiel game behind the batched interface.

`OpenSpielGame('hex(board_size=7)')` loads the game with `pyspiel.load_game`
and serves batches of `pyspiel.State` objects through the `States` protocol of
`azero.games.base`. It is the slow path (Python per state) that lets search and
training run on any suitable OpenSpiel game; the native engines are the fast
path and are tested against OpenSpiel's rules.

Accepted games: exactly 2 players, zero-sum utility, sequential moves, perfect
information, deterministic (no chance nodes), and an observation tensor. Any
other game is refused at construction with a ValueError that names the game and
the reason, before a single state is built.

Conventions chosen here (on top of those in `azero.games.base`):

- Observation: `observation_tensor(player to move)` followed by one extra
  constant plane equal to the player to move (0.0 for player 0, 1.0 for
  player 1). OpenSpiel's tensors are, for most games (hex, breakthrough,
  tic_tac_toe, connect_four, go, chess), identical for both players, i.e. in
  absolute colours; only some (othello, clobber) are written relative to the
  observer. No generic plane reordering exists, so the to-play plane is what
  makes every observation carry the perspective of the player to move, as
  AlphaGo Zero's colour plane does. obs_shape = (C + 1, H, W) where OpenSpiel's
  shape is (C, H, W); a rank-1 shape (N,) becomes (N + 1, 1, 1) (features as
  channels of a 1x1 board), a rank-2 shape (H, W) becomes (2, H, W), and a
  shape of rank > 3 folds its leading dimensions into C.
- board_shape is (H, W) of that observation; symmetry is 'none' (OpenSpiel
  action numberings are not the r*W + c convention symmetries assume) and
  pass_action is None (a game's pass, e.g. othello's, is just another action).
- to_play of a terminal state is 1 - (player who made the last move), i.e. the
  player who would move next if the game alternated; player 0 before any move.
  OpenSpiel itself reports no player for terminal states.
- outcome is the sign of player 0's return, so games with larger utilities
  (margins) still report +1 / 0 / -1.
- num_moves counts the actions in the state's history.
- Action strings come from OpenSpiel's `State.action_to_string`, which needs a
  position: `States.action_to_str(index, action)` names a legal action in that
  position. `Game.action_to_str(action)` uses the initial position and returns
  the decimal action id for actions not legal there, because OpenSpiel may
  crash (not raise) when asked to format an action that is illegal in the
  position (chess does). Decimal action ids are accepted everywhere a string is.
"""

from __future__ import annotations

import difflib

import numpy as np
import pyspiel

from azero.games.base import (
    NO_ACTION,
    GameSpec,
    IllegalActionError,
    check_actions,
    check_index,
    check_out,
)

# Suggested in the "unknown game" message; all pass the checks below.
_EXAMPLE_GAMES = ("hex(board_size=7)", "othello", "breakthrough(rows=6,columns=6)", "connect_four",
                  "tic_tac_toe", "clobber", "go(board_size=9)", "chess")


def _short_name(load_string: str) -> str:
    return load_string.split("(", 1)[0].strip()


def _load(name: str) -> pyspiel.Game:
    short = _short_name(name)
    # Check the registry first: an unknown name makes OpenSpiel print a list of
    # all 120+ games to stderr before raising.
    registered = pyspiel.registered_names()
    if short not in registered:
        close = difflib.get_close_matches(short, registered, n=3)
        hint = f"did you mean {', '.join(close)}? " if close else ""
        source = f" (from {name!r})" if name != short else ""
        raise ValueError(
            f"unknown OpenSpiel game {short!r}{source}; {hint}"
            f"examples of supported games: {', '.join(_EXAMPLE_GAMES)}"
        )
    try:
        return pyspiel.load_game(name)
    except pyspiel.SpielError as e:
        raise ValueError(f"cannot load OpenSpiel game {name!r}: {e}") from None


def _check_supported(name: str, game: pyspiel.Game) -> None:
    """Refuse games the batched interface (and AlphaZero self-play) cannot represent."""
    t = game.get_type()
    reasons = []
    if game.num_players() != 2:
        reasons.append(f"it has {game.num_players()} player(s), not 2")
    if t.utility != pyspiel.GameType.Utility.ZERO_SUM:
        reasons.append(f"it is not zero-sum (utility {t.utility.name})")
    if t.dynamics != pyspiel.GameType.Dynamics.SEQUENTIAL:
        reasons.append(f"its moves are not sequential (dynamics {t.dynamics.name})")
    if t.information != pyspiel.GameType.Information.PERFECT_INFORMATION:
        reasons.append(f"it is not perfect information ({t.information.name})")
    if t.chance_mode != pyspiel.GameType.ChanceMode.DETERMINISTIC:
        reasons.append(f"it has chance nodes ({t.chance_mode.name})")
    if not t.provides_observation_tensor:
        reasons.append("it provides no observation tensor")
    if reasons:
        raise ValueError(
            f"OpenSpiel game {name!r} is not supported: " + "; ".join(reasons)
            + " (azero needs 2-player, zero-sum, sequential, perfect-information, deterministic games)"
        )


def _obs_layout(shape: list[int]) -> tuple[int, int, int]:
    """(C, H, W) of OpenSpiel's tensor as laid out in our observation (before the to-play plane)."""
    if len(shape) == 1:
        return (shape[0], 1, 1)
    if len(shape) == 2:
        return (1, shape[0], shape[1])
    return (int(np.prod(shape[:-2])), shape[-2], shape[-1])


def _parse_action_text(text: str, num_actions: int, candidates: dict[str, int]) -> int:
    """Decimal action id in range, else an exact (then case-insensitive, if unique) match in candidates."""
    if not isinstance(text, str):
        raise IllegalActionError(f"action text must be a str, got {type(text).__name__}")
    t = text.strip()
    if t.lstrip("-").isdigit():
        a = int(t)
        if not 0 <= a < num_actions:
            raise IllegalActionError(f"action {a} out of range [0, {num_actions})")
        return a
    if t in candidates:
        return candidates[t]
    folded = [a for s, a in candidates.items() if s.lower() == t.lower()]
    if len(folded) == 1:
        return folded[0]
    shown = ", ".join(sorted(candidates)[:8]) + (", ..." if len(candidates) > 8 else "")
    raise IllegalActionError(f"cannot parse action {text!r}; expected a decimal action id or one of: {shown}")


class OpenSpielGame:
    """An OpenSpiel game by load string, e.g. OpenSpielGame('breakthrough(rows=6,columns=6)')."""

    def __init__(self, name: str):
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"OpenSpiel game name must be a non-empty load string, got {name!r}")
        name = name.strip()
        self.name = name
        self.os_game = _load(name)
        _check_supported(name, self.os_game)
        os_shape = list(self.os_game.observation_tensor_shape())
        c, h, w = _obs_layout(os_shape)
        self._os_obs_layout = (c, h, w)
        self.spec = GameSpec(
            name=f"openspiel:{name}",
            num_actions=self.os_game.num_distinct_actions(),
            obs_shape=(c + 1, h, w),  # + the to-play plane (see module docstring)
            board_shape=(h, w),
            max_moves=self.os_game.max_game_length(),
            pass_action=None,
            symmetry="none",
            params={"name": name},
        )
        self._initial = self.os_game.new_initial_state()

    def __repr__(self) -> str:
        return f"OpenSpielGame({self.name!r})"

    def new_states(self, batch: int) -> "OpenSpielStates":
        if int(batch) < 0:
            raise ValueError(f"batch must be >= 0, got {batch}")
        return OpenSpielStates(self, [self.os_game.new_initial_state() for _ in range(int(batch))])

    def action_to_str(self, action: int) -> str:
        """OpenSpiel's name of the action in the initial position, or its decimal id if it is not legal there."""
        a = int(action)
        if not 0 <= a < self.spec.num_actions:
            raise IllegalActionError(f"action {a} out of range [0, {self.spec.num_actions})")
        if a in self._initial.legal_actions():
            return self._initial.action_to_string(self._initial.current_player(), a)
        return str(a)

    def str_to_action(self, text: str) -> int:
        """A decimal action id, or the name of an action legal in the initial position."""
        p = self._initial.current_player()
        names = {self._initial.action_to_string(p, a): a for a in self._initial.legal_actions()}
        return _parse_action_text(text, self.spec.num_actions, names)


class OpenSpielStates:
    """A batch of pyspiel states. Every method follows azero.games.base.States."""

    def __init__(self, game: OpenSpielGame, states: list):
        self.game = game
        self.spec = game.spec
        self._states = states
        # 1 - last mover for terminal states (OpenSpiel has no player there); -1 = no move yet.
        self._last_mover = np.full(len(states), -1, dtype=np.int8)

    def __len__(self) -> int:
        return len(self._states)

    def _new(self, states: list, last_mover: np.ndarray) -> "OpenSpielStates":
        out = OpenSpielStates(self.game, states)
        out._last_mover = last_mover
        return out

    def copy(self) -> "OpenSpielStates":
        return self._new([s.clone() for s in self._states], self._last_mover.copy())

    def take(self, index: np.ndarray) -> "OpenSpielStates":
        idx = check_index(index, len(self))
        # clone per entry so that repeated indices still give independent states
        return self._new([self._states[i].clone() for i in idx], self._last_mover[idx].copy())

    def put(self, index: np.ndarray, src: "OpenSpielStates") -> None:
        idx = check_index(index, len(self))
        if not isinstance(src, OpenSpielStates) or src.spec.name != self.spec.name:
            raise ValueError(f"put: src must be states of {self.spec.name}, got {getattr(src, 'spec', src)!r}")
        if len(src) != len(idx):
            raise ValueError(f"put: len(src) = {len(src)} must equal len(index) = {len(idx)}")
        # clone everything before writing, so src may be self (or overlap it)
        clones = [s.clone() for s in src._states]
        movers = src._last_mover.copy()
        for k, i in enumerate(idx):
            self._states[i] = clones[k]
            self._last_mover[i] = movers[k]

    def reset(self, index: np.ndarray | None = None) -> None:
        idx = range(len(self)) if index is None else check_index(index, len(self))
        for i in idx:
            self._states[i] = self.game.os_game.new_initial_state()
            self._last_mover[i] = -1

    def _check_legal(self, b: int, state, action: int, where: str = "") -> None:
        n = self.spec.num_actions
        if not 0 <= action < n:
            raise IllegalActionError(f"batch index {b}{where}: action {action} out of range [0, {n})")
        if state.is_terminal():
            raise IllegalActionError(f"batch index {b}{where}: action {action} played in a finished game")
        if action not in state.legal_actions():
            raise IllegalActionError(f"batch index {b}{where}: action {action} is illegal in this position")

    def apply(self, actions: np.ndarray) -> None:
        acts = check_actions(actions, len(self))
        # validate the whole batch first: an illegal action must leave every state untouched
        for b, a in enumerate(acts):
            if a != NO_ACTION:
                self._check_legal(b, self._states[b], int(a))
        for b, a in enumerate(acts):
            if a != NO_ACTION:
                s = self._states[b]
                self._last_mover[b] = s.current_player()
                s.apply_action(int(a))

    def apply_paths(self, paths: np.ndarray) -> None:
        """NO_ACTION entries are skipped wherever they appear; atomic like apply()."""
        p = np.asarray(paths)
        if p.ndim != 2 or p.shape[0] != len(self):
            raise ValueError(f"paths: expected shape ({len(self)}, L), got {p.shape}")
        if not np.issubdtype(p.dtype, np.integer):
            raise ValueError(f"paths: expected integer actions, got dtype {p.dtype}")
        # play each path on a clone and commit only when all of them were legal
        staged = {}
        for b in range(len(self)):
            row = [int(a) for a in p[b] if a != NO_ACTION]
            if not row:
                continue
            s = self._states[b].clone()
            mover = self._last_mover[b]
            for step, a in enumerate(row):
                self._check_legal(b, s, a, where=f" (path step {step})")
                mover = s.current_player()
                s.apply_action(a)
            staged[b] = (s, mover)
        for b, (s, mover) in staged.items():
            self._states[b] = s
            self._last_mover[b] = mover

    def legal_mask(self, out: np.ndarray | None = None) -> np.ndarray:
        out = check_out(out, (len(self), self.spec.num_actions), np.bool_, "legal_mask")
        out[...] = False
        for b, s in enumerate(self._states):
            if not s.is_terminal():
                out[b, s.legal_actions()] = True
        return out

    def terminal(self, out: np.ndarray | None = None) -> np.ndarray:
        out = check_out(out, (len(self),), np.bool_, "terminal")
        for b, s in enumerate(self._states):
            out[b] = s.is_terminal()
        return out

    def _to_play(self, b: int) -> int:
        s = self._states[b]
        if s.is_terminal():
            return 0 if self._last_mover[b] < 0 else 1 - int(self._last_mover[b])
        return s.current_player()

    def to_play(self, out: np.ndarray | None = None) -> np.ndarray:
        out = check_out(out, (len(self),), np.int8, "to_play")
        for b in range(len(self)):
            out[b] = self._to_play(b)
        return out

    def outcome(self, out: np.ndarray | None = None) -> np.ndarray:
        out = check_out(out, (len(self),), np.float32, "outcome")
        for b, s in enumerate(self._states):
            out[b] = np.sign(s.returns()[0]) if s.is_terminal() else 0.0
        return out

    def num_moves(self, out: np.ndarray | None = None) -> np.ndarray:
        out = check_out(out, (len(self),), np.int32, "num_moves")
        for b, s in enumerate(self._states):
            out[b] = len(s.history())
        return out

    def encode(self, out: np.ndarray | None = None) -> np.ndarray:
        out = check_out(out, (len(self), *self.spec.obs_shape), np.float32, "encode")
        c, h, w = self.game._os_obs_layout
        for b, s in enumerate(self._states):
            p = self._to_play(b)
            out[b, :c] = np.asarray(s.observation_tensor(p), dtype=np.float32).reshape(c, h, w)
            out[b, c] = float(p)
        return out

    def random_playout(self, seed: int, out: np.ndarray | None = None) -> np.ndarray:
        out = check_out(out, (len(self),), np.float32, "random_playout")
        for b, s in enumerate(self._states):
            rng = np.random.default_rng((int(seed), b))
            while not s.is_terminal():
                legal = s.legal_actions()
                self._last_mover[b] = s.current_player()
                s.apply_action(legal[int(rng.integers(len(legal)))])
        return self.outcome(out)

    def render(self, index: int) -> str:
        return str(self._state(index))

    # -- beyond the protocol: action names need a position in OpenSpiel --

    def _state(self, index: int):
        i = int(index)
        if not 0 <= i < len(self):
            raise IndexError(f"state index {i} out of range [0, {len(self)})")
        return self._states[i]

    def action_to_str(self, index: int, action: int) -> str:
        """OpenSpiel's name of `action` in state `index`; the action must be legal there."""
        s = self._state(index)
        self._check_legal(int(index), s, int(action))
        return s.action_to_string(s.current_player(), int(action))

    def str_to_action(self, index: int, text: str) -> int:
        """A decimal action id, or the name of an action legal in state `index`."""
        s = self._state(index)
        names = {}
        if not s.is_terminal():
            p = s.current_player()
            names = {s.action_to_string(p, a): a for a in s.legal_actions()}
        return _parse_action_text(text, self.spec.num_actions, names)

    def os_state(self, index: int):
        """A clone of the underlying pyspiel.State (for tests and debugging)."""
        return self._state(index).clone()
