"""The replay buffer: a growing sliding window over the newest self-play positions, kept on disk.

Window. After N positions have ever been added, training samples uniformly
from the newest

    W(N) = min(N, max_window, max(min_window, floor(window_scale * N ** window_exponent)))

positions. A fixed window either keeps the first, weakest games far too long
(large window) or over-fits the few games of a young run (small window);
growing it sublinearly in N, as KataGo does (Wu 2019, section 4, "the window
grows with the data"), gives early training fresh data and later training a
broad one. With the defaults W is all data up to 20k positions, about 22k at
N = 100k, 126k at N = 1M, and capped at 500k from N = 10M on.

Shards. Each `add` (one finished batch of games) becomes one file

    shard_<index:08d>_<start:012d>_<n:06d>.npz

where `index` counts shards (0, 1, 2, ... in write order), `start` is the
global number of the shard's first position and `n` its number of positions.
The positions of shard k are therefore [start, start + n), and the name alone
says how much data exists, so a restart learns N and the window without
opening any shard outside it. Shards are written atomically (see atomic.py):
a crash leaves either the whole shard or none, plus perhaps a hidden temp file
that is ignored. They are plain npz (no pickle) holding:

    obs      [n, C, H, W]  uint8 when every value is an integer in [0, 255] (0/1 planes), else
                           float16 when float16 holds the values exactly, else float32;
                           the array's dtype records which
    pi       [n, A]  float32  policy target (root visit distribution), 0 on illegal actions
    z        [n]     float32  value target: the game outcome from the player to move's view
    legal    [n, A]  bool     legal actions
    game_id  [n]     int64    which game the position comes from (the caller's numbering)
    move     [n]     int32    move number of the position within its game
    meta     [4]     int64    format version, index, start, n (cross-checked against the name)

and, in format 2, for games with a final score (Go; KataGo's auxiliary targets, Wu 2019 section 4.1):

    ownership  [n, H*W]  int8     final owner of each point from the player to move's view
                                  (+1 own, -1 opponent's, 0 neither), by area of the final position
    score      [n]       float32  final score (komi included) from the player to move's view
    has_final  [n]       bool     whether the game was played out (a resigned game has no final
                                  position: its ownership and score losses are masked)

and, also optional in format 2,

    policy_weight [n]    float32  weight of the position's policy loss (cheap searches recorded
                                  with selfplay.cheap_target_weight); absent means 1
    surprise      [n]    float32  KL(policy target || prior) of the recorded search, nats: with
                                  surprise_weight > 0 surprising positions are sampled more often
                                  (KataGo's policy-surprise weighting); absent means 0

    outcome       [n]    float32  the played-out outcome (+1, 0, -1, player to move's view) where z
                                  is mixed with the search's value (selfplay.value_q_weight): the
                                  win / draw / loss head learns its classes from it; absent means z

Format-1 shards (written before these targets existed) still load, with has_final false.

Sample budget. A position should be trained on a bounded number of times, or
the network over-fits the current window while self-play is slow (the replay
ratio of Schrittwieser et al. 2020 and KataGo's "samples per new data row").
`can_sample(b)` is true while samples_drawn + b <= max_samples_per_position * N;
the trainer asks it before each step and waits for self-play when it is false.
`samples_drawn` lives in memory; a trainer that restarts passes the number of
samples it had trained on (its checkpoint records it) back as `samples_drawn=`.

A ReplayBuffer owns its directory: one writer per directory, calls not
thread-safe (as a Ray actor its calls are serialised anyway).
"""

from __future__ import annotations

import dataclasses
import logging
import os
import re
import zipfile
import zlib
from pathlib import Path
from typing import Optional, Protocol, Sequence

import numpy as np

from azero.train.atomic import is_temp_name, write_atomic

log = logging.getLogger(__name__)

FORMAT_VERSION = 2
READABLE_VERSIONS = (1, 2)
SHARD_NAME = "shard_{index:08d}_{start:012d}_{n:06d}.npz"
_SHARD_RE = re.compile(r"^shard_(\d{8,})_(\d{12,})_(\d{6,})\.npz$")
_KEYS = ("obs", "pi", "z", "legal", "game_id", "move", "meta")
_FINAL_KEYS = ("ownership", "score", "has_final")  # format 2, optional: only games that store final targets
_OBS_DTYPES = (np.dtype(np.uint8), np.dtype(np.float16), np.dtype(np.float32))


