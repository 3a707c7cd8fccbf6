"""A person at the terminal: the move reader of `azero play` (azero/play.py), and a match player.

Input is one move per line in the game's own notation (Go 'D4' / 'pass',
connect four a column '1'..'7', tic-tac-toe a cell digit '0'..'8' as drawn
next to the board; each game's `move_hint` says so), or

    undo    take back your last move and azero's reply
    resign  give the game up (azero wins)
    quit    leave the game (end of input does the same)
    help    show this list

Anything else is refused with the reason and asked for again. Everything
reads from and writes to the streams given, so a test (or a script) can play
by piping lines into stdin.

`HumanPlayer` is the same move reader as a match player (agents/player.py),
for the arena: there the match owns the game, so it has no undo.
"""

from __future__ import annotations

import sys
from typing import TextIO

import numpy as np

from azero.agents.player import Player
from azero.games import make_game
from azero.games.base import IllegalActionError
from azero.agents.checkpoints import load_evaluator
from azero.agents.mcts import MctsPlayer

COLOURS = {"black": 0, "first": 0, "white": 1, "second": 1}
_QUIT = ("quit", "q", "exit")
_RESIGN = ("resign",)
_UNDO = ("undo", "u")
_HELP = ("help", "h", "?")


class _Command:
    QUIT, UNDO, RESIGN = "quit", "undo", "resign"


def move_help(game) -> str:
    return getattr(game, "move_hint", "a move in the game's notation")


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
    helptext = f"Enter {move_help(game)}" + ("; 'undo' takes back your last move and the reply" if undo is not None
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
            out.write(f"Not a move: {e}. Enter {move_help(game)}, or 'help'.\n")
            continue
        reason = illegal_reason(states, index, action)
        if reason is not None:
            out.write(f"Illegal move {text}: {reason}. Try again.\n")
            continue
        return action


class HumanPlayer(Player):
    """A person at the terminal as a match player (agents/player.py), e.g. in the arena.

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
