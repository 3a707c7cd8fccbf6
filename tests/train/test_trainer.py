import math
import os

import numpy as np
import pytest
import torch
from omegaconf import OmegaConf

from azero.train.checkpoint import CheckpointError, latest_checkpoint, list_checkpoints
from azero.train.network import NetworkConfig, PolicyValueNet, Shapes
from azero.train.replay import ReplayBuffer, ReplayConfig
from azero.train.trainer import TrainConfig, Trainer, lr_at, select_device

BUFFER_CFG = ReplayConfig(min_window=1000, max_window=1000, min_positions=1, max_samples_per_position=None)


def _net(spec, seed=0):
    torch.manual_seed(seed)
    return PolicyValueNet(spec, NetworkConfig.tiny())


def _buffer(path, spec, positions, *, games=4, n=8, cfg=BUFFER_CFG, **kw):
    buf = ReplayBuffer(path, spec, cfg=cfg, **kw)
    if buf.stats().positions_total == 0:
        rng = np.random.default_rng(5)
        for g in range(games):
            d = positions(rng, n)
            buf.add(d["obs"], d["pi"], d["z"], d["legal"], game_id=g, move=np.arange(n))
    return buf


def test_lr_schedules():
    cos = TrainConfig(lr=0.1, warmup_steps=10, steps=110, lr_schedule="cosine", lr_min_ratio=0.1)
    assert lr_at(0, cos) == pytest.approx(0.01) and lr_at(9, cos) == pytest.approx(0.1)
    assert lr_at(10, cos) == pytest.approx(0.1)
    assert lr_at(60, cos) == pytest.approx(0.01 + 0.09 * 0.5)  # half way down the cosine
    assert lr_at(110, cos) == pytest.approx(0.01) and lr_at(10_000, cos) == pytest.approx(0.01)
    step = TrainConfig(lr=1.0, warmup_steps=0, lr_schedule="step", lr_milestones=[5, 8], lr_gamma=0.5)
    assert [lr_at(s, step) for s in (0, 4, 5, 7, 8, 100)] == [1.0, 1.0, 0.5, 0.5, 0.25, 0.25]
    assert lr_at(3, TrainConfig(lr=0.3, warmup_steps=0, lr_schedule="constant")) == 0.3


def test_config_validation_and_structured_config():
    with pytest.raises(ValueError, match="optimizer"):
        TrainConfig(optimizer="adam")
    with pytest.raises(ValueError, match="lr_schedule"):
        TrainConfig(lr_schedule="linear")
    cfg = OmegaConf.structured(TrainConfig)
    assert cfg.batch_size == 256 and list(cfg.lr_milestones) == []


def test_device_selection_falls_back_to_cpu():
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert select_device(None).type == expected and select_device("auto").type == expected
    assert select_device("cpu") == torch.device("cpu")
    trainer = Trainer(PolicyValueNet(Shapes((1, 2, 2), 4), NetworkConfig.tiny()), TrainConfig(), device="cpu")
    assert next(trainer.net.parameters()).device.type == "cpu" and not trainer.on_cuda


def test_overfits_a_tiny_fixed_batch(spec, positions):
    batch = positions(np.random.default_rng(0), 16)
    cfg = TrainConfig(optimizer="adamw", lr=3e-3, warmup_steps=0, lr_schedule="constant", weight_decay=0.0,
                      batch_size=16)
    trainer = Trainer(_net(spec), cfg, device="cpu")
    history = [trainer.train_step(batch) for _ in range(60)]
    first, last = history[0], history[-1]
    assert set(first) >= {"loss", "policy_loss", "value_loss", "policy_kl", "policy_entropy", "policy_top1",
                          "value_error", "lr", "grad_norm", "step"}
    assert all(isinstance(v, float) and math.isfinite(v) for v in last.values())
    assert last["loss"] < 0.6 * first["loss"]
    assert last["policy_kl"] < 0.3 * first["policy_kl"]
    assert last["value_loss"] < 0.2 * first["value_loss"]
    assert last["policy_top1"] == 1.0
    assert last["step"] == 60.0 and trainer.step == 60 and trainer.samples_seen == 60 * 16
    # the policy target's entropy bounds the cross-entropy from below: kl >= 0
    assert min(h["policy_kl"] for h in history) > -1e-4


def test_illegal_logits_do_not_affect_training(spec, positions):
    batch = positions(np.random.default_rng(1), 8)
    a = 3
    batch["legal"][:, a] = False  # action 3 is illegal everywhere in this batch
    batch["pi"][:, a] = 0.0
    batch["pi"] /= batch["pi"].sum(axis=1, keepdims=True)
    plain = Trainer(_net(spec), TrainConfig(warmup_steps=0), device="cpu")
    pushed = Trainer(_net(spec), TrainConfig(warmup_steps=0), device="cpu")
    with torch.no_grad():
        pushed.net.policy_fc.bias[a] += 1e3
    m1, m2 = plain.train_step(batch), pushed.train_step(batch)
    assert m1["policy_loss"] == m2["policy_loss"] and m1["grad_norm"] == m2["grad_norm"]
    assert pushed.net.policy_fc.bias.grad[a] == 0.0
    for (name, p1), p2 in zip(plain.net.named_parameters(), pushed.net.parameters()):
        if name != "policy_fc.bias":
            assert torch.equal(p1, p2), name


