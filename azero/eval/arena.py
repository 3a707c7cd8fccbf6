"""The arena: many games between two players at once, with recorded openings, results and game files.

The games of a match, with what ratings need:

- Colours alternate by game index: player A moves first (Black) in even games.
- Openings are diversified: games 2k and 2k+1 start with the same `opening_moves`
  uniformly random moves (passes excluded), drawn from a generator seeded by
  (seed, k), with colours swapped, so each random opening is played once from each
  side and deterministic players do not repeat one game. The opening is recorded
  (it is the start of `moves`; `opening` says how long it is) and shown to both
  players through observe().
- Game k depends only on (seed, k) and on the other games of its batch, never on
  the wall clock; players bring their own seeds. A tournament replays a batch
  exactly by calling play_games with the same indices and fresh, equally seeded players.
- Each game is reported through `on_game` the moment it ends, so a caller can
  save it before the rest of the batch finishes.
- Go games are scored by azero's Tromp-Taylor rules (States.score(): black area -
  white area - komi). A player that offers `final_score(slot)` (a GTP engine's
  final_score) is asked before it is told the game finished; its answer is
  cross-checked and kept in the record (`score_checks`, `disagreement`): the
  official result stays Tromp-Taylor's, and a disagreement is reported, not hidden.
  GNU Go, for example, removes dead stones before counting and Tromp-Taylor does
  not, so games that end with dead stones on the board can disagree.

final_score hook: `player.final_score(slot) -> float | str | None`, where a float is
Black's margin (Black - White, komi included) and a string is GTP's form
('B+3.5', 'W+12', '0', 'B+R', ...).
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from azero.games.base import NO_ACTION, Game
from azero.games.go_notation import parse_result, score_string
from azero.train.atomic import write_atomic

_OPENING_STREAM = 0x0BE1  # separates the opening generator from any other stream seeded by (seed, k)


@dataclasses.dataclass
class ArenaGame:
    """One finished arena game."""

    index: int
    """Game number within the match (decides colours and opening)."""
    first: str
    """Name of the player who moved first (player 0, Black in Go)."""
    second: str
    a_first: bool
    """Whether player A of the match moved first."""
    opening: int
    """How many of `moves` were the random opening."""
    moves: list[int]
    """Every action of the game, the opening included."""
    outcome: float
    """+1 first player won, -1 second player won, 0 draw."""
    result: str
    """'B+3.5' / 'W+R' / '0' in Go (SGF RE), '1-0' / '0-1' / '1/2-1/2' otherwise."""
    score: float | None = None
    """Go: Tromp-Taylor black - white - komi at the end; None for other games."""
    score_checks: list[dict] = dataclasses.field(default_factory=list)
    """Go: one entry per player offering final_score (see the module docstring)."""
    disagreement: bool = False
    """Whether some engine's final_score names a different winner than Tromp-Taylor."""

    @property
    def a_score(self) -> float:
        """Points of player A: 1 win, 1/2 draw, 0 loss."""
        first_points = (self.outcome + 1.0) / 2.0
        return first_points if self.a_first else 1.0 - first_points


