"""Export a training checkpoint as a shipped network: weights only, plus its record.

    python -m azero.models.export CKPT --game go9x9 [--strength FILE.json] [--command TEXT] [--note TEXT] [--out DIR]

Writes DIR/<game>.safetensors (the network's tensors and description; no optimizer state
or random-generator state, so a fraction of the size) and DIR/<game>.json: the game, the
network, the config and command of the run that trained it (from the run directory the
checkpoint sits in), how long it trained (steps, wall clock continued across resumes,
games, positions, the run's wall and CPU hours), where it began (a warm start from an earlier
network, with that network's record: the CPU hours add up along the line) and the measured
strength from --strength. DIR defaults to
azero/models/, where `azero play`, `azero gtp` and `azero analyze` look.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from azero.models import MODELS_DIR
from azero.runs.clock import at_step, run_clock
from azero.train.checkpoint import MODEL_PREFIX, load_checkpoint, save_checkpoint

KEEP_METADATA = ("network", "samples_seen", "train_config")


def _run_dir_of(checkpoint: Path) -> Path | None:
    run = checkpoint.resolve().parent.parent
    return run if (run / "config.yaml").is_file() else None


def _lineage(warm: dict) -> dict:
    """The run's warm start, with the record of the network it started from when there is one (a
    shipped network's <game>.json sits beside its weights): where the run began, and its hours."""
    out = dict(warm)
    source = Path(str(warm.get("from", "")))
    record = source.with_suffix(".json")
    if record.is_file():
        try:
            previous = json.loads(record.read_text())
        except ValueError:
            return out
        out["record"] = {k: previous[k] for k in ("step", "trained", "command", "warm_start") if k in previous}
    return out


def export_network(checkpoint: str | Path, game: str, *, out_dir: str | Path = MODELS_DIR,
                   strength: dict | None = None, note: str | None = None,
                   command: str | None = None) -> tuple[Path, Path]:
    """Write <game>.safetensors and <game>.json to out_dir; returns both paths."""
    checkpoint = Path(checkpoint)
    ckpt = load_checkpoint(checkpoint)
    tensors = {k: v for k, v in ckpt.tensors.items() if k.startswith(MODEL_PREFIX)}
    metadata = {k: ckpt.metadata[k] for k in KEEP_METADATA if k in ckpt.metadata}
    if "network" not in metadata:
        raise ValueError(f"{checkpoint}: no network description in the checkpoint; cannot ship it")
    out_dir = Path(out_dir)
    weights = save_checkpoint(out_dir, step=ckpt.step, tensors=tensors, metadata=metadata,
                              filename=f"{game}.safetensors")
    params = sum(int(v.numel()) for k, v in tensors.items() if not k.endswith("num_batches_tracked")
                 and "running_" not in k)
    net = metadata["network"]["config"]
    card: dict = {"game": game, "file": weights.name, "step": ckpt.step,
                  "network": f"{net.get('blocks')} residual blocks x {net.get('channels')} channels "
                             f"({params:,} parameters)"}
    run = _run_dir_of(checkpoint)
    if run is not None:
        from omegaconf import OmegaConf

        card["run_dir"] = str(run.name)
        state = json.loads((run / "state.json").read_text()) if (run / "state.json").is_file() else {}
        seconds, positions = at_step(run_clock(run / "logs" / "metrics.jsonl"), ckpt.step)
        card["trained"] = {"steps": ckpt.step,
                           "wall_clock_hours": None if seconds is None else round(seconds / 3600, 2),
                           "selfplay_positions": positions,
                           "selfplay_games_whole_run": state.get("games_total")}
        clock = state.get("clock")
        if clock:  # the run's whole clock, kept across resumes (older runs have none)
            card["trained"].update(run_wall_hours=round(clock["wall_s"] / 3600, 2),
                                   run_cpu_hours=round(clock["cpu_s"] / 3600, 2), run_starts=clock.get("starts"))
        warm = state.get("warm_start")
        if warm:
            card["warm_start"] = _lineage(warm)
            before = card["warm_start"].get("record", {}).get("trained", {})
            if clock and "total_cpu_hours" in before:
                card["trained"]["total_cpu_hours"] = round(before["total_cpu_hours"] + clock["cpu_s"] / 3600, 2)
        elif clock:
            card["trained"]["total_cpu_hours"] = round(clock["cpu_s"] / 3600, 2)
        card["config"] = OmegaConf.to_container(OmegaConf.load(run / "config.yaml"))
    if command:
        card["command"] = command
    if note:
        card["note"] = note
    if strength:
        card["strength"] = strength
    card_path = out_dir / f"{game}.json"
    card_path.write_text(json.dumps(card, indent=1) + "\n")
    return weights, card_path


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m azero.models.export", description=__doc__.split("\n\n")[0])
    p.add_argument("checkpoint")
    p.add_argument("--game", required=True)
    p.add_argument("--strength", help="JSON file with the measured strength, copied into the record")
    p.add_argument("--command", help="the command(s) that trained it, for the record")
    p.add_argument("--note")
    p.add_argument("--out", default=str(MODELS_DIR), help="folder for <game>.safetensors and <game>.json "
                   "(default: the shipped models folder)")
    a = p.parse_args(argv)
    if Path(a.out).exists() and not Path(a.out).is_dir():
        p.error(f"--out {a.out} is a file; it names the folder the network and its record go to")
    strength = json.loads(Path(a.strength).read_text()) if a.strength else None
    weights, card = export_network(a.checkpoint, a.game, out_dir=a.out, strength=strength, note=a.note,
                                   command=a.command)
    print(f"wrote {weights} ({weights.stat().st_size:,} bytes) and {card}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
