"""The policy-value network: a residual tower with a policy head and a value head.

    obs [B, C, H, W] -> stem (3x3 conv, BN, ReLU) -> `blocks` residual blocks
        -> policy head: 1x1 conv, BN, ReLU, linear  -> logits [B, A] over ALL actions
        -> value head:  1x1 conv, BN, ReLU, linear, ReLU, linear, tanh -> value [B] in [-1, 1]
           (or, with wdl_head, linear to 3 logits of win / draw / loss -> value = P(win) - P(loss))

Optional auxiliary heads (KataGo, Wu 2019, section 4.1):

        -> ownership head: 1x1 conv to one channel -> ownership logits [B, H*W]; tanh(logit) is the
           expected final owner of each point from the player to move's view, in [-1, 1] (Go: its
           area; connect four, tic-tac-toe: whose disc ends up there, 0 if none)
        -> score head: a linear map of the value head's hidden layer -> expected final score [B]
           (points, komi included, player to move's view), scaled by sqrt(H*W) so the layer works
           at unit scale
        -> opponent policy head: a second policy head -> logits [B, A] of the policy target of
           the next position, the opponent's reply (KataGo's auxiliary policy target, Wu 2019; any game)

They add targets that carry far more than one bit per game. forward() returns what search needs
(logits, value, and the score when the net has a score head); heads() also returns the
ownership and the opponent's policy for training and analysis.

This is the AlphaGo Zero network (Silver et al. 2017, "Methods: neural network
architecture") at a configurable size. Some blocks also carry a global pooling
bias (KataGo, Wu 2019, section 3.3): part of the block's first convolution is
averaged and max-pooled over the whole board and turned into a per-channel bias
for the rest, so every point sees board-wide facts (who is ahead, how many
liberties a big group has) without stacking many 3x3 convolutions.

The network never sees which actions are legal. It scores every action and the
caller masks illegal ones with `masked_log_softmax`; keeping the mask out of the
network keeps one code path for training (the replay legal mask) and search
(the game's legal mask).

Values are from the perspective of the player to move (see games/base.py), as
the observations are.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Protocol

import torch
import torch.nn.functional as F
from torch import nn


@dataclasses.dataclass
class NetworkConfig:
    """Size and shape of the residual tower and its heads (defaults: go9x9 on a CPU)."""

    blocks: int = 6
    """Number of residual blocks in the tower."""
    channels: int = 64
    """Channels of every convolution in the tower."""
    global_pool_every: int = 3
    """Every k-th block (blocks k-1, 2k-1, ...) adds a global pooling bias; 0 disables it."""
    global_pool_channels: int = 16
    """Channels of a pooling block's first convolution that are pooled (the rest receive the bias)."""
    policy_channels: int = 4
    """Channels of the policy head's 1x1 convolution (AlphaGo Zero: 2)."""
    value_channels: int = 2
    """Channels of the value head's 1x1 convolution (AlphaGo Zero: 1)."""
    value_hidden: int = 64
    """Width of the value head's hidden fully connected layer (AlphaGo Zero: 256)."""
    ownership_head: bool = False
    """Predict each point's final owner (KataGo's ownership target; Go's area, a placement game's final
    board). Trained with train.ownership_weight."""
    score_head: bool = False
    """Predict the final score (Go), used by the search's score utility (search.score_utility).
    Trained with train.score_weight."""
    opponent_policy_head: bool = False
    """Also predict the opponent's reply: the next position's policy target (KataGo's auxiliary policy
    target). Training only, the search never reads it. Trained with train.opponent_policy_weight."""
    wdl_head: bool = False
    """End the value head in three logits, win / draw / loss for the player to move, trained by
    cross-entropy; the value the search sees is P(win) - P(loss). A tanh value trained by squared
    error cannot tell a drawn position from a balanced but decisive one, and its gradient vanishes
    where it saturates; the categorical head has neither problem (KataGo and Leela Chess Zero use it)."""
    zero_init_residual: bool = True
    """Start each block's last BatchNorm scale at 0, so an untrained tower is the identity map.

    Deep towers then train from the first step without a warmup to tame exploding
    activations (Goyal et al. 2017, "Accurate, large minibatch SGD", section 5.1)."""

    def __post_init__(self) -> None:
        if self.blocks < 0 or self.channels < 1:
            raise ValueError(f"NetworkConfig: need blocks >= 0 and channels >= 1, got {self.blocks}, {self.channels}")
        if self.global_pool_every < 0:
            raise ValueError(f"NetworkConfig.global_pool_every must be >= 0, got {self.global_pool_every}")
        if self.global_pool_every and not 0 < self.global_pool_channels < self.channels:
            raise ValueError(
                f"NetworkConfig.global_pool_channels must lie in (0, channels={self.channels}), "
                f"got {self.global_pool_channels}"
            )
        for name in ("policy_channels", "value_channels", "value_hidden"):
            if getattr(self, name) < 1:
                raise ValueError(f"NetworkConfig.{name} must be >= 1, got {getattr(self, name)}")

    @classmethod
    def tiny(cls) -> "NetworkConfig":
        """2 blocks x 16 channels (one with global pooling): for tests and smoke runs."""
        return cls(blocks=2, channels=16, global_pool_every=2, global_pool_channels=8,
                   policy_channels=2, value_channels=1, value_hidden=16)


