"""When a player should answer the opponent's pass with a pass (GTP and the arena).

Once the opponent has passed, a pass ends the game. Leela Zero passes there when it already wins
the count; azero asks for both counts a referee may use:

- Tromp-Taylor as the board stands (azero's arena, and `--capture-all-dead` GNU Go games): the
  pass is then a win by definition;
- the same count after removing the stones the ownership head calls dead (a referee that removes
  dead stones, such as GNU Go's final_score): skipped for a net without an ownership head.

Passing when both say "won" avoids playing on in a decided game (and filling one's own eyes)
without handing a referee of either kind a loss. Otherwise the search picks the move as usual.
"""

from __future__ import annotations

import numpy as np

from azero.games.go_reference import ownership as area_owner


def pass_wins(board: np.ndarray, colour: int, komi: float, owner_view: np.ndarray | None) -> bool:
    """Whether `colour` (0 Black, 1 White) to move wins by passing after the opponent's pass.

    board int8 [N, N] (0 empty, 1 black, 2 white); owner_view float [N*N] or None: the network's
    expected final owner of each point from the mover's view (tanh of the ownership head)."""
    sign = 1 if colour == 0 else -1
    if sign * (float(area_owner(board).sum()) - komi) <= 0:
        return False
    if owner_view is None:
        return True
    black_view = sign * np.asarray(owner_view, np.float64).reshape(board.shape)
    dead = ((board == 1) & (black_view < 0)) | ((board == 2) & (black_view > 0))
    cleared = np.where(dead, 0, board).astype(np.int8)
    return sign * (float(area_owner(cleared).sum()) - komi) > 0
