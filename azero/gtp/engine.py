"""azero as a GTP v2 engine: `GtpEngine.handle(line) -> response`, and the stdin/stdout loop.

    azero gtp --checkpoint runs/go9x9-.../checkpoints/ckpt_000001000.safetensors --sims 400
    python -m azero.gtp --checkpoint CKPT --time-per-move 2    # same engine, quicker start-up

GoGui: Program > New Program, command `azero gtp --checkpoint CKPT` (set the
board to 9x9 first: GoGui starts at 19x19, which a 9x9 network refuses).
Sabaki: Engines > Manage Engines, path `azero`, arguments `gtp --checkpoint
CKPT`. Both drive it with list_commands, boardsize, clear_board, komi, play,
genmove, undo, showboard, final_score and time_settings / time_left; KGS's
kgsGtp adds kgs-genmove_cleanup and final_status_list. Sabaki and Lizzie show
live analysis through lz-analyze / kata-analyze (and their genmove forms),
whose responses stream until the next command (analysis.py).

Behaviour worth knowing (the why is in the modules named):

- Rules are azero's: Tromp-Taylor area scoring, positional superko, no
  suicide. final_score is the Tromp-Taylor score of the position as it stands
  (every stone counts as alive); final_status_list agrees (no dead stones).
- A move by the colour that is not to move (play or genmove) is handled by
  inserting a pass for the other colour; moves after two passes continue the
  game (board.py).
- komi changes the rules' scoring (final_score, and the exact values of finished
  games inside the search); the network's value estimates still assume the
  komi it was trained with, since observations do not encode komi.
- boardsize fails with 'unacceptable size' for a size the network was not
  trained on (a network plays one board size); without a checkpoint any size
  2..19 is accepted.
- Without --checkpoint it plays the shipped network of --game; `--checkpoint none` searches on
  random rollouts (agents/checkpoints.py), which play any board size.
- genmove never resigns. Its budget is --sims, or --time-per-move seconds,
  either cut down to what the clock allows once time_settings / time_left
  arrive (timecontrol.py).
- After the opponent's pass, genmove passes when that already wins: by Tromp-Taylor as the
  board stands and after removing the stones the ownership head calls dead (eval/passing.py).
- genmove right after an analysis of the same position plays from the analysis
  tree (PUCT), its budget counting the visits already there (pondering).
- kgs-genmove_cleanup captures and fills disputed points instead of passing
  while that still changes the score (cleanup.py).
- Nothing but GTP goes to stdout: the loop writes responses to a private
  duplicate of file descriptor 1, and points descriptor 1 and sys.stdout at
  stderr, so a stray print (ours, torch's, a C library's) cannot corrupt the
  protocol. Logs go to stderr.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import logging
import math
import os
import re
import sys
import threading
import time
from typing import Callable

from azero.agents.checkpoints import LoadedEvaluator, calibrate_int8
from azero.agents.mcts import MctsPlayer, best_allowed
from azero.agents.passing import pass_wins
from azero.games.base import IllegalActionError
from azero.games.go import GoGame, features_for
from azero.games.go_notation import MalformedVertex, board_size_of, parse_vertex, score_string
from azero.gtp.analysis import AnalysisStream, AnalyzeSyntaxError, Ponder, parse_analyze_args
from azero.gtp.board import BLACK, WHITE, GtpBoard
from azero.gtp.cleanup import cleanup_moves
from azero.gtp.options import check_gtp_search
from azero.gtp.protocol import format_response, parse_command
from azero.gtp.timecontrol import TimeManager
from azero.search.config import play_config

log = logging.getLogger(__name__)

DEFAULT_SIMULATIONS = 200
MAX_TIMED_SIMULATIONS = 20000
"""Cap on simulations per move when only time limits the search (bounds the tree's memory)."""
PROBE_SIMULATIONS = 8
"""Simulations of the search that measures the speed before the first clock-limited move."""
MAX_ABS_KOMI = 1000.0
MIN_SIZE, MAX_SIZE = 2, 19

_INT = re.compile(r"[0-9]+")
_NUMBER = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")
_COLOURS = {"b": BLACK, "black": BLACK, "w": WHITE, "white": WHITE}


class GtpFailure(Exception):
    """A command that fails: the message becomes the '? message' response."""


@dataclasses.dataclass
class _Analysis:
    """What an analysis handler returns: respond() turns it into an AnalysisStream."""

    colour: int
    args: object
    kata: bool
    genmove: bool


def _version() -> str:
    try:
        return importlib.metadata.version("azero")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


class GtpEngine:
    """A GTP v2 engine over one board. `handle` never raises: every line gets a well-formed response."""

    def __init__(self, evaluator: LoadedEvaluator, *, board_size: int = 9, komi: float = 7.5,
                 simulations: int | None = None, time_per_move: float | None = None,
                 algorithm: str = "puct", seed: int = 0, search: dict | None = None, name: str = "azero",
                 now: Callable[[], float] = time.monotonic):
        """`now`: the clock think times are measured with (tests inject one that does not depend on speed).
        `search`: SearchConfig overrides (--search KEY=VALUE) for genmove's search and the analysis tree."""
        if simulations is not None and simulations < 1:
            raise ValueError(f"simulations must be >= 1, got {simulations}")
        search = dict(search or {})
        check_gtp_search(search)
        self.loaded = evaluator
        self.features = features_for(evaluator.obs_shape) if evaluator.obs_shape is not None else "basic"
        spec = GoGame(board_size, features=self.features).spec
        # the budget is given per move (the clock's): the config's simulations are only the first tree's size
        self.agent = MctsPlayer(spec, evaluator.evaluator, play_config(DEFAULT_SIMULATIONS, algorithm=algorithm,
                                                                       seed=seed, **search))
        if not evaluator.fits(spec):
            raise ValueError(f"the network ({evaluator.description}, input {evaluator.obs_shape}) does not play "
                             f"{board_size}x{board_size} Go")
        calibrate_int8(evaluator, GoGame(board_size, features=self.features), seed=seed)
        self.board = GtpBoard(board_size, komi, self.features)
        # Only --time-per-move leaves the budget to the clock; otherwise the fixed budget is the cap.
        if simulations is None:
            simulations = MAX_TIMED_SIMULATIONS if time_per_move is not None else DEFAULT_SIMULATIONS
        self.simulations = simulations
        self.clock = TimeManager(time_per_move=time_per_move)
        self.now = now
        # the analysis tree (lz-analyze / kata-analyze), kept for pondering (analysis.py)
        self.ponder = Ponder(evaluator.evaluator, max(MAX_TIMED_SIMULATIONS, simulations), seed=seed, search=search)
        self.name = name
        self.algorithm = algorithm
        self.quit_requested = False
        self.handlers: dict[str, Callable[[tuple[str, ...]], str]] = {
            "protocol_version": self.cmd_protocol_version,
            "name": self.cmd_name,
            "version": self.cmd_version,
            "known_command": self.cmd_known_command,
            "list_commands": self.cmd_list_commands,
            "quit": self.cmd_quit,
            "boardsize": self.cmd_boardsize,
            "clear_board": self.cmd_clear_board,
            "komi": self.cmd_komi,
            "play": self.cmd_play,
            "genmove": self.cmd_genmove,
            "reg_genmove": self.cmd_reg_genmove,
            "kgs-genmove_cleanup": self.cmd_genmove_cleanup,
            "undo": self.cmd_undo,
            "final_score": self.cmd_final_score,
            "final_status_list": self.cmd_final_status_list,
            "showboard": self.cmd_showboard,
            "time_settings": self.cmd_time_settings,
            "time_left": self.cmd_time_left,
            "lz-analyze": self.cmd_lz_analyze,
            "kata-analyze": self.cmd_kata_analyze,
            "lz-genmove_analyze": self.cmd_lz_genmove_analyze,
            "kata-genmove_analyze": self.cmd_kata_genmove_analyze,
        }

    # ------------------------------------------------------------------ dispatch
    def handle(self, line: str) -> str | None:
        """The response to one command line, or None for a line GTP says to ignore (empty, comment).
        An analysis command answers with one update (its genmove form: the whole response)."""
        response = self.respond(line)
        if isinstance(response, AnalysisStream):
            try:
                return response.once()
            except Exception as e:  # as in respond: report a bug, keep the game
                log.exception("command %r failed", line.strip())
                return format_response(False, f"internal error: {type(e).__name__}: {e}", response.ident)
        return response

    def respond(self, line: str) -> str | AnalysisStream | None:
        """handle(), except that an analysis command gives its AnalysisStream, for `serve` to run."""
        cmd = parse_command(line)
        if cmd is None:
            return None
        handler = self.handlers.get(cmd.name)
        if handler is None:
            return format_response(False, "unknown command", cmd.id)
        try:
            result = handler(cmd.args)
            if isinstance(result, _Analysis):
                return AnalysisStream(self, cmd.id, result.colour, result.args, kata=result.kata,
                                      genmove=result.genmove)
            return format_response(True, result, cmd.id)
        except GtpFailure as e:
            return format_response(False, str(e), cmd.id)
        except Exception as e:  # a bug must not end a game the controller is running: report it
            log.exception("command %r failed", line.strip())
            return format_response(False, f"internal error: {type(e).__name__}: {e}", cmd.id)

    @staticmethod
    def _expect(args: tuple[str, ...], count: int, usage: str) -> None:
        if len(args) != count:
            raise GtpFailure(f"syntax error: expected {usage}")

    @staticmethod
    def _colour(text: str) -> int:
        colour = _COLOURS.get(text.lower())
        if colour is None:
            raise GtpFailure(f"syntax error: invalid color {text!r}")
        return colour

    def _vertex(self, text: str) -> int:
        try:
            return parse_vertex(text, self.board.board_size)
        except MalformedVertex:
            raise GtpFailure(f"syntax error: invalid vertex {text!r}") from None
        except IllegalActionError:
            raise GtpFailure("illegal move") from None  # a well-formed vertex off this board

    @staticmethod
    def _integer(text: str, what: str, maximum: int = 10**9) -> int:
        """A non-negative decimal integer of at most `maximum`; GtpFailure naming `what` otherwise.
        The length check comes first: int() refuses strings of over 4,300 digits with a ValueError."""
        if not _INT.fullmatch(text):
            raise GtpFailure(f"syntax error: {what} is not an integer: {text[:40]!r}")
        if len(text.lstrip("0")) > len(str(maximum)) or int(text) > maximum:
            raise GtpFailure(f"syntax error: {what} is too large: {text[:40]!r} (at most {maximum})")
        return int(text)

    def _number(self, text: str, what: str) -> float:
        if not _NUMBER.fullmatch(text):
            raise GtpFailure(f"syntax error: {what} is not a number: {text!r}")
        value = float(text)
        if not math.isfinite(value):
            raise GtpFailure(f"syntax error: {what} is not a finite number: {text!r}")
        return value

    def _vertex_str(self, action: int) -> str:
        return self.board.game.action_to_str(action)

    # ------------------------------------------------------------------ administrative commands
    def cmd_protocol_version(self, args):
        return "2"

    def cmd_name(self, args):
        return self.name

    def cmd_version(self, args):
        return f"{_version()} ({self.loaded.description}; {self.algorithm})"

    def cmd_known_command(self, args):
        self._expect(args, 1, "known_command COMMAND")
        return "true" if args[0] in self.handlers else "false"

    def cmd_list_commands(self, args):
        return "\n".join(self.handlers)

    def cmd_quit(self, args):
        self.quit_requested = True
        return ""

    # ------------------------------------------------------------------ setup
    def cmd_boardsize(self, args):
        self._expect(args, 1, "boardsize SIZE")
        n = self._integer(args[0], "board size")
        if not MIN_SIZE <= n <= MAX_SIZE:
            raise GtpFailure("unacceptable size")
        if not self.loaded.fits(GoGame(n, features=self.features).spec):
            log.info("boardsize %d refused: the network (%s) plays only %s", n, self.loaded.description,
                     "x".join(map(str, self.loaded.obs_shape[1:])))
            raise GtpFailure("unacceptable size")
        self.board.resize(n)
        return ""

    def cmd_clear_board(self, args):
        self._expect(args, 0, "clear_board")
        self.board.clear()
        self.clock.reset_clocks()
        return ""

    def cmd_komi(self, args):
        self._expect(args, 1, "komi VALUE")
        komi = self._number(args[0], "komi")
        if abs(komi) > MAX_ABS_KOMI:
            raise GtpFailure(f"unacceptable komi (|komi| must be at most {MAX_ABS_KOMI:g})")
        self.board.set_komi(komi)
        return ""

    def cmd_time_settings(self, args):
        self._expect(args, 3, "time_settings MAIN_TIME BYO_YOMI_TIME BYO_YOMI_STONES")
        main = self._number(args[0], "main time")
        byo = self._number(args[1], "byo-yomi time")
        stones = self._integer(args[2], "byo-yomi stones")
        if main < 0 or byo < 0:
            raise GtpFailure("syntax error: times must not be negative")
        self.clock.set_settings(main, byo, stones)
        return ""

    def cmd_time_left(self, args):
        self._expect(args, 3, "time_left COLOR TIME STONES")
        colour = self._colour(args[0])
        seconds = self._number(args[1], "time")
        self.clock.set_time_left(colour, seconds, self._integer(args[2], "stones"))
        return ""

    # ------------------------------------------------------------------ moves
    def cmd_play(self, args):
        self._expect(args, 2, "play COLOR VERTEX")
        colour, action = self._colour(args[0]), self._vertex(args[1])
        try:
            self.board.play(colour, action)
        except IllegalActionError as e:
            log.info("play %s %s refused: %s", args[0], args[1], e)
            raise GtpFailure("illegal move") from None
        return ""

    def cmd_genmove(self, args):
        self._expect(args, 1, "genmove COLOR")
        return self._generate(self._colour(args[0]), commit=True, cleanup=False)

    def cmd_reg_genmove(self, args):
        self._expect(args, 1, "reg_genmove COLOR")
        return self._generate(self._colour(args[0]), commit=False, cleanup=False)

    def cmd_genmove_cleanup(self, args):
        self._expect(args, 1, "kgs-genmove_cleanup COLOR")
        return self._generate(self._colour(args[0]), commit=True, cleanup=True)

    def cmd_undo(self, args):
        self._expect(args, 0, "undo")
        if not self.board.undo():
            raise GtpFailure("cannot undo")
        return ""

    # ------------------------------------------------------------------ analysis (analysis.py)
    def _analysis(self, args, *, kata: bool, genmove: bool) -> "_Analysis":
        try:
            parsed = parse_analyze_args(args, kata=kata, genmove=genmove, colours=_COLOURS)
        except AnalyzeSyntaxError as e:
            raise GtpFailure(f"syntax error: {e}") from None
        colour = self.board.to_play() if parsed.colour is None else parsed.colour
        try:
            self.board.position_for(colour)
        except IllegalActionError as e:
            raise GtpFailure(f"cannot analyze: {e}") from None
        return _Analysis(colour, parsed, kata, genmove)

    def cmd_lz_analyze(self, args):
        return self._analysis(args, kata=False, genmove=False)

    def cmd_kata_analyze(self, args):
        return self._analysis(args, kata=True, genmove=False)

    def cmd_lz_genmove_analyze(self, args):
        return self._analysis(args, kata=False, genmove=True)

    def cmd_kata_genmove_analyze(self, args):
        return self._analysis(args, kata=True, genmove=True)

    def _ponder_key(self, colour: int):
        return (tuple(self.board.sequence), colour, self.board.game.spec.name, self.board.komi)

    def ponder_search(self, colour: int):
        """The analysis tree of the position with `colour` to move (continued if it is the last one's)."""
        return self.ponder.at(self.board.game, self._ponder_key(colour), self.board.position_for(colour))

    def root_ownership(self, colour: int):
        """The network's ownership of the position, player to move's view; None without the head."""
        owner = getattr(self.agent.evaluator, "ownership", None)
        views = owner(self.board.position_for(colour).encode()) if owner is not None else None
        if views is None:
            log.warning("kata-analyze: the network has no ownership head: no ownership reported")
            return None
        return views[0]

    def move_budget(self, colour: int) -> int:
        """Simulations genmove would search now (the fixed budget, or the clock's)."""
        seconds = self.clock.move_seconds(colour, len(self.board.sequence), self.board.board_size)
        return max(1, self.clock.simulations(seconds, self.simulations))

    def play_searched(self, colour: int, search) -> str:
        """Play the genmove form's move from its analysis tree (commit, clock and log as genmove)."""
        return self._generate(colour, commit=True, cleanup=False, searched=search.result())

    def _generate(self, colour: int, *, commit: bool, cleanup: bool, searched=None) -> str:
        start = self.now()
        try:
            root = self.board.position_for(colour)
        except IllegalActionError as e:
            raise GtpFailure(f"cannot generate a move: {e}") from None
        spec = self.board.game.spec
        pass_action = self.board.pass_action
        legal = root.legal_mask()[0]
        how = "search"
        result = None
        if cleanup:
            moves = cleanup_moves(root, colour, legal)
            if moves.captures:
                action, how = moves.captures[0][0], f"cleanup capture of {moves.captures[0][1]}"
            elif moves.useful.any():
                result = self._search(colour, root)
                action, how = best_allowed(result, moves.useful), "cleanup fill"
            else:
                action, how = pass_action, "cleanup: nothing left to capture or fill"
        elif self._opponent_passed(colour) and self._pass_wins(colour, root):
            action, how = pass_action, "the opponent passed and the count already wins"
        elif legal[:pass_action].any():
            result = searched if searched is not None else self._search(colour, root)
            action = int(result.action[0])
        else:
            action, how = pass_action, "only pass is legal"
        elapsed = self.now() - start
        if commit:  # reg_genmove (analysis) is not a move on the game's clock
            self.clock.spend(colour, elapsed)
            self.board.play(colour, action)
        detail = ""
        if result is not None:
            detail = (f", {int(result.simulations[0])} sims, value {float(result.value[0]):+.3f}, "
                      f"visits {int(result.visits[0, action])}")
        log.info("%s %s: %s (%s%s) in %.2fs", "genmove" if commit else "reg_genmove", "BW"[colour],
                 self._vertex_str(action), how, detail, elapsed)
        return self._vertex_str(action)

    def _opponent_passed(self, colour: int) -> bool:
        history = self.board.history
        return bool(history) and history[-1][0] != colour and history[-1][1] == self.board.pass_action

    def _pass_wins(self, colour: int, root) -> bool:
        owner = getattr(self.agent.evaluator, "ownership", None)
        views = owner(root.encode()) if owner is not None else None  # None too for a net without the head
        return pass_wins(root.board(0), colour, self.board.komi, None if views is None else views[0])

    def _search(self, colour: int, root):
        spec = self.board.game.spec
        seconds = self.clock.move_seconds(colour, len(self.board.sequence), self.board.board_size)
        if seconds is not None and self.clock.rate is None:
            self._timed_search(spec, root, PROBE_SIMULATIONS)
        sims = self.clock.simulations(seconds, self.simulations)
        if self.algorithm == "puct" and self.ponder.key == self._ponder_key(colour):
            return self._pondered_search(sims)
        if seconds is not None and self.algorithm == "gumbel":
            sims = coarse_budget(sims)  # Gumbel builds a search per budget: keep the distinct budgets few
        return self._timed_search(spec, root, sims)

    def _pondered_search(self, sims: int):
        """genmove after analysis of the same position: grow the analysis tree to the budget."""
        search = self.ponder.search
        before = int(search.visits()[0])
        t0 = self.now()
        while search.remaining()[0] > 0 and search.visits()[0] < sims + 1:
            search.grow(sims + 1 - int(search.visits()[0]))
        done = int(search.visits()[0]) - before
        if done > 0:
            self.clock.record_search(done, self.now() - t0)
        log.info("genmove: the analysis tree had %d visits, searched %d more", before, done)
        return search.result()

    def _timed_search(self, spec, root, sims: int):
        t0 = self.now()
        result = self.agent.search(root, simulations=sims, spec=spec)
        self.clock.record_search(int(result.simulations[0]), self.now() - t0)
        return result

    # ------------------------------------------------------------------ scoring and display
    def cmd_final_score(self, args):
        self._expect(args, 0, "final_score")
        return score_string(self.board.score())

    def cmd_final_status_list(self, args):
        self._expect(args, 1, "final_status_list alive|dead|seki")
        status = args[0].lower()
        if status not in ("alive", "dead", "seki"):
            raise GtpFailure(f"syntax error: status must be alive, dead or seki, got {args[0]!r}")
        if status != "alive":
            return ""  # Tromp-Taylor: every stone on the board counts as alive
        flat = self.board.stones().reshape(-1)
        return " ".join(self._vertex_str(a) for a in range(flat.size) if flat[a])

    def cmd_showboard(self, args):
        self._expect(args, 0, "showboard")
        n = self.board.board_size
        lines = self.board.states.render(0).split("\n")[: n + 2]  # the board with its coordinates
        colour = self.board.to_play()
        lines.append(f"{'Black' if colour == BLACK else 'White'} to move, {len(self.board.history)} moves played, "
                     f"komi {self.board.komi:g}, Tromp-Taylor score {score_string(self.board.score())}")
        if self.board.history:
            c, a = self.board.history[-1]
            lines.append(f"last move: {'BW'[c]} {self._vertex_str(a)}")
        return "\n" + "\n".join(lines)


def coarse_budget(sims: int) -> int:
    """`sims` rounded down to 2^k or 3 * 2^(k-1) (1, 2, 3, 4, 6, 8, 12, ...): less than a third lost."""
    if sims < 4:
        return max(1, sims)
    top = 1 << (sims.bit_length() - 1)
    return top + top // 2 if sims >= top + top // 2 else top


def serve(engine: GtpEngine, inp, out) -> None:
    """Answer command lines from `inp` (bytes or text, one command per line) on `out` until quit or EOF.

    An analysis command's response streams from a thread while the next line is read; that line
    ends it (analysis.py). A genmove form is waited for: its response ends with its move."""
    pending = None
    while not engine.quit_requested:
        raw = pending if pending is not None else inp.readline()
        pending = None
        if not raw:
            return
        if isinstance(raw, bytes):
            # GTP is ASCII; anything else is garbage to be refused, not a reason to crash.
            raw = raw.decode("utf-8", errors="replace")
        response = engine.respond(raw)
        if response is None:
            continue
        try:
            if isinstance(response, AnalysisStream):
                pending = _stream(response, inp, out)
            else:
                out.write(response)
                out.flush()
        except BrokenPipeError:
            return  # the controller went away


def _stream(stream: AnalysisStream, inp, out):
    """Run one analysis response; returns the line that ended it (b'' / '' at end of input), or None
    for a genmove form (which ends by itself)."""
    lock = threading.Lock()

    def write(text: str) -> None:
        with lock:
            out.write(text)
            out.flush()

    write(stream.header)
    stop = threading.Event()
    failed: list[BaseException] = []

    def run() -> None:
        try:
            stream.run(write, stop)
        except BrokenPipeError:
            pass
        except Exception as e:  # a bug must not hang the controller: end the response
            log.exception("analysis failed")
            failed.append(e)

    worker = threading.Thread(target=run, name="gtp-analysis", daemon=True)
    worker.start()
    if stream.genmove:
        worker.join()
        if failed:
            write("\n")
        return None
    line = inp.readline()
    stop.set()
    worker.join()
    write("\n")
    return line


def protocol_streams():
    """(input, output) for GTP over this process's stdin/stdout, with fd 1 and sys.stdout sent to stderr.

    Called before the evaluator is loaded (a checkpoint, CUDA), so that nothing printed from then on
    can reach the real stdout.
    """
    try:
        out_fd = os.dup(sys.stdout.fileno())
        os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
        out = os.fdopen(out_fd, "w", encoding="ascii", errors="replace", newline="\n")
    except (AttributeError, OSError, ValueError):
        # No real file descriptors (an embedding host, a test capture): use the stream itself.
        out = sys.stdout
    sys.stdout = sys.stderr
    inp = getattr(sys.stdin, "buffer", sys.stdin)
    return inp, out


def run(*, checkpoint: str | None, game: str = "go9x9", komi: float = 7.5, simulations: int | None = None,
        time_per_move: float | None = None, algorithm: str = "puct", seed: int = 0, device: str = "auto",
        precision: str = "auto", backend: str = "auto", search: dict | None = None, quiet: bool = False) -> int:
    """`azero gtp`: serve GTP on stdin/stdout until quit or end of input. `search`: SearchConfig
    overrides (agents/spec.search_overrides)."""
    inp, out = protocol_streams()  # first: nothing loaded after this can write to the real stdout
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING if quiet else logging.INFO,
                        format="azero gtp: %(message)s")
    from azero.agents.checkpoints import load_evaluator

    board_size = board_size_of(game)
    if board_size is None:
        raise ValueError(f"the GTP engine plays Go only: expected --game go9x9, goNxN or go, got {game!r}")
    loaded = load_evaluator(checkpoint, device=device, seed=seed, precision=precision, backend=backend)
    if loaded.obs_shape is not None and game == "go":
        board_size = loaded.obs_shape[-1]  # plain 'go': the size the network was trained for
    engine = GtpEngine(loaded, board_size=board_size, komi=komi, simulations=simulations,
                       time_per_move=time_per_move, algorithm=algorithm, seed=seed, search=search)
    log.info("ready: %dx%d, komi %g, %s, %s, %s", board_size, board_size, komi, loaded.description, algorithm,
             f"{time_per_move:g}s per move" if time_per_move else f"{engine.simulations} simulations per move")
    try:
        serve(engine, inp, out)
    except KeyboardInterrupt:
        pass
    return 0
