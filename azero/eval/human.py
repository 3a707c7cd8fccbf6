"""A human against azero in the terminal: `azero play --game go9x9|connect4|tictactoe`.

The opponent is the network of --checkpoint with MCTS, or, without a
checkpoint, MCTS over random rollouts (azero.gtp.agent). Input is one move
per line in the game's own notation (Go 'D4' / 'pass', connect four a column
'1'..'7', tic-tac-toe a cell digit '0'..'8' as drawn next to the board), or

    undo    take back your last move and azero's reply
    resign  give the game up (azero wins)
    quit    leave the game (end of input does the same)
    help    show this list

Anything else is refused with the reason and asked for again. Everything
reads from and writes to the streams given, so a test (or a script) can play
by piping lines into stdin.

`HumanPlayer` is the same move reader as a match player (azero.eval.players),
for the arena: there the match owns the game, so it has no undo.
"""

from __future__ import annotations

import sys
from typing import TextIO

import numpy as np

from azero.eval.players import Player
from azero.games import make_game
from azero.games.base import IllegalActionError
from azero.gtp.agent import SearchAgent, load_evaluator

COLOURS = {"black": 0, "first": 0, "white": 1, "second": 1}
_QUIT = ("quit", "q", "exit")
_RESIGN = ("resign",)
_UNDO = ("undo", "u")
_HELP = ("help", "h", "?")


class _Command:
    QUIT, UNDO, RESIGN = "quit", "undo", "resign"


def _move_help(game) -> str:
    name = game.spec.name
    if name.startswith("go"):
        n = game.spec.board_shape[0]
        return f"a point like {game.action_to_str((n - min(4, n)) * n + min(3, n - 1))} or 'pass'"
    if name == "connect4":
        return "a column number 1-7"
    if name == "tictactoe":
        return "a cell digit 0-8 (as numbered next to the board)"
    return "a move in the game's notation"


class HumanQuit(ValueError):
    """The human left the game ('quit' or end of input) while a match wanted a move."""


def illegal_reason(states, index: int, action: int) -> str | None:
    """Why `action` is illegal in position `index` of `states` (the rules' own words), or None if legal."""
    if states.legal_mask()[index, action]:
        return None
    trial = states.take(np.asarray([index], np.int64))
    try:
        trial.apply(np.asarray([action], np.int32))
    except IllegalActionError as e:
        # The rules' own reason, without the batch-index prefix ('state 0: action 48 (D4) is illegal: ').
        return str(e).rsplit(": ", 1)[-1]
    return "not allowed here"


def read_move(game, states, index: int, inp: TextIO, out: TextIO, prompt: str, *, undo: str | None = None):
    """Read lines until one is a legal move in position `index` (returned as an action), 'quit' or end
    of input (_Command.QUIT) or, when `undo` is not None, 'undo' (_Command.UNDO; `undo` non-empty is
    the message refusing it). Anything else is refused with the reason and asked again."""
    helptext = f"Enter {_move_help(game)}" + ("; 'undo' takes back your last move and the reply" if undo is not None
                                               else "") + "; 'resign' gives the game up; 'quit' ends it."
    while True:
        out.write(prompt)
        out.flush()
        line = inp.readline()
        if not line:
            out.write("\n")
            return _Command.QUIT  # end of input
        text = line.strip()
        if not text:
            continue
        word = text.lower()
        if word in _QUIT:
            return _Command.QUIT
        if word in _RESIGN:
            return _Command.RESIGN
        if word in _HELP:
            out.write(helptext + "\n")
            continue
        if word in _UNDO and undo is not None:
            if undo:
                out.write(undo + "\n")
                continue
            return _Command.UNDO
        try:
            action = game.str_to_action(text)
        except IllegalActionError as e:
            out.write(f"Not a move: {e}. Enter {_move_help(game)}, or 'help'.\n")
            continue
        reason = illegal_reason(states, index, action)
        if reason is not None:
            out.write(f"Illegal move {text}: {reason}. Try again.\n")
            continue
        return action