class NetShapes(Protocol):
    """What the network needs to know about a game; a GameSpec satisfies it."""

    obs_shape: tuple[int, int, int]
    num_actions: int


@dataclasses.dataclass(frozen=True)
class Shapes:
    """Plain NetShapes for callers without a GameSpec."""

    obs_shape: tuple[int, int, int]
    """(C, H, W) of one observation."""
    num_actions: int
    """A: length of the policy vector."""


def _conv_bn(c_in: int, c_out: int, kernel: int) -> tuple[nn.Conv2d, nn.BatchNorm2d]:
    # no conv bias: the BatchNorm that follows has its own shift
    return nn.Conv2d(c_in, c_out, kernel, padding=kernel // 2, bias=False), nn.BatchNorm2d(c_out)


class ResidualBlock(nn.Module):
    """x -> relu(x + bn2(conv2(relu(bn1(conv1(x))))))."""

    def __init__(self, channels: int):
        super().__init__()
        self.conv1, self.bn1 = _conv_bn(channels, channels, 3)
        self.conv2, self.bn2 = _conv_bn(channels, channels, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # [B, C, H, W] -> [B, C, H, W]
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return F.relu(x + y)


class GlobalPoolBlock(nn.Module):
    """A residual block whose first convolution splits into regular and pooled channels.

    The last `pooled` channels of conv1 are reduced over the board (mean and max)
    and a linear map turns those 2*pooled numbers into a bias for each of the
    remaining channels; conv2 reads only the biased regular channels.
    """

    def __init__(self, channels: int, pooled: int):
        super().__init__()
        self.regular = channels - pooled
        self.conv1, self.bn1 = _conv_bn(channels, channels, 3)
        self.pool_to_bias = nn.Linear(2 * pooled, self.regular)
        self.conv2, self.bn2 = _conv_bn(self.regular, channels, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # [B, C, H, W] -> [B, C, H, W]
        y = F.relu(self.bn1(self.conv1(x)))
        reg, pool = y[:, : self.regular], y[:, self.regular :]
        # mean says "how much", max says "is there any" (e.g. an atari anywhere on the board)
        stats = torch.cat([pool.mean(dim=(2, 3)), pool.amax(dim=(2, 3))], dim=1)  # [B, 2*pooled]
        reg = reg + self.pool_to_bias(stats)[:, :, None, None]
        y = self.bn2(self.conv2(reg))
        return F.relu(x + y)


class PolicyValueNet(nn.Module):
    """forward(obs_bchw) -> (policy logits [B, A] over all actions, value [B] in [-1, 1])."""

    def __init__(self, shapes: NetShapes, cfg: NetworkConfig | None = None):
        super().__init__()
        cfg = cfg if cfg is not None else NetworkConfig()
        c_in, h, w = (int(d) for d in shapes.obs_shape)
        self.obs_shape: tuple[int, int, int] = (c_in, h, w)
        self.num_actions: int = int(shapes.num_actions)
        self.cfg = cfg
        c = cfg.channels

        self.stem_conv, self.stem_bn = _conv_bn(c_in, c, 3)
        k = cfg.global_pool_every
        self.tower = nn.ModuleList(
            GlobalPoolBlock(c, cfg.global_pool_channels) if k and i % k == k - 1 else ResidualBlock(c)
            for i in range(cfg.blocks)
        )
        self.policy_conv, self.policy_bn = _conv_bn(c, cfg.policy_channels, 1)
        self.policy_fc = nn.Linear(cfg.policy_channels * h * w, self.num_actions)
        self.value_conv, self.value_bn = _conv_bn(c, cfg.value_channels, 1)
        self.value_fc1 = nn.Linear(cfg.value_channels * h * w, cfg.value_hidden)
        self.value_fc2 = nn.Linear(cfg.value_hidden, 3 if cfg.wdl_head else 1)
        self.score_scale = math.sqrt(h * w)
        self.ownership_conv = nn.Conv2d(c, 1, 1) if cfg.ownership_head else None
        self.score_fc = nn.Linear(cfg.value_hidden, 1) if cfg.score_head else None
        self.opponent_conv, self.opponent_bn, self.opponent_fc = None, None, None
        if cfg.opponent_policy_head:
            self.opponent_conv, self.opponent_bn = _conv_bn(c, cfg.policy_channels, 1)
            self.opponent_fc = nn.Linear(cfg.policy_channels * h * w, self.num_actions)

        if cfg.zero_init_residual:
            for block in self.tower:
                nn.init.zeros_(block.bn2.weight)

    @property
    def has_score(self) -> bool:
        return self.score_fc is not None

    @property
    def has_wdl(self) -> bool:
        return self.cfg.wdl_head

    @property
    def has_ownership(self) -> bool:
        return self.ownership_conv is not None

    def forward(self, obs_bchw: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """(logits [B, A], value [B]), plus score [B] when the net has a score head: the search's inputs."""
        out = self._run(obs_bchw, all_heads=False)
        if out["score"] is None:
            return out["logits"], out["value"]
        return out["logits"], out["value"], out["score"]

    def heads(self, obs_bchw: torch.Tensor) -> dict[str, torch.Tensor | None]:
        """Every head: logits [B, A], value [B], score [B] or None, ownership logits [B, H*W] or None,
        wdl logits [B, 3] (win, draw, loss) or None, opponent logits [B, A] (the reply) or None."""
        return self._run(obs_bchw, all_heads=True)

    def _run(self, obs_bchw: torch.Tensor, *, all_heads: bool) -> dict[str, torch.Tensor | None]:
        if obs_bchw.dim() != 4 or tuple(obs_bchw.shape[1:]) != self.obs_shape:
            raise ValueError(f"PolicyValueNet: expected obs [B, {', '.join(map(str, self.obs_shape))}], "
                             f"got {tuple(obs_bchw.shape)}")
        x = F.relu(self.stem_bn(self.stem_conv(obs_bchw)))
        for block in self.tower:
            x = block(x)
        # flatten() reads in logical NCHW order, so channels_last memory gives the same features
        p = F.relu(self.policy_bn(self.policy_conv(x))).flatten(1)
        logits = self.policy_fc(p)                                         # [B, A]
        v = F.relu(self.value_bn(self.value_conv(x))).flatten(1)
        hidden = F.relu(self.value_fc1(v))                                  # [B, value_hidden]
        wdl = None
        if self.cfg.wdl_head:
            wdl = self.value_fc2(hidden).float()                            # [B, 3] win / draw / loss
            probs = torch.softmax(wdl, dim=1)
            v = probs[:, 0] - probs[:, 2]                                   # [B]
        else:
            v = torch.tanh(self.value_fc2(hidden)).squeeze(1)              # [B]
        # losses and search want float32 even when the tower ran in bf16 under autocast
        out = {"logits": logits.float(), "value": v.float(), "score": None, "ownership": None, "wdl": wdl,
               "opponent": None}
        if self.score_fc is not None:
            out["score"] = (self.score_scale * self.score_fc(hidden).squeeze(1)).float()
        if all_heads and self.ownership_conv is not None:
            out["ownership"] = self.ownership_conv(x).flatten(1).float()   # [B, H*W] logits of tanh
        if all_heads and self.opponent_conv is not None:
            q = F.relu(self.opponent_bn(self.opponent_conv(x))).flatten(1)
            out["opponent"] = self.opponent_fc(q).float()                 # [B, A] the reply's logits
        return out

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())


def wdl_target(z: torch.Tensor) -> torch.Tensor:
    """Scalar value targets z [B] in [-1, 1] -> win / draw / loss distributions [B, 3] with P(win) - P(loss) = z.

    A played-out outcome (-1, 0, +1) becomes its one-hot class. A target mixed with the search's
    root value (selfplay.value_q_weight) keeps its expectation: the mass the expectation leaves
    is put on the draw, [max(z, 0), 1 - |z|, max(-z, 0)], the least decisive split of that
    expectation, so a mixed target never claims more certainty of a decision than it carries.
    The price: the draw class then holds the search's doubt as well as draws (measured on connect
    four with value_q_weight=0.5: P(draw) 0.40 in won positions, 0.51 in drawn ones), so the
    trainer gives the head the played-out outcome where the replay has it (its `outcome` key).
    """
    return torch.stack([z.clamp_min(0.0), 1.0 - z.abs(), (-z).clamp_min(0.0)], dim=1)


def wdl_loss(wdl_logits: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy of the win / draw / loss head [B, 3] against wdl_target(z)."""
    logp = F.log_softmax(wdl_logits.float(), dim=1)
    return -(wdl_target(z.float()) * logp).sum(dim=1).mean()


def masked_log_softmax(logits: torch.Tensor, legal: torch.Tensor) -> torch.Tensor:
    """log pi over the legal actions only: float32 [B, A], exp() sums to 1 over each row's legal actions.

    Illegal entries get the most negative finite float32 rather than -inf, so
    their probability is exactly 0 while products with a zero target
    (0 * log pi in a cross-entropy or an entropy) stay 0 instead of NaN.
    A row with no legal action (a terminal state) comes out uniform and
    carries no meaning; callers should not train on or search from it.
    """
    if logits.shape != legal.shape:
        raise ValueError(f"masked_log_softmax: logits {tuple(logits.shape)} and legal {tuple(legal.shape)} differ")
    x = logits.float().masked_fill(~legal.bool(), torch.finfo(torch.float32).min)
    return F.log_softmax(x, dim=-1)