@dataclasses.dataclass
class ReplayConfig:
    """Window size, sampling budget and storage of the replay buffer."""

    min_window: int = 20_000
    """The window never shrinks below this many positions (all data while there is less)."""
    max_window: int = 500_000
    """The window never grows beyond this many positions."""
    window_scale: float = 4.0
    """c in W(N) = c * N^alpha (before the min/max clamps)."""
    window_exponent: float = 0.75
    """alpha in W(N) = c * N^alpha; 1.0 makes the window a fixed fraction c of all data."""
    max_samples_per_position: Optional[float] = 8.0
    """Training samples allowed per position ever added (replay ratio); null means unlimited."""
    min_positions: int = 1_000
    """can_sample stays false until the window holds this many positions."""
    augment: bool = True
    """Apply a random symmetry of the game to each sampled position."""
    compress: bool = True
    """Write shards with zip deflate (0/1 planes shrink ~10x; costs CPU on write and load)."""
    surprise_weight: float = 0.0
    """Share of the sampling mass spread in proportion to each position's policy surprise
    (KL(target || prior)); the rest is uniform. KataGo uses 0.5. 0: uniform sampling."""
    skip_corrupt: bool = False
    """Log and skip unreadable shards on reload instead of raising ReplayShardError."""

    def __post_init__(self) -> None:
        if not 1 <= self.min_window <= self.max_window:
            raise ValueError(f"ReplayConfig: need 1 <= min_window <= max_window, got {self.min_window}, {self.max_window}")
        if self.window_scale <= 0 or not 0 < self.window_exponent <= 1:
            raise ValueError(f"ReplayConfig: need window_scale > 0 and 0 < window_exponent <= 1, "
                             f"got {self.window_scale}, {self.window_exponent}")
        if not 0.0 <= self.surprise_weight <= 1.0:
            raise ValueError(f"ReplayConfig.surprise_weight must lie in [0, 1], got {self.surprise_weight}")
        if self.max_samples_per_position is not None and self.max_samples_per_position <= 0:
            raise ValueError(f"ReplayConfig.max_samples_per_position must be > 0 or null, "
                             f"got {self.max_samples_per_position}")


def window_size(total: int, cfg: ReplayConfig) -> int:
    """W(N): how many of the newest `total` positions are sampled from (see the module docstring)."""
    grown = int(cfg.window_scale * float(total) ** cfg.window_exponent)
    return min(total, cfg.max_window, max(cfg.min_window, grown))


class ReplayShardError(Exception):
    """A shard file that cannot be used: unreadable, truncated, or inconsistent with its name or game."""

    def __init__(self, path: str | os.PathLike, reason: str):
        self.path = Path(path)
        self.reason = reason
        super().__init__(f"replay shard {self.path}: {reason}")


class Transform(Protocol):
    """A symmetry of the game (azero.games.symmetry.Symmetry is one)."""

    def apply_obs(self, obs: np.ndarray) -> np.ndarray:
        """[..., H, W] -> [..., H, W], a new array."""

    def apply_policy(self, pi: np.ndarray) -> np.ndarray:
        """[..., A] -> [..., A], a new array; also used for legal masks."""


@dataclasses.dataclass(frozen=True)
class ReplayStats:
    """A snapshot of the buffer's counters."""

    positions_total: int
    """N: positions ever added, including those of shards no longer in the window."""
    positions_in_window: int
    """Positions that can be sampled now (W(N) minus any skipped corrupt shards)."""
    window_size: int
    """W(N)."""
    shards_total: int
    """Shards on disk (found at start plus written since)."""
    shards_in_window: int
    """Shards with at least one position in the window (held in memory)."""
    shards_skipped: int
    """Corrupt shards skipped on reload (skip_corrupt=True)."""
    samples_drawn: int
    """Positions handed out by sample()."""
    samples_allowed: Optional[int]
    """max_samples_per_position * N, or None when unlimited."""


