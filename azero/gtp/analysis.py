"""GTP live analysis: lz-analyze, kata-analyze and their genmove forms (the formats Sabaki and Lizzie read).

    lz-analyze [COLOR] [INTERVAL] [KEY VALUE ...]      kata-analyze [COLOR] [INTERVAL] [KEY VALUE ...]
    lz-genmove_analyze COLOR [INTERVAL] [...]           kata-genmove_analyze COLOR [INTERVAL] [...]

INTERVAL is in centiseconds (default 100); keys: `interval N`, `maxmoves N` (report at most N moves),
`ownership true|false` (kata-analyze), `pvVisits true|false` (kata-analyze). Anything else is a
syntax error (`?`).

The response starts with `=` and then one line per update, every INTERVAL, while the search grows:

    info move D4 visits 120 winrate 5312 prior 1843 lcb 4417 order 0 pv D4 F6 ... info move ...
    (lz: win rate, prior and lcb in 1/10,000, Leela Zero's units)
    info move D4 visits 120 utility 0.061 winrate 0.5312 scoreMean 0.4 scoreLead 0.4 prior 0.1843
      lcb 0.4417 order 0 pv D4 F6 ... info move ... ownership 0.12 -0.3 ...
    (kata: 0..1 floats; score fields only with a score head, ownership only when asked and the
    network has the head; ownership row by row from the top-left, A9 first on 9x9)

Values are the player to move's. The next command ends the response with an empty line, then is
answered. The genmove forms search their move's budget, report meanwhile, and end with
`play VERTEX`. The tree grows between updates and is kept: the next analysis of the same position
continues it, and a genmove right after (same position, PUCT) plays from it with its budget
counting the visits already there (pondering).
"""

from __future__ import annotations

import dataclasses
import threading

from azero.games.go_notation import vertex
from azero.gtp.protocol import format_response
from azero.search.inspect import MoveStats, RootStats

DEFAULT_INTERVAL_CS = 100
CHUNK = 16
"""Simulations between two looks at the clock and the stop flag."""


class AnalyzeSyntaxError(ValueError):
    """Arguments an analysis command does not take (answered with '? syntax error: ...')."""


@dataclasses.dataclass
class AnalyzeArgs:
    colour: int | None
    """The player to analyse for; None: the player to move."""
    interval_cs: int = DEFAULT_INTERVAL_CS
    max_moves: int | None = None
    ownership: bool = False
    pv_visits: bool = False


def _count(text: str, what: str) -> int:
    if not text.isascii() or not text.isdigit() or len(text) > 9:
        raise AnalyzeSyntaxError(f"{what} must be a whole number, got {text[:20]!r}")
    return int(text)


def _flag(text: str, what: str) -> bool:
    if text.lower() not in ("true", "false"):
        raise AnalyzeSyntaxError(f"{what} must be true or false, got {text[:20]!r}")
    return text.lower() == "true"


def parse_analyze_args(args: tuple[str, ...], *, kata: bool, genmove: bool, colours: dict) -> AnalyzeArgs:
    """The arguments of an analysis command; AnalyzeSyntaxError for anything it does not take."""
    rest = list(args)
    colour = None
    if rest and rest[0].lower() in colours:
        colour = colours[rest.pop(0).lower()]
    elif genmove:
        raise AnalyzeSyntaxError("expected a color (b or w) first")
    out = AnalyzeArgs(colour)
    if rest and rest[0].isdigit():
        out.interval_cs = _count(rest.pop(0), "interval")
    while rest:
        key = rest.pop(0)
        if not rest:
            raise AnalyzeSyntaxError(f"{key!r} needs a value")
        value = rest.pop(0)
        name = key.lower()
        if name == "interval":
            out.interval_cs = _count(value, "interval")
        elif name == "maxmoves":
            out.max_moves = _count(value, "maxmoves")
        elif kata and name == "ownership":
            out.ownership = _flag(value, "ownership")
        elif kata and name == "pvvisits":
            out.pv_visits = _flag(value, "pvVisits")
        else:
            raise AnalyzeSyntaxError(f"unknown argument {key[:20]!r} (interval, maxmoves"
                                     f"{', ownership, pvVisits' if kata else ''})")
    return out


def format_lz(moves: list[MoveStats], n: int) -> str:
    """Leela Zero's line: win rate, prior and lcb in 1/10,000."""
    parts = []
    for order, m in enumerate(moves):
        parts.append(f"info move {vertex(m.action, n)} visits {m.visits} winrate {round(m.winrate * 10000)} "
                     f"prior {round(m.prior * 10000)} lcb {max(0, round(m.lcb * 10000))} order {order} "
                     f"pv {' '.join(vertex(a, n) for a in m.pv)}")
    return " ".join(parts)


