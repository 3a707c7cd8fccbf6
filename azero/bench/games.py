"""`azero bench games`: random playouts through azero's batched game interface
vs the same game in OpenSpiel driven from Python the usual way
(state.legal_actions() / random choice / state.apply_action()).

Three figures per game, in moves/s:
  batched  — legal_mask() + one vectorised random choice + apply() per step for
             B games at once, finished games reset (what search and self-play do);
  playout  — States.random_playout(): whole random games inside the engine
             (what a random-rollout evaluator does);
  openspiel — pyspiel, one state at a time.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass

import numpy as np

from azero.games import make_game

# The same rules in OpenSpiel, by azero game name.
OPENSPIEL_NAMES = {
    "go9x9": "go(board_size=9,komi=7.5,max_game_length=162)",
    "connect4": "connect_four",
    "tictactoe": "tic_tac_toe",
}


@dataclass
class GameBenchResult:
    game: str
    batched: float
    playout: float
    openspiel: float | None


def bench_batched(game, batch: int, seconds: float, seed: int) -> float:
    """Moves/s of random play through legal_mask/apply on a batch of `batch` games."""
    rng = np.random.default_rng(seed)
    states = game.new_states(batch)
    A = game.spec.num_actions
    mask = np.zeros((batch, A), dtype=bool)
    term = np.zeros(batch, dtype=bool)
    noise = np.empty((batch, A))
    moves = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        for _ in range(20):
            states.terminal(out=term)
            if term.any():
                states.reset(np.flatnonzero(term))
            states.legal_mask(out=mask)
            rng.random(out=noise)
            # Uniform among legal moves: the largest noise value among legal entries.
            actions = np.where(mask, noise, -1.0).argmax(axis=1).astype(np.int32)
            states.apply(actions)
            moves += batch
        if time.perf_counter() >= deadline:
            break
    return moves / (time.perf_counter() - start)


def bench_playout(game, batch: int, seconds: float, seed: int) -> float:
    """Moves/s of States.random_playout (whole games in the engine)."""
    states = game.new_states(batch)
    counts = np.zeros(batch, dtype=np.int32)
    moves = 0
    rounds = 0
    start = time.perf_counter()
    while True:
        states.reset()
        states.random_playout(seed + rounds)
        moves += int(states.num_moves(out=counts).sum())
        rounds += 1
        if time.perf_counter() - start >= seconds:
            break
    return moves / (time.perf_counter() - start)


def bench_openspiel(load_string: str, seconds: float, seed: int) -> float:
    import pyspiel

    game = pyspiel.load_game(load_string)
    rng = random.Random(seed)
    moves = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        state = game.new_initial_state()
        while not state.is_terminal():
            state.apply_action(rng.choice(state.legal_actions()))
            moves += 1
    return moves / (time.perf_counter() - start)


def run_games_bench(names: list[str], *, batch: int = 256, seconds: float = 3.0, seed: int = 0,
                    include_openspiel: bool = True, log=print) -> list[GameBenchResult]:
    results = []
    log(f"azero bench games: batch={batch}, {seconds:g} s per measurement, seed={seed}")
    log(f"{'game':<10} {'azero batched':>15} {'azero playout':>15} {'openspiel':>12} "
        f"{'batched/os':>11} {'playout/os':>11}")
    for name in names:
        game = make_game(name)
        batched = bench_batched(game, batch, seconds, seed)
        playout = bench_playout(game, batch, seconds, seed)
        os_rate = None
        if include_openspiel and name in OPENSPIEL_NAMES:
            os_rate = bench_openspiel(OPENSPIEL_NAMES[name], seconds, seed)
        ratio = (lambda x: f"{x / os_rate:10.2f}x") if os_rate else (lambda x: f"{'-':>11}")
        log(f"{name:<10} {batched:15,.0f} {playout:15,.0f} {os_rate or 0:12,.0f} "
            f"{ratio(batched)} {ratio(playout)}")
        results.append(GameBenchResult(name, batched, playout, os_rate))
    log("moves/s; 'batched' = legal_mask + vectorised random choice + apply per step, "
        "'playout' = random_playout in the engine, 'openspiel' = pyspiel from Python.")
    return results
