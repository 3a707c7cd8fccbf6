"""A human against azero in the terminal: `azero play --game go9x9|connect4|tictactoe`.

The opponent is the MCTS player (agents/mcts.py) on the network --checkpoint
names (agents/checkpoints.py: by default the game's shipped network; 'none':
MCTS over random rollouts). Moves are read by agents/human.py: the game's own
notation, or undo / resign / quit / help.
"""

from __future__ import annotations

import sys
from typing import Sequence, TextIO

import numpy as np

from azero.agents.checkpoints import calibrate_int8, game_for, load_evaluator, resolve_checkpoint
from azero.agents.human import COLOURS, _Command, move_help, read_move
from azero.agents.mcts import MctsPlayer
from azero.agents.spec import search_overrides
from azero.games.go_notation import score_string
from azero.search.config import play_config


class HumanGame:
    """One game between a human (reading `inp`) and an MctsPlayer, shown on `out`."""

    def __init__(self, game, agent: MctsPlayer, *, human: int, simulations: int, inp: TextIO, out: TextIO):
        if human not in (0, 1):
            raise ValueError(f"human must be player 0 or 1, got {human!r}")
        self.game = game
        self.agent = agent
        self.human = human
        self.simulations = simulations
        self.inp = inp
        self.out = out
        self.moves: list[int] = []
        self.states = game.new_states(1)

    def say(self, text: str = "") -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def _mark(self, player: int) -> str:
        names = self.game.spec.colour_names
        return f"{names[player]} ({'XO'[player]})" if names else "XO"[player]

    def _rebuild(self) -> None:
        self.states = self.game.new_states(1)
        if self.moves:
            self.states.apply_paths(np.asarray([self.moves], np.int32))

    def _play(self, action: int) -> None:
        self.states.apply(np.asarray([action], np.int32))
        self.moves.append(action)

    def run(self) -> int:
        """Play until the game ends or the human quits; returns 0."""
        self.say(f"You are {self._mark(self.human)}, azero is {self._mark(1 - self.human)}. "
                 f"Enter {move_help(self.game)}; 'undo', 'resign', 'quit' or 'help'.")
        while True:
            self.say()
            self.say(self.states.render(0))
            if self.states.terminal()[0]:
                self._announce_result()
                return 0
            if int(self.states.to_play()[0]) == self.human:
                command = self._read_move()
                if command == _Command.QUIT:
                    self.say("Game abandoned.")
                    return 0
                if command == _Command.RESIGN:
                    record = f" ({'W' if self.human == 0 else 'B'}+R)" if self.game.spec.sgf else ""
                    self.say(f"You resign after {len(self.moves)} moves: azero wins{record}.")
                    return 0
                if command == _Command.UNDO:
                    self._undo()
                    continue
                self._play(command)
            else:
                self._engine_move()

    def _read_move(self):
        refuse = "Nothing to undo: you have not moved yet." if self.human_moves() == 0 else ""
        return read_move(self.game, self.states, 0, self.inp, self.out, f"Your move ({self._mark(self.human)}): ",
                         undo=refuse)

    def human_moves(self) -> int:
        return sum(1 for k in range(len(self.moves)) if k % 2 == self.human)

    def _undo(self) -> None:
        # Take back moves until one of the human's is gone: azero's reply (if any), then the human's move.
        taken = []
        while self.moves:
            k = len(self.moves) - 1
            taken.append(self.game.action_to_str(self.moves.pop()))
            if k % 2 == self.human:
                break
        self._rebuild()
        self.say(f"Took back {', '.join(reversed(taken))}.")

    def _engine_move(self) -> None:
        result = self.agent.search(self.states, simulations=self.simulations)
        action = int(result.action[0])
        self._play(action)
        self.say(f"azero plays {self.game.action_to_str(action)} "
                 f"({int(result.simulations[0])} simulations, value {float(result.value[0]):+.2f} for azero)")

    def _announce_result(self) -> None:
        outcome = float(self.states.outcome()[0])
        mine = outcome if self.human == 0 else -outcome
        detail = ""
        if self.game.spec.area_scoring:
            score = float(self.states.score()[0])
            detail = f" (Tromp-Taylor: {score_string(score)})" if score else " (tie)"
        verdict = "You win" if mine > 0 else ("azero wins" if mine < 0 else "Draw")
        self.say(f"Game over after {len(self.moves)} moves: {verdict}{detail}.")


def run_play(*, game: str = "tictactoe", checkpoint: str | None = None, simulations: int = 200,
             color: str = "first", algorithm: str = "puct", search: Sequence[str] = (), seed: int = 0,
             device: str = "auto", precision: str = "auto", backend: str = "auto",
             inp: TextIO | None = None, out: TextIO | None = None) -> int:
    """`azero play`: set up the opponent and play one game on the terminal (or the streams given).
    `search`: --search KEY=VALUE settings (agents/spec.search_overrides)."""
    if color not in COLOURS:
        raise ValueError(f"--color must be one of {', '.join(COLOURS)}, got {color!r}")
    if simulations < 1:
        raise ValueError(f"--sims must be >= 1, got {simulations}")
    overrides = search_overrides(search, simulations=simulations, algorithm=algorithm)
    path = resolve_checkpoint(checkpoint, game)
    loaded = load_evaluator(path, device=device, seed=seed, precision=precision, backend=backend)
    g = game_for(game, [] if loaded.obs_shape is None else [loaded.obs_shape[0]])  # Go: the net's feature set
    if not loaded.fits(g.spec):
        raise ValueError(f"the network {loaded.description} (input {loaded.obs_shape}, {loaded.num_actions} actions) "
                         f"does not play {g.spec.name} (input {g.spec.obs_shape}, {g.spec.num_actions} actions)")
    calibrate_int8(loaded, g, seed=seed)
    config = play_config(simulations, algorithm=algorithm, seed=seed, **overrides)
    agent = MctsPlayer(g.spec, loaded.evaluator, config)
    session = HumanGame(g, agent, human=COLOURS[color], simulations=simulations,
                        inp=inp if inp is not None else sys.stdin, out=out if out is not None else sys.stdout)
    return session.run()