def format_kata(moves: list[MoveStats], n: int, *, ownership=None, pv_visits: bool = False) -> str:
    """KataGo's line: 0..1 win rates, score fields where the search has scores, ownership last."""
    parts = []
    for order, m in enumerate(moves):
        score = "" if m.score is None else f" scoreMean {m.score:.4f} scoreLead {m.score:.4f}"
        line = (f"info move {vertex(m.action, n)} visits {m.visits} utility {m.utility:.6f} "
                f"winrate {m.winrate:.6f}{score} prior {m.prior:.6f} lcb {m.lcb:.6f} order {order} "
                f"pv {' '.join(vertex(a, n) for a in m.pv)}")
        if pv_visits:
            line += " pvVisits " + " ".join(str(v) for v in m.pv_visits)
        parts.append(line)
    if ownership is not None:
        parts.append("ownership " + " ".join(f"{v:.4f}" for v in ownership))
    return " ".join(parts)


class Ponder:
    """The engine's analysis tree: one growing search of the position last analysed, kept for the
    next update, the next analysis of the same position and the genmove that follows."""

    def __init__(self, evaluator, max_visits: int, seed: int = 0, search: dict | None = None):
        self.evaluator = evaluator
        self.max_visits = max_visits
        self.seed = seed
        self.search_fields = dict(search or {})  # SearchConfig overrides (--search)
        self.search = None
        self.key = None

    def at(self, game, key, position):
        """The growing search of `position` (a batch of one), continued when `key` is the last one's."""
        from azero.analysis.growing import GrowingSearch

        if self.search is None or self.search.game is not game:
            self.search = GrowingSearch(game, self.evaluator, rows=1, max_visits=self.max_visits, seed=self.seed,
                                        **self.search_fields)
            self.key = None
        if key != self.key:
            self.search.load(0, position, self.max_visits)
            self.key = key
        return self.search

    def forget(self) -> None:
        self.key = None


class AnalysisStream:
    """A response that goes on: `run(write, stop)` writes an update every interval until `stop` is set
    (analysis) or the move's budget is searched (genmove forms, which end with `play VERTEX`)."""

    def __init__(self, engine, ident: str | None, colour: int, args: AnalyzeArgs, *, kata: bool, genmove: bool):
        self.engine = engine
        self.ident = ident
        self.colour = colour
        self.args = args
        self.kata = kata
        self.genmove = genmove
        self.search = engine.ponder_search(colour)
        self.ownership = engine.root_ownership(colour) if kata and args.ownership else None

    @property
    def header(self) -> str:
        return f"={self.ident or ''}\n"

    def line(self) -> str:
        n = self.engine.board.board_size
        moves = self.search.moves(0)
        if self.args.max_moves is not None:
            moves = moves[: self.args.max_moves]
        if self.kata:
            return format_kata(moves, n, ownership=self.ownership, pv_visits=self.args.pv_visits)
        return format_lz(moves, n)

    def root(self) -> RootStats:
        return self.search.root(0)

    def run(self, write, stop: threading.Event) -> None:
        """Grow and report until stopped (or, for genmove, until the budget is searched, then play)."""
        now = self.engine.now
        interval = self.args.interval_cs / 100.0
        budget = self.engine.move_budget(self.colour) if self.genmove else None
        last = now()
        while not stop.is_set():
            target = budget if budget is not None else self.search.max_visits
            grown = self.search.visits()[0] < target + 1 and self.search.remaining()[0] > 0
            if grown:
                self.search.grow(min(CHUNK, target + 1 - int(self.search.visits()[0])))
            if self.args.interval_cs > 0 and now() - last >= interval:
                last = now()
                write(self.line() + "\n")
            if budget is not None and not grown:
                break
            if not grown:
                stop.wait(max(interval, 0.05))  # the tree is full: wait for the next command
        if self.genmove:
            write(self.line() + "\n")
            write(f"play {self.engine.play_searched(self.colour, self.search)}\n\n")

    def once(self) -> str:
        """The whole response at once, for callers without a stream (GtpEngine.handle): one update after
        the engine's budget of simulations (analysis), or the genmove form's full response."""
        if self.genmove:
            lines: list[str] = []
            self.run(lines.append, threading.Event())
            return format_response(True, "\n" + "".join(lines).strip(), self.ident)
        budget = self.engine.move_budget(self.colour)
        while self.search.remaining()[0] > 0 and self.search.visits()[0] < budget + 1:
            self.search.grow(min(CHUNK, budget + 1 - int(self.search.visits()[0])))
        return format_response(True, "\n" + self.line(), self.ident)
