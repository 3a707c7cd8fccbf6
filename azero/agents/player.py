"""The one protocol of everything that plays: matches, tournaments, GTP, analysis and human games.

A match runs many games at once; each game has a slot number. The arena calls

    player.start(n)                       before the first move of n games (slots 0..n-1)
    player.act(slots, states) -> actions  moves for the games in `slots` (int64 [k]), whose
                                          positions are `states` (k positions); int32 [k]
    player.observe(slots, actions)        after every move of those games, by either side
                                          (NO_ACTION rows: nothing happened in that slot)
    player.finish(slots)                  those games are over (release engines, trees)
    player.close()                        the match is over

Stateless players (random, raw network, network + search) only implement
`act`; stateful ones (GTP engines, which keep their own board) use the rest to
stay in sync with the game. `name` labels results and SGF files.
"""

from __future__ import annotations

import abc

import numpy as np

from azero.games.base import States


class Player(abc.ABC):
    """Base class: no-op lifecycle hooks; subclasses implement act()."""

    name = "player"

    def start(self, n: int) -> None:
        pass

    @abc.abstractmethod
    def act(self, slots: np.ndarray, states: States) -> np.ndarray:
        """int32 [len(slots)]: a legal move for each of the positions `states`."""

    def observe(self, slots: np.ndarray, actions: np.ndarray) -> None:
        pass

    def finish(self, slots: np.ndarray) -> None:
        pass

    def close(self) -> None:
        pass
