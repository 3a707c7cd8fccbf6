"""The `azero` command line: one subcommand per job, each with its own help.

Hydra overrides (`key=value`, `game=connect4`) follow the subcommand's flags;
`--game NAME` is shorthand for `game=NAME`.
"""

from __future__ import annotations

import argparse
import sys

from azero.config import ConfigError, config_to_yaml, load_config
from azero.options import (add_algorithm, add_checkpoint, add_device, add_player_options, add_seed, add_sims,
                           add_threads)


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
    from azero.runs.launch import compose_new

    # exactly as `azero selfplay --game G` composes it: the game's budget preset included
    overrides = _overrides(args)
    if args.game:
        overrides = overrides[1:]  # compose_new adds game= (and preset=) itself
    print(config_to_yaml(compose_new(overrides, args.game)), end="")
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
    run_mcts_bench(names, batch=args.batch, simulations=args.sims, seconds=args.seconds, threads=args.threads,
                   thread_batch=args.thread_batch)
    return 0


def cmd_bench_inference(args: argparse.Namespace) -> int:
    from azero.bench.inference import run_inference_bench

    batches = [int(b) for b in args.batches.split(",") if b.strip()]
    run_inference_bench(args.game, batches=batches, seconds=args.seconds, rounds=args.rounds, threads=args.threads)
    return 0


def cmd_bench_analysis(args: argparse.Namespace) -> int:
    from azero.bench.analysis import run_analysis_bench

    run_analysis_bench(args.checkpoint, turns=args.turns, visits=args.visits, rows=args.rows, workers=args.workers,
                       rounds=args.rounds,
                       seed=args.seed, threads=args.threads, device=args.device)
    return 0


def cmd_bench_accuracy(args: argparse.Namespace) -> int:
    from azero.bench.accuracy import run_accuracy_bench

    run_accuracy_bench(args.checkpoint, args.run_dir, game_name=args.game, positions=args.positions,
                       search_positions=args.search_positions, simulations=args.sims, threads=args.threads,
                       seed=args.seed, precision=args.precision)
    return 0


def cmd_bench_llm(args: argparse.Namespace) -> int:
    from azero.bench.llm import run_llm_bench

    run_llm_bench(args.hf_model, task_name=args.task, tokens=args.tokens, batch=args.batch, length=args.length,
                  problems=args.problems, budget=args.budget, rounds=args.rounds, threads=args.threads, seed=args.seed)
    return 0


def cmd_bench_train(args: argparse.Namespace) -> int:
    from azero.bench.train import run_train_bench

    run_train_bench(args.game, batch=args.batch, seconds=args.seconds, rounds=args.rounds, threads=args.threads)
    return 0


def cmd_bench_selfplay(args: argparse.Namespace) -> int:
    from azero.bench.selfplay import run_selfplay_bench

    run_selfplay_bench(args.game, seconds=args.seconds, rounds=args.rounds, server_workers=args.workers,
                       overrides=list(args.overrides or []), configurations=not args.no_configurations)
    return 0


def cmd_bench_run(args: argparse.Namespace) -> int:
    from azero.bench.run import run_run_bench

    arms = [a.strip() for a in args.arms.split(";")] if args.arms else None
    run_run_bench(args.game, minutes=args.minutes, rounds=args.rounds, arms=arms,
                  overrides=list(args.overrides or []))
    return 0


def cmd_gtp(args: argparse.Namespace) -> int:
    from azero.gtp.options import run_from_args

    return run_from_args(args)


def cmd_play(args: argparse.Namespace) -> int:
    from azero.play import run_play

    return run_play(game=args.game, checkpoint=args.checkpoint, simulations=args.sims, color=args.color,
                    algorithm=args.algorithm, search=args.search, seed=args.seed, device=args.device,
                    precision=args.precision, backend=args.backend)


