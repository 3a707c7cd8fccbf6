"""Board symmetries of observations and policy vectors, driven only by a GameSpec.

Used for data augmentation (train on a randomly transformed position with the
equally transformed policy target) and for symmetrised evaluation (average the
network over transforms, mapping each policy back with `.inverse`).

Conventions (those of the native games):

- Observations are `[..., H, W]` arrays (normally `[B, C, H, W]`) with row 0
  the TOP row of the board.
- Board actions: when num_actions >= H*W, action r*W + c is the point (r, c)
  and every action >= H*W (Go's pass = H*W, say) is not a point and is left
  fixed by every transform. Column games: when spec.symmetry == 'mirror_lr'
  and num_actions == W < H*W (connect four), action c is column c.
- spec.symmetry selects the group:
    'dihedral8' - the 8 rotations/reflections of a square board (H == W);
    'mirror_lr' - identity and the left-right mirror (any H, W);
    'none'      - identity only.
- A transform T moves the content of board point p to point T(p). Hence a
  one-hot plane at point p becomes a one-hot plane at T(p), and a policy with
  all its mass on action a becomes one with all its mass on
  `action_map[a]`. Both are built from the same point map, so they always agree.
- `symmetries(spec)[0]` is the identity. Results are always new arrays, never
  views of the input, so callers may write to them.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from azero.games.base import GameSpec

SYMMETRY_GROUPS = ("dihedral8", "mirror_lr", "none")

# Each transform maps a point (r, c) of an H x W board to its image; n = H - 1, m = W - 1.
# Rotations are counter-clockwise, like np.rot90 on the last two axes.
_DIHEDRAL = {
    "identity": lambda r, c, n, m: (r, c),
    "rot90": lambda r, c, n, m: (m - c, r),
    "rot180": lambda r, c, n, m: (n - r, m - c),
    "rot270": lambda r, c, n, m: (c, n - r),
    "flip_lr": lambda r, c, n, m: (r, m - c),
    "flip_ud": lambda r, c, n, m: (n - r, c),
    "transpose": lambda r, c, n, m: (c, r),
    "antitranspose": lambda r, c, n, m: (m - c, n - r),
}
_GROUP_MEMBERS = {
    "dihedral8": tuple(_DIHEDRAL),
    "mirror_lr": ("identity", "flip_lr"),
    "none": ("identity",),
}


@dataclasses.dataclass(frozen=True, eq=False)
class Symmetry:
    """One board transform for one game shape."""

    name: str
    board_shape: tuple[int, int]
    """(H, W) the transform acts on."""
    point_src: np.ndarray
    """int64 [H*W]: transformed_plane.flat[q] = plane.flat[point_src[q]]."""
    action_map: np.ndarray
    """int64 [A]: the image of each action (a permutation fixing non-board actions)."""
    action_src: np.ndarray
    """int64 [A]: inverse of action_map; transformed_policy[..., i] = policy[..., action_src[i]]."""
    _inverse_name: str = ""
    _group: tuple["Symmetry", ...] = dataclasses.field(default=(), repr=False)

    @property
    def inverse(self) -> "Symmetry":
        """The transform that undoes this one (a member of the same group)."""
        for s in self._group:
            if s.name == self._inverse_name:
                return s
        raise AssertionError(f"inverse {self._inverse_name!r} of {self.name!r} missing from its group")

    def apply_obs(self, obs: np.ndarray) -> np.ndarray:
        """Transform the last two (H, W) axes of obs, e.g. float32 [B, C, H, W]."""
        h, w = self.board_shape
        x = np.asarray(obs)
        if x.ndim < 2 or x.shape[-2:] != (h, w):
            raise ValueError(f"{self.name}: obs must end in the board shape ({h}, {w}), got shape {x.shape}")
        flat = x.reshape(*x.shape[:-2], h * w)
        # the same square board keeps its shape under every dihedral transform
        return np.take(flat, self.point_src, axis=-1).reshape(x.shape)

    def apply_policy(self, pi: np.ndarray) -> np.ndarray:
        """Transform anything indexed by action on its last axis ([..., A]): policies, legal masks, visit counts."""
        x = np.asarray(pi)
        a = self.action_map.shape[0]
        if x.ndim < 1 or x.shape[-1] != a:
            raise ValueError(f"{self.name}: policy must end in num_actions = {a}, got shape {x.shape}")
        return np.take(x, self.action_src, axis=-1)

    def apply_action(self, action: int) -> int:
        """The image of one action."""
        return int(self.action_map[action])


def _action_kind(spec: GameSpec) -> str:
    """'points' (a = r*W + c, extras fixed) or 'columns' (a = c); raises when the spec fits neither."""
    h, w = spec.board_shape
    if spec.num_actions >= h * w:
        if spec.pass_action is not None and 0 <= spec.pass_action < h * w:
            raise ValueError(
                f"{spec.name}: pass_action {spec.pass_action} lies on the board (< H*W = {h * w}); "
                "symmetries need board points at actions r*W + c"
            )
        return "points"
    if spec.symmetry == "mirror_lr" and spec.num_actions == w and spec.pass_action is None:
        return "columns"
    raise ValueError(
        f"{spec.name}: symmetry {spec.symmetry!r} needs actions r*W + c (num_actions >= H*W = {h * w}) or, "
        f"for 'mirror_lr', one action per column (num_actions == W = {w}); got num_actions = {spec.num_actions}"
    )


@functools.lru_cache(maxsize=64)
def _build(group: str, h: int, w: int, num_actions: int, kind: str) -> tuple[Symmetry, ...]:
    r, c = np.divmod(np.arange(h * w, dtype=np.int64), w)
    syms = []
    for name in _GROUP_MEMBERS[group]:
        r2, c2 = _DIHEDRAL[name](r, c, h - 1, w - 1)
        point_dst = r2 * w + c2                      # point p moves to point_dst[p]
        point_src = np.empty_like(point_dst)
        point_src[point_dst] = np.arange(h * w)
        action_map = np.arange(num_actions, dtype=np.int64)
        if kind == "points":
            action_map[: h * w] = point_dst
        else:  # columns: column c moves where its cells move
            action_map[:] = c2[:w]                   # where the top cell (0, c) goes (mirror_lr has no row moves)
        action_src = np.empty_like(action_map)
        action_src[action_map] = np.arange(num_actions)
        for arr in (point_src, action_map, action_src):
            arr.setflags(write=False)
        syms.append((name, point_src, action_map, action_src))
    # the inverse of g is the member t whose point map undoes g's: point_src_g[point_src_t] == identity
    members = []
    for name, ps, am, asrc in syms:
        inv = next(n2 for n2, ps2, _, _ in syms if np.array_equal(ps[ps2], np.arange(h * w)))
        members.append(Symmetry(name, (h, w), ps, am, asrc, inv))
    group_tuple = tuple(members)
    # frozen dataclass: attach the group after construction so .inverse can find its partner
    for s in group_tuple:
        object.__setattr__(s, "_group", group_tuple)
    return group_tuple


def symmetries(spec: GameSpec) -> list[Symmetry]:
    """All transforms of spec.symmetry's group for this board, identity first."""
    if spec.symmetry not in SYMMETRY_GROUPS:
        raise ValueError(f"{spec.name}: unknown symmetry {spec.symmetry!r}; expected one of {SYMMETRY_GROUPS}")
    h, w = spec.board_shape
    if spec.symmetry == "none":
        # only the identity, which needs no action layout (any OpenSpiel numbering works)
        return list(_build_identity(h, w, spec.num_actions))
    if spec.symmetry == "dihedral8" and h != w:
        raise ValueError(f"{spec.name}: 'dihedral8' needs a square board, got board_shape {spec.board_shape}")
    kind = _action_kind(spec)
    return list(_build(spec.symmetry, h, w, spec.num_actions, kind))


@functools.lru_cache(maxsize=64)
def _build_identity(h: int, w: int, num_actions: int) -> tuple[Symmetry, ...]:
    ident = np.arange(h * w, dtype=np.int64)
    acts = np.arange(num_actions, dtype=np.int64)
    ident.setflags(write=False)
    acts.setflags(write=False)
    s = Symmetry("identity", (h, w), ident, acts, acts, "identity")
    object.__setattr__(s, "_group", (s,))
    return (s,)


def random_symmetry(spec: GameSpec, rng: np.random.Generator) -> Symmetry:
    """A uniformly drawn member of the game's symmetry group."""
    syms = symmetries(spec)
    return syms[int(rng.integers(len(syms)))]
