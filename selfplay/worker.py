"""A self-play worker: B games in lockstep on the batched MCTS core.

Every lockstep move searches all B positions at once (one evaluator call per
search step for the whole batch), picks moves, records training targets and
restarts finished games in place, so the batch never shrinks.

Targets (AlphaGo Zero): the policy target is the root visit distribution
(PUCT) or the completed-Q improved policy (Gumbel); the value target is the
final outcome z from the view of the player to move at that position.

Playout cap randomization (Wu 2019, KataGo): with probability
`full_search_prob` a move gets the full search and is recorded; otherwise a
cheap search picks the move and nothing is recorded. The coin is tossed once
per lockstep move for the whole batch, so every search step stays B wide;
each game still sees an independent coin per move in distribution.

Resignation: a player resigns when its root value drops below the threshold.
A fraction of games never resigns; in those, the first time a player would
have resigned is noted, and if that player then did not lose it counts as a
false resignation (AlphaGo Zero keeps this rate below 5%). Those games also
report each player's bleakest value, from which the runner sets the threshold
(selfplay/resign.py).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from azero.games.base import NO_ACTION, Game
from azero.search.config import SearchConfig
from azero.search.mcts import MCTS
from azero.search.result import most_visited, policy_value
from azero.selfplay.config import SelfPlayConfig
from azero.selfplay.hygiene import useless_moves, without_moves
from azero.selfplay.resign import bleakest


@dataclass
class GameRecord:
    """One finished self-play game; arrays cover only the recorded (full-search) moves."""

    obs: np.ndarray  # [T, C, H, W] float32, player to move's view
    policy: np.ndarray  # [T, A] float32 target
    legal: np.ndarray  # [T, A] bool
    to_play: np.ndarray  # [T] int8
    move_number: np.ndarray  # [T] int32, index of the move within the game
    actions: list[int]  # every move played, recorded or not
    outcome: float  # player 0's result: +1, 0, -1
    resigned: bool  # ended by resignation
    no_resign: bool  # belonged to the never-resign fraction
    false_resign: bool | None  # no-resign game where a would-be resigner did not lose; None if nobody would have
    score: float | None = None  # Go: Tromp-Taylor black minus white (komi included) when played out
    final_ownership: np.ndarray | None = None  # [H*W] int8 owner of each final point, player 0 +1 / player 1 -1
    ownership_known: bool = False  # the game has final ownership (Go, connect four), whether or not this one was played out
    root_value: np.ndarray | None = None  # [T] float32, the recorded searches' policy values (player to move)
    q_weight: float = 0.0  # SelfPlayConfig.value_q_weight
    q_lambda: float = 0.0  # SelfPlayConfig.value_q_lambda
    policy_weight: np.ndarray | None = None  # [T] float32 policy loss weights (cheap searches < 1); None: all 1
    surprise: np.ndarray | None = None  # [T] float32 KL(policy target || searched prior), nats
    bleakest: list | None = None  # no-resign games: [(bleakest value, lost)] per player (selfplay/resign.py)

    @property
    def outcomes(self) -> np.ndarray:
        """Per recorded position, the played-out outcome z (+1, 0, -1) from the player to move's view."""
        return np.where(self.to_play == 0, self.outcome, -self.outcome).astype(np.float32)

    @property
    def value_targets(self) -> np.ndarray:
        """Per recorded position, player to move's view: (1 - q_weight) z + q_weight q, q the
        q_lambda-return of the recorded search values (`lambda_returns`; q_lambda 0: this search's)."""
        z = self.outcomes
        if self.q_weight == 0.0 or self.root_value is None:
            return z
        q = self.root_value if self.q_lambda == 0.0 else lambda_returns(
            self.root_value, self.to_play, self.outcome, self.q_lambda)
        return ((1.0 - self.q_weight) * z + self.q_weight * q).astype(np.float32)

    def __len__(self) -> int:
        return len(self.actions)


@dataclass
class _Trajectory:
    obs: list = field(default_factory=list)
    policy: list = field(default_factory=list)
    legal: list = field(default_factory=list)
    to_play: list = field(default_factory=list)
    move_number: list = field(default_factory=list)
    root_value: list = field(default_factory=list)
    policy_weight: list = field(default_factory=list)
    surprise: list = field(default_factory=list)
    actions: list = field(default_factory=list)
    no_resign: bool = False
    would_resign: set = field(default_factory=set)  # players that would have resigned (no-resign games)
    low_streak: list = field(default_factory=lambda: [0, 0])  # per player: own moves in a row below threshold
    own_values: list = field(default_factory=lambda: [[], []])  # no-resign games: per player, root values


