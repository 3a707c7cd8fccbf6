"""Where Go games against GNU Go were lost: GNU Go's own score estimate at fixed move numbers.

    python experiments/go_ladder_estimates.py runs/go-long/eval/ladder3 [--at 30,50,70] [--gnugo /usr/games/gnugo]

For every recorded game of a tournament folder with an mcts: player, replays the first N
moves into a fresh GNU Go (level 10, Chinese rules) and asks `estimate_score`; prints the
margin from the azero player's side and, per move number, in how many games it was behind.
A game that GNU Go already has far ahead at move 50 was lost in the middle game, not by
how the agent ends games.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

from azero.games.go import GoGame
from azero.games.go_notation import parse_result
from azero.gtp.protocol import parse_response


def estimate(gnugo: str, moves: list[int], game: GoGame) -> float:
    """GNU Go's estimate (black - white, komi included) after `moves`."""
    cmds = [f"boardsize {game.board_size}", f"komi {game.komi}"]
    for i, a in enumerate(moves):
        cmds.append(f"play {'B' if i % 2 == 0 else 'W'} {game.action_to_str(a)}")
    cmds += ["estimate_score", "quit"]
    p = subprocess.run([gnugo, "--mode", "gtp", "--chinese-rules", "--level", "10"], input="\n".join(cmds) + "\n",
                       capture_output=True, text=True, timeout=120, check=True)
    responses = [parse_response(block.strip().splitlines()) for block in p.stdout.split("\n\n") if block.strip()]
    refused = [r.text for r in responses if not r.ok]
    if refused:
        raise RuntimeError(f"GNU Go refused the replay: {refused[0]}")
    # The last response is quit's; the one before answers estimate_score, e.g. 'W+12.5 (upper bound: ...)'.
    return parse_result(responses[-2].text.split()[0])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tournament", help="tournament folder with results.jsonl")
    ap.add_argument("--at", default="30,50,70", help="move numbers to estimate at (default 30,50,70)")
    ap.add_argument("--gnugo", default="/usr/games/gnugo")
    args = ap.parse_args(argv)
    at = [int(x) for x in args.at.split(",")]
    results = Path(args.tournament) / "results.jsonl"
    if not results.is_file():
        ap.error(f"{results} not found")
    game = GoGame()
    behind = {n: [] for n in at}
    for line in results.read_text().splitlines():
        g = json.loads(line)
        agent_black = g["first"].startswith("mcts:")
        if not (agent_black or g["second"].startswith("mcts:")):
            continue
        sign = 1 if agent_black else -1
        margins = [sign * estimate(args.gnugo, g["moves"][:n], game) for n in at if n <= len(g["moves"])]
        opponent = g["second"] if agent_black else g["first"]
        agent_score = g["a_score"] if g["pair"][0].startswith("mcts:") else 1 - g["a_score"]  # a_score: pair[0]'s
        for n, m in zip(at, margins):
            behind[n].append(m)
        print(f"{opponent:>10} agent {'B' if agent_black else 'W'} result {g['result']:>7} "
              f"({'won' if agent_score == 1 else 'drawn' if agent_score == 0.5 else 'lost'}): "
              + " ".join(f"move {n}: {m:+.1f}" for n, m in zip(at, margins)))
    for n, ms in behind.items():
        if ms:
            print(f"move {n}: agent behind in {sum(m < 0 for m in ms)}/{len(ms)} games, "
                  f"median margin {statistics.median(ms):+.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