def cmd_tournament(args: argparse.Namespace) -> int:
    from azero.eval.elo import parse_anchor
    from azero.eval.tournament import rate_tournament, run_tournament

    anchor, value = parse_anchor(args.anchor)
    if args.elo_only:
        print(rate_tournament(args.out, anchor=anchor, anchor_value=value).format())
        return 0
    report = run_tournament(args.out, game_name=args.game, players=args.players, gauntlet=args.gauntlet,
                            games_per_pair=args.games_per_pair, seed=args.seed, parallel=args.parallel,
                            opening_moves=args.opening_moves, anchor=anchor, anchor_value=value,
                            device=args.device, threads=args.threads, precision=args.precision,
                            backend=args.backend)
    if report.table is not None:
        print(report.table.format())
    for note in report.notes:
        print(f"note: {note}", file=sys.stderr)
    return 0


def cmd_ladder(args: argparse.Namespace) -> int:
    from azero.eval.ladder import format_ladder, run_ladder

    levels = [int(x) for x in args.levels.split(",") if x.strip()]
    doc = run_ladder(args.player, out_dir=args.out, levels=levels, games=args.games, max_games=args.max_games,
                     step=args.step, parallel=args.parallel, seed=args.seed, opening_moves=args.opening_moves,
                     device=args.device, threads=args.threads, precision=args.precision, backend=args.backend)
    print(format_ladder(doc))
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from azero.eval.compare import format_table, parse_budgets, run_compare

    algorithms = [a.strip() for a in args.algorithms.split(",") if a.strip()]
    doc = run_compare(args.checkpoint, args.game, parse_budgets(args.sims), games=args.games, algorithms=algorithms,
                      reference=args.reference, out_dir=args.out, seed=args.seed, parallel=args.parallel,
                      opening_moves=args.opening_moves, device=args.device, threads=args.threads,
                      precision=args.precision, backend=args.backend)
    print(format_table(doc))
    print(f"wrote {args.out}/compare.json and {args.out}/compare.png")
    return 0


def cmd_c4_curve(args: argparse.Namespace) -> int:
    from azero.eval.c4curve import run_c4_curve
    from azero.eval.compare import parse_budgets

    depths = [int(d) for d in args.depths.split(",") if d.strip()]
    run_c4_curve(args.run_dir, simulations=parse_budgets(args.sims) if args.sims.strip() else [],
                 positions=args.positions, depths=depths, seed=args.seed, every=args.every, out=args.out,
                 threads=args.threads, cache_dir=args.cache_dir, device=args.device, precision=args.precision,
                 backend=args.backend)
    return 0


def cmd_elo_curve(args: argparse.Namespace) -> int:
    from azero.eval.elo_curve import run_elo_curve

    run_elo_curve(args.tournament, args.run_dir, out=args.out, title=args.title)
    return 0


def cmd_analyze(args: argparse.Namespace) -> int:
    from azero.analysis.engine import default_workers
    from azero.games.go_notation import board_size_of

    go_only = {"--max-visits": args.max_visits, "--rows": args.rows, "--workers": args.workers,
               "--report-as": args.report_as}
    if board_size_of(args.game) is not None:
        from azero.analysis.engine import run

        if args.format != "json":
            raise ValueError("Go analysis speaks KataGo's JSON protocol only: drop --format")
        if args.algorithm != "puct" or args.search:
            # Its batched engine searches with PUCT and takes its settings from each query.
            raise ValueError("Go analysis searches with PUCT and the queries' own settings: drop --algorithm "
                             "and --search")
        return run(checkpoint=args.checkpoint, game_name=args.game, visits=args.sims or 500,
                   max_visits=args.max_visits or 5000, rows=args.rows or 64,
                   workers=args.workers or default_workers(), report_as=args.report_as or "BLACK",
                   seed=args.seed, device=args.device, threads=args.threads, precision=args.precision,
                   backend=args.backend)
    given = [name for name, value in go_only.items() if value is not None]
    if given:
        raise ValueError(f"{', '.join(given)}: only for Go analysis (--game go9x9)")
    from azero.eval.analyze import run_analyze

    return run_analyze(args.game, checkpoint=args.checkpoint, simulations=args.sims or 200,
                       algorithm=args.algorithm, search=args.search, fmt=args.format, seed=args.seed,
                       device=args.device, threads=args.threads, precision=args.precision, backend=args.backend)