def opening_moves_for(game: Game, index: int, *, seed: int, count: int) -> list[int]:
    """The random opening of game `index` (shared by games 2k and 2k+1); legal and never game-ending."""
    rng = np.random.default_rng([seed, index // 2, _OPENING_STREAM])
    state = game.new_states(1)
    pass_action = game.spec.pass_action
    moves: list[int] = []
    for _ in range(count):
        legal = state.legal_mask()[0].copy()
        if pass_action is not None and legal.sum() > 1:
            legal[pass_action] = False
        choices = np.flatnonzero(legal)
        if choices.size == 0:
            break
        trial = state.copy()
        action = int(choices[rng.integers(choices.size)])
        trial.apply(np.array([action], np.int32))
        if trial.terminal()[0]:
            break  # an opening must leave a game to play
        state = trial
        moves.append(action)
    return moves


def parse_engine_score(value) -> tuple[float | None, str]:
    """A final_score answer as (Black's margin or +-inf for a resignation / None if unknown, text)."""
    if value is None:
        return None, ""
    if isinstance(value, (int, float, np.floating, np.integer)):
        return float(value), f"{float(value):+g}"
    text = str(value).strip()
    return parse_result(text, strict=False), text


def _plain_result(outcome: float) -> str:
    return "1-0" if outcome > 0 else "0-1" if outcome < 0 else "1/2-1/2"


def play_games(game: Game, a, b, indices: Sequence[int], *, seed: int = 0, opening_moves: int = 2,
               on_game: Callable[[ArenaGame], None] | None = None,
               openings: Sequence[Sequence[int]] | None = None) -> list[ArenaGame]:
    """Play the games `indices` of the match A vs B in lockstep; returns them in `indices` order.

    Player A moves first in even-numbered games. Slots given to the players are positions
    in `indices` (0..n-1). The players are started here and told when each game
    finishes; closing them is the caller's business (they may play another batch).
    `openings`: each game's opening moves (one list per index), instead of the seeded random ones.
    """
    indices = [int(i) for i in indices]
    n = len(indices)
    if n == 0:
        return []
    if openings is not None and len(openings) != n:
        raise ValueError(f"play_games: {len(openings)} openings for {n} games")
    states = game.new_states(n)
    is_go = callable(getattr(states, "score", None))  # Go's Tromp-Taylor count
    slots_all = np.arange(n, dtype=np.int64)
    openings = ([list(map(int, o)) for o in openings] if openings is not None else
                [opening_moves_for(game, i, seed=seed, count=opening_moves) for i in indices])
    history: list[list[int]] = [[] for _ in range(n)]
    a_first = np.array([i % 2 == 0 for i in indices])
    a_color = np.where(a_first, 0, 1).astype(np.int8)  # A's player index per game
    records: list[ArenaGame | None] = [None] * n
    for p in (a, b):
        p.start(n)

    def played(actions: np.ndarray) -> None:
        for p in (a, b):
            p.observe(slots_all, actions)
        for g in np.flatnonzero(actions != NO_ACTION):
            history[g].append(int(actions[g]))

    for step in range(max((len(o) for o in openings), default=0)):
        actions = np.array([o[step] if step < len(o) else NO_ACTION for o in openings], np.int32)
        states.apply(actions)
        played(actions)

    finished = states.terminal().copy()
    # (Openings never end a game, but a game whose start position is terminal still gets recorded.)
    pending = np.flatnonzero(finished)
    while True:
        if pending.size:
            _finish(game, states, pending, indices, openings, history, a_first, a, b, records, is_go, on_game)
        if finished.all():
            break
        to_play = states.to_play()
        actions = np.full(n, NO_ACTION, np.int32)
        for player, is_a in ((a, True), (b, False)):
            idx = np.flatnonzero(~finished & ((to_play == a_color) == is_a))
            if idx.size:
                actions[idx] = player.act(idx, states.take(idx))
        states.apply(actions)
        played(actions)
        now = states.terminal()
        pending = np.flatnonzero(now & ~finished)
        finished = now.copy()
    return [r for r in records if r is not None]


def _finish(game, states, slots, indices, openings, history, a_first, a, b, records, is_go, on_game) -> None:
    outcome = states.outcome()
    scores = states.score() if is_go else None
    for g in slots:
        g = int(g)
        first, second = (a.name, b.name) if a_first[g] else (b.name, a.name)
        rec = ArenaGame(index=indices[g], first=first, second=second, a_first=bool(a_first[g]),
                        opening=len(openings[g]), moves=list(history[g]), outcome=float(outcome[g]),
                        result=_plain_result(float(outcome[g])))
        if is_go:
            tt = float(scores[g])
            rec.score = tt
            rec.result = score_string(tt)
            for p in (a, b):
                hook = getattr(p, "final_score", None)
                if not callable(hook):
                    continue
                check = {"player": p.name, "tt_score": tt}
                try:
                    margin, text = parse_engine_score(hook(g))
                except Exception as e:  # an engine that cannot score must not lose the game record
                    check.update(engine=None, engine_score=None, agrees=None, error=f"{type(e).__name__}: {e}")
                    rec.score_checks.append(check)
                    continue
                agrees = None if margin is None else bool(np.sign(margin) == np.sign(tt))
                check.update(engine=text, engine_score=None if margin is None or math.isinf(margin) else margin,
                             agrees=agrees)
                if margin is not None and not math.isinf(margin):
                    check["margin_difference"] = round(margin - tt, 3)
                rec.score_checks.append(check)
                rec.disagreement |= agrees is False
        records[g] = rec
    for p in (a, b):
        p.finish(np.asarray(slots, np.int64))
    if on_game is not None:
        for g in slots:
            on_game(records[int(g)])


@dataclasses.dataclass
class ArenaSummary:
    """Results of player A over a set of arena games."""

    wins: int
    draws: int
    losses: int

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def score(self) -> float:
        return (self.wins + 0.5 * self.draws) / max(self.games, 1)

    @classmethod
    def of(cls, records: Sequence[ArenaGame]) -> "ArenaSummary":
        s = [r.a_score for r in records]
        return cls(sum(x == 1.0 for x in s), sum(x == 0.5 for x in s), sum(x == 0.0 for x in s))


def play_arena(game: Game, a, b, *, games: int, parallel: int = 32, seed: int = 0, opening_moves: int = 2,
               on_game: Callable[[ArenaGame], None] | None = None) -> list[ArenaGame]:
    """Games 0..games-1 of A vs B, `parallel` at a time (same players throughout); closes neither player."""
    if games < 0 or parallel < 1:
        raise ValueError(f"need games >= 0 and parallel >= 1, got {games}, {parallel}")
    out: list[ArenaGame] = []
    for start in range(0, games, parallel):
        out += play_games(game, a, b, range(start, min(start + parallel, games)), seed=seed,
                          opening_moves=opening_moves, on_game=on_game)
    return out


# ---------------------------------------------------------------------- game files


def game_file_suffix(game: Game) -> str:
    return ".sgf" if game.spec.sgf else ".txt"


def game_text(game: Game, record: ArenaGame) -> str:
    """SGF for Go (PB/PW names, RE, KM; Tromp-Taylor result); a small move-list file for other games."""
    if game_file_suffix(game) == ".sgf":
        from azero.games.sgf import write_sgf

        params = game.spec.params
        return write_sgf(params["board_size"], params["komi"], record.moves, result=record.result,
                         black=record.first, white=record.second, rules="Tromp-Taylor")
    lines = [
        "# azero game record: moves in the game's notation, first player first",
        f"game: {game.spec.name}",
        f"first: {record.first}",
        f"second: {record.second}",
        f"result: {record.result}",
        f"opening: {record.opening}",
        "moves: " + " ".join(game.action_to_str(a) for a in record.moves),
    ]
    return "\n".join(lines) + "\n"


def write_game_file(game: Game, record: ArenaGame, path_stem: str | Path) -> Path:
    """Write the game atomically to path_stem + '.sgf' or '.txt'; returns the path."""
    path = Path(str(path_stem) + game_file_suffix(game))
    path.parent.mkdir(parents=True, exist_ok=True)
    data = game_text(game, record).encode("utf-8")
    return write_atomic(path, lambda f: f.write(data))
