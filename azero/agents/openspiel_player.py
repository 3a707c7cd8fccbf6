"""OpenSpiel's own C++ MCTS (pyspiel.MCTSBot + RandomRolloutEvaluator) as a match player.

The spec `openspiel-mcts:SIMS[:rollouts=R][:uct_c=C]` builds one: MCTSBot with SIMS
simulations per move, UCT constant C (default 2.0), leaves valued by R random
rollouts (default 1), solve=False -- the textbook baseline "MCTS with random
rollouts". It plays any azero game with an OpenSpiel twin
(azero.games.openspiel_twin: connect4, tictactoe, Go, openspiel:LOAD).

Each slot keeps its own pyspiel state, advanced by observe() with every move
played by either side and started afresh by start() and finish(); act() asks the
slot's bot for a move in that state. Before every search the pyspiel state is
checked against azero's position (player to move, legal moves): if they differ
the histories are out of sync and act() raises HistoryMismatchError rather than
play a move of some other position. The one accepted difference is Go's
superko rule (OpenSpiel allows repeating moves that azero forbids, see
azero.games.openspiel_twin): each such extra move is verified to be one (it ends
the game at once as a draw in OpenSpiel), and the move played is then the best
of the search's root children that azero allows (MCTSBot's own final-move
order: proven outcome, visits, total reward).

Seeding: every game started gets a fresh bot and evaluator, seeded from
(seed, number of games this player started), so a player's games are
reproducible for a seed and never repeat one another by sharing a random stream.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from azero.agents.player import Player
from azero.games.base import NO_ACTION
from azero.games.openspiel_twin import OpenSpielTwin, openspiel_twin

MAX_MEMORY_MB = 1000
"""MCTSBot's tree memory limit (its search tree is rebuilt every move)."""


class HistoryMismatchError(RuntimeError):
    """The pyspiel state of a slot no longer matches azero's game (a missed or extra observe())."""


@dataclasses.dataclass(eq=False)
class _Game:
    state: object
    """pyspiel.State after every move observed."""
    bot: object
    evaluator: object
    moves: list[int]
    """azero actions observed, in order."""


