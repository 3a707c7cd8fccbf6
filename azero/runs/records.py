"""Finished self-play games -> replay shards, SGF samples and game statistics."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from azero.games.go_notation import result_string
from azero.selfplay.worker import GameRecord
from azero.train.atomic import write_atomic


@dataclasses.dataclass
class GameStats:
    """Running totals over finished self-play games."""

    games: int = 0
    moves: int = 0
    positions: int = 0
    resigned: int = 0
    no_resign_games: int = 0
    would_resign: int = 0
    false_resign: int = 0
    wins_first_player: int = 0
    draws: int = 0

    def add(self, records: list[GameRecord]) -> None:
        for r in records:
            self.games += 1
            self.moves += len(r.actions)
            self.positions += len(r.to_play)
            self.resigned += int(r.resigned)
            self.draws += int(r.outcome == 0)
            self.wins_first_player += int(r.outcome > 0)
            if r.no_resign:
                self.no_resign_games += 1
                if r.false_resign is not None:
                    self.would_resign += 1
                    self.false_resign += int(r.false_resign)

    @property
    def mean_length(self) -> float:
        return self.moves / max(self.games, 1)

    @property
    def resign_rate(self) -> float:
        return self.resigned / max(self.games, 1)

    @property
    def false_resign_rate(self) -> float | None:
        return self.false_resign / self.would_resign if self.would_resign else None

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def stack_records(records: list[GameRecord], first_game_id: int) -> dict[str, np.ndarray] | None:
    """Concatenate the recorded positions of `records` into ReplayBuffer.add arrays (None if empty)."""
    parts = [(i, r) for i, r in enumerate(records) if len(r.to_play)]
    if not parts:
        return None
    arrays = {
        "obs": np.concatenate([r.obs for _, r in parts]),
        "pi": np.concatenate([r.policy for _, r in parts]),
        "z": np.concatenate([r.value_targets for _, r in parts]),
        "legal": np.concatenate([r.legal for _, r in parts]),
        "game_id": np.concatenate([np.full(len(r.to_play), first_game_id + i, np.int64) for i, r in parts]),
        "move": np.concatenate([r.move_number for _, r in parts]),
    }
    if any(r.q_weight > 0 and r.root_value is not None for _, r in parts):
        # z is mixed with the search's value: keep the outcome itself for the win / draw / loss head
        arrays["outcome"] = np.concatenate([r.outcomes for _, r in parts])
    if any(r.ownership_known for _, r in parts):
        arrays.update(final_targets([r for _, r in parts]))
    if all(r.surprise is not None for _, r in parts):
        arrays["surprise"] = np.concatenate([r.surprise for _, r in parts])
    if any(r.policy_weight is not None for _, r in parts):
        arrays["policy_weight"] = np.concatenate([r.policy_weight if r.policy_weight is not None
                                                  else np.ones(len(r.to_play), np.float32) for _, r in parts])
    return arrays


def final_targets(records: list[GameRecord]) -> dict[str, np.ndarray]:
    """ownership [n, H*W] int8, score [n] float32, has_final [n] bool of the recorded positions, from
    each position's player to move's view (ReplayBuffer.add's final targets); a game with no final
    position (resigned) gets zeros and has_final false. A game without a score (connect four: its
    final board is the ownership) gets score 0, which no head learns: only area-scoring games'
    networks have a score head."""
    own, score, has = [], [], []
    for r in records:
        t = len(r.to_play)
        sign = np.where(r.to_play == 0, 1, -1).astype(np.int8)  # player 0 (Black) is +1 in the game's view
        if r.final_ownership is None:
            points = r.obs.shape[2] * r.obs.shape[3]
            own.append(np.zeros((t, points), np.int8))
            score.append(np.zeros(t, np.float32))
            has.append(np.zeros(t, np.bool_))
        else:
            own.append(sign[:, None] * np.asarray(r.final_ownership, np.int8)[None, :])
            score.append((sign * np.float32(r.score or 0.0)).astype(np.float32))
            has.append(np.ones(t, np.bool_))
    return {"ownership": np.concatenate(own), "score": np.concatenate(score), "has_final": np.concatenate(has)}


def write_game_sgf(directory: Path, game_id: int, record: GameRecord, *, board_size: int, komi: float,
                   player: str) -> Path:
    from azero.games.sgf import write_sgf

    text = write_sgf(board_size, komi, record.actions, result=result_string(record.outcome, score=record.score, resigned=record.resigned),
                     black=player, white=player).encode()
    return write_atomic(directory / f"game_{game_id:08d}.sgf", lambda f: f.write(text))
