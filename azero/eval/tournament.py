"""Tournaments: round-robin (every pair) or gauntlet (one or more players against all), resumable, rated by Elo.

    DIR/
      tournament.json   what was asked: game, players, seed, batch size, opening length, and which
                        checkpoint file each CKPT meant when the tournament started
      results.jsonl     one JSON line per finished game, appended (flush + fsync) the moment it ends
      games/II-JJ/NNNN.sgf|.txt   every game (players II, JJ = positions in tournament.json's list)
      elo.txt, elo.json, elo.png  the ratings, rewritten after every batch of games and at the end

Determinism and resume. The games of a pair are played in fixed batches of
`parallel` consecutive game indices. A batch depends only on (pair, batch number,
seed): fresh players are built for it with seeds derived from those, and the
openings from (seed, game index). A killed tournament is resumed by running the
same command again (or just `azero tournament --out DIR`): results.jsonl is read,
a batch with every game recorded is skipped, a batch with some games missing is
replayed in full (the same batch, so the same games), and only its missing games are
appended. The replayed games that were already recorded are compared with the
record; a difference (a nondeterministic engine) is reported. A kill can leave a
truncated last line; it is reported and cut off, and that game is played again.

Seeds are derived from player names with CRC-32, not Python's salted hash(), so
they are the same in every process.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import time
import zlib
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np

from azero.eval.arena import ArenaGame, play_games, write_game_file
from azero.eval.elo import EloTable, fit_elo, plot_elo
from azero.agents.checkpoints import game_for
from azero.agents.factory import PlayerFactory
from azero.agents.spec import parse_player_spec
from azero.train.atomic import write_atomic

RESULTS = "results.jsonl"
META = "tournament.json"
# Settings a resume must share with the start, or the replayed batches would be different games.
_FIXED = ("game", "seed", "parallel", "opening_moves")
DEFAULTS = {"seed": 0, "parallel": 16, "opening_moves": 2}


@dataclasses.dataclass
class ResultsFile:
    """The games recorded so far and what reading them found."""

    records: list[dict]
    dropped_tail: str | None = None
    """A truncated last line that was cut off (a kill during a write), for the report."""


def read_results(path: str | Path, *, repair: bool = True) -> ResultsFile:
    """Read results.jsonl.

    Every record is written as one line in one write() followed by fsync, so a kill can only
    leave the LAST line incomplete (no trailing newline). Such a tail is dropped, and with
    `repair` cut from the file so the next append starts on a clean line (a tail that is
    complete JSON missing only its newline is kept and the newline added). A bad line
    anywhere else is corruption: ValueError naming the line.
    """
    path = Path(path)
    if not path.exists():
        return ResultsFile([])
    data = path.read_bytes()
    cut = data.rfind(b"\n") + 1  # length of the newline-terminated part
    body, tail = data[:cut], data[cut:]
    records = []
    for k, raw in enumerate(body.split(b"\n")[:-1], 1):
        if not raw.strip():
            continue
        try:
            rec = json.loads(raw)
        except ValueError as e:
            raise ValueError(f"{path}: line {k} is not a JSON result record ({e}); fix or remove it") from None
        if not isinstance(rec, dict):
            raise ValueError(f"{path}: line {k} is not a JSON object")
        records.append(rec)
    dropped = None
    if tail.strip():
        try:
            rec = json.loads(tail)
        except ValueError:
            rec = None
        if isinstance(rec, dict):
            records.append(rec)
            if repair:
                with open(path, "ab") as f:
                    f.write(b"\n")
        else:
            dropped = tail.decode("utf-8", "replace")
            if repair:
                os.truncate(path, cut)
    elif tail and repair:
        os.truncate(path, cut)
    return ResultsFile(records, dropped)


class ResultsWriter:
    """Appends one record per line; each line is flushed and fsync'ed before the call returns."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._f = open(self.path, "a", encoding="utf-8")

    def append(self, record: dict) -> None:
        self._f.write(json.dumps(record, separators=(",", ":")) + "\n")
        self._f.flush()
        os.fsync(self._f.fileno())

    def close(self) -> None:
        self._f.close()