def test_non_finite_loss_raises(spec, positions):
    batch = positions(np.random.default_rng(2), 4)
    batch["obs"][0, 0, 0, 0] = np.nan
    trainer = Trainer(_net(spec), TrainConfig(), device="cpu")
    with pytest.raises(FloatingPointError, match="train_step 0"):
        trainer.train_step(batch)


def _state(trainer):
    model = {k: v.clone() for k, v in trainer.net.state_dict().items()}
    opt = trainer.optimizer.state_dict()["state"]
    return model, {(pid, k): v.clone() for pid, s in opt.items() for k, v in s.items() if torch.is_tensor(v)}


@pytest.mark.parametrize("optimizer", ["sgd", "adamw"])
def test_exact_resume_is_bit_identical(tmp_path, spec, positions, optimizer):
    cfg = TrainConfig(optimizer=optimizer, batch_size=8, lr=0.05 if optimizer == "sgd" else 3e-3,
                      warmup_steps=2, steps=6, grad_clip=1.0, seed=11, keep_checkpoints=0)
    n_steps, m_steps = 3, 3

    # uninterrupted: N + M steps, saving after N without disturbing anything
    straight = Trainer(_net(spec), cfg, device="cpu")
    buf = _buffer(tmp_path / "replay", spec, positions)
    first = straight.train_from(buf, max_steps=n_steps)
    path = straight.save(tmp_path / "ckpt")
    rest = straight.train_from(buf, max_steps=m_steps)
    assert len(first) == n_steps and len(rest) == m_steps

    # resumed: a fresh trainer with different initial weights and another seed, loaded from the checkpoint
    torch.manual_seed(999)
    resumed = Trainer(_net(spec, seed=7), TrainConfig(**{**cfg.__dict__, "seed": 99}), device="cpu")
    resumed.load(path)
    assert resumed.step == n_steps and resumed.samples_seen == n_steps * cfg.batch_size
    buf2 = _buffer(tmp_path / "replay", spec, positions, samples_drawn=resumed.samples_seen)
    rest2 = resumed.train_from(buf2, max_steps=m_steps)

    assert rest2 == rest  # every metric of every step, exactly
    model1, opt1 = _state(straight)
    model2, opt2 = _state(resumed)
    assert model1.keys() == model2.keys() and opt1.keys() == opt2.keys()
    for k in model1:
        assert torch.equal(model1[k], model2[k]), k
    for k in opt1:
        assert torch.equal(opt1[k], opt2[k]), k
    assert resumed.rng.bit_generator.state == straight.rng.bit_generator.state
    assert buf2.stats().samples_drawn == buf.stats().samples_drawn


def test_load_restores_torch_rng(tmp_path, spec):
    trainer = Trainer(_net(spec), TrainConfig(), device="cpu")
    torch.manual_seed(42)
    path = trainer.save(tmp_path)
    expected = torch.rand(4)
    torch.manual_seed(0)
    trainer.load(path)
    assert torch.equal(torch.rand(4), expected)


def test_restore_rebuilds_trainer_from_the_file_alone(tmp_path, spec, positions):
    cfg = TrainConfig(batch_size=8, warmup_steps=0, lr=0.01, seed=3)
    trainer = Trainer(_net(spec), cfg, device="cpu")
    trainer.train_from(_buffer(tmp_path / "replay", spec, positions), max_steps=2)
    path = trainer.save(tmp_path / "ckpt")
    back = Trainer.restore(path, device="cpu")
    assert back.cfg == cfg and back.step == 2
    for k, v in trainer.net.state_dict().items():
        assert torch.equal(back.net.state_dict()[k], v), k


def test_load_rejects_another_optimizer(tmp_path, spec):
    path = Trainer(_net(spec), TrainConfig(optimizer="sgd"), device="cpu").save(tmp_path)
    other = Trainer(_net(spec), TrainConfig(optimizer="adamw"), device="cpu")
    with pytest.raises(CheckpointError, match=r"ckpt_000000000\.safetensors: saved with optimizer 'sgd'"):
        other.load(path)
    assert other.step == 0


def test_train_from_respects_budget_and_checkpoints(tmp_path, spec, positions):
    rcfg = ReplayConfig(min_window=1000, max_window=1000, min_positions=1, max_samples_per_position=1.0)
    buf = _buffer(tmp_path / "replay", spec, positions, games=4, n=8, cfg=rcfg)  # 32 positions: 32 samples
    cfg = TrainConfig(batch_size=8, checkpoint_every=2, keep_checkpoints=1, warmup_steps=0)
    trainer = Trainer(_net(spec), cfg, device="cpu")
    history = trainer.train_from(buf, max_steps=100, checkpoint_dir=tmp_path / "ckpt")
    assert len(history) == 4 and trainer.step == 4  # 4 batches of 8 use up 1 sample per position
    assert [p.name for p in list_checkpoints(tmp_path / "ckpt")] == ["ckpt_000000004.safetensors"]
    assert latest_checkpoint(tmp_path / "ckpt").name == "ckpt_000000004.safetensors"
    assert not [f for f in os.listdir(tmp_path / "ckpt") if f.endswith(".tmp")]