class OpenSpielMctsPlayer(Player):
    """pyspiel.MCTSBot with random rollouts, one pyspiel state per slot (see the module docstring)."""

    def __init__(self, game, simulations: int, *, rollouts: int = 1, uct_c: float = 2.0, seed: int = 0,
                 name: str | None = None):
        if int(simulations) < 1 or int(rollouts) < 1:
            raise ValueError(f"need simulations >= 1 and rollouts >= 1, got {simulations}, {rollouts}")
        import pyspiel

        self.twin: OpenSpielTwin = openspiel_twin(game)
        self.os_game = pyspiel.load_game(self.twin.load)
        num_actions = game.spec.num_actions
        if self.os_game.num_distinct_actions() != num_actions:
            raise ValueError(f"OpenSpiel's {self.twin.load} has {self.os_game.num_distinct_actions()} actions, "
                             f"azero's {game.spec.name} {num_actions}: not the same game")
        self.num_actions = num_actions
        self.pass_action = game.spec.pass_action
        self.simulations = int(simulations)
        self.rollouts = int(rollouts)
        self.uct_c = float(uct_c)
        self.seed = int(seed)
        self.name = name or f"openspiel-mcts:{self.simulations}"
        self._started = 0
        self._games: list[_Game] = []
        self.superko_avoided = 0
        """Moves where the bot's favourite was a superko repeat (legal in OpenSpiel only) and the best
        move azero allows was played instead."""

    # ------------------------------------------------------------------ games
    def _new_game(self) -> _Game:
        import pyspiel

        words = np.random.SeedSequence([self.seed, self._started, 0x05CE]).generate_state(2, np.uint32)
        self._started += 1
        bot_seed, rollout_seed = (int(w) & 0x7FFFFFFF for w in words)  # C++ int
        evaluator = pyspiel.RandomRolloutEvaluator(self.rollouts, rollout_seed)
        bot = pyspiel.MCTSBot(self.os_game, evaluator, self.uct_c, self.simulations, MAX_MEMORY_MB, False,
                              bot_seed, False)
        return _Game(self.os_game.new_initial_state(), bot, evaluator, [])

    def _describe(self, slot: int) -> str:
        g = self._games[slot]
        return f"slot {slot} after {len(g.moves)} moves {g.moves}"

    def _os_legal(self, state) -> np.ndarray:
        """OpenSpiel's legal moves in azero's numbering, as a bool mask."""
        mask = np.zeros(self.num_actions, bool)
        for a in state.legal_actions():
            mask[self.twin.from_openspiel(a)] = True
        return mask

    def _check(self, slot: int, state, to_play: int, legal: np.ndarray) -> np.ndarray:
        """Raise HistoryMismatchError unless the pyspiel state is azero's position; return OpenSpiel's
        legal moves (azero numbering) that azero forbids (Go superko repeats, verified; else empty)."""
        if state.is_terminal():
            raise HistoryMismatchError(f"{self.name}: {self._describe(slot)}: the game is over in OpenSpiel "
                                       f"({self.twin.load}) but azero asks for a move (histories out of sync)")
        if state.current_player() != to_play:
            raise HistoryMismatchError(f"{self.name}: {self._describe(slot)}: azero has player {to_play} to "
                                       f"move, OpenSpiel player {state.current_player()} (histories out of sync)")
        os_legal = self._os_legal(state)
        missing = np.flatnonzero(legal & ~os_legal)
        extra = np.flatnonzero(os_legal & ~legal)
        if missing.size == 0 and extra.size == 0:
            return extra
        if missing.size == 0 and self.twin.superko and all(self._superko_repeat(state, a) for a in extra):
            return extra
        raise HistoryMismatchError(
            f"{self.name}: {self._describe(slot)}: OpenSpiel's legal moves differ from azero's "
            f"(legal only in azero: {missing.tolist()}, only in OpenSpiel: {extra.tolist()}; azero numbering) "
            f"-- the histories are out of sync")

    def _superko_repeat(self, state, action: int) -> bool:
        """Whether `action` (azero numbering) is a non-pass move that ends OpenSpiel's Go game as a draw
        at once: its answer to a move repeating a whole-board position, which azero forbids."""
        if action == self.pass_action:
            return False
        child = state.clone()
        child.apply_action(self.twin.to_openspiel(action))
        return child.is_terminal() and child.returns()[0] == 0

    # ------------------------------------------------------------------ match protocol
    def start(self, n: int) -> None:
        self._games = [self._new_game() for _ in range(n)]

    def observe(self, slots, actions) -> None:
        for slot, action in zip(np.asarray(slots).tolist(), np.asarray(actions).tolist()):
            if action == NO_ACTION:
                continue
            g = self._games[slot]
            os_action = self.twin.to_openspiel(action)
            if g.state.is_terminal() or os_action not in g.state.legal_actions():
                raise HistoryMismatchError(f"{self.name}: {self._describe(slot)}: move {action} is not legal "
                                           f"in OpenSpiel's position (histories out of sync)")
            g.state.apply_action(os_action)
            g.moves.append(int(action))

    def act(self, slots, states) -> np.ndarray:
        slots = np.asarray(slots, np.int64)
        legal = states.legal_mask()
        to_play = states.to_play()
        out = np.zeros(len(slots), np.int32)
        for k, slot in enumerate(slots.tolist()):
            g = self._games[slot]
            forbidden = self._check(slot, g.state, int(to_play[k]), legal[k])
            if forbidden.size == 0:
                action = self.twin.from_openspiel(g.bot.step(g.state))
            else:
                action = self._best_allowed(g, legal[k])
            if not legal[k, action]:  # cannot happen after _check; never hand the arena an illegal move
                raise HistoryMismatchError(f"{self.name}: {self._describe(slot)}: the bot chose {action}, "
                                           f"illegal in azero's position")
            out[k] = action
        return out

    def _best_allowed(self, g: _Game, legal: np.ndarray) -> int:
        """MCTSBot's search, its final choice (proven outcome, visits, reward) among azero's legal moves."""
        root = g.bot.mcts_search(g.state)

        def rank(child):
            outcome = child.outcome[child.player] if len(child.outcome) else 0.0
            return outcome, child.explore_count, child.total_reward

        children = root.children  # (a copy, made once)
        best = max((c for c in children if legal[self.twin.from_openspiel(c.action)]), key=rank)
        if best.action != max(children, key=rank).action:
            self.superko_avoided += 1
        return self.twin.from_openspiel(best.action)

    def finish(self, slots) -> None:
        for slot in np.asarray(slots).tolist():
            self._games[slot] = self._new_game()

    def close(self) -> None:
        self._games = []