def lambda_returns(values: np.ndarray, to_play: np.ndarray, outcome: float, lam: float) -> np.ndarray:
    """float32 [T]: the TD(lambda) return of each recorded position, player to move's view.

    G_t = (1 - lam) v_t + lam G_{t+1}, G_T = z: the weights (1 - lam) lam^k fall on the search
    values of this and the k-th later recorded position (sign-flipped to position t's player), and
    the weight lam^(T - t) the game leaves on its outcome. lam 0 is this search's value alone, lam 1
    the outcome; the mean horizon is lam / (1 - lam) recorded positions. Later searches have seen
    more of the game than the network at t, and the outcome far away carries the noise of every
    exploratory move in between (Sutton 1988; KataGo's short-term value targets average later
    search values the same way, Wu 2019).
    """
    values = np.asarray(values, np.float64)  # [T]
    to_play = np.asarray(to_play)  # [T]
    assert values.shape == to_play.shape, (values.shape, to_play.shape)
    out = np.empty(len(values), np.float32)
    if not len(values):
        return out
    player = int(to_play[-1])  # whose view g is in
    g = outcome if player == 0 else -outcome
    for t in range(len(values) - 1, -1, -1):
        if int(to_play[t]) != player:
            player, g = int(to_play[t]), -g
        g = (1.0 - lam) * values[t] + lam * g
        out[t] = g
    return out


def policy_surprise(target: np.ndarray, prior: np.ndarray) -> np.ndarray:
    """float32 [B]: KL(target || prior) in nats, how much the search moved away from the network's
    prior (KataGo's policy surprise; the prior here includes any root noise the search mixed in)."""
    t = np.asarray(target, np.float64)
    p = np.maximum(np.asarray(prior, np.float64), 1e-12)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(t > 0, t * (np.log(np.maximum(t, 1e-300)) - np.log(p)), 0.0)
    return np.maximum(terms.sum(axis=1), 0.0).astype(np.float32)


