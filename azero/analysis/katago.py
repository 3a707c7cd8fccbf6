"""KataGo's JSON analysis protocol: queries in, answers out (the formats of KataGo's
docs/Analysis_Engine.md; the engine loop is engine.py).

What azero does with each query field:

- `id` (string), `moves` ([["B", "D4"], ...]), `rules`, `boardXSize` = `boardYSize`: required.
- `rules`: azero plays area scoring with positional superko (Tromp-Taylor). The area rule sets
  (tromp-taylor, chinese, chinese-ogs, chinese-kgs, aga, new-zealand, bga) are analysed as such;
  others (japanese, korean, a rules object) with a warning that area rules are used.
- `initialStones`: placed before `moves`, each as a move of its colour (a pass of the other colour
  in between where needed), so the network's stone-history planes see them arrive one by one.
- `initialPlayer`, `komi` (|komi| <= 150; the network's values assume the komi it was trained
  at, 7.5: another komi changes the exact scores of finished games in the search, with a warning),
  `analyzeTurns` (default: the last turn), `maxVisits` (>= 1; above the engine's --max-visits it
  is cut to that with a warning: KaTrain ponders with 10,000,000), `includeOwnership`,
  `includePolicy`, `includePVVisits`, `reportDuringSearchEvery` (seconds, > 0), `priority` /
  `priorities`, `overrideSettings.reportAnalysisWinratesAs` (BLACK, WHITE or SIDETOMOVE) and
  `overrideSettings.maxTime` (seconds per turn at most).
- KataGo fields azero does not implement (`avoidMoves`, `allowMoves`, `includeMovesOwnership`,
  `rootPolicyTemperature`, `rootFpuReductionMax`, `whiteHandicapBonus`, other overrideSettings)
  get a warning and are ignored; unknown fields get a warning too. The query goes on either way.

Answers: `moveInfos` (move, visits, winrate, scoreLead, scoreMean, utility, prior, lcb, order, pv,
pvVisits when asked), `rootInfo` (winrate, scoreLead, scoreMean, utility, visits, currentPlayer),
`ownership` and `policy` when asked, all from the view `reportAnalysisWinratesAs` names
(default BLACK, as KataGo's analysis config and KaTrain use). A network without a score head
leaves the score fields out, one without an ownership head leaves `ownership` out, each with a
warning naming the field. scoreLead is the search's mean expected score (azero's score head
predicts the final score; KataGo's lead estimate is a separate head), so scoreLead = scoreMean.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from azero.games.base import IllegalActionError
from azero.games.go_notation import parse_vertex, vertex
from azero.gtp.board import BLACK, WHITE, GtpBoard

AREA_RULES = {"tromp-taylor", "chinese", "chinese-ogs", "chinese-kgs", "aga", "new-zealand", "bga",
              "tromptaylor", "newzealand", "stone-scoring"}
OTHER_RULES = {"japanese", "korean"}
MAX_ABS_KOMI = 150.0
REPORT_AS = ("BLACK", "WHITE", "SIDETOMOVE")
UNSUPPORTED = ("avoidMoves", "allowMoves", "includeMovesOwnership", "rootPolicyTemperature",
               "rootFpuReductionMax", "whiteHandicapBonus")
KNOWN = {"id", "moves", "initialStones", "initialPlayer", "rules", "komi", "boardXSize", "boardYSize",
         "analyzeTurns", "maxVisits", "includeOwnership", "includePolicy", "includePVVisits",
         "reportDuringSearchEvery", "priority", "priorities", "overrideSettings", "action", *UNSUPPORTED}
PLAYERS = {"B": BLACK, "W": WHITE, "b": BLACK, "w": WHITE}


class QueryError(ValueError):
    """A query that cannot be analysed; `field` names the query field at fault (None: the whole line)."""

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.field = field


@dataclasses.dataclass
class Turn:
    """One position a query asks for."""

    number: int
    position: object
    """GoStates, a batch of one, with `colour` to move."""
    colour: int


@dataclasses.dataclass
class Query:
    id: str
    turns: list[Turn]
    komi: float
    max_visits: int
    include_ownership: bool = False
    include_policy: bool = False
    include_pv_visits: bool = False
    report_every: float | None = None
    priorities: list[int] = dataclasses.field(default_factory=list)
    report_as: str = "BLACK"
    max_time: float | None = None
    """overrideSettings.maxTime: seconds of search per turn at most (KaTrain sends it)."""
    warnings: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    """(message, field) pairs to send before the answers."""


@dataclasses.dataclass
class Limits:
    """What the engine can analyse: set once from the network and the command line."""

    board_size: int
    features: str = "basic"
    default_visits: int = 500
    max_visits: int = 5000
    report_as: str = "BLACK"
    network_komi: float = 7.5


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _is_number(x) -> bool:
    return (_is_int(x) or isinstance(x, float)) and math.isfinite(x)


def _bool(obj: dict, name: str) -> bool:
    value = obj.get(name, False)
    if not isinstance(value, bool):
        raise QueryError(f"{name} must be true or false, got {value!r}", name)
    return value


def _stones(obj: dict, name: str, n: int) -> list[tuple[int, int, str]]:
    """(colour, action, text) of a list of [player, location] pairs."""
    value = obj.get(name, [])
    if not isinstance(value, list):
        raise QueryError(f"{name} must be a list of [player, location] pairs, got {type(value).__name__}", name)
    out = []
    for k, pair in enumerate(value):
        if (not isinstance(pair, list) or len(pair) != 2 or not all(isinstance(p, str) for p in pair)
                or pair[0] not in PLAYERS):
            raise QueryError(f"{name}[{k}] must be a pair like [\"B\", \"D4\"] (player B or W), got {pair!r}", name)
        try:
            action = parse_vertex(pair[1], n)
        except IllegalActionError as e:
            raise QueryError(f"{name}[{k}]: {e}", name) from None
        out.append((PLAYERS[pair[0]], action, f"{pair[0].upper()} {pair[1]}"))
    return out


def _rules(obj: dict, warnings: list) -> None:
    if "rules" not in obj:
        raise QueryError("rules is required (e.g. \"tromp-taylor\" or \"chinese\")", "rules")
    rules = obj["rules"]
    if isinstance(rules, dict):
        warnings.append(("rules objects are not read: azero analyses with area scoring and positional "
                         "superko (Tromp-Taylor)", "rules"))
        return
    if not isinstance(rules, str):
        raise QueryError(f"rules must be a string or an object, got {rules!r}", "rules")
    name = rules.strip().lower().replace("_", "-")
    if name in AREA_RULES:
        return
    if name in OTHER_RULES:
        warnings.append((f"rules {rules!r} use territory scoring; azero analyses with area scoring and "
                         f"positional superko (Tromp-Taylor)", "rules"))
        return
    raise QueryError(f"unknown rules {rules!r} (area rules: {', '.join(sorted(AREA_RULES))})", "rules")


def parse_query(obj, limits: Limits) -> Query:
    """A checked Query from a decoded JSON object; QueryError (with its field) for anything wrong."""
    if not isinstance(obj, dict):
        raise QueryError(f"a query must be a JSON object, got {type(obj).__name__}")
    if "id" not in obj:
        raise QueryError("id is required", "id")
    qid = obj["id"]
    if not isinstance(qid, str):
        raise QueryError(f"id must be a string, got {qid!r}", "id")
    warnings: list[tuple[str, str]] = []
    for name in obj:
        if name not in KNOWN:
            warnings.append((f"unknown field {name!r}, ignored", name))
        elif name in UNSUPPORTED and obj[name] not in (None, False, [], 0):
            warnings.append((f"{name} is not supported by azero and is ignored", name))
    for name in ("boardXSize", "boardYSize"):
        if name not in obj:
            raise QueryError(f"{name} is required", name)
        if not _is_int(obj[name]):
            raise QueryError(f"{name} must be an integer, got {obj[name]!r}", name)
    x, y, n = obj["boardXSize"], obj["boardYSize"], limits.board_size
    if x != y:
        raise QueryError(f"only square boards are supported, got {x}x{y}", "boardYSize")
    if x != n:
        raise QueryError(f"the network plays {n}x{n} only, got boardXSize {x}", "boardXSize")
    _rules(obj, warnings)
    komi = obj.get("komi", limits.network_komi)
    if not _is_number(komi) or abs(komi) > MAX_ABS_KOMI:
        raise QueryError(f"komi must be a number in [-{MAX_ABS_KOMI:g}, {MAX_ABS_KOMI:g}], got {komi!r}", "komi")
    komi = float(komi)
    if komi != limits.network_komi:
        warnings.append((f"the network was trained at komi {limits.network_komi:g}: its values and scores "
                         f"do not see komi {komi:g} (only finished games in the search are scored with it)",
                         "komi"))
    if "moves" not in obj:
        raise QueryError("moves is required (an empty list for the empty board)", "moves")
    setup, moves = _stones(obj, "initialStones", n), _stones(obj, "moves", n)
    initial = obj.get("initialPlayer")
    if initial is not None and initial not in PLAYERS:
        raise QueryError(f"initialPlayer must be \"B\" or \"W\", got {initial!r}", "initialPlayer")

    turns_asked = obj.get("analyzeTurns", [len(moves)])
    if not isinstance(turns_asked, list) or not turns_asked or not all(_is_int(t) for t in turns_asked):
        raise QueryError(f"analyzeTurns must be a non-empty list of integers, got {turns_asked!r}", "analyzeTurns")
    bad = [t for t in turns_asked if not 0 <= t <= len(moves)]
    if bad:
        raise QueryError(f"analyzeTurns {bad[0]} is out of range: the query has {len(moves)} moves, so turns "
                         f"0..{len(moves)}", "analyzeTurns")

    visits = obj.get("maxVisits", limits.default_visits)
    if not _is_int(visits) or visits < 1:
        raise QueryError(f"maxVisits must be an integer >= 1, got {visits!r}", "maxVisits")
    if visits > limits.max_visits:
        warnings.append((f"maxVisits {visits} is more than this engine's limit of {limits.max_visits} visits "
                         f"per position (azero analyze --max-visits); searching {limits.max_visits}", "maxVisits"))
        visits = limits.max_visits

    every = obj.get("reportDuringSearchEvery")
    if every is not None and (not _is_number(every) or every <= 0):
        raise QueryError(f"reportDuringSearchEvery must be a number of seconds > 0, got {every!r}",
                         "reportDuringSearchEvery")
    priority = obj.get("priority", 0)
    if not _is_int(priority):
        raise QueryError(f"priority must be an integer, got {priority!r}", "priority")
    priorities = obj.get("priorities", [priority] * len(turns_asked))
    if (not isinstance(priorities, list) or len(priorities) != len(turns_asked)
            or not all(_is_int(p) for p in priorities)):
        raise QueryError("priorities must be a list of integers, one per analyzeTurns entry", "priorities")

    report_as, max_time = limits.report_as, None
    settings = obj.get("overrideSettings", {})
    if not isinstance(settings, dict):
        raise QueryError(f"overrideSettings must be an object, got {settings!r}", "overrideSettings")
    for key, value in settings.items():
        if key == "reportAnalysisWinratesAs":
            if not isinstance(value, str) or value.upper() not in REPORT_AS:
                raise QueryError(f"reportAnalysisWinratesAs must be one of {', '.join(REPORT_AS)}, got {value!r}",
                                 "overrideSettings")
            report_as = value.upper()
        elif key == "maxTime":
            if not _is_number(value) or value <= 0:
                raise QueryError(f"maxTime must be a number of seconds > 0, got {value!r}", "overrideSettings")
            max_time = float(value)
        else:
            warnings.append((f"overrideSettings.{key} is not supported by azero and is ignored", "overrideSettings"))

    query = Query(qid, [], komi, visits, _bool(obj, "includeOwnership"), _bool(obj, "includePolicy"),
                  _bool(obj, "includePVVisits"), None if every is None else float(every), priorities,
                  report_as, max_time, warnings)
    query.turns = _positions(setup, moves, sorted(set(turns_asked)), initial, komi, limits)
    # priorities follow analyzeTurns as given; turns are deduplicated and in order
    by_turn = dict(zip(turns_asked, priorities))
    query.priorities = [by_turn[t.number] for t in query.turns]
    return query


def _positions(setup, moves, turns: list[int], initial, komi: float, limits: Limits) -> list[Turn]:
    board = GtpBoard(limits.board_size, komi, limits.features)
    for colour, action, text in setup:
        try:
            board.play(colour, action)
        except IllegalActionError as e:
            raise QueryError(f"initialStones: {text} cannot be placed: {e}", "initialStones") from None
    first = PLAYERS[initial] if initial is not None else (moves[0][0] if moves else BLACK)
    wanted, out = set(turns), []
    for t in range(len(moves) + 1):
        if t in wanted:
            colour = moves[t][0] if t < len(moves) else (1 - moves[-1][0] if moves else first)
            try:
                out.append(Turn(t, board.position_for(colour), colour))
            except IllegalActionError as e:
                raise QueryError(f"turn {t}: {e}", "analyzeTurns") from None
        if t == len(moves) or t >= max(turns):
            break
        colour, action, text = moves[t]
        try:
            board.play(colour, action)
        except IllegalActionError as e:
            raise QueryError(f"moves[{t}] ({text}) is illegal: {e}", "moves") from None
    return out


def _view(report_as: str, colour: int) -> float:
    """+1 or -1: the sign that turns the player to move's view into the reported one."""
    if report_as == "SIDETOMOVE":
        return 1.0
    return 1.0 if (colour == BLACK) == (report_as == "BLACK") else -1.0


