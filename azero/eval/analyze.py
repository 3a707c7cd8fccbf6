"""Position analysis over a stream: one position per input line, one result per output line.

Input (stdin), connect four: the moves played from the start position as 1-based
column numbers, e.g. `4453` (first player in column 4, second in column 4, first
in column 5, second in column 3); an empty line is the start position. Spaces are
ignored. Games whose moves are single characters (tic-tac-toe: cells '0'..'8')
use the same form; other games (Go) take whitespace-separated moves ('D4 pass').

Output (stdout), one line per input line, in input order, flushed at once so the
command works in a pipe. Default `--format json`, one JSON object per line:

    {"position": "4453", "to_play": 0, "move": 4, "value": 0.1234, "simulations": 200,
     "visits": [3, 10, 22, 120, 30, 9, 6]}

- to_play: 0 or 1, the player to move (0 = the player who moved first), as everywhere in azero
- move: the chosen column 1..7 (the game's notation; an int when it is a number)
- value: the search's root value in [-1, 1] from the view of the player to move
- visits: root visit counts, one per action (connect four: columns 1..7)

An invalid line gives {"position": LINE, "error": "..."} and the stream goes on:
characters that are no move, a move into a full column (or otherwise illegal), a
move after the game ended, or a position that is already over.

`--format text` writes `4453 -> 4 value +0.123 visits 3 10 22 120 30 9 6` and
`4453x -> error: ...`, for people.
"""

from __future__ import annotations

import json
import sys
from typing import IO, Iterable, Sequence

import numpy as np

from azero.agents.spec import search_overrides
from azero.games.base import IllegalActionError
from azero.search.config import play_config


class PositionError(ValueError):
    """A line that is not a playable position; the message says why."""


def _single_char_moves(game) -> bool:
    try:
        return all(len(game.action_to_str(a)) == 1 for a in range(game.spec.num_actions))
    except IllegalActionError:
        return False


def _describe_outcome(outcome: float) -> str:
    return "first player won" if outcome > 0 else "second player won" if outcome < 0 else "draw"


def parse_position(game, line: str, *, single_char: bool | None = None):
    """States (a batch of one) after the moves of `line`; PositionError naming the bad move."""
    if single_char is None:
        single_char = _single_char_moves(game)
    text = line.strip()
    tokens = [c for c in text if not c.isspace()] if single_char else text.split()
    state = game.new_states(1)
    for k, token in enumerate(tokens, 1):
        try:
            action = game.str_to_action(token)
        except IllegalActionError as e:
            raise PositionError(f"move {k} ({token!r}): {e}") from None
        if state.terminal()[0]:
            raise PositionError(f"move {k} ({token!r}): the game is already over after move {k - 1} "
                                f"({_describe_outcome(float(state.outcome()[0]))})")
        if not state.legal_mask()[0, action]:
            why = "column is full" if game.spec.name == "connect4" else "illegal in this position"
            raise PositionError(f"move {k} ({token!r}): {why}")
        state.apply(np.array([action], np.int32))
    if state.terminal()[0]:
        raise PositionError(f"the game is over after move {len(tokens)} "
                            f"({_describe_outcome(float(state.outcome()[0]))}): nothing to analyze")
    return state


class Analyzer:
    """MCTS over one position at a time with a fixed evaluator and budget."""

    def __init__(self, game, evaluator, *, simulations: int, algorithm: str = "puct", seed: int = 0,
                 search: dict | None = None):
        """`search`: SearchConfig overrides (--search KEY=VALUE, agents/spec.search_overrides)."""
        from azero.search.graph import make_search

        if simulations < 1:
            raise ValueError(f"simulations must be >= 1, got {simulations}")
        self.game = game
        self.simulations = simulations
        cfg = play_config(simulations, algorithm=algorithm, seed=seed, **(search or {}))
        self.search = make_search(game.spec, evaluator, cfg, batch_size=1)
        self.single_char = _single_char_moves(game)

    def analyze(self, line: str) -> dict:
        position = line.rstrip("\r\n")
        try:
            state = parse_position(self.game, position, single_char=self.single_char)
        except PositionError as e:
            return {"position": position, "error": str(e)}
        result = self.search.run(state)
        action = int(result.action[0])
        move = self.game.action_to_str(action)
        return {"position": position, "to_play": int(state.to_play()[0]),
                "move": int(move) if move.isdigit() else move, "value": round(float(result.value[0]), 4),
                "simulations": int(result.simulations[0]), "visits": [int(v) for v in result.visits[0]]}


def format_text(rec: dict) -> str:
    if "error" in rec:
        return f"{rec['position']} -> error: {rec['error']}"
    visits = " ".join(str(v) for v in rec["visits"])
    return f"{rec['position']} -> {rec['move']} value {rec['value']:+.3f} visits {visits}"


def analyze_stream(analyzer: Analyzer, lines: Iterable[str], out: IO[str], *, fmt: str = "json") -> int:
    """Analyze every line; returns the number of error lines."""
    errors = 0
    for line in lines:
        rec = analyzer.analyze(line)
        errors += "error" in rec
        out.write((json.dumps(rec) if fmt == "json" else format_text(rec)) + "\n")
        out.flush()
    return errors


def run_analyze(game_name: str, *, checkpoint: str | None, simulations: int, algorithm: str = "puct",
                search: Sequence[str] = (), fmt: str = "json", seed: int = 0, device: str = "auto",
                threads: int | None = 1, precision: str = "auto", backend: str = "auto",
                stdin: IO[str] | None = None, stdout: IO[str] | None = None, stderr: IO[str] | None = None) -> int:
    from azero.agents.checkpoints import checkpoint_planes, game_for, load_evaluator, resolve_checkpoint

    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    if fmt not in ("json", "text"):
        raise ValueError(f"format must be 'json' or 'text', got {fmt!r}")
    if simulations < 1:
        raise ValueError(f"--sims must be >= 1, got {simulations}")
    overrides = search_overrides(search, simulations=simulations, algorithm=algorithm)
    path = resolve_checkpoint(checkpoint, game_name)
    if checkpoint is None and path is not None:
        print(f"azero analyze: no --checkpoint given; using the shipped network {path}", file=stderr, flush=True)
    if path is None:
        print("azero analyze: no network (none shipped for this game, or --checkpoint none); using a uniform "
              "evaluator (uniform priors, value 0), so the search sees only the game's terminal positions",
              file=stderr, flush=True)
    game = game_for(game_name, [] if path is None else [checkpoint_planes(path)])
    evaluator = load_evaluator(path, game=game, device=device, threads=threads, precision=precision,
                               backend=backend, no_network="uniform").evaluator
    analyzer = Analyzer(game, evaluator, simulations=simulations, algorithm=algorithm, seed=seed, search=overrides)
    analyze_stream(analyzer, stdin, stdout, fmt=fmt)
    return 0