class HumanGame:
    """One game between a human (reading `inp`) and a SearchAgent, shown on `out`."""

    def __init__(self, game, agent: SearchAgent, *, human: int, simulations: int, inp: TextIO, out: TextIO):
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
        if self.game.spec.name.startswith("go"):
            return ("Black (X)", "White (O)")[player]
        return "XO"[player]

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
                 f"Enter {_move_help(self.game)}; 'undo', 'resign', 'quit' or 'help'.")
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
                    record = f" ({'W' if self.human == 0 else 'B'}+R)" if hasattr(self.states, "score") else ""
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
        result = self.agent.search(self.game.spec, self.states, self.simulations)
        action = int(result.action[0])
        self._play(action)
        self.say(f"azero plays {self.game.action_to_str(action)} "
                 f"({int(result.simulations[0])} simulations, value {float(result.value[0]):+.2f} for azero)")

    def _announce_result(self) -> None:
        outcome = float(self.states.outcome()[0])
        mine = outcome if self.human == 0 else -outcome
        detail = ""
        if hasattr(self.states, "score"):
            score = float(self.states.score()[0])
            detail = f" (Tromp-Taylor: {'B' if score > 0 else 'W'}+{abs(score):g})" if score else " (tie)"
        verdict = "You win" if mine > 0 else ("azero wins" if mine < 0 else "Draw")
        self.say(f"Game over after {len(self.moves)} moves: {verdict}{detail}.")


class HumanPlayer(Player):
    """A person at the terminal as a match player (azero.eval.players protocol), e.g. in the arena.

    The match owns the game, so there is no undo here; 'quit' or the end of input raises HumanQuit.
    With several games at once it asks for each in turn, naming the game.
    """

    def __init__(self, game, *, name: str = "human", inp: TextIO | None = None, out: TextIO | None = None):
        self.game = game
        self.name = name
        self.inp = inp if inp is not None else sys.stdin
        self.out = out if out is not None else sys.stdout

    def act(self, slots, states) -> np.ndarray:
        actions = np.zeros(len(states), np.int32)
        for k, slot in enumerate(np.asarray(slots).tolist()):
            self.out.write("\n" + states.render(k) + "\n")
            action = read_move(self.game, states, k, self.inp, self.out, f"game {slot}, your move ({self.name}): ")
            if action in (_Command.QUIT, _Command.RESIGN):  # a match has no resignation to record
                raise HumanQuit(f"player {self.name!r} {'resigned' if action == _Command.RESIGN else 'left'} the game")
            actions[k] = action
        return actions


def run_play(*, game: str = "tictactoe", checkpoint: str | None = None, simulations: int = 200,
             color: str = "first", algorithm: str = "puct", seed: int = 0, device: str = "auto",
             precision: str = "auto", backend: str = "auto",
             inp: TextIO | None = None, out: TextIO | None = None) -> int:
    """`azero play`: set up the opponent and play one game on the terminal (or the streams given)."""
    if color not in COLOURS:
        raise ValueError(f"--color must be one of {', '.join(COLOURS)}, got {color!r}")
    if simulations < 1:
        raise ValueError(f"--sims must be >= 1, got {simulations}")
    from azero.models import resolve_checkpoint

    g = make_game(game)
    loaded = load_evaluator(resolve_checkpoint(game, checkpoint), device=device, seed=seed, precision=precision,
                            backend=backend)
    if loaded.obs_shape is not None and hasattr(g, "with_planes") and loaded.obs_shape[0] != g.spec.obs_shape[0]:
        g = g.with_planes(loaded.obs_shape[0])  # Go: the feature set the network reads
    if not loaded.fits(g.spec):
        raise ValueError(f"the network {loaded.description} (input {loaded.obs_shape}, {loaded.num_actions} actions) "
                         f"does not play {g.spec.name} (input {g.spec.obs_shape}, {g.spec.num_actions} actions)")
    agent = SearchAgent(loaded.evaluator, algorithm=algorithm, seed=seed)
    session = HumanGame(g, agent, human=COLOURS[color], simulations=simulations,
                        inp=inp if inp is not None else sys.stdin, out=out if out is not None else sys.stdout)
    return session.run()
