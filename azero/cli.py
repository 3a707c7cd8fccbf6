"""The `azero` command line: one subcommand per job, each with its own help.

Hydra overrides (`key=value`, `game=connect4`) follow the subcommand's flags;
`--game NAME` is shorthand for `game=NAME`.
"""

from __future__ import annotations

import argparse
import sys

from azero.config import ConfigError, config_to_yaml, load_config


def _add_overrides(p: argparse.ArgumentParser) -> None:
    p.add_argument("overrides", nargs="*", metavar="KEY=VALUE",
                   help="hydra config overrides, e.g. game=connect4 seed=3 game.komi=6.5")


def _overrides(args: argparse.Namespace) -> list[str]:
    out = list(getattr(args, "overrides", []) or [])
    for o in out:
        if "=" not in o:
            raise ConfigError(f"override {o!r} is not of the form key=value")
    if getattr(args, "game", None):
        out.insert(0, f"game={args.game}")
    return out


def cmd_games(args: argparse.Namespace) -> int:
    from azero.games import available_games, make_game

    for entry in available_games():
        params = ", ".join(f"{k}={v}" for k, v in entry.defaults.items()) or "-"
        print(f"{entry.name:<10} {entry.description}")
        print(f"{'':<10} parameters: {params}")
        if args.verbose:
            spec = make_game(entry.name).spec
            print(f"{'':<10} actions={spec.num_actions} obs={spec.obs_shape} max_moves={spec.max_moves} "
                  f"symmetry={spec.symmetry}")
    return 0


def cmd_config(args: argparse.Namespace) -> int:
    print(config_to_yaml(load_config(_overrides(args))), end="")
    return 0


def cmd_selfplay(args: argparse.Namespace) -> int:
    from azero.runs.launch import launch_selfplay

    launch_selfplay(overrides=list(args.overrides or []), game=args.game, run_dir=args.run_dir,
                    resume=args.resume)
    return 0


def cmd_bench_games(args: argparse.Namespace) -> int:
    from azero.bench.games import run_games_bench

    names = [n.strip() for n in args.games.split(",") if n.strip()]
    run_games_bench(names, batch=args.batch, seconds=args.seconds, seed=args.seed,
                    include_openspiel=not args.no_openspiel)
    return 0


def cmd_bench_mcts(args: argparse.Namespace) -> int:
    from azero.bench.mcts import run_mcts_bench

    names = [n.strip() for n in args.games.split(",") if n.strip()]
    run_mcts_bench(names, batch=args.batch, simulations=args.sims, seconds=args.seconds, threads=args.threads)
    return 0


def cmd_bench_selfplay(args: argparse.Namespace) -> int:
    from azero.bench.selfplay import run_selfplay_bench

    run_selfplay_bench(args.game, seconds=args.seconds, server_workers=args.workers,
                       overrides=list(args.overrides or []))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="azero", description="AlphaZero self-play, search and evaluation.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("games", help="list the games and their parameters")
    p.add_argument("-v", "--verbose", action="store_true", help="also show action/observation sizes")
    p.set_defaults(func=cmd_games)

    p = sub.add_parser("config", help="print the resolved configuration for the given overrides")
    p.add_argument("--game", help="shorthand for the override game=NAME")
    _add_overrides(p)
    p.set_defaults(func=cmd_config)

    p = sub.add_parser("selfplay", help="self-play training: games -> replay buffer -> trainer -> checkpoints",
                       description="Self-play training. The default budget (train.steps) finishes in minutes "
                                   "on a 2-core CPU; raise it for real strength.")
    p.add_argument("--game", help="game to train (picks configs/game/NAME and, if present, configs/preset/NAME)")
    p.add_argument("--run-dir", help="run directory (default runs/<game>-<time>); must not hold a run already")
    p.add_argument("--resume", metavar="RUN_DIR", help="continue the run in RUN_DIR from its last checkpoint")
    _add_overrides(p)
    p.set_defaults(func=cmd_selfplay)

    bench = sub.add_parser("bench", help="benchmarks that run azero and a peer side by side")
    bsub = bench.add_subparsers(dest="bench", metavar="BENCH")
    bench.set_defaults(func=lambda a: (bench.print_help(), 2)[1])
    p = bsub.add_parser("games", help="random playouts: azero's batched engines vs OpenSpiel, moves/s")
    p.add_argument("--games", default="go9x9,connect4,tictactoe", help="comma-separated game names")
    p.add_argument("--batch", type=int, default=256, help="games per batch for azero (default 256)")
    p.add_argument("--seconds", type=float, default=3.0, help="time per measurement (default 3)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-openspiel", action="store_true", help="skip the OpenSpiel side")
    p.set_defaults(func=cmd_bench_games)
    p = bsub.add_parser("mcts", help="batched MCTS vs OpenSpiel's C++ MCTSBot and the Python twin, sims/s")
    p.add_argument("--games", default="go9x9,connect4", help="comma-separated: go9x9, connect4, tictactoe")
    p.add_argument("--batch", type=int, default=64, help="games searched in lockstep by azero (default 64)")
    p.add_argument("--sims", type=int, default=800, help="simulations per move (default 800)")
    p.add_argument("--seconds", type=float, default=5.0, help="time per figure (default 5)")
    p.add_argument("--threads", type=int, default=2, help="threads for the scaling figure (default 2)")
    p.set_defaults(func=cmd_bench_mcts)
    p = bsub.add_parser("selfplay", help="self-play evaluations/s vs the raw network forward pass; "
                                         "in-process vs inference server")
    p.add_argument("--game", default="go9x9", help="game whose default network is measured (default go9x9)")
    p.add_argument("--seconds", type=float, default=10.0, help="time per figure (default 10)")
    p.add_argument("--workers", type=int, default=2, help="worker threads sharing the server (default 2)")
    _add_overrides(p)
    p.set_defaults(func=cmd_bench_selfplay)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    from azero.train.checkpoint import CheckpointError
    from azero.train.replay import ReplayShardError

    try:
        return int(args.func(args) or 0)
    except (ConfigError, ValueError, CheckpointError, ReplayShardError, FileNotFoundError) as e:
        print(f"azero {args.command}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"azero {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