def _r(x: float) -> float:
    return round(float(x), 6)


def answer(query: Query, turn: Turn, search, row: int, *, during: bool, ownership: np.ndarray | None,
           n: int) -> dict:
    """The answer for one turn from row `row` of a GrowingSearch, in the query's perspective."""
    sign = _view(query.report_as, turn.colour)

    def wr(w: float) -> float:
        return _r(w) if sign > 0 else _r(1.0 - w)

    infos = []
    for order, m in enumerate(search.moves(row)):
        info = {"move": vertex(m.action, n), "visits": m.visits, "winrate": wr(m.winrate),
                "prior": _r(m.prior), "lcb": wr(m.lcb),
                "utility": _r(sign * m.utility), "order": order, "pv": [vertex(a, n) for a in m.pv]}
        if m.score is not None:
            info["scoreLead"] = info["scoreMean"] = _r(sign * m.score)
        if query.include_pv_visits:
            info["pvVisits"] = m.pv_visits
        infos.append(info)
    root = search.root(row)
    root_info = {"winrate": wr(root.winrate), "visits": root.visits, "utility": _r(sign * root.utility),
                 "currentPlayer": "BW"[turn.colour]}
    if root.score is not None:
        root_info["scoreLead"] = root_info["scoreMean"] = _r(sign * root.score)
    out = {"id": query.id, "isDuringSearch": during, "turnNumber": turn.number, "moveInfos": infos,
           "rootInfo": root_info}
    if query.include_ownership and ownership is not None:
        out["ownership"] = [_r(sign * v) for v in ownership]
    if query.include_policy:
        prior = search.prior(row)
        legal = turn.position.legal_mask()[0]
        out["policy"] = [_r(p) if ok else -1 for p, ok in zip(prior, legal)]
    return out


def no_results(query: Query, turn: Turn) -> dict:
    """A turn terminated before any visit (KataGo's noResults answer)."""
    return {"id": query.id, "isDuringSearch": False, "turnNumber": turn.number, "noResults": True}