def _connect4_factory(args: argparse.Namespace, specs: list[str], checkpoints: tuple = ()):
    """A PlayerFactory for connect four with the feature set of the richest network among the player
    `specs` and `checkpoints` (--checkpoint values: None is the shipped network), so a network
    reading the threat planes plays beside one reading the basic planes."""
    from azero.agents.checkpoints import SHIPPED, game_for
    from azero.agents.factory import PlayerFactory
    from azero.agents.spec import parse_player_spec

    probe = PlayerFactory(None, game_name="connect4")
    planes = [probe.planes(c or SHIPPED) for c in checkpoints]
    for spec in map(parse_player_spec, specs):
        if spec.uses_network:
            planes.append(probe.planes(spec.checkpoint))
    return PlayerFactory(game_for("connect4", [p for p in planes if p is not None]), device=args.device,
                         threads=args.threads, precision=args.precision, backend=args.backend, pins=probe.pins)


def cmd_c4_accuracy(args: argparse.Namespace) -> int:
    from azero.eval.c4accuracy import run_c4_accuracy
    from azero.eval.compare import parse_budgets

    depths = [int(d) for d in args.depths.split(",") if d.strip()]
    extra, factory = [], None
    if args.agent:
        # Built before any test set is solved, so a bad spec fails at once; named by their spec.
        factory = _connect4_factory(args, args.agent, (args.checkpoint,))
        extra = [factory.build(spec, seed=args.seed) for spec in args.agent]
    try:
        run_c4_accuracy(checkpoint=args.checkpoint,
                        simulations=parse_budgets(args.sims) if args.sims.strip() else [],
                        positions=args.positions, depths=depths, seed=args.seed, algorithm=args.algorithm,
                        out=args.out, cache_dir=args.cache_dir, cache=not args.no_cache, workers=args.workers,
                        device=args.device, threads=args.threads, precision=args.precision, backend=args.backend,
                        solver=args.solver, extra_agents=extra, factory=factory,
                        game=factory.game if factory is not None else None)
    finally:
        for agent in extra:
            agent.close()
    return 0