@dataclasses.dataclass
class _Shard:
    path: Path
    index: int
    start: int  # global number of the first position
    n: int
    data: Optional[dict[str, np.ndarray]] = None  # the arrays of _KEYS minus meta; set while in the window

    @property
    def end(self) -> int:
        return self.start + self.n


def compact_obs(obs: np.ndarray) -> np.ndarray:
    """obs in the smallest of uint8 / float16 / float32 that holds every value exactly."""
    x = np.asarray(obs, dtype=np.float32)
    if np.all((x >= 0) & (x <= 255) & (x == np.floor(x))):
        return x.astype(np.uint8)
    h = x.astype(np.float16)
    if np.array_equal(h.astype(np.float32), x):
        return h
    return x


class ReplayBuffer:
    """Sliding window over self-play positions stored as atomic npz shards in `directory`."""

    def __init__(
        self,
        directory: str | os.PathLike,
        shapes,
        *,
        cfg: ReplayConfig | None = None,
        transforms: Sequence[Transform] | None = None,
        samples_drawn: int = 0,
    ):
        """Open (creating if needed) `directory` and load the shards in the window.

        shapes: anything with obs_shape (C, H, W) and num_actions, e.g. a GameSpec.
        transforms: the symmetries used for augmentation; by default those of
            shapes.symmetry when shapes is a GameSpec and cfg.augment is set
            (identity only otherwise).
        samples_drawn: samples already trained on, restored from a checkpoint.
        """
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.obs_shape: tuple[int, int, int] = tuple(int(d) for d in shapes.obs_shape)  # type: ignore[assignment]
        self.num_actions = int(shapes.num_actions)
        self.cfg = cfg if cfg is not None else ReplayConfig()
        self.transforms: list[Transform] = self._pick_transforms(shapes, transforms)
        self.samples_drawn = int(samples_drawn)

        self._shards: list[_Shard] = []  # in the window, oldest first
        self._total = 0
        self._next_index = 0
        self._shards_total = 0
        self._skipped = 0
        self._segments: Optional[tuple[list[_Shard], np.ndarray, np.ndarray]] = None
        self._surprise_cdf = None  # (cumulative sampling weights, the _segments they were built for)
        self._reload()

    def _pick_transforms(self, shapes, transforms: Sequence[Transform] | None) -> list[Transform]:
        if transforms is not None:
            if len(transforms) == 0:
                raise ValueError("ReplayBuffer: transforms must hold at least the identity")
            return list(transforms)
        if self.cfg.augment and hasattr(shapes, "symmetry") and hasattr(shapes, "board_shape"):
            from azero.games.symmetry import symmetries

            return list(symmetries(shapes))
        return [_Identity()]

    # ------------------------------------------------------------------ disk

    def _scan(self) -> list[_Shard]:
        shards, strays = [], []
        for name in os.listdir(self.directory):
            if is_temp_name(name):
                strays.append(name)  # a writer crashed before os.replace: the shard never existed
                continue
            m = _SHARD_RE.match(name)
            if m:
                index, start, n = (int(g) for g in m.groups())
                shards.append(_Shard(self.directory / name, index, start, n))
        if strays:
            log.warning("replay %s: ignoring %d unfinished temp file(s) left by a crash: %s",
                        self.directory, len(strays), ", ".join(sorted(strays)[:5]))
        shards.sort(key=lambda s: s.index)
        for s in shards:
            if s.n == 0:
                raise ReplayShardError(s.path, "empty shard")
        # shard k+1 starts where shard k ended (or later, if shards were deleted): anything
        # else would count positions twice or lose track of N
        for prev, cur in zip(shards, shards[1:]):
            if cur.index == prev.index:
                raise ReplayShardError(cur.path, f"shard index {cur.index} also used by {prev.path.name}")
            if cur.start < prev.end:
                raise ReplayShardError(cur.path, f"starts at position {cur.start} but {prev.path.name} "
                                                 f"ends at {prev.end}: overlapping shards")
        return shards

    def _reload(self) -> None:
        shards = self._scan()
        self._shards_total = len(shards)
        if shards:
            self._total = shards[-1].end
            self._next_index = shards[-1].index + 1
        lo = self._total - window_size(self._total, self.cfg)
        for s in shards:
            if s.end <= lo:
                continue
            try:
                s.data = self._read(s)
            except ReplayShardError as e:
                if not self.cfg.skip_corrupt:
                    raise
                log.error("%s; skipped (skip_corrupt=True), its %d positions are lost", e, s.n)
                self._skipped += 1
                continue
            self._shards.append(s)
        self._segments = None

    def _read(self, s: _Shard) -> dict[str, np.ndarray]:
        try:
            with np.load(s.path, allow_pickle=False) as f:
                missing = [k for k in _KEYS if k not in f.files]
                if missing:
                    raise ReplayShardError(s.path, f"missing arrays {missing}")
                present = [k for k in _FINAL_KEYS if k in f.files]
                if present and len(present) != len(_FINAL_KEYS):
                    raise ReplayShardError(s.path, f"has {present} but not all of {list(_FINAL_KEYS)}")
                present += [k for k in ("policy_weight", "surprise", "outcome") if k in f.files]
                arrays = {k: f[k] for k in (*_KEYS, *present)}  # reads and CRC-checks every member now
        except ReplayShardError:
            raise
        except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, KeyError) as e:
            raise ReplayShardError(s.path, f"unreadable, truncated or corrupt ({type(e).__name__}: {e})") from e

        meta = arrays.pop("meta")
        if meta.shape != (4,) or meta[0] not in READABLE_VERSIONS or meta[1:].tolist() != [s.index, s.start, s.n]:
            raise ReplayShardError(s.path, f"meta {meta.tolist()} does not match [format in {list(READABLE_VERSIONS)}, "
                                           f"index, start, n] = [{FORMAT_VERSION}, {s.index}, {s.start}, {s.n}] "
                                           f"from the file name")
        n, a = s.n, self.num_actions
        expected = {
            "obs": ((n, *self.obs_shape), None),
            "pi": ((n, a), np.float32),
            "z": ((n,), np.float32),
            "legal": ((n, a), np.bool_),
            "game_id": ((n,), np.int64),
            "move": ((n,), np.int32),
        }
        for key, (shape, dtype) in expected.items():
            x = arrays[key]
            if x.shape != shape:
                raise ReplayShardError(s.path, f"{key} has shape {x.shape}, expected {shape}")
            if dtype is not None and x.dtype != np.dtype(dtype):
                raise ReplayShardError(s.path, f"{key} has dtype {x.dtype}, expected {np.dtype(dtype)}")
        if arrays["obs"].dtype not in _OBS_DTYPES:
            raise ReplayShardError(s.path, f"obs has dtype {arrays['obs'].dtype}, expected one of "
                                           f"{[str(d) for d in _OBS_DTYPES]}")
        if "has_final" not in arrays:  # format 1, or a game without final targets: losses masked
            arrays.update(self._no_final(n))
        if "policy_weight" not in arrays:
            arrays["policy_weight"] = np.ones(n, np.float32)
        if "surprise" not in arrays:
            arrays["surprise"] = np.zeros(n, np.float32)
        if "outcome" in arrays:
            oc = arrays["outcome"]
            if oc.shape != (n,) or oc.dtype != np.float32 or not np.isin(oc, (-1.0, 0.0, 1.0)).all():
                raise ReplayShardError(s.path, f"outcome is {oc.dtype} {oc.shape}, expected float32 ({n},) in {{-1, 0, 1}}")
        else:  # older shards: z, possibly q-mixed (the head then learns wdl_target's split of it); read-only, shared
            arrays["outcome"] = arrays["z"]
        if arrays["surprise"].shape != (n,) or arrays["surprise"].dtype != np.float32:
            raise ReplayShardError(s.path, f"surprise is {arrays['surprise'].dtype} {arrays['surprise'].shape}, "
                                           f"expected float32 ({n},)")
        w = arrays["policy_weight"]
        if w.shape != (n,) or w.dtype != np.float32 or not (np.isfinite(w).all() and (w >= 0).all()):
            raise ReplayShardError(s.path, f"policy_weight is {w.dtype} {w.shape}, expected finite float32 >= 0 ({n},)")
        for key, (shape, dtype) in self._final_shapes(n).items():
            x = arrays[key]
            if x.shape != shape or x.dtype != np.dtype(dtype):
                raise ReplayShardError(s.path, f"{key} is {x.dtype} {x.shape}, expected {np.dtype(dtype)} {shape}")
        return arrays

    def _final_shapes(self, n: int) -> dict[str, tuple[tuple[int, ...], type]]:
        points = self.obs_shape[1] * self.obs_shape[2]
        return {"ownership": ((n, points), np.int8), "score": ((n,), np.float32), "has_final": ((n,), np.bool_)}

    def _no_final(self, n: int) -> dict[str, np.ndarray]:
        return {k: np.zeros(shape, dtype) for k, (shape, dtype) in self._final_shapes(n).items()}

    # ------------------------------------------------------------------ writing

    def next_game_id(self) -> int:
        """One more than the largest game id in the newest shard (0 when empty).

        A writer that numbers its games consecutively continues from here after a crash: its
        own counter is saved after each shard, so a kill between the two would otherwise hand
        the ids of the last shard's games out a second time.
        """
        if not self._shards:
            return 0
        ids = self._shards[-1].data["game_id"]
        return int(ids.max()) + 1 if len(ids) else 0

    def add(self, obs, pi, z, legal, *, game_id, move, ownership=None, score=None, has_final=None,
            policy_weight=None, surprise=None, outcome=None) -> Path:
        """Write n positions as one new shard and slide the window; returns the shard's path.

        obs [n, C, H, W] (float32 from encode()), pi float32 [n, A] (sums to 1,
        0 on illegal actions), z [n] in [-1, 1], legal bool [n, A],
        game_id int [n] or one int for all, move int [n]; for games with a final score
        all three of ownership [n, H*W] in {-1, 0, 1}, score [n] and has_final bool [n]
        (see the module docstring), else none of them; policy_weight [n] >= 0 (None: all 1);
        outcome [n] in {-1, 0, 1} where z is not the outcome itself (None: z).
        """
        data = self._validate(obs, pi, z, legal, game_id, move)
        n = len(data["z"])
        final = self._validate_final(n, ownership, score, has_final)
        if policy_weight is not None:
            w = np.asarray(policy_weight, dtype=np.float32)
            if w.shape != (n,) or not (np.isfinite(w).all() and (w >= 0).all()):
                raise ValueError(f"add: policy_weight must be finite, >= 0 and of shape ({n},), got {w.shape}")
            final = dict(final or {}, policy_weight=w.copy())
        if surprise is not None:
            sp = np.asarray(surprise, dtype=np.float32)
            if sp.shape != (n,) or not (np.isfinite(sp).all() and (sp >= 0).all()):
                raise ValueError(f"add: surprise must be finite, >= 0 and of shape ({n},), got {sp.shape}")
            final = dict(final or {}, surprise=sp.copy())
        if outcome is not None:
            oc = np.asarray(outcome, dtype=np.float32)
            if oc.shape != (n,) or not np.isin(oc, (-1.0, 0.0, 1.0)).all():
                raise ValueError(f"add: outcome must be of shape ({n},) with values in {{-1, 0, 1}}, got {oc.shape}")
            final = dict(final or {}, outcome=oc.copy())
        shard = _Shard(self.directory / SHARD_NAME.format(index=self._next_index, start=self._total, n=n),
                       self._next_index, self._total, n)
        arrays = dict(data, **(final or {}),
                      meta=np.array([FORMAT_VERSION, shard.index, shard.start, n], dtype=np.int64))
        data = {**self._no_final(n), "policy_weight": np.ones(n, np.float32), "surprise": np.zeros(n, np.float32),
                "outcome": data["z"], **data, **(final or {})}
        save = np.savez_compressed if self.cfg.compress else np.savez
        # a file object, not a name: np.savez would append '.npz' to the temp name
        write_atomic(shard.path, lambda f: save(f, **arrays))

        shard.data = data
        self._shards.append(shard)
        self._total += n
        self._next_index += 1
        self._shards_total += 1
        lo = self._total - window_size(self._total, self.cfg)
        self._shards = [s for s in self._shards if s.end > lo]  # dropped shards stay on disk
        self._segments = None
        return shard.path

    def _validate(self, obs, pi, z, legal, game_id, move) -> dict[str, np.ndarray]:
        obs = np.asarray(obs)
        n = obs.shape[0] if obs.ndim == 4 else -1
        a = self.num_actions
        if obs.shape[1:] != self.obs_shape or n < 1:
            raise ValueError(f"add: obs must be [n >= 1, {', '.join(map(str, self.obs_shape))}], got {obs.shape}")
        pi = np.asarray(pi, dtype=np.float32)
        z = np.asarray(z, dtype=np.float32)
        legal = np.asarray(legal)
        for name, x, shape in (("pi", pi, (n, a)), ("z", z, (n,)), ("legal", legal, (n, a))):
            if x.shape != shape:
                raise ValueError(f"add: {name} must have shape {shape}, got {x.shape}")
        if legal.dtype != np.bool_:
            raise ValueError(f"add: legal must be a bool array, got dtype {legal.dtype}")
        if not np.isfinite(obs).all():
            raise ValueError("add: obs holds NaN or inf")
        if not (np.isfinite(pi).all() and (pi >= 0).all()):
            raise ValueError("add: pi must be finite and non-negative")
        if (pi[~legal] != 0).any():
            rows = np.unique(np.nonzero((pi != 0) & ~legal)[0])
            raise ValueError(f"add: pi puts mass on illegal actions in rows {rows[:10].tolist()}")
        sums = pi.sum(axis=1)
        if not np.allclose(sums, 1.0, atol=1e-3):
            raise ValueError(f"add: every pi row must sum to 1, got sums in [{sums.min():.4g}, {sums.max():.4g}]")
        if not (np.abs(z) <= 1).all():
            raise ValueError("add: z must lie in [-1, 1]")
        gid = np.broadcast_to(np.asarray(game_id, dtype=np.int64), (n,)).copy()
        mv = np.asarray(move)
        if mv.shape != (n,) or not np.issubdtype(mv.dtype, np.integer):
            raise ValueError(f"add: move must be an integer array of shape ({n},), got {mv.shape} {mv.dtype}")
        # copies: the buffer keeps these arrays, and the caller may reuse its own
        return {"obs": compact_obs(obs), "pi": pi.copy(), "z": z.copy(), "legal": legal.copy(),
                "game_id": gid, "move": mv.astype(np.int32)}

    def _validate_final(self, n: int, ownership, score, has_final) -> dict[str, np.ndarray] | None:
        given = [x is not None for x in (ownership, score, has_final)]
        if not any(given):
            return None
        if not all(given):
            raise ValueError("add: ownership, score and has_final go together (all or none)")
        shapes = self._final_shapes(n)
        own = np.asarray(ownership)
        if own.shape != shapes["ownership"][0] or not np.isin(own, (-1, 0, 1)).all():
            raise ValueError(f"add: ownership must be [{n}, {shapes['ownership'][0][1]}] with values in "
                             f"{{-1, 0, 1}}, got {own.shape}")
        sc = np.asarray(score, dtype=np.float32)
        if sc.shape != (n,) or not np.isfinite(sc).all():
            raise ValueError(f"add: score must be finite of shape ({n},), got {sc.shape}")
        hf = np.asarray(has_final)
        if hf.shape != (n,) or hf.dtype != np.bool_:
            raise ValueError(f"add: has_final must be bool of shape ({n},), got {hf.dtype} {hf.shape}")
        return {"ownership": own.astype(np.int8), "score": sc.copy(), "has_final": hf.copy()}

    # ------------------------------------------------------------------ reading

    def _window(self) -> tuple[list[_Shard], np.ndarray, np.ndarray]:
        """(shards, first row of each inside the window, cumulative in-window counts) — cached."""
        if self._segments is None:
            lo = self._total - window_size(self._total, self.cfg)
            first = np.array([max(lo - s.start, 0) for s in self._shards], dtype=np.int64)
            counts = np.array([s.n for s in self._shards], dtype=np.int64) - first
            self._segments = (list(self._shards), first, np.cumsum(counts))
        return self._segments

    @property
    def positions_total(self) -> int:
        return self._total

    @property
    def positions_in_window(self) -> int:
        cum = self._window()[2]
        return int(cum[-1]) if len(cum) else 0

    def samples_allowed(self) -> Optional[int]:
        """How many samples the budget allows in total so far (None: unlimited)."""
        r = self.cfg.max_samples_per_position
        return None if r is None else int(r * self._total)

    def can_sample(self, batch_size: int) -> bool:
        """Whether a batch may be drawn now: window warm enough and sample budget not exceeded."""
        if self.positions_in_window < max(1, self.cfg.min_positions):
            return False
        allowed = self.samples_allowed()
        return allowed is None or self.samples_drawn + batch_size <= allowed

    def sample(self, batch_size: int, rng: np.random.Generator, *, augment: bool | None = None) -> dict[str, np.ndarray]:
        """Draw batch_size positions uniformly (with replacement) from the window.

        Returns numpy arrays: obs float32 [B, C, H, W], pi float32 [B, A],
        z float32 [B], legal bool [B, A], game_id int64 [B], move int32 [B],
        outcome float32 [B] (z where the shard has no separate outcome),
        ownership float32 [B, H*W], score float32 [B], has_final bool [B] (all zero
        / false where a shard has no final targets), position int64 [B] (global
        position number), symmetry int64 [B] (index into self.transforms), and the
        opponent's reply: pi_next float32 [B, A], legal_next bool [B, A] and
        next_weight float32 [B], the policy target, legal actions and policy weight of
        the game's next recorded position (read from the shard's next row; weight 0 and
        all actions legal where the next move was not recorded). With augmentation each
        position gets its own random transform, applied alike to obs, pi, legal,
        ownership, pi_next and legal_next; z and score are invariant.
        The budget is not enforced here: callers check can_sample() first.
        """
        shards, first, cum = self._window()
        total = int(cum[-1]) if len(cum) else 0
        if total == 0:
            raise ValueError(f"sample: the replay window in {self.directory} is empty")
        # u numbers the window's positions 0..total-1 across shards; shard j owns [cum[j-1], cum[j])
        u = self._draw(total, batch_size, rng)
        k = np.searchsorted(cum, u, side="right")
        seg_start = np.concatenate([[0], cum[:-1]])
        row = first[k] + (u - seg_start[k])

        c, h, w = self.obs_shape
        a = self.num_actions
        out = {
            "obs": np.empty((batch_size, c, h, w), np.float32),
            "pi": np.empty((batch_size, a), np.float32),
            "z": np.empty(batch_size, np.float32),
            "legal": np.empty((batch_size, a), np.bool_),
            "game_id": np.empty(batch_size, np.int64),
            "move": np.empty(batch_size, np.int32),
            "ownership": np.empty((batch_size, h * w), np.float32),
            "score": np.empty(batch_size, np.float32),
            "has_final": np.empty(batch_size, np.bool_),
            "policy_weight": np.empty(batch_size, np.float32),
            "outcome": np.empty(batch_size, np.float32),
        }
        # not shard arrays: filled by _next_targets from each row's successor, outside the copy below
        reply = {"pi_next": np.zeros((batch_size, a), np.float32), "legal_next": np.ones((batch_size, a), np.bool_),
                 "next_weight": np.zeros(batch_size, np.float32)}
        position = np.empty(batch_size, np.int64)
        for j in np.unique(k):
            sel = np.nonzero(k == j)[0]
            data, r = shards[j].data, row[sel]
            for key, dst in out.items():
                dst[sel] = data[key][r]  # obs widens from its compact dtype to float32 here
            position[sel] = shards[j].start + r
            self._next_targets(data, r, sel, reply)

        out.update(reply)
        use_aug = self.cfg.augment if augment is None else augment
        sym = np.zeros(batch_size, np.int64)
        if use_aug and len(self.transforms) > 1:
            sym = rng.integers(len(self.transforms), size=batch_size)
            for t in np.unique(sym):
                sel = np.nonzero(sym == t)[0]
                tr = self.transforms[t]
                out["obs"][sel] = tr.apply_obs(out["obs"][sel])
                out["pi"][sel] = tr.apply_policy(out["pi"][sel])
                out["legal"][sel] = tr.apply_policy(out["legal"][sel])
                out["pi_next"][sel] = tr.apply_policy(out["pi_next"][sel])
                out["legal_next"][sel] = tr.apply_policy(out["legal_next"][sel])
                board = out["ownership"][sel].reshape(len(sel), h, w)
                out["ownership"][sel] = tr.apply_obs(board).reshape(len(sel), h * w)
        out["position"] = position
        out["symmetry"] = sym
        self.samples_drawn += batch_size
        return out

    @staticmethod
    def _next_targets(data: dict[str, np.ndarray], rows: np.ndarray, sel: np.ndarray, reply: dict) -> None:
        """The opponent's reply to rows of one shard: its next row where that is the same game's next
        move (a game's recorded positions are consecutive rows of one shard, in move order)."""
        nxt = rows + 1
        ok = nxt < len(data["move"])
        nxt = np.where(ok, nxt, rows)
        ok &= (data["game_id"][nxt] == data["game_id"][rows]) & (data["move"][nxt] == data["move"][rows] + 1)
        if not ok.any():
            return
        hit, src = sel[ok], nxt[ok]
        reply["pi_next"][hit] = data["pi"][src]
        reply["legal_next"][hit] = data["legal"][src]
        reply["next_weight"][hit] = data["policy_weight"][src]

    def _draw(self, total: int, batch_size: int, rng: np.random.Generator) -> np.ndarray:
        """Window positions to sample: uniform, or with surprise_weight a mixture of uniform and
        proportional-to-surprise (the cumulative weights are cached with the window)."""
        a = self.cfg.surprise_weight
        if a <= 0:
            return rng.integers(total, size=batch_size)
        if self._surprise_cdf is None or self._surprise_cdf[1] is not self._segments:
            shards, first, _ = self._window()
            s = np.concatenate([sh.data["surprise"][f:] for sh, f in zip(shards, first)]).astype(np.float64)
            mean = s.mean()
            w = np.full(total, 1.0) if mean <= 0 else (1.0 - a) + a * s / mean
            self._surprise_cdf = (np.cumsum(w), self._segments)
        cdf = self._surprise_cdf[0]
        return np.minimum(np.searchsorted(cdf, rng.random(batch_size) * cdf[-1], side="right"), total - 1)

    def window_data(self) -> dict[str, np.ndarray]:
        """Every position of the window in order, unaugmented (obs as float32): for inspection and export."""
        shards, first, _ = self._window()
        keys = ("obs", "pi", "z", "legal", "game_id", "move")
        parts: dict[str, list[np.ndarray]] = {k: [] for k in keys}
        pos = []
        for s, f in zip(shards, first):
            for key in keys:
                parts[key].append(s.data[key][f:])
            pos.append(np.arange(s.start + f, s.end, dtype=np.int64))
        if not pos:
            c, h, w = self.obs_shape
            a = self.num_actions
            empty = {"obs": np.empty((0, c, h, w), np.float32), "pi": np.empty((0, a), np.float32),
                     "z": np.empty(0, np.float32), "legal": np.empty((0, a), np.bool_),
                     "game_id": np.empty(0, np.int64), "move": np.empty(0, np.int32)}
            return dict(empty, position=np.empty(0, np.int64))
        result = {k: np.concatenate(v) for k, v in parts.items()}
        result["obs"] = result["obs"].astype(np.float32)
        result["position"] = np.concatenate(pos)
        return result

    def stats(self) -> ReplayStats:
        return ReplayStats(
            positions_total=self._total,
            positions_in_window=self.positions_in_window,
            window_size=window_size(self._total, self.cfg),
            shards_total=self._shards_total,
            shards_in_window=len(self._shards),
            shards_skipped=self._skipped,
            samples_drawn=self.samples_drawn,
            samples_allowed=self.samples_allowed(),
        )


class _Identity:
    """The trivial transform, used when augmentation is off or the game has no symmetry."""

    def apply_obs(self, obs: np.ndarray) -> np.ndarray:
        return np.array(obs, copy=True)

    def apply_policy(self, pi: np.ndarray) -> np.ndarray:
        return np.array(pi, copy=True)
