"""A match of a player against a GTP engine with both scorers side by side: Tromp-Taylor and the
engine's final_score (for the GNU Go tests)."""

from __future__ import annotations

import dataclasses
import logging
import math
import os
from pathlib import Path

import numpy as np
from matches import MatchResult, play_match

from azero.agents.gtp_player import GtpPlayer
from azero.agents.player import Player
from azero.games.go import GoGame
from azero.games.go_notation import parse_result, score_string
from azero.games.sgf import write_sgf

log = logging.getLogger(__name__)



@dataclasses.dataclass
class EngineGame:
    """One finished game against a GTP engine, with both scorers' verdicts."""

    index: int
    moves: list[int]
    player_colour: int
    """0 when the azero-side player had Black, 1 White."""
    tt_score: float
    """Tromp-Taylor black - white - komi of the final position (azero's rules decide the game)."""
    engine_score: str | None
    """The engine's final_score answer, or None when it was not asked or failed."""
    sgf_path: str | None = None

    @property
    def tt_result(self) -> str:
        return score_string(self.tt_score)

    @property
    def engine_value(self) -> float | None:
        try:
            return None if self.engine_score is None else parse_result(self.engine_score)
        except ValueError:
            return None

    @property
    def winner_agrees(self) -> bool | None:
        """Whether both scorers name the same winner (None without a usable engine score)."""
        v = self.engine_value
        return None if v is None else bool(np.sign(v) == np.sign(self.tt_score))

    @property
    def score_agrees(self) -> bool | None:
        v = self.engine_value
        return None if v is None else bool(math.isclose(v, self.tt_score, abs_tol=1e-6))

    @property
    def player_result(self) -> float:
        """1 / 0.5 / 0 for the azero-side player under Tromp-Taylor."""
        s = self.tt_score if self.player_colour == 0 else -self.tt_score
        return 1.0 if s > 0 else (0.5 if s == 0 else 0.0)


@dataclasses.dataclass
class EngineMatchReport:
    player: str
    engine: str
    games: list[EngineGame]
    match: MatchResult

    def disagreements(self) -> list[EngineGame]:
        """Games whose winner the two scorers see differently (dead stones left on the board, seki...)."""
        return [g for g in self.games if g.winner_agrees is False]

    def summary(self) -> str:
        m = self.match
        lines = [f"{self.player} vs {self.engine}: {m.wins} wins, {m.draws} draws, {m.losses} losses "
                 f"in {m.games} games (Tromp-Taylor)"]
        for g in self.games:
            verdict = {None: "no engine score", True: "same score", False: "different margin"}[g.score_agrees]
            if g.winner_agrees is False:
                verdict = "DIFFERENT WINNER"
            lines.append(f"  game {g.index}: {self.player} as {'BW'[g.player_colour]}, {len(g.moves)} moves, "
                         f"Tromp-Taylor {g.tt_result}, {self.engine} says {g.engine_score}: {verdict}"
                         + (f"  [{g.sgf_path}]" if g.sgf_path else ""))
        return "\n".join(lines)


def play_vs_engine(game: GoGame, player: Player, engine: GtpPlayer, *, games: int = 2, opening_moves: int = 0,
                   seed: int = 0, sgf_dir: str | os.PathLike | None = None) -> EngineMatchReport:
    """Play `games` games of `player` against `engine` (colours alternate, `player` Black in even games),
    score each under Tromp-Taylor and with the engine's final_score, and write SGF files to `sgf_dir`."""
    if (engine.game.board_size, engine.game.komi) != (game.board_size, game.komi):
        raise ValueError(f"the engine is set up for {engine.game.board_size}x{engine.game.board_size} komi "
                         f"{engine.game.komi:g}, the match is {game.board_size}x{game.board_size} komi {game.komi:g}")
    asked = engine.query_final_score
    engine.query_final_score = True
    try:
        result = play_match(game, player, engine, games=games, opening_moves=opening_moves, seed=seed)
    finally:
        engine.query_final_score = asked
    records = []
    out_dir = Path(sgf_dir) if sgf_dir is not None else None
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
    for g, moves in enumerate(result.moves):
        states = game.new_states(1)
        if moves:
            states.apply_paths(np.asarray([moves], np.int32))
        colour = int(result.a_player[g])
        rec = EngineGame(g, list(moves), colour, float(states.score()[0]), engine.final_scores.get(g))
        if out_dir is not None:
            black, white = (player.name, engine.name) if colour == 0 else (engine.name, player.name)
            path = out_dir / f"game_{g:03d}.sgf"
            path.write_text(write_sgf(game.board_size, game.komi, moves, result=rec.tt_result,
                                      black=black, white=white))
            rec.sgf_path = str(path)
        records.append(rec)
    report = EngineMatchReport(player.name, engine.name, records, result)
    for g in report.disagreements():
        log.warning("game %d: Tromp-Taylor says %s but %s says %s", g.index, g.tt_result, engine.name,
                    g.engine_score)
    return report
