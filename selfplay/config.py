"""Typed configuration of the `selfplay` group (hydra structured config)."""

from __future__ import annotations

import dataclasses
from typing import Optional


@dataclasses.dataclass
class SelfPlayConfig:
    """How self-play games are generated."""

    games_in_parallel: int = 32
    """B: games one worker plays in lockstep; every search step evaluates up to B leaves at once."""
    temperature_moves: int = 8
    """PUCT: the first this many moves of a game are sampled from the visit counts (temperature 1)
    for opening diversity; later moves take the most visited action."""
    resign_threshold: Optional[float] = -0.9
    """Resign when the root value (player to move's view) falls below this; null disables resigning.
    With resign_false_target set this is the highest threshold the run may use and the one it
    starts from."""
    resign_false_target: Optional[float] = None
    """Lower the threshold below resign_threshold as far as needed for at most this fraction of the
    would-be resignations in the recent no-resign games to be false (AlphaGo Zero's automatic
    v_resign used 0.05; selfplay/resign.py). null (the default, until an ablation shows it pays)
    keeps resign_threshold fixed, as every run in the README was trained."""
    resign_window: int = 1000
    """How many recent (no-resign game, player) pairs the automatic threshold is measured on."""
    resign_min_moves: int = 10
    """Never resign before this many moves have been played."""
    resign_consecutive: int = 2
    """Resign only after the root value stayed below the threshold for this many of the
    player's own moves in a row (one noisy search does not end a game)."""
    resign_after_steps: int = 100
    """Resignation is off until the trainer has taken this many steps: an untrained value head
    outputs nearly the same value everywhere, which would make one side resign every game."""
    no_resign_fraction: float = 0.1
    """Fraction of games that never resign; they measure the false-resign rate (AlphaGo Zero: 10%)."""
    full_search_prob: float = 0.25
    """Playout cap randomization (KataGo): probability that a move gets the full search and is
    recorded as a training target; other moves use cheap_simulations and are not recorded.
    1.0 disables it (every move full and recorded)."""
    cheap_simulations: int = 16
    """Simulations of the cheap, unrecorded searches of playout cap randomization."""
    cheap_target_weight: float = 0.0
    """Record the cheap searches' positions too, their policy loss weighted by this (0: not
    recorded, KataGo's choice: a small PUCT search's visit counts are a poor target). Meant for
    cheap_algorithm=gumbel, whose completed-Q improved policy is a sound target even at a few
    simulations (Danihelka et al. 2022: Gumbel MuZero learns 9x9 Go with 2 simulations per move)."""
    cheap_algorithm: str = "puct"
    """Search algorithm of the cheap searches: 'puct' or 'gumbel' (then with its Gumbel root noise,
    as self-play needs; the full searches keep search.algorithm)."""
    no_pass_moves: int = 0
    """Games with a pass action (Go) never pass before this many moves in self-play: the most
    visited other move is played and the pass leaves the policy target. An untrained network
    cannot see that a pass loses to the opponent's pass back, and self-play collapses into
    games of a few moves (measured: mean length 16 on 9x9). 0: off. Evaluation play is unaffected."""
    prune_pass_alive: bool = False
    """Games with pass-alive areas (Go): after the opponent passes, never play inside one's own
    pass-alive area (KataGo's pruning of useless moves): such a move cannot gain, and a value
    head that sees a won or lost game plays them as readily as any. The most visited other move
    is played instead and the pruned moves leave the policy target; the only legal non-pass
    move is never pruned (a pass stays available)."""
    value_q_weight: float = 0.0
    """Value target (1 - w) z + w q: z the game's outcome, q the recorded search's root value under
    its policy target (search.result.policy_value: not the mean backed-up value, which a Gumbel
    root drags towards the moves it ruled out), both from the player to move's view. 0 is
    AlphaZero (outcome only). A share of q lowers the target's noise where exploration moves
    later in the game flipped the result (Oracle's connect-four study averaged the two)."""
    value_q_lambda: float = 0.0
    """With value_q_weight > 0, the q of the value target is the TD(lambda) return of this and the
    later recorded searches' values, the game's outcome taking the weight left at its end
    (selfplay.worker.lambda_returns): weights (1 - lambda) lambda^k on the k-th recorded position
    from here. 0: this search's value alone. A later search has seen more of the game than the
    network at this position; the mean horizon is lambda / (1 - lambda) recorded positions."""
    random_opening_moves: int = 0
    """A share (random_opening_fraction) of games start from k uniformly random moves, k drawn
    uniformly from 1..this, played without search and not recorded. Self-play on its own
    rarely reaches the lopsided positions that blunders create, so the network never learns
    to judge them (connect four: accuracy on positions from random playouts). Random moves
    that would end the game are taken back. 0: off (AlphaZero)."""
    random_opening_fraction: float = 0.5
    """Share of games that start with random moves when random_opening_moves > 0."""
    sgf_every: int = 10
    """Write every n-th finished Go game as SGF (0: none)."""

    def __post_init__(self) -> None:
        if self.games_in_parallel < 1:
            raise ValueError(f"SelfPlayConfig.games_in_parallel must be >= 1, got {self.games_in_parallel}")
        if not 0.0 < self.full_search_prob <= 1.0:
            raise ValueError(f"SelfPlayConfig.full_search_prob must lie in (0, 1], got {self.full_search_prob}")
        if not 0.0 <= self.no_resign_fraction <= 1.0:
            raise ValueError(f"SelfPlayConfig.no_resign_fraction must lie in [0, 1], got {self.no_resign_fraction}")
        if self.resign_false_target is not None and not 0.0 <= self.resign_false_target < 1.0:
            raise ValueError("SelfPlayConfig.resign_false_target must lie in [0, 1) or be null, "
                             f"got {self.resign_false_target}")
        if self.resign_false_target is not None and self.resign_threshold is None:
            raise ValueError(f"SelfPlayConfig.resign_false_target={self.resign_false_target} needs resign_threshold "
                             "(null: resigning is off, so there is no threshold to set)")
        if self.resign_window < 1:
            raise ValueError(f"SelfPlayConfig.resign_window must be >= 1, got {self.resign_window}")
        if self.no_pass_moves < 0:
            raise ValueError(f"SelfPlayConfig.no_pass_moves must be >= 0, got {self.no_pass_moves}")
        if not 0.0 <= self.value_q_weight <= 1.0:
            raise ValueError(f"SelfPlayConfig.value_q_weight must lie in [0, 1], got {self.value_q_weight}")
        if not 0.0 <= self.value_q_lambda <= 1.0:
            raise ValueError(f"SelfPlayConfig.value_q_lambda must lie in [0, 1], got {self.value_q_lambda}")
        if self.value_q_lambda > 0.0 and self.value_q_weight == 0.0:
            # the return only replaces the q that value_q_weight mixes in: alone it would change nothing
            raise ValueError(f"SelfPlayConfig.value_q_lambda={self.value_q_lambda} needs value_q_weight > 0 "
                             "(the outcome-only target has no q to replace)")
        if self.random_opening_moves < 0:
            raise ValueError(f"SelfPlayConfig.random_opening_moves must be >= 0, got {self.random_opening_moves}")
        if not 0.0 <= self.random_opening_fraction <= 1.0:
            raise ValueError("SelfPlayConfig.random_opening_fraction must lie in [0, 1], "
                             f"got {self.random_opening_fraction}")
        if not 0.0 <= self.cheap_target_weight <= 1.0:
            raise ValueError(f"SelfPlayConfig.cheap_target_weight must lie in [0, 1], got {self.cheap_target_weight}")
        if self.cheap_algorithm not in ("puct", "gumbel"):
            raise ValueError(f"SelfPlayConfig.cheap_algorithm must be 'puct' or 'gumbel', got {self.cheap_algorithm!r}")
        if self.cheap_simulations < 1:
            raise ValueError(f"SelfPlayConfig.cheap_simulations must be >= 1, got {self.cheap_simulations}")
