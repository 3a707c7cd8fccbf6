"""The run directory: everything one training run writes, in one place.

    RUN_DIR/
      config.yaml        the resolved configuration (a resume starts from it)
      state.json         counters that are not in checkpoints (games, positions written)
      checkpoints/       ckpt_<step>.safetensors: model, optimizer, RNG state (no pickle)
      replay/            shard_<index>_<start>_<n>.npz: self-play positions (no pickle)
      sgf/               a sample of Go self-play games
      logs/progress.log  the progress lines printed to the terminal
      logs/metrics.jsonl one JSON object per progress tick and per game batch
      tb/                TensorBoard event files (losses, entropy, value error, game length,
                         resign rate, evaluations/s, mean batch size)
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from azero.train.atomic import write_atomic


def make_output_dir(path: str | Path, option: str) -> Path:
    """Create the folder a command writes into; a clear ValueError naming `option` (e.g. '--out')
    when the path is an existing file, instead of a FileExistsError traceback."""
    path = Path(path)
    for p in (path, *path.parents):
        if p.exists() and not p.is_dir():
            raise ValueError(f"{option} {path}: {p} is a file, not a folder")
    path.mkdir(parents=True, exist_ok=True)
    return path


class RunDir:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        # the layout of the module docstring
        self.config_file, self.state_file = self.path / "config.yaml", self.path / "state.json"
        self.checkpoints, self.replay, self.sgf, self.logs, self.tensorboard = (
            self.path / name for name in ("checkpoints", "replay", "sgf", "logs", "tb"))

    @classmethod
    def default_name(cls, game: str) -> Path:
        safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in game)
        return Path("runs") / f"{safe}-{time.strftime('%Y%m%d-%H%M%S')}"

    def create(self) -> None:
        make_output_dir(self.path, "--run-dir")
        for d in (self.path, self.checkpoints, self.replay, self.sgf, self.logs, self.tensorboard):
            d.mkdir(parents=True, exist_ok=True)

    # config and counters -----------------------------------------------------
    def save_config(self, cfg: DictConfig) -> None:
        text = OmegaConf.to_yaml(cfg, resolve=True).encode()
        write_atomic(self.config_file, lambda f: f.write(text))

    def load_config_text(self) -> str:
        if not self.config_file.is_file():
            raise FileNotFoundError(f"{self.path} is not a run directory: {self.config_file} is missing")
        return self.config_file.read_text()

    def load_state(self) -> dict:
        if not self.state_file.exists():
            return {}
        try:
            state = json.loads(self.state_file.read_bytes())
        except ValueError as e:  # JSONDecodeError, or bytes that are not text at all
            raise ValueError(f"{self.state_file}: corrupt run state ({e}); the checkpoints and replay shards are "
                             "intact: remove the file to resume with the game counters rebuilt from the shards") from e
        import dataclasses

        from azero.runs.records import GameStats

        stats = state.get("game_stats", {}) if isinstance(state, dict) else None
        known = {f.name for f in dataclasses.fields(GameStats)}
        if (not isinstance(stats, dict) or not set(stats) <= known
                or not all(isinstance(v, int) and not isinstance(v, bool) for v in stats.values())
                or not isinstance(state.get("games_total", 0), int)):
            raise ValueError(f"{self.state_file}: corrupt run state (expected a JSON object of integer counters); "
                             "remove the file to resume with the game counters rebuilt from the shards")
        return state

    def save_state(self, state: dict) -> None:
        text = json.dumps(state, indent=1).encode()
        write_atomic(self.state_file, lambda f: f.write(text))
