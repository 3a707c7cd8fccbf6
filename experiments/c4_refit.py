"""Refit a finished run's network on a wider replay window at a low learning rate.

    python experiments/c4_refit.py runs/c4-thr0 --window 400000 --steps 3000 --out runs/refit-w400

A run's trainer samples from the newest W(N) = window_scale * N^0.75 positions (104k of 800k at the
end of the connect-four recipe), so the network it ends with was fitted at the cosine's floor on
the last few thousand games. This continues that network (weights and SGD momentum) for --steps
more steps on the newest --window positions of the same replay, the learning rate falling by a
cosine from --lr to --lr-end, and writes a checkpoint `azero c4-accuracy --checkpoint` reads.
Run it twice, with the run's own window and a wider one, at the same steps and seed: the
difference is the window's, not the extra steps'. Wall clock and CPU seconds are printed so the
refit can be added to the run's clock (issue 17 counts hours from zero).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch
from omegaconf import OmegaConf

from azero.config import AzeroConfig, validate
from azero.games.config import game_from_config
from azero.train.checkpoint import latest_checkpoint
from azero.train.replay import ReplayBuffer, window_size
from azero.train.trainer import Trainer


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", type=Path, help="a finished run directory (config.yaml, replay/, checkpoints/)")
    ap.add_argument("--checkpoint", type=Path, help="network to continue (default: the run's newest checkpoint)")
    ap.add_argument("--window", type=int, default=0,
                    help="positions to sample from, newest first (0: the run's own window at its end)")
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--lr", type=float, default=0.002, help="learning rate of the first step")
    ap.add_argument("--lr-end", type=float, default=0.0006, help="learning rate of the last step (cosine)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the batches")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", type=Path, required=True, help="directory for the checkpoint and refit.json")
    args = ap.parse_args(argv)
    if args.steps < 1:
        ap.error(f"--steps must be >= 1, got {args.steps}")
    if args.window < 0:
        ap.error(f"--window must be >= 0 (0: the run's own), got {args.window}")
    if not 0 < args.lr_end <= args.lr:
        ap.error(f"need 0 < --lr-end <= --lr, got --lr-end {args.lr_end} and --lr {args.lr}")
    config = args.run / "config.yaml"
    if not config.is_file() or not (args.run / "replay").is_dir():
        ap.error(f"{args.run} is not a run directory (no config.yaml or replay/)")
    ckpt = args.checkpoint or latest_checkpoint(args.run / "checkpoints")
    if ckpt is None or not Path(ckpt).is_file():
        ap.error(f"no checkpoint to continue: {ckpt or args.run / 'checkpoints'}")
    torch.set_num_threads(args.threads)

    cfg = validate(OmegaConf.merge(OmegaConf.structured(AzeroConfig), OmegaConf.load(config)))
    spec = game_from_config(cfg.game).spec
    # Uniform sampling without a budget; the run's own window formula unless --window fixes one.
    replay_cfg = dataclasses.replace(cfg.replay, max_samples_per_position=None, surprise_weight=0.0, min_positions=1)
    if args.window:
        replay_cfg = dataclasses.replace(replay_cfg, min_window=args.window, max_window=args.window)
    buffer = ReplayBuffer(args.run / "replay", spec, cfg=replay_cfg)
    total = buffer.positions_total
    if not buffer.can_sample(cfg.train.batch_size):
        ap.error(f"{args.run}: the window of {buffer.positions_in_window} positions cannot fill a batch")

    trainer = Trainer.restore(ckpt, device="cpu")
    start_step = trainer.step
    # A schedule of its own over the refit's steps; the optimizer's momentum carries over.
    trainer.cfg = dataclasses.replace(trainer.cfg, lr=args.lr, lr_min_ratio=args.lr_end / args.lr,
                                      lr_schedule="cosine", warmup_steps=0, steps=args.steps,
                                      checkpoint_every=args.steps, keep_checkpoints=0)
    trainer.step = 0
    trainer.rng = np.random.default_rng(args.seed)
    print(f"{args.run}: {total:,} positions, refit window {buffer.positions_in_window:,} "
          f"(the run's own at its end: {window_size(total, cfg.replay):,}), from {ckpt} (step {start_step})",
          flush=True)
    wall, cpu = time.perf_counter(), time.process_time()
    losses = []
    for done in range(0, args.steps, 500):
        hist = trainer.train_from(buffer, max_steps=min(500, args.steps - done))
        losses.append({k: sum(h[k] for h in hist) / len(hist) for k in ("loss", "policy_loss", "value_loss")})
        print(f"  step {done + len(hist)}/{args.steps}: loss {losses[-1]['loss']:.3f} "
              f"(pol {losses[-1]['policy_loss']:.3f} val {losses[-1]['value_loss']:.3f}) "
              f"lr {hist[-1]['lr']:.5f}", flush=True)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    args.out.mkdir(parents=True, exist_ok=True)
    path = trainer.save(args.out)
    record = {"run": str(args.run), "from": str(ckpt), "from_step": start_step, "positions": total,
              "window": buffer.positions_in_window, "run_window": window_size(total, cfg.replay),
              "steps": args.steps, "lr": args.lr, "lr_end": args.lr_end, "seed": args.seed,
              "wall_s": round(wall, 1), "cpu_s": round(cpu, 1), "losses_per_500": losses, "checkpoint": str(path)}
    (args.out / "refit.json").write_text(json.dumps(record, indent=1) + "\n")
    print(f"wrote {path} ({wall:.0f} s wall, {cpu:.0f} s CPU)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
