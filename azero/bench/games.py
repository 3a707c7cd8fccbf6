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
from azero.games.openspiel_twin import OPENSPIEL_NAMES  # the same rules in OpenSpiel, by azero game name


@dataclass
class GameBenchResult:
    game: str
    batched: float
    playout: float
    openspiel: float | None


CANDIDATES = 6
"""Random actions drawn per row at once by random_legal_actions (6 was fastest on Go 9x9 mid-game,
where about 40% of the actions are legal: one vectorised draw settles all but ~5% of the rows)."""


def random_legal_actions(mask: np.ndarray, rng: np.random.Generator, out: np.ndarray) -> np.ndarray:
    """One uniformly random legal action per row, by vectorised rejection sampling.

    Each row draws CANDIDATES actions uniformly at once and takes the first legal one;
    rows where none is legal (few legal moves, e.g. a full Go board) take the argmax of
    uniform noise over their legal entries. Both routes are uniform over the row's legal
    set, so the result is; most rows cost O(CANDIDATES) instead of the O(A) of a
    noise-argmax, and the whole batch takes a fixed handful of numpy calls.
    Every row must have a legal action.
    """
    B, A = mask.shape
    rows = np.arange(B)
    cand = rng.integers(0, A, size=(B, CANDIDATES), dtype=np.int32)
    ok = mask[rows[:, None], cand]
    first = ok.argmax(axis=1)
    out[:] = cand[rows, first]
    todo = np.flatnonzero(~ok[rows, first])
    if todo.size:
        noise = rng.random((todo.size, A), dtype=np.float32) * mask[todo]
        out[todo] = noise.argmax(axis=1)
    return out


class _BatchedDriver:
    """Random play through legal_mask/apply on a batch of `batch` games, finished games reset."""

    def __init__(self, game, batch: int, seed: int):
        self.rng = np.random.default_rng(seed)
        self.states = game.new_states(batch)
        self.batch = batch
        self.mask = np.zeros((batch, game.spec.num_actions), dtype=bool)
        self.term = np.zeros(batch, dtype=bool)
        self.actions = np.zeros(batch, dtype=np.int32)

    def run(self, seconds: float) -> tuple[int, float]:
        states, moves = self.states, 0
        start = time.perf_counter()
        deadline = start + seconds
        while True:
            for _ in range(20):
                states.terminal(out=self.term)
                if self.term.any():
                    states.reset(np.flatnonzero(self.term))
                states.legal_mask(out=self.mask)
                states.apply(random_legal_actions(self.mask, self.rng, self.actions))
                moves += self.batch
            if time.perf_counter() >= deadline:
                return moves, time.perf_counter() - start


def bench_batched(game, batch: int, seconds: float, seed: int) -> float:
    """Moves/s of random play through legal_mask/apply on a batch of `batch` games."""
    moves, secs = _BatchedDriver(game, batch, seed).run(seconds)
    return moves / secs


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


class _OpenSpielDriver:
    """pyspiel driven from Python the usual way: legal_actions(), random.choice, apply_action()."""

    def __init__(self, load_string: str, seed: int):
        import pyspiel

        self.game = pyspiel.load_game(load_string)
        self.rng = random.Random(seed)
        self.state = self.game.new_initial_state()

    def run(self, seconds: float) -> tuple[int, float]:
        moves = 0
        state, rng = self.state, self.rng
        start = time.perf_counter()
        deadline = start + seconds
        while time.perf_counter() < deadline:
            for _ in range(100):
                if state.is_terminal():
                    state = self.game.new_initial_state()
                state.apply_action(rng.choice(state.legal_actions()))
                moves += 1
        self.state = state
        return moves, time.perf_counter() - start


def run_games_bench(names: list[str], *, batch: int = 256, seconds: float = 3.0, seed: int = 0,
                    include_openspiel: bool = True, rounds: int = 5, log=print) -> list[GameBenchResult]:
    """Per game: `rounds` alternating slices of azero-batched and OpenSpiel (so both see the same
    machine load), medians reported; then the in-engine playout rate."""
    results = []
    log(f"azero bench games: batch={batch}, {seconds:g} s per side in {rounds} alternating rounds, seed={seed}")
    log(f"{'game':<10} {'azero batched':>15} {'azero playout':>15} {'openspiel':>12} "
        f"{'batched/os':>11} {'playout/os':>11}")
    for name in names:
        game = make_game(name)
        ours = _BatchedDriver(game, batch, seed)
        peer = _OpenSpielDriver(OPENSPIEL_NAMES[name], seed) if include_openspiel and name in OPENSPIEL_NAMES else None
        ours.run(min(0.2, seconds / rounds))  # warm-up: games in mid-play, caches filled
        a_rates, p_rates, ratios = [], [], []
        for _ in range(rounds):
            m, t = ours.run(seconds / rounds)
            a_rates.append(m / t)
            if peer is not None:
                m, t = peer.run(seconds / rounds)
                p_rates.append(m / t)
                ratios.append(a_rates[-1] / p_rates[-1])
        batched = float(np.median(a_rates))
        playout = bench_playout(game, batch, seconds / 2, seed)
        os_rate = float(np.median(p_rates)) if p_rates else None
        if os_rate:
            r1 = f"{float(np.median(ratios)):10.2f}x"
            r2 = f"{playout / os_rate:10.2f}x"
        else:
            r1 = r2 = f"{'-':>11}"
        log(f"{name:<10} {batched:15,.0f} {playout:15,.0f} {os_rate or 0:12,.0f} {r1} {r2}")
        results.append(GameBenchResult(name, batched, playout, os_rate))
    log("moves/s (medians over rounds); 'batched' = legal_mask + vectorised random choice + apply per step "
        "for B games, 'playout' = random_playout inside the engine, 'openspiel' = pyspiel from Python.")
    return results