class SelfPlayWorker:
    """Plays self-play games forever in chunks; `play(moves)` returns the games that finished."""

    def __init__(self, game: Game, evaluator, search: SearchConfig, cfg: SelfPlayConfig, *, seed: int):
        self.game = game
        self.spec = game.spec
        self.cfg = cfg
        B = cfg.games_in_parallel
        self.states = game.new_states(B)
        self.rng = np.random.default_rng(seed)
        self.full = MCTS(self.spec, evaluator, dataclasses.replace(search, seed=seed), batch_size=B)
        self.cheap = None
        if cfg.full_search_prob < 1.0:
            cheap_cfg = dataclasses.replace(search, simulations=cfg.cheap_simulations, seed=seed + 1,
                                            algorithm=cfg.cheap_algorithm,
                                            tree_reuse=search.tree_reuse and cfg.cheap_algorithm == "puct",
                                            dirichlet_weight=0.0, max_nodes=None)
            self.cheap = MCTS(self.spec, evaluator, cheap_cfg, batch_size=B)
        self.traj = [self._new_trajectory() for _ in range(B)]
        self.games_finished = 0
        self.moves_played = 0
        self.positions_recorded = 0
        self._moves = np.zeros(B, np.int32)
        self.resign_below: float | None = cfg.resign_threshold
        """Set by the runner: None until the network is trained enough to judge (resign_after_steps),
        then the threshold in force (selfplay/resign.py lowers it from resign_threshold)."""
        self.random_moves_played = 0
        self.pruned_moves = 0
        """Moves selfplay.prune_pass_alive replaced (chosen inside the mover's own pass-alive area)."""
        self._random_openings(np.arange(B))

    def _new_trajectory(self) -> _Trajectory:
        return _Trajectory(no_resign=bool(self.rng.random() < self.cfg.no_resign_fraction))

    @property
    def evaluations(self) -> int:
        n = self.full.stats["evaluated"]
        return n + (self.cheap.stats["evaluated"] if self.cheap is not None else 0)

    def play(self, moves: int) -> list[GameRecord]:
        """Play `moves` lockstep moves (each advances all B games by one move)."""
        finished: list[GameRecord] = []
        for _ in range(moves):
            finished.extend(self._step())
        return finished

    def _random_openings(self, games: np.ndarray) -> None:
        """Play selfplay.random_opening_moves-style random starts in the (fresh) games `games`.

        Each game draws whether it gets random moves and how many; one ply at a time, every game
        still owed a move plays a uniformly random legal non-pass move. A move that ends the game
        is taken back and the game's random start stops there, so search always gets a live position.
        """
        cfg = self.cfg
        if not cfg.random_opening_moves or not len(games):
            return
        chosen = games[self.rng.random(len(games)) < cfg.random_opening_fraction]
        owed = self.rng.integers(1, cfg.random_opening_moves + 1, size=len(chosen))
        states = self.states
        while len(chosen):
            sub = states.take(chosen)
            legal = sub.legal_mask()
            if self.spec.pass_action is not None:
                legal[:, self.spec.pass_action] = False
            live = legal.any(axis=1)
            keys = np.where(legal, self.rng.random(legal.shape), -1.0)
            actions = np.where(live, keys.argmax(axis=1), NO_ACTION).astype(np.int32)
            sub.apply(actions)
            ok = live & ~sub.terminal()
            keep = chosen[ok]
            states.put(keep, sub.take(np.flatnonzero(ok)))
            for b, a in zip(keep, actions[ok]):
                self.traj[b].actions.append(int(a))
            self.random_moves_played += len(keep)
            owed = owed[ok] - 1
            chosen = keep[owed > 0]
            owed = owed[owed > 0]

    def _sample_opening(self, search: MCTS, result) -> np.ndarray:
        """Opening moves drawn from result.action_weights (PUCT: the visit counts) at temperature 1, never
        a pass; a Gumbel search plays its own move (result.choose).

        With fewer simulations than legal moves most children get one visit, so the draw is
        nearly uniform; a pass drawn that way ends the game at once when the opponent passes
        back (Go: the side behind on the board, usually Black, loses by komi), and the pass
        visits then train the policy to pass even more. Self-play games collapsed to ~16
        moves within 200 steps that way. A pass stays possible as the search's argmax.
        """
        weights = result.action_weights
        pass_action = self.spec.pass_action
        if pass_action is not None and weights is not None:
            weights = weights.copy()
            others = np.delete(weights, pass_action, axis=1).sum(axis=1) > 0
            weights[others, pass_action] = 0
        return search.choose_actions(dataclasses.replace(result, action_weights=weights), temperature=1.0)

    def _no_pass_yet(self, num_moves: np.ndarray) -> np.ndarray | None:
        """bool [B]: games still inside selfplay.no_pass_moves (None when the rule is off)."""
        if not self.cfg.no_pass_moves or self.spec.pass_action is None:
            return None
        young = num_moves < self.cfg.no_pass_moves
        return young if young.any() else None

    def _replace_early_passes(self, young: np.ndarray, actions: np.ndarray, result):
        """Young games play their most visited non-pass move instead of a pass, and their policy
        targets drop the pass (renormalised), so the network does not learn to pass early.

        An untrained value head cannot see that a pass loses to the opponent's immediate pass
        (two plies deeper), so without this rule self-play games end in a few moves.
        """
        p = self.spec.pass_action
        visits = result.visits.copy()
        visits[:, p] = 0
        alternative = most_visited(visits)
        # No other move visited (the search spent everything on the pass): the best prior instead.
        prior = result.prior.copy()
        prior[:, p] = 0
        unvisited = alternative == NO_ACTION
        alternative[unvisited] = np.where(prior[unvisited].max(axis=1) > 0, prior[unvisited].argmax(axis=1), NO_ACTION)
        swap = young & (actions == p) & (alternative != NO_ACTION)
        actions = np.where(swap, alternative, actions).astype(np.int32)
        policy = result.policy.copy()
        rest = policy.sum(axis=1) - policy[:, p]
        rows = young & (rest > 0)
        policy[rows, p] = 0
        policy[rows] /= policy[rows].sum(axis=1, keepdims=True)
        only_pass = np.flatnonzero(young & (rest <= 0) & swap)  # the target is the move played instead
        policy[only_pass] = 0
        policy[only_pass, actions[only_pass]] = 1
        return actions, policy

    def _prune_useless(self, actions: np.ndarray, policy: np.ndarray, result):
        """selfplay.prune_pass_alive: no move inside one's own pass-alive area after the opponent passed."""
        p = self.spec.pass_action
        passed = np.array([bool(t.actions) and t.actions[-1] == p for t in self.traj])
        prune = useless_moves(self.states, passed, p)
        if prune is None:
            return actions, policy
        self.pruned_moves += int(prune[np.arange(len(actions)), np.maximum(actions, 0)].sum())
        return without_moves(dataclasses.replace(result, policy=policy), prune, actions)

    def _step(self) -> list[GameRecord]:
        cfg = self.cfg
        B = cfg.games_in_parallel
        states = self.states
        full = self.cheap is None or self.rng.random() < cfg.full_search_prob
        search = self.full if full else self.cheap
        result = search.run(states)
        num_moves = states.num_moves(out=self._moves)
        if not full:
            # Cheap searches only play good moves (KataGo): exploration comes from the full ones.
            actions = result.action.copy()
        else:
            actions = np.where(num_moves < cfg.temperature_moves, self._sample_opening(search, result),
                               result.action).astype(np.int32)
        policy = result.policy
        young = self._no_pass_yet(num_moves)
        if young is not None:
            actions, policy = self._replace_early_passes(young, actions, result)
        if cfg.prune_pass_alive and self.spec.pass_action is not None:
            actions, policy = self._prune_useless(actions, policy, result)

        weight = 1.0 if full else cfg.cheap_target_weight
        if weight > 0:
            surprise = policy_surprise(policy, result.prior)
            root_value = policy_value(result)
            obs = states.encode()
            legal = states.legal_mask()
            to_play = states.to_play()
            for b in range(B):
                t = self.traj[b]
                t.obs.append(obs[b])
                t.policy.append(policy[b])
                t.legal.append(legal[b])
                t.to_play.append(to_play[b])
                t.move_number.append(int(num_moves[b]))
                t.root_value.append(float(root_value[b]))
                t.policy_weight.append(weight)
                t.surprise.append(float(surprise[b]))
            self.positions_recorded += B

        resigned = np.full(B, -1, np.int8)  # the player who resigns in game b, or -1
        if self.resign_below is not None:  # None: resigning off, or not yet (resign_after_steps)
            player = states.to_play()
            judged = num_moves >= cfg.resign_min_moves
            low = (result.value < self.resign_below) & judged
            for b in range(B):
                t, p = self.traj[b], int(player[b])
                if t.no_resign and judged[b]:
                    t.own_values[p].append(float(result.value[b]))
                t.low_streak[p] = t.low_streak[p] + 1 if low[b] else 0
                if t.low_streak[p] < cfg.resign_consecutive:
                    continue
                if t.no_resign:
                    t.would_resign.add(p)
                else:
                    resigned[b] = p
        actions[resigned >= 0] = NO_ACTION

        states.apply(actions)
        for b in range(B):
            if actions[b] != NO_ACTION:
                self.traj[b].actions.append(int(actions[b]))
        self.moves_played += int(np.count_nonzero(actions != NO_ACTION))

        done = states.terminal() | (resigned >= 0)
        records = []
        if done.any():
            outcome = states.outcome()
            score = states.score() if hasattr(states, "score") else None
            # Final ownership, a target per point (KataGo): Go's area of the played-out position, a
            # placement game's final board.
            owner = states.ownership() if hasattr(states, "ownership") else None
            for b in np.flatnonzero(done):
                z = float(outcome[b]) if resigned[b] < 0 else (1.0 if resigned[b] == 1 else -1.0)
                played_out = resigned[b] < 0
                records.append(self._finish(b, z, not played_out,
                                            float(score[b]) if score is not None and played_out else None,
                                            owner[b].copy() if owner is not None and played_out else None,
                                            owner is not None))
            restarted = np.flatnonzero(done)
            states.reset(restarted)
            self._random_openings(restarted)
        # Trees follow the games: the played move's subtree, or a fresh root after a restart.
        advance = np.where(done, NO_ACTION, actions).astype(np.int32)
        self.full.advance(advance)
        if self.cheap is not None:
            self.cheap.advance(advance)
        return records

    def _finish(self, b: int, z: float, resigned: bool, score: float | None, ownership: np.ndarray | None = None,
                ownership_known: bool = False) -> GameRecord:
        t = self.traj[b]
        self.traj[b] = self._new_trajectory()
        self.games_finished += 1
        A = self.spec.num_actions
        false_resign = None
        if t.no_resign and t.would_resign:
            # A would-be resigner that did not lose: resigning would have thrown the game away.
            false_resign = any((z >= 0) if p == 0 else (z <= 0) for p in t.would_resign)
        bleak = None
        if t.no_resign and (t.own_values[0] or t.own_values[1]):
            # lost: player 0 lost iff z < 0 (a draw is not a loss, as for false_resign)
            bleak = [(bleakest(t.own_values[p], self.cfg.resign_consecutive), (z < 0) if p == 0 else (z > 0))
                     for p in (0, 1)]
        n = len(t.obs)
        return GameRecord(
            obs=np.stack(t.obs) if n else np.zeros((0, *self.spec.obs_shape), np.float32),
            policy=np.stack(t.policy).astype(np.float32) if n else np.zeros((0, A), np.float32),
            legal=np.stack(t.legal) if n else np.zeros((0, A), bool),
            to_play=np.asarray(t.to_play, np.int8),
            move_number=np.asarray(t.move_number, np.int32),
            actions=t.actions,
            outcome=z,
            resigned=resigned,
            no_resign=t.no_resign,
            false_resign=false_resign,
            score=score,
            final_ownership=ownership,
            ownership_known=ownership_known,
            root_value=np.clip(np.asarray(t.root_value, np.float32), -1.0, 1.0),
            q_weight=self.cfg.value_q_weight,
            q_lambda=self.cfg.value_q_lambda,
            policy_weight=np.asarray(t.policy_weight, np.float32) if any(w != 1.0 for w in t.policy_weight) else None,
            surprise=np.asarray(t.surprise, np.float32),
            bleakest=bleak,
        )