def _name_seed(*parts) -> int:
    """A 63-bit seed from strings and non-negative ints, identical in every process."""
    words = [zlib.crc32(p.encode()) if isinstance(p, str) else int(p) for p in parts]
    return int(np.random.SeedSequence(words).generate_state(1, np.uint64)[0] >> np.uint64(1))


def pair_seeds(seed: int, a: str, b: str, batch: int) -> tuple[int, int]:
    """Seeds of players A and B for batch `batch` of the pair (A, B)."""
    return _name_seed(seed, a, b, batch, 0), _name_seed(seed, a, b, batch, 1)


def gauntlet_list(gauntlet: str | Sequence[str] | None) -> list[str]:
    """The gauntlet players as a list (a tournament.json written before several were allowed holds one string)."""
    if gauntlet is None:
        return []
    return [gauntlet] if isinstance(gauntlet, str) else list(gauntlet)


def tournament_pairs(players: Sequence[str], gauntlet: Sequence[str] = ()) -> list[tuple[str, str]]:
    """Round robin: every (i < j) pair in list order. Gauntlet: (g, p) for every gauntlet player g and
    every other player p; gauntlet players do not meet each other (a checkpoint series against the
    GNU Go levels: the levels are rated through the games they share)."""
    if gauntlet:
        return [(g, p) for g in gauntlet for p in players if p not in gauntlet]
    return [(players[i], players[j]) for i in range(len(players)) for j in range(i + 1, len(players))]


def result_triples(records: Iterable[dict]) -> list[tuple[str, str, float]]:
    return [(r["pair"][0], r["pair"][1], float(r["a_score"])) for r in records]


def write_elo(out_dir: str | Path, records: Sequence[dict], *, anchor: str | None = None,
              anchor_value: float = 0.0, title: str | None = None) -> EloTable:
    """Fit and write elo.txt, elo.json and elo.png in out_dir; returns the table."""
    out_dir = Path(out_dir)
    triples = result_triples(records)
    if anchor is not None and not any(anchor in (a, b) for a, b, _ in triples):
        # the anchor has no game yet (a stopped tournament): the default anchor at 0, named in the table
        anchor, anchor_value = None, 0.0
    table = fit_elo(triples, anchor=anchor, anchor_value=anchor_value)
    text = table.format() + "\n"
    write_atomic(out_dir / "elo.txt", lambda f: f.write(text.encode()))
    doc = json.dumps(dict(table.to_json(), games=len(records)), indent=1).encode()
    write_atomic(out_dir / "elo.json", lambda f: f.write(doc))
    plot_elo(table, out_dir / "elo.png", title=title or f"Elo ratings, {len(records)} games (95% CI)")
    return table


def _load_meta(out_dir: Path) -> dict | None:
    path = out_dir / META
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text())
    except ValueError as e:
        raise ValueError(f"{path}: corrupt tournament description ({e})") from None


@dataclasses.dataclass
class TournamentReport:
    played: int
    """Games played and recorded by this call."""
    total: int
    """Games in results.jsonl now."""
    table: EloTable | None
    notes: list[str]
    """Truncated lines dropped, replay mismatches, score disagreements."""


