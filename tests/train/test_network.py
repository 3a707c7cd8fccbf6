import dataclasses

import pytest
import torch
from omegaconf import OmegaConf

from azero.games.base import GameSpec
from azero.train.network import (
    GlobalPoolBlock,
    NetworkConfig,
    PolicyValueNet,
    ResidualBlock,
    Shapes,
    masked_log_softmax,
)


def _net(spec, cfg=None, seed=0):
    torch.manual_seed(seed)
    return PolicyValueNet(spec, cfg or NetworkConfig.tiny())


def test_output_shapes_dtypes_and_value_range(spec):
    net = _net(spec).eval()
    # large inputs push the value head towards saturation; tanh must still bound it
    obs = torch.randn(7, *spec.obs_shape) * 50
    logits, value = net(obs)
    assert logits.shape == (7, spec.num_actions) and logits.dtype == torch.float32
    assert value.shape == (7,) and value.dtype == torch.float32
    assert torch.all(value.abs() <= 1.0)
    assert torch.isfinite(logits).all()


def test_accepts_plain_shapes_and_rejects_wrong_obs():
    net = PolicyValueNet(Shapes((2, 4, 3), 13), NetworkConfig.tiny())
    logits, value = net(torch.zeros(2, 2, 4, 3))
    assert logits.shape == (2, 13) and value.shape == (2,)
    with pytest.raises(ValueError, match=r"\[B, 2, 4, 3\].*\(2, 2, 3, 4\)"):
        net(torch.zeros(2, 2, 3, 4))


def test_global_pooling_blocks_are_placed_every_k():
    go = GameSpec("go9x9", 82, (17, 9, 9), (9, 9), 162, pass_action=81, symmetry="dihedral8")
    net = PolicyValueNet(go, NetworkConfig())  # the go9x9 CPU default: 6 x 64
    kinds = [type(b) for b in net.tower]
    assert kinds == [ResidualBlock, ResidualBlock, GlobalPoolBlock] * 2
    assert net.stem_conv.out_channels == 64
    logits, value = net.eval()(torch.zeros(2, 17, 9, 9))
    assert logits.shape == (2, 82) and value.shape == (2,)
    no_pool = PolicyValueNet(go, dataclasses.replace(NetworkConfig.tiny(), global_pool_every=0))
    assert all(type(b) is ResidualBlock for b in no_pool.tower)


def test_global_pool_bias_carries_board_wide_information():
    # Two 3x3 convolutions see two points away; only the pooled bias lets a change in
    # the far corner reach point (0, 0) within one block.
    torch.manual_seed(0)
    block = GlobalPoolBlock(8, 4).eval()
    torch.nn.init.ones_(block.bn2.weight)
    x = torch.rand(1, 8, 7, 7)
    y = x.clone()
    y[0, :, 6, 6] += 5.0  # far from (0, 0): outside two 3x3 receptive fields
    assert not torch.allclose(block(x)[0, :, 0, 0], block(y)[0, :, 0, 0])
    plain = ResidualBlock(8).eval()
    torch.nn.init.ones_(plain.bn2.weight)
    assert torch.allclose(plain(x)[0, :, 0, 0], plain(y)[0, :, 0, 0])


def test_zero_init_residual_makes_blocks_identity(spec):
    net = _net(spec).eval()
    x = torch.relu(torch.randn(3, 16, 5, 5))
    for block in net.tower:
        assert torch.equal(block(x), x)


def test_channels_last_gives_same_outputs(spec):
    net = _net(spec).eval()
    for block in net.tower:  # make the tower non-trivial
        torch.nn.init.normal_(block.bn2.weight)
    obs = torch.randn(4, *spec.obs_shape)
    ref_logits, ref_value = net(obs)
    net_cl = net.to(memory_format=torch.channels_last)
    logits, value = net_cl(obs.contiguous(memory_format=torch.channels_last))
    torch.testing.assert_close(logits, ref_logits, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(value, ref_value, rtol=1e-5, atol=1e-5)


def test_masked_log_softmax_ignores_illegal_logits():
    torch.manual_seed(0)
    logits = torch.randn(3, 6)
    legal = torch.tensor([[1, 0, 1, 1, 0, 0], [0, 0, 0, 0, 0, 1], [1, 1, 1, 1, 1, 1]], dtype=torch.bool)
    logp = masked_log_softmax(logits, legal)
    wild = logits.clone()
    wild[~legal] = torch.tensor([1e4, -1e4, 3.0, 77.0, -5.0, 1e30, 2.0, 0.5])[: int((~legal).sum())]
    assert torch.equal(masked_log_softmax(wild, legal), logp)
    p = logp.exp()
    assert torch.all(p[~legal] == 0)
    torch.testing.assert_close(p.sum(dim=1), torch.ones(3))
    # on the legal entries it is exactly log_softmax over the legal subset
    row0 = torch.log_softmax(logits[0, legal[0]], dim=0)
    torch.testing.assert_close(logp[0, legal[0]], row0)
    assert logp[1, 5] == 0.0  # a single legal action has probability 1
    # a zero target on illegal actions contributes 0, not NaN, to a cross-entropy
    target = torch.zeros(3, 6)
    target[0, 0] = target[1, 5] = target[2, 2] = 1.0
    assert torch.isfinite(-(target * logp).sum())


def test_masked_log_softmax_all_illegal_row_stays_finite():
    logp = masked_log_softmax(torch.randn(1, 4), torch.zeros(1, 4, dtype=torch.bool))
    assert torch.isfinite(logp).all()
    with pytest.raises(ValueError, match="differ"):
        masked_log_softmax(torch.zeros(2, 3), torch.ones(2, 4, dtype=torch.bool))


def test_config_validates_and_is_a_structured_config():
    with pytest.raises(ValueError, match="global_pool_channels"):
        NetworkConfig(channels=8, global_pool_channels=8)
    with pytest.raises(ValueError, match="value_hidden"):
        NetworkConfig(value_hidden=0)
    cfg = OmegaConf.structured(NetworkConfig)
    assert cfg.blocks == 6 and cfg.channels == 64
