"""The GTP engine's game record: azero's Go rules on a batch of one, plus the move history GTP sees.

GTP lets a controller play any colour at any time (two Black moves in a row,
moves after both sides passed), while azero's GoStates strictly alternate
Black, White, ... and end the game after two consecutive passes. The record
keeps the moves as GTP sent them (`history`, what undo pops) and derives the
alternating action sequence azero plays (`sequence`) from it by two rules:

- a move by the colour that is not to move is preceded by a pass of the
  other colour (stones are unchanged, so the position is exactly the one the
  controller has in mind);
- a move after the game ended by two consecutive passes first drops that
  pair of passes: a pass pair changes neither the stones nor the player to
  move, and positional superko compares stones only, so the position and its
  legal moves are exactly those the controller sees (KGS's cleanup phase and
  GoGui both play on after two passes).

Every change that is not a plain append (undo, komi, a dropped pass pair) is
made by replaying the derived sequence from the empty board in one
apply_paths call; positions are never patched in place.

The game is built with a move limit of MOVE_LIMIT_FACTOR * N * N (10x the
self-play default of 2 N^2): a human or a cleanup phase can make a game long,
and reaching the limit ends the game.
"""

from __future__ import annotations

import numpy as np

from azero.games.base import IllegalActionError
from azero.games.go import GoGame, GoStates

BLACK, WHITE = 0, 1
MOVE_LIMIT_FACTOR = 10


def _append(sequence: list[int], action: int, pass_action: int) -> None:
    """Append one alternating move, first dropping a game-ending pass pair (module docstring)."""
    if len(sequence) >= 2 and sequence[-1] == pass_action and sequence[-2] == pass_action:
        del sequence[-2:]
    sequence.append(action)


def derive_sequence(history: list[tuple[int, int]], pass_action: int) -> list[int]:
    """The alternating azero action sequence for a GTP history of (colour, action) moves."""
    seq: list[int] = []
    for colour, action in history:
        prepare_for(seq, colour, pass_action)
        seq.append(action)
    return seq


def prepare_for(sequence: list[int], colour: int, pass_action: int) -> None:
    """Make `colour` the player to move at the end of `sequence`, ready for one more move."""
    if len(sequence) % 2 != colour:
        _append(sequence, pass_action, pass_action)
    if len(sequence) >= 2 and sequence[-1] == pass_action and sequence[-2] == pass_action:
        del sequence[-2:]


class GtpBoard:
    """One Go game as a GTP engine keeps it: rules via GoStates (batch of one), history for undo."""

    def __init__(self, board_size: int = 9, komi: float = 7.5, features: str = "basic"):
        self.history: list[tuple[int, int]] = []
        """(colour, action) of every move GTP played, in order; colour 0 Black, 1 White."""
        self.features = features
        """The observation planes the network reads (GoGame features)."""
        self._configure(board_size, komi)

    def _configure(self, board_size: int, komi: float) -> None:
        self.game = GoGame(board_size, komi, max_moves=MOVE_LIMIT_FACTOR * board_size * board_size,
                           features=self.features)
        self.pass_action = self.game.spec.pass_action
        self._replay()

    # ------------------------------------------------------------------ queries
    @property
    def board_size(self) -> int:
        return self.game.board_size

    @property
    def komi(self) -> float:
        return self.game.komi

    def to_play(self) -> int:
        return int(self.states.to_play()[0])

    def stones(self) -> np.ndarray:
        """int8 [N, N]: 0 empty, 1 black, 2 white; row 0 is the top (GTP row N)."""
        return self.states.board(0)

    def score(self) -> float:
        """Tromp-Taylor black area - white area - komi of the position as it stands."""
        return float(self.states.score()[0])

    def position_for(self, colour: int) -> GoStates:
        """A copy of the position with `colour` to move, as genmove for `colour` would search it.

        Raises IllegalActionError when no move can be played any more (the move limit).
        """
        seq = list(self.sequence)
        prepare_for(seq, colour, self.pass_action)
        states = self._build(seq)
        if states.terminal()[0]:
            raise IllegalActionError(f"the game is over: the limit of {self.game.max_moves} moves is reached")
        return states

    # ------------------------------------------------------------------ changes
    def play(self, colour: int, action: int) -> None:
        """Play `action` for `colour`; IllegalActionError (and nothing changed) if azero's rules refuse it."""
        if colour not in (BLACK, WHITE):
            raise ValueError(f"colour must be 0 (black) or 1 (white), got {colour!r}")
        seq = list(self.sequence)
        prepare_for(seq, colour, self.pass_action)
        seq.append(action)
        n_old = len(self.sequence)
        if seq[:n_old] == self.sequence:
            # The usual case: one or two moves appended; play them on a copy (all-or-nothing).
            states = self.states.copy()
            states.apply_paths(np.asarray([seq[n_old:]], np.int32))
        else:
            states = self._build(seq)
        self.states, self.sequence = states, seq
        self.history.append((colour, action))

    def undo(self) -> bool:
        """Take back the last GTP move (and any pass inserted for it); False when there is none."""
        if not self.history:
            return False
        self.history.pop()
        self._replay()
        return True

    def clear(self) -> None:
        self.history.clear()
        self._replay()

    def resize(self, board_size: int) -> None:
        """A new empty board of that size (GTP: the board is cleared by boardsize)."""
        self.history.clear()
        self._configure(board_size, self.komi)

    def set_komi(self, komi: float) -> None:
        """Change komi, keeping the moves (the position replays under the new game)."""
        self._configure(self.board_size, komi)

    # ------------------------------------------------------------------ internals
    def _build(self, seq: list[int]) -> GoStates:
        states = self.game.new_states(1)
        if seq:
            states.apply_paths(np.asarray([seq], np.int32))
        return states

    def _replay(self) -> None:
        self.sequence = derive_sequence(self.history, self.pass_action)
        self.states = self._build(self.sequence)