def run_tournament(out_dir: str | Path, *, game_name: str | None = None, players: Sequence[str] | None = None,
                   gauntlet: str | Sequence[str] | None = None, games_per_pair: int | None = None, seed: int | None = None,
                   parallel: int | None = None, opening_moves: int | None = None, anchor: str | None = None,
                   anchor_value: float = 0.0, device: str = "cpu", threads: int | None = 1,
                   precision: str = "auto", backend: str = "auto", log: Callable[[str], None] | None = None) -> TournamentReport:
    """Play (or resume) the tournament in out_dir; see the module docstring.

    Arguments left as None are taken from tournament.json on a resume (else DEFAULTS); the
    settings that fix the games (game, seed, parallel, opening_moves) must match it when given.
    New players are added to the roster.
    """
    log = log or (lambda line: print(line, flush=True))
    gauntlet = gauntlet_list(gauntlet)
    from azero.runs.run_dir import make_output_dir

    out_dir = make_output_dir(out_dir, "--out")
    meta = _load_meta(out_dir)
    wanted = {"game": game_name, "seed": seed, "parallel": parallel, "opening_moves": opening_moves}
    if meta is not None:
        for key in _FIXED:  # None: take the stored value; anything else must equal it
            if wanted[key] is not None and wanted[key] != meta[key]:
                raise ValueError(f"{out_dir / META}: this tournament was started with {key}={meta[key]!r}, "
                                 f"not {wanted[key]!r}; resume with the same value or use a new --out")
            wanted[key] = meta[key]
        if players is None and not gauntlet:
            players, gauntlet = meta["players"], gauntlet_list(meta.get("gauntlet"))
            players = [p for p in players if p not in gauntlet]
        if games_per_pair is None:
            games_per_pair = meta["games_per_pair"]
    for key, value in DEFAULTS.items():
        if wanted[key] is None:
            wanted[key] = value
    game_name, seed, parallel, opening_moves = (wanted[k] for k in _FIXED)
    if game_name is None or not players or games_per_pair is None:
        raise ValueError("a new tournament needs --game, --players and --games-per-pair")
    if parallel < 1 or games_per_pair < 1 or opening_moves < 0 or seed < 0:
        raise ValueError(f"need parallel >= 1, games per pair >= 1, opening moves >= 0, seed >= 0; "
                         f"got {parallel}, {games_per_pair}, {opening_moves}, {seed}")
    specs = [parse_player_spec(p) for p in gauntlet + list(players)]
    names = list(dict.fromkeys(s.name for s in specs))  # spec strings, in order, once each
    if len(names) < 2:
        raise ValueError(f"a tournament needs at least two different players, got {names}")
    pins = dict(meta.get("checkpoints", {})) if meta else {}
    probe = PlayerFactory(None, pins=pins, game_name=game_name)  # resolves (and pins) checkpoint files without a game
    planes = [probe.planes(s.checkpoint) for s in specs if s.uses_network]
    game = game_for(game_name, [p for p in planes if p is not None])

    roster = list(meta["players"]) if meta else []
    roster += [n for n in names if n not in roster]
    if anchor is not None and anchor not in roster:
        raise ValueError(f"anchor {anchor!r} is not one of the players: {', '.join(roster)}")
    factory = PlayerFactory(game, device=device, threads=threads, precision=precision, backend=backend,
                            pins=probe.pins)
    for s in specs:  # resolve every CKPT now: fail early, and pin the files for later resumes
        if s.uses_network:
            factory.evaluator(s.checkpoint)
        if s.kind == "gnugo":  # a missing engine, too, before hours of other pairs are played
            from azero.agents.gtp_player import find_gnugo

            if find_gnugo() is None:
                raise FileNotFoundError(f"player {s.text!r}: GNU Go is not installed (apt-get install gnugo puts "
                                        f"it in /usr/games/gnugo)")
    new_meta = {"game": game_name, "players": roster, "gauntlet": gauntlet or None, "games_per_pair": games_per_pair,
                "seed": seed, "parallel": parallel, "opening_moves": opening_moves,
                "checkpoints": factory.pins, "created": meta.get("created") if meta else time.strftime("%Y-%m-%d %H:%M:%S")}
    doc = json.dumps(new_meta, indent=1).encode()
    write_atomic(out_dir / META, lambda f: f.write(doc))

    notes: list[str] = []
    results = read_results(out_dir / RESULTS)
    if results.dropped_tail is not None:
        note = (f"{RESULTS}: dropped a truncated last line ({len(results.dropped_tail)} characters, a write cut "
                f"short by a kill); that game will be played again")
        notes.append(note)
        log(note)
    records = results.records
    done: dict[tuple[str, str, int], dict] = {}
    for r in records:
        done.setdefault((r["pair"][0], r["pair"][1], int(r["index"])), r)

    # A pair keeps the orientation its games were recorded in, whatever order the players are given in
    # this time: (a, b) and (b, a) are one pair, and its seeds and colours follow the recorded order.
    recorded = {(a, b) for a, b, _ in done}
    pairs = [(b, a) if (b, a) in recorded and (a, b) not in recorded else (a, b)
             for a, b in tournament_pairs(names, gauntlet)]
    by_name = {s.name: s for s in specs}
    batches = (games_per_pair + parallel - 1) // parallel
    todo = sum(1 for a, b in pairs for i in range(games_per_pair) if (a, b, i) not in done)
    log(f"tournament {out_dir}: {game_name}, {len(pairs)} pair(s) x {games_per_pair} games; "
        f"{len(done)} game(s) recorded, {todo} to play")
    writer = ResultsWriter(out_dir / RESULTS)
    played = 0
    try:
        # Batch-major order: every pair gets its first games early, so a stopped tournament rates everyone.
        for k in range(batches):
            for a_name, b_name in pairs:
                idx = list(range(k * parallel, min((k + 1) * parallel, games_per_pair)))
                missing = [i for i in idx if (a_name, b_name, i) not in done]
                if not missing:
                    continue
                slug = f"{roster.index(a_name):02d}-{roster.index(b_name):02d}"
                seed_a, seed_b = pair_seeds(seed, a_name, b_name, k)
                pa = factory.build(by_name[a_name], seed=seed_a)
                pb = factory.build(by_name[b_name], seed=seed_b)
                new: list[ArenaGame] = []

                def on_game(g: ArenaGame) -> None:
                    key = (a_name, b_name, g.index)
                    if key in done:
                        if done[key].get("moves") is not None and done[key]["moves"] != g.moves:
                            note = (f"{a_name} vs {b_name} game {g.index} replayed differently from its record "
                                    f"(a nondeterministic player); the record is kept")
                            notes.append(note)
                            log(note)
                        return
                    path = write_game_file(game, g, out_dir / "games" / slug / f"{g.index:04d}")
                    rec = {"pair": [a_name, b_name], "index": g.index, "first": g.first, "second": g.second,
                           "a_score": g.a_score, "outcome": g.outcome, "result": g.result, "length": len(g.moves),
                           "opening": g.opening, "moves": g.moves, "file": str(path.relative_to(out_dir)),
                           "seed": seed, "time": time.strftime("%Y-%m-%dT%H:%M:%S")}
                    if g.score is not None:
                        rec["score"] = g.score
                    if g.score_checks:
                        rec["score_checks"] = g.score_checks
                        rec["disagreement"] = g.disagreement
                        if g.disagreement:
                            says = ", ".join(f"{c['player']} says {c.get('engine')}" for c in g.score_checks)
                            note = (f"{a_name} vs {b_name} game {g.index}: Tromp-Taylor {g.result}, but {says} "
                                    f"(the Tromp-Taylor result counts; see score_checks in {RESULTS})")
                            notes.append(note)
                            log(note)
                    writer.append(rec)  # the game file exists before its line does
                    done[key] = rec
                    records.append(rec)
                    new.append(g)

                try:
                    play_games(game, pa, pb, idx, seed=seed, opening_moves=opening_moves, on_game=on_game)
                finally:
                    pa.close()
                    pb.close()
                played += len(new)
                w = sum(g.a_score == 1.0 for g in new)
                d = sum(g.a_score == 0.5 for g in new)
                log(f"[{played}/{todo}] {a_name} vs {b_name} games {idx[0]}-{idx[-1]}: "
                    f"+{w} ={d} -{len(new) - w - d} (for {a_name})")
            if played:
                write_elo(out_dir, records, anchor=anchor, anchor_value=anchor_value)
    finally:
        writer.close()
        factory.close()
    table = write_elo(out_dir, records, anchor=anchor, anchor_value=anchor_value) if records else None
    return TournamentReport(played=played, total=len(records), table=table, notes=notes)


def rate_tournament(out_dir: str | Path, *, anchor: str | None = None, anchor_value: float = 0.0) -> EloTable:
    """Ratings of the games recorded so far (no games played; a truncated last line is skipped)."""
    out_dir = Path(out_dir)
    results = read_results(out_dir / RESULTS, repair=False)
    if not results.records:
        raise ValueError(f"{out_dir / RESULTS}: no recorded games to rate")
    if results.dropped_tail is not None:
        print(f"{RESULTS}: skipped a truncated last line", file=sys.stderr)
    return write_elo(out_dir, results.records, anchor=anchor, anchor_value=anchor_value)
