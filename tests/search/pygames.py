"""A tiny pure-Python game implementing azero.games.base.States, for search tests.

Nim with one pile: a move takes 1 or 2 stones (actions 0 and 1); whoever takes the
last stone wins. With `extra_turn=True`, taking 2 stones keeps the turn, so a player
can move twice in a row: it exercises the search's "negate only when the player to
move changes" rule, which alternating games never do.
"""

from __future__ import annotations

import functools

import numpy as np

from azero.games.base import (NO_ACTION, GameSpec, IllegalActionError, check_actions, check_index, check_out)


class NimGame:
    def __init__(self, pile: int = 7, extra_turn: bool = False):
        self.pile = pile
        self.extra_turn = extra_turn
        self.spec = GameSpec(name=f"nim{pile}{'x' if extra_turn else ''}", num_actions=2,
                             obs_shape=(2, 1, pile + 1), board_shape=(1, pile + 1), max_moves=pile)

    def new_states(self, batch: int) -> "NimStates":
        return NimStates(self, batch)

    @functools.lru_cache(maxsize=None)
    def solve(self, stones: int) -> int:
        """Minimax value (+1 / -1) for the player to move with `stones` left (terminal: -1, they lost)."""
        if stones == 0:
            return -1
        best = -1
        for take in (1, 2):
            if take <= stones:
                same_player = self.extra_turn and take == 2
                if stones - take == 0:
                    v = 1  # took the last stone
                else:
                    v = self.solve(stones - take) if same_player else -self.solve(stones - take)
                best = max(best, v)
        return best


class NimStates:
    def __init__(self, game: NimGame, batch: int):
        self.game = game
        self.spec = game.spec
        self.stones = np.full(batch, game.pile, np.int64)
        self.player = np.zeros(batch, np.int8)    # to move
        self.winner = np.full(batch, -1, np.int8)
        self.moves = np.zeros(batch, np.int32)

    def __len__(self) -> int:
        return len(self.stones)

    def _sub(self, idx) -> "NimStates":
        out = NimStates.__new__(NimStates)
        out.game, out.spec = self.game, self.spec
        out.stones, out.player = self.stones[idx].copy(), self.player[idx].copy()
        out.winner, out.moves = self.winner[idx].copy(), self.moves[idx].copy()
        return out

    def copy(self) -> "NimStates":
        return self._sub(slice(None))

    def take(self, index) -> "NimStates":
        return self._sub(check_index(index, len(self)))

    def put(self, index, src: "NimStates") -> None:
        idx = check_index(index, len(self))
        self.stones[idx], self.player[idx] = src.stones, src.player
        self.winner[idx], self.moves[idx] = src.winner, src.moves

    def reset(self, index=None) -> None:
        idx = slice(None) if index is None else check_index(index, len(self))
        self.stones[idx], self.player[idx], self.winner[idx], self.moves[idx] = self.game.pile, 0, -1, 0

    def _play(self, b: int, a: int) -> None:
        take = a + 1
        if self.winner[b] >= 0 or a not in (0, 1) or take > self.stones[b]:
            raise IllegalActionError(f"illegal action {a} at batch index {b}")
        self.stones[b] -= take
        self.moves[b] += 1
        if self.stones[b] == 0:
            self.winner[b] = self.player[b]
        elif not (self.game.extra_turn and take == 2):
            self.player[b] = 1 - self.player[b]

    def apply(self, actions) -> None:
        a = check_actions(actions, len(self))
        trial = self.copy()
        for b in range(len(self)):
            if a[b] != NO_ACTION:
                trial._play(b, int(a[b]))
        self.put(np.arange(len(self)), trial)

    def apply_paths(self, paths) -> None:
        p = np.asarray(paths)
        trial = self.copy()
        for b in range(len(self)):
            for a in p[b]:
                if a != NO_ACTION:
                    trial._play(b, int(a))
        self.put(np.arange(len(self)), trial)

    def legal_mask(self, out=None):
        out = check_out(out, (len(self), 2), np.bool_, "legal_mask")
        live = self.winner < 0
        out[:, 0] = live & (self.stones >= 1)
        out[:, 1] = live & (self.stones >= 2)
        return out

    def terminal(self, out=None):
        out = check_out(out, (len(self),), np.bool_, "terminal")
        out[:] = self.winner >= 0
        return out

    def to_play(self, out=None):
        out = check_out(out, (len(self),), np.int8, "to_play")
        out[:] = self.player
        return out

    def outcome(self, out=None):
        out = check_out(out, (len(self),), np.float32, "outcome")
        out[:] = np.where(self.winner < 0, 0.0, np.where(self.winner == 0, 1.0, -1.0))
        return out

    def num_moves(self, out=None):
        out = check_out(out, (len(self),), np.int32, "num_moves")
        out[:] = self.moves
        return out

    def encode(self, out=None):
        out = check_out(out, (len(self), *self.spec.obs_shape), np.float32, "encode")
        out[:] = 0
        out[np.arange(len(self)), 0, 0, self.stones] = 1
        out[:, 1] = self.player[:, None, None]
        return out

    def random_playout(self, seed, out=None):
        for b in range(len(self)):
            rng = np.random.default_rng([seed, b])
            while self.winner[b] < 0:
                legal = [a for a in (0, 1) if a + 1 <= self.stones[b]]
                self._play(b, int(rng.choice(legal)))
        return self.outcome(out)

    def render(self, index: int) -> str:
        return f"{self.stones[index]} stones, player {self.player[index]} to move"
