"""The shipped Go 9x9 network quantized to int8 against itself in float32 (README: "int8, for CPUs
without bf16"). The same spec on both sides, one player factory per precision, the arena's own
games (2 random opening moves, colours alternating):

    python experiments/int8_go_arena.py [SIMS=200] [GAMES=40] [SEED=0]

prints int8's wins, draws and losses, its score and the wall time. A player spec has no precision
of its own (a factory's precision applies to all its players), hence this script.
"""

import os
import sys
import time
from pathlib import Path

import torch

os.chdir(Path(__file__).resolve().parents[1])

from azero.agents.checkpoints import checkpoint_planes, game_for, resolve_checkpoint  # noqa: E402
from azero.agents.factory import PlayerFactory  # noqa: E402
from azero.eval.arena import ArenaSummary, play_arena  # noqa: E402


def main(sims: int = 200, games: int = 40, seed: int = 0) -> None:
    torch.set_num_threads(1)
    path = resolve_checkpoint("shipped", "go9x9")
    game = game_for("go9x9", [checkpoint_planes(path)])
    spec = f"mcts:shipped@{sims}"
    a = PlayerFactory(game, device="cpu", precision="int8").build(spec, seed=seed)
    b = PlayerFactory(game, device="cpu", precision="f32").build(spec, seed=seed)
    t0 = time.time()
    s = ArenaSummary.of(play_arena(game, a, b, games=games, parallel=40, seed=seed, opening_moves=2))
    print(f"int8 vs f32, {sims} sims, seed {seed}: {s.wins} wins {s.draws} draws {s.losses} losses of {s.games}, "
          f"score {s.score:.3f}, {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main(*(int(x) for x in sys.argv[1:4]))