def cmd_c4_openings(args: argparse.Namespace) -> int:
    from azero.eval.c4openings import format_summary, run_openings, write

    agent_spec = args.agent or f"mcts:{args.checkpoint or 'shipped'}@{args.sims}"
    factory = _connect4_factory(args, [agent_spec, args.opponent])
    game = factory.game
    agent = factory.build(agent_spec, seed=args.seed)
    opponent = factory.build(args.opponent, seed=args.seed + 1)
    try:
        doc = run_openings(game, agent, opponent, plies=args.plies, games=args.games, parallel=args.parallel)
    finally:
        for p in (agent, opponent):
            p.close()
    print(format_summary(doc))
    if args.out:
        print(f"wrote {write(doc, args.out)}")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from azero.eval.elo import parse_anchor
    from azero.eval.report import build_report

    anchor, value = parse_anchor(args.anchor)
    path = build_report(args.run_dir, out=args.out, tournaments=args.tournament or (), compares=args.compare or (),
                        anchor=anchor, anchor_value=value)
    print(f"wrote {path}")
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

    p = sub.add_parser("gtp", help="a GTP v2 Go engine on stdin/stdout (GoGui, Sabaki, KGS, GNU Go matches)",
                       description="Serve the Go Text Protocol on stdin/stdout; logs go to stderr. Without "
                                   "--checkpoint it plays the network shipped for --game; --checkpoint none "
                                   "searches on random rollouts (any board size).")
    from azero.gtp.options import add_arguments as add_gtp_arguments

    add_gtp_arguments(p)
    p.set_defaults(func=cmd_gtp)

    p = sub.add_parser("play", help="play against azero in the terminal (Go, connect four, tic-tac-toe)")
    p.add_argument("--game", default="go9x9", choices=["go9x9", "connect4", "tictactoe"])
    p.add_argument("--color", default="black", choices=["black", "white", "first", "second"],
                   help="your side: black/first moves first (default black)")
    add_player_options(p, search=True, threads=False)
    p.set_defaults(func=cmd_play)

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
    p.add_argument("--thread-batch", type=int, default=256,
                   help="games per thread in the scaling figure (default 256)")
    p.set_defaults(func=cmd_bench_mcts)
    p = bsub.add_parser("inference", help="raw network forward evals/s per backend (torch, OpenVINO) and "
                                          "precision (f32, bf16), with ratios to torch f32 eager")
    p.add_argument("--game", default="go9x9", help="game whose preset network is measured, with a 6x64 one")
    p.add_argument("--batches", default="16,32,64,128,256", help="batch sizes, comma-separated")
    p.add_argument("--seconds", type=float, default=0.5, help="time per figure and round (default 0.5)")
    p.add_argument("--rounds", type=int, default=3, help="alternating rounds, median taken (default 3)")
    p.add_argument("--threads", type=int, default=1, help="CPU threads per forward pass (default 1)")
    p.set_defaults(func=cmd_bench_inference)
    p = bsub.add_parser("analysis", help="Go JSON analysis: a whole game in one query vs one query per turn, "
                                         "positions/s and their ratio")
    add_checkpoint(p)
    p.add_argument("--turns", type=int, default=60, help="moves of the analysed game (default 60)")
    p.add_argument("--visits", type=int, default=100, help="visits per position (default 100)")
    p.add_argument("--rows", type=int, default=64, help="positions per batch (default 64)")
    p.add_argument("--workers", type=int, default=None,
                   help="parallel parts of the rows (default: the CPU cores, at most 2)")
    p.add_argument("--rounds", type=int, default=3, help="alternating rounds, median taken (default 3)")
    add_seed(p)
    add_threads(p)
    add_device(p)
    p.set_defaults(func=cmd_bench_analysis)
    p = bsub.add_parser("accuracy", help="the default inference (bf16, OpenVINO) or --precision's vs torch f32 on a "
                                         "run's positions: policy KL, value gap, search move agreement")
    p.add_argument("run_dir", metavar="RUN_DIR", help="a run with replay/ shards and sgf/ games")
    add_checkpoint(p)
    p.add_argument("--game", default="go9x9", help="game (default go9x9)")
    p.add_argument("--positions", type=int, default=10_000, help="replay positions (default 10,000)")
    p.add_argument("--search-positions", type=int, help="positions searched (default: --positions)")
    add_sims(p, help="simulations per search (default 200)")
    add_threads(p)
    add_seed(p)
    from azero.train.precision import INFERENCE_PRECISIONS

    p.add_argument("--precision", choices=INFERENCE_PRECISIONS, default="auto",
                   help="the precision compared with torch f32 (default auto, the default inference's)")
    p.set_defaults(func=cmd_bench_accuracy)
    p = bsub.add_parser("train", help="trainer steps/s with float32 and bf16 autocast")
    p.add_argument("--game", default="go9x9", help="game whose preset network is measured, with a 6x64 one")
    p.add_argument("--batch", type=int, default=128, help="training batch (default 128, the presets')")
    p.add_argument("--seconds", type=float, default=1.5, help="time per figure and round (default 1.5)")
    p.add_argument("--rounds", type=int, default=3, help="alternating rounds, median taken (default 3)")
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1)")
    p.set_defaults(func=cmd_bench_train)
    p = bsub.add_parser("selfplay", help="self-play evaluations/s vs the raw network forward pass; "
                                         "in-process vs inference server")
    p.add_argument("--game", default="go9x9", help="game whose preset is measured (default go9x9)")
    p.add_argument("--seconds", type=float, default=5.0, help="time per figure and round (default 5)")
    p.add_argument("--rounds", type=int, default=3, help="alternating rounds, median taken (default 3)")
    p.add_argument("--workers", type=int, default=2, help="workers in the multi-worker configurations (default 2)")
    p.add_argument("--no-configurations", action="store_true",
                   help="skip part 3 (workers, server, games per worker)")
    _add_overrides(p)
    p.set_defaults(func=cmd_bench_selfplay)
    p = bsub.add_parser("llm", help="a transformers LM's forward with the task tokens' output rows (azero's) vs "
                                    "its own full-vocabulary forward: prefill and sampling tokens/s")
    p.add_argument("--hf-model", default="smollm2", help="model folder, .gguf file or smollm2 (default)")
    p.add_argument("--task", default="sum3", help="task whose problems are sampled (default sum3)")
    p.add_argument("--tokens", default="auto", choices=["auto", "chars", "model"],
                   help="task text as model tokens (default auto, as azero llm)")
    p.add_argument("--batch", type=int, default=32, help="prefill rows (default 32)")
    p.add_argument("--length", type=int, default=64, help="prefill tokens per row (default 64)")
    p.add_argument("--problems", type=int, default=4, help="problems sampled (default 4)")
    p.add_argument("--budget", type=int, default=64, help="generated tokens per problem (default 64)")
    p.add_argument("--rounds", type=int, default=3, help="alternating rounds, median taken (default 3)")
    p.add_argument("--threads", type=int, default=2, help="torch CPU threads (default 2)")
    add_seed(p)
    p.set_defaults(func=cmd_bench_llm)
    p = bsub.add_parser("run", help="whole self-play runs at equal wall clock per placement: worker threads "
                                    "(pinned, the peer; unpinned) vs worker processes")
    p.add_argument("--game", default="connect4", help="game whose preset runs (default connect4)")
    p.add_argument("--minutes", type=float, default=3.0, help="wall clock per run (default 3)")
    p.add_argument("--rounds", type=int, default=1, help="alternating rounds, median taken (default 1)")
    p.add_argument("--arms", default=None,
                   help="';'-separated arms (default all: 'threads, pinned;threads;processes')")
    _add_overrides(p)
    p.set_defaults(func=cmd_bench_run)
    p = sub.add_parser("tournament", help="round-robin or gauntlet between player specs, resumable, with Elo",
                       description="Plays every pair (or each --gauntlet player against all), saves every game, appends each "
                                   "result to OUT/results.jsonl as the game ends, and writes an Elo table and plot. "
                                   "Run the same command again (or just --out DIR) to resume a killed tournament. "
                                   "Player specs: mcts:CKPT@SIMS[:gumbel][:KEY=VALUE] (no root noise; gumbel's root "
                                   "deterministic unless :gumbel_scale=1), raw:CKPT[:t=T], random, "
                                   'gtp:"COMMAND", gnugo:LEVEL, openspiel-mcts:SIMS[:rollouts=R][:uct_c=C], human '
                                   '(CKPT: checkpoint file or run directory).')
    p.add_argument("--out", required=True, help="tournament directory (created; resumed if it holds one)")
    p.add_argument("--game", help="game name (taken from OUT/tournament.json on a resume)")
    p.add_argument("--players", nargs="+", metavar="SPEC", help="player specs")
    p.add_argument("--gauntlet", metavar="SPEC", nargs="+",
                   help="play these players against every --players entry only (not against each other), "
                        "e.g. --gauntlet gnugo:1 gnugo:10 --players mcts:RUN/checkpoints/ckpt_*.safetensors@800")
    p.add_argument("--games-per-pair", type=int, help="games per pair, colours alternating (default on a resume: "
                                                      "as started)")
    p.add_argument("--anchor", metavar="NAME=VALUE", help="rating anchor, e.g. random=0 or gnugo:10=1800 "
                                                          "(default: random=0 if present, else the first player)")
    add_seed(p, default=None, help="fixes openings and players' random choices (default 0; on a resume: as "
                                   "started)")
    p.add_argument("--parallel", type=int, help="games of a pair played in lockstep (default 16; with GTP engines "
                                                "use 2, their process count)")
    p.add_argument("--opening-moves", type=int, help="random moves opening each game pair (default 2)")
    add_device(p)
    add_threads(p)
    p.add_argument("--elo-only", action="store_true", help="only rate the games recorded in OUT so far")
    p.set_defaults(func=cmd_tournament)

    p = sub.add_parser("compare", help="the test-time compute curve: network + search at each budget vs the raw network",
                       description="Plays the network with each simulation budget (0 = raw network) against the raw "
                                   "network, and optionally a reference player; writes compare.json and compare.png "
                                   "(score with Wilson 95% interval and Elo against simulations, PUCT and Gumbel).")
    p.add_argument("checkpoint", metavar="CKPT", help="checkpoint file or run directory (newest checkpoint)")
    p.add_argument("--game", required=True, help="game the network plays")
    p.add_argument("--sims", default="0,1,2,4,...,256", help="budgets, '...' continues the doubling "
                                                             "(default 0,1,2,4,...,256)")
    p.add_argument("--games", type=int, default=64, help="games per budget and opponent (default 64)")
    p.add_argument("--algorithms", default="puct,gumbel", help="comma-separated: puct, gumbel (default both; gumbel with its deterministic "
                        "root, gumbel_scale=0)")
    p.add_argument("--reference", metavar="SPEC", help="also play every budget against this player spec")
    p.add_argument("--out", required=True, help="output directory")
    add_seed(p)
    p.add_argument("--parallel", type=int, default=32, help="games played in lockstep (default 32)")
    p.add_argument("--opening-moves", type=int, default=2, help="random moves opening each game pair (default 2)")
    add_device(p)
    add_threads(p)
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("ladder", help="Go: one player against GNU Go levels (default 1, 5, 10) with intervals; "
                                      "more games where a result is within its interval of 50%%",
                       description="Each level is a resumable gauntlet tournament in OUT/gnugo-LEVEL (GNU Go 3.8, "
                                   "Chinese rules, --capture-all-dead, Tromp-Taylor cross-checked with final_score). "
                                   "A level whose 95%% interval holds 50%% gets --step more games, up to --max-games. "
                                   "Summary: OUT/ladder.json and OUT/ladder.txt.")
    p.add_argument("--player", required=True, help="the player spec, e.g. mcts:shipped@800")
    p.add_argument("--out", required=True, help="ladder directory (created; resumed if it holds one)")
    p.add_argument("--levels", default="1,5,10", help="GNU Go levels, comma-separated (default 1,5,10)")
    p.add_argument("--games", type=int, default=40, help="games per level, half with each colour (default 40)")
    p.add_argument("--max-games", type=int, default=160, help="most games per level when close to 50%% (default 160)")
    p.add_argument("--step", type=int, default=20, help="games added while the interval holds 50%% (default 20)")
    p.add_argument("--parallel", type=int, default=4, help="games in lockstep, one GNU Go process each (default 4)")
    p.add_argument("--opening-moves", type=int, default=2, help="random moves opening each game pair (default 2)")
    add_seed(p)
    add_device(p)
    add_threads(p)
    p.set_defaults(func=cmd_ladder)

    p = sub.add_parser("analyze", help="analyze positions read from stdin, one result line per input line "
                                       "(Go: KataGo's JSON analysis protocol)",
                       description="Connect four and other small games: reads positions from stdin, one per line "
                                   "(connect four: the columns played, 1-based, e.g. 4453; empty line = start), "
                                   "and writes one JSON line each: position, to_play, move (column 1-7), value "
                                   "(player to move's view), visits. Invalid lines get a line with an 'error' field; "
                                   "the stream goes on. Go (--game go9x9, goNxN): a KataGo-compatible JSON analysis "
                                   "engine (KaTrain can drive it); every turn of every waiting query is searched "
                                   "in one batch. See azero/analysis/katago.py for the fields.")
    p.add_argument("--game", default="connect4", help="game (default connect4)")
    p.add_argument("--format", choices=["json", "text"], default="json", help="output lines (default json)")
    add_player_options(p, sims=False, search=True)
    add_sims(p, default=None, help="simulations per position (default 200; Go: the default maxVisits, 500)")
    p.add_argument("--max-visits", type=int, default=None,
                   help="Go: the most visits per position a query may ask for (default 5000; more is cut to it "
                        "with a warning). Memory: rows x max-visits x about 1.7 KB on 9x9")
    p.add_argument("--rows", type=int, default=None,
                   help="Go: positions searched in one batch (default 64)")
    p.add_argument("--workers", type=int, default=None,
                   help="Go: parts of the rows searched in parallel threads, one OpenVINO stream each (default: "
                        "the CPU cores, at most 2)")
    p.add_argument("--report-as", type=str.upper, choices=["BLACK", "WHITE", "SIDETOMOVE"], default=None,
                   help="Go: whose view win rates, scores and ownership are reported from (default BLACK, as "
                        "KataGo's analysis config; a query's overrideSettings.reportAnalysisWinratesAs wins)")
    p.set_defaults(func=cmd_analyze)

    p = sub.add_parser("c4-accuracy", help="connect four: share of moves that keep the solved value, raw network, "
                                           "search and random, against a perfect solver",
                       description="Solves seeded test positions (random playouts of each depth where the choice "
                                   "matters; cached) and reports, per depth and overall with 95% Wilson intervals, "
                                   "how often each agent's move keeps the game-theoretic value: random, the raw "
                                   "network (policy argmax) and network + search at each budget. Solving 8-move "
                                   "positions takes about a second each on a slow CPU; later runs read the cache.")
    add_checkpoint(p, help="network: checkpoint file, run directory, 'shipped' or 'none' (default: the shipped "
                           "connect-four network)")
    p.add_argument("--sims", default="100,400", help="search budgets, comma-separated ('...' doubles on; "
                                                    "'' for none; default 100,400)")
    p.add_argument("--positions", type=int, default=1000, help="test positions per depth (default 1000)")
    p.add_argument("--depths", default="8,12,16,20", help="random moves before each test position (default 8,12,16,20)")
    add_seed(p, help="seed of the test positions and of the agents (default 0)")
    add_algorithm(p)
    p.add_argument("--out", help="write the results as JSON to this file")
    p.add_argument("--cache-dir", help="where solved test sets are kept (default ~/.cache/azero/c4accuracy)")
    p.add_argument("--no-cache", action="store_true", help="solve the test sets afresh and do not store them")
    p.add_argument("--workers", type=int, help="solver threads (default: one per CPU core)")
    p.add_argument("--solver", action="store_true", help="the searches prove outcomes up the tree (MCTS-Solver, "
                   "search.solver; PUCT only)")
    p.add_argument("--agent", action="append", metavar="SPEC",
                   help="one more agent as a player spec, scored after the others (repeatable; e.g. "
                        "'mcts:runs/c4@800:c_init=2.0:fpu_reduction=0.2')")
    add_device(p)
    add_threads(p)
    p.set_defaults(func=cmd_c4_accuracy)
    p = sub.add_parser("c4-openings", help="connect four: the agent against an opponent from every short opening, "
                                           "both sides, leaving out those the solver says are lost for the agent",
                       description="Plays every sequence of --plies moves from both sides (49 two-move openings: 98 "
                                   "games per --games) and reports wins and score with 95% Wilson intervals; the "
                                   "openings already lost for the agent's side under perfect play are listed, not "
                                   "played.")
    add_checkpoint(p, help="the agent's network (default: the shipped connect-four network)")
    p.add_argument("--sims", type=int, default=800, help="the agent's simulations per move (default 800)")
    p.add_argument("--agent", help="the agent as a player spec instead (e.g. 'mcts:runs/c4@400:gumbel')")
    p.add_argument("--opponent", default="openspiel-mcts:1000",
                   help="the opponent's player spec (default openspiel-mcts:1000: OpenSpiel's MCTS, 1,000 "
                        "random-rollout simulations)")
    p.add_argument("--plies", type=int, default=2, help="opening length in moves (default 2)")
    p.add_argument("--games", type=int, default=1, help="games per opening and side (default 1)")
    p.add_argument("--parallel", type=int, default=98, help="games played in lockstep (default 98)")
    p.add_argument("--out", help="write the results as JSON to this file")
    add_seed(p)
    add_device(p)
    add_threads(p)
    p.set_defaults(func=cmd_c4_openings)
    p = sub.add_parser("c4-curve", help="connect four: solver accuracy of every checkpoint of a run (learning curve)",
                       description="Scores every checkpoint of RUN_DIR (raw network and network + search) on the "
                                   "solved test positions of c4-accuracy and plots accuracy against wall clock "
                                   "and self-play positions.")
    p.add_argument("run_dir", metavar="RUN_DIR", help="run directory")
    p.add_argument("--sims", default="100", help="search budgets, comma-separated (default 100)")
    p.add_argument("--positions", type=int, default=250, help="test positions per depth (default 250)")
    p.add_argument("--depths", default="8,12,16,20", help="random moves before each test position")
    p.add_argument("--every", type=int, default=1, help="score every n-th checkpoint (default 1)")
    add_seed(p)
    p.add_argument("--out", help="output folder (default RUN_DIR/eval/c4curve)")
    p.add_argument("--cache-dir", help="where solved test sets are kept (default ~/.cache/azero/c4accuracy)")
    add_device(p)
    add_threads(p)
    p.set_defaults(func=cmd_c4_curve)

    p = sub.add_parser("elo-curve", help="Elo of a run's checkpoints against self-play positions and wall clock",
                       description="Reads a tournament's Elo table (players mcts:RUN/checkpoints/ckpt_<step>"
                                   ".safetensors@SIMS, plus references such as random or gnugo:1) and plots Elo "
                                   "with 95%% CIs against the run's self-play positions and wall clock.")
    p.add_argument("tournament", metavar="TOURNAMENT_DIR", help="output folder of `azero tournament`")
    p.add_argument("run_dir", metavar="RUN_DIR", help="the run whose checkpoints were rated")
    p.add_argument("--out", help="PNG to write (default TOURNAMENT_DIR/elo_curve.png; JSON beside it)")
    p.add_argument("--title", help="plot title")
    p.set_defaults(func=cmd_elo_curve)

    p = sub.add_parser("report", help="static HTML report of a run: losses, Elo, raw-vs-search curve, games")
    p.add_argument("run_dir", metavar="RUN_DIR", help="run directory")
    p.add_argument("--out", help="HTML file to write (default RUN_DIR/report.html; plots in <name>_files/)")
    p.add_argument("--tournament", action="append", metavar="DIR",
                   help="tournament directory to rate (repeatable; default: RUN_DIR/eval/**/results.jsonl)")
    p.add_argument("--compare", action="append", metavar="JSON_OR_DIR",
                   help="compare.json or its directory (repeatable; default: RUN_DIR/eval/**/compare.json)")
    p.add_argument("--anchor", metavar="NAME=VALUE", help="Elo anchor (default random=0 or the first player)")
    p.set_defaults(func=cmd_report)
    from azero.llm.cli import add_llm_parser

    add_llm_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    # Overrides may stand between or after the options (`--run-dir D --game G a=1 --resume ...`):
    # argparse gives the positional list only one contiguous run, so KEY=VALUE words it did not
    # place are added to the command's overrides here; anything else is still an error.
    args, extra = parser.parse_known_args(argv)
    if extra:
        stray = [w for w in extra if w.startswith("-") or "=" not in w]
        if stray or not hasattr(args, "overrides"):
            parser.error(f"unrecognized arguments: {' '.join(stray or extra)}")
        args.overrides = list(args.overrides or []) + extra
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
