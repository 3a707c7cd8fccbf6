"""Go positions shared by the engine tests: drawn ones and random ones."""

from __future__ import annotations

import numpy as np

from azero.games.base import NO_ACTION
from azero.games.go import GoGame
from azero.games.go_notation import vertex


def drawn_position(rows, komi=7.5, to_play=None, **kw):
    """(game, states of batch 1) holding the drawn position ('X' black, 'O' white, top row first),
    reached by alternating moves with passes filling in; with `to_play`, a pass makes that side move."""
    n = len(rows)
    game = GoGame(n, komi=komi, **kw)
    black = [r * n + c for r in range(n) for c in range(n) if rows[r][c] == "X"]
    white = [r * n + c for r in range(n) for c in range(n) if rows[r][c] == "O"]
    moves = []
    for i in range(max(len(black), len(white))):
        moves.append(black[i] if i < len(black) else game.spec.pass_action)
        moves.append(white[i] if i < len(white) else game.spec.pass_action)
    while moves and moves[-1] == game.spec.pass_action:
        moves.pop()
    states = game.new_states(1)
    for m in moves:
        states.apply(np.array([m], np.int32))
    if to_play is not None and states.to_play()[0] != to_play:
        states.apply(np.array([game.spec.pass_action], np.int32))
    drawn = ["".join(".XO"[x] for x in row) for row in states.board(0)]
    assert drawn == list(rows), f"{[vertex(m, n) for m in moves]} gave {drawn}"
    return game, states


def random_positions(game, batch, seed, plies, pass_weight=0.02):
    """States after up to `plies` random legal moves each (passes rare), seeded."""
    s = game.new_states(batch)
    rng = np.random.default_rng(seed)
    stop = rng.integers(plies // 4, plies + 1, size=batch)
    for ply in range(plies):
        m = s.legal_mask()
        r = rng.random(m.shape)
        r[:, -1] *= pass_weight
        a = np.where(m, r, -1).argmax(1).astype(np.int32)
        a[s.terminal() | (ply >= stop)] = NO_ACTION
        s.apply(a)
    return s
