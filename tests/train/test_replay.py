import dataclasses
import os
import re

import numpy as np
import pytest
from omegaconf import OmegaConf

from azero.games.base import GameSpec
from azero.games.symmetry import symmetries
from azero.train import replay as replay_mod
from azero.train.replay import ReplayBuffer, ReplayConfig, ReplayShardError, compact_obs, window_size

SMALL = ReplayConfig(min_window=10, max_window=40, window_scale=2.0, window_exponent=0.75,
                     min_positions=1, max_samples_per_position=None)
# a window that holds everything the tests add
BIG = ReplayConfig(min_window=1000, max_window=1000, min_positions=1, max_samples_per_position=None)


def _add(buf, data, game_id):
    n = len(data["z"])
    return buf.add(data["obs"], data["pi"], data["z"], data["legal"], game_id=game_id, move=np.arange(n))


def _fill(buf, positions, rng, games, n=10, first_game=0):
    for g in range(first_game, first_game + games):
        _add(buf, positions(rng, n), g)


def _files(d):
    return sorted(os.listdir(d))


def test_shards_are_atomic_named_and_pickle_free(tmp_path, spec, positions, rng):
    buf = ReplayBuffer(tmp_path, spec, cfg=SMALL)
    data = positions(rng, 6)
    path = _add(buf, data, game_id=42)
    assert _files(tmp_path) == ["shard_00000000_000000000000_000006.npz"]
    path2 = _add(buf, positions(rng, 4), game_id=43)
    assert path2.name == "shard_00000001_000000000006_000004.npz"
    assert _files(tmp_path) == sorted([path.name, path2.name])  # no temp files left behind
    with np.load(path, allow_pickle=False) as f:
        assert sorted(f.files) == ["game_id", "legal", "meta", "move", "obs", "pi", "z"]
        assert f["obs"].dtype == np.uint8  # 0/1 planes stored compactly
        np.testing.assert_array_equal(f["obs"].astype(np.float32), data["obs"])
        assert f["pi"].dtype == np.float32 and f["legal"].dtype == np.bool_
        assert f["game_id"].tolist() == [42] * 6 and f["move"].tolist() == list(range(6))
        assert f["meta"].tolist() == [replay_mod.FORMAT_VERSION, 0, 0, 6]


def test_obs_dtype_is_the_smallest_exact_one():
    assert compact_obs(np.array([0.0, 1.0, 7.0])).dtype == np.uint8
    assert compact_obs(np.array([0.0, 0.5, -1.0])).dtype == np.float16
    x = np.array([0.1, 1.0], np.float32)
    assert compact_obs(x).dtype == np.float32
    np.testing.assert_array_equal(compact_obs(x), x)


def test_non_binary_obs_survive_a_restart_exactly(tmp_path, spec, positions, rng):
    data = positions(rng, 5)
    data["obs"][:, 2] = rng.standard_normal((5, 5, 5)).astype(np.float32)
    _add(ReplayBuffer(tmp_path, spec, cfg=SMALL), data, 0)
    again = ReplayBuffer(tmp_path, spec, cfg=SMALL).window_data()
    np.testing.assert_array_equal(again["obs"], data["obs"])


def test_reload_gives_the_same_positions(tmp_path, spec, positions, rng):
    buf = ReplayBuffer(tmp_path, spec, cfg=BIG)
    _fill(buf, positions, rng, games=3, n=7)
    before = buf.window_data()
    after = ReplayBuffer(tmp_path, spec, cfg=BIG).window_data()
    assert before.keys() == after.keys()
    for key in before:
        np.testing.assert_array_equal(before[key], after[key], err_msg=key)
    assert after["position"].tolist() == list(range(21))


def test_buffer_keeps_its_own_copy(tmp_path, spec, positions, rng):
    buf = ReplayBuffer(tmp_path, spec, cfg=BIG)
    data = positions(rng, 4)
    keep = {k: v.copy() for k, v in data.items()}
    _add(buf, data, 0)
    for v in data.values():  # a self-play worker reusing its arrays for the next games
        v[...] = 0
    got = buf.window_data()
    for k in keep:
        np.testing.assert_array_equal(got[k], keep[k], err_msg=k)


def test_stray_temp_file_from_a_crash_is_ignored(tmp_path, spec, positions, rng):
    buf = ReplayBuffer(tmp_path, spec, cfg=SMALL)
    _fill(buf, positions, rng, games=2, n=5)
    stray = tmp_path / ".tmp-shard_00000002_000000000010_000005.npz.999.deadbeef.tmp"
    stray.write_bytes(b"PK\x03\x04 half a zip")
    again = ReplayBuffer(tmp_path, spec, cfg=SMALL)
    assert again.stats().positions_total == 10 and again.stats().shards_total == 2
    # the next shard takes the next index: the stray never counted
    assert _add(again, positions(rng, 3), 9).name == "shard_00000002_000000000010_000003.npz"


def test_failed_write_leaves_no_shard_and_no_temp(tmp_path, spec, positions, rng, monkeypatch):
    buf = ReplayBuffer(tmp_path, spec, cfg=SMALL)
    _add(buf, positions(rng, 4), 0)

    def crash(f, **arrays):
        f.write(b"PK\x03\x04 partial")
        raise OSError("disk full")

    monkeypatch.setattr(np, "savez_compressed", crash)
    with pytest.raises(OSError, match="disk full"):
        _add(buf, positions(rng, 4), 1)
    monkeypatch.undo()
    assert _files(tmp_path) == ["shard_00000000_000000000000_000004.npz"]
    assert buf.stats().positions_total == 4
    assert _add(buf, positions(rng, 2), 1).name == "shard_00000001_000000000004_000002.npz"


def test_window_formula():
    # all data while 2 * N^0.75 >= N (N <= 16), then the sublinear growth, then the cap
    assert [window_size(n, SMALL) for n in (0, 5, 10, 16, 18, 20)] == [0, 5, 10, 16, 17, 18]
    assert window_size(30, SMALL) == int(2.0 * 30 ** 0.75) == 25
    assert window_size(100, SMALL) == 40 and window_size(10**9, SMALL) == 40
    cfg = ReplayConfig()
    # the defaults quoted in the module docstring
    sizes = [window_size(n, cfg) for n in (10_000, 100_000, 1_000_000, 10_000_000)]
    assert sizes == [10_000, 22_493, 126_491, 500_000]


def test_window_grows_then_slides(tmp_path, spec, positions, rng):
    buf = ReplayBuffer(tmp_path, spec, cfg=SMALL)
    seen_windows = []
    for g in range(12):
        _add(buf, positions(rng, 6), g)
        total = 6 * (g + 1)
        w = window_size(total, SMALL)
        seen_windows.append(w)
        st = buf.stats()
        assert st.positions_total == total and st.positions_in_window == w == st.window_size
        assert buf.window_data()["position"].tolist() == list(range(total - w, total))
        # only shards overlapping the window stay in memory
        assert st.shards_in_window == (total - 1) // 6 - (total - w) // 6 + 1
    assert seen_windows[:4] == [6, 12, 17, 21]   # all data, then the c*N^alpha growth...
    assert seen_windows[-1] == 40           # ...then the max_window cap: the window slides
    assert buf.stats().shards_total == 12 and len(_files(tmp_path)) == 12  # old shards stay on disk


def test_no_position_lost_or_duplicated_across_restarts(tmp_path, spec, positions, rng):
    cfg = BIG
    a = ReplayBuffer(tmp_path, spec, cfg=cfg)
    _fill(a, positions, rng, games=4, n=5)
    b = ReplayBuffer(tmp_path, spec, cfg=cfg)
    _fill(b, positions, rng, games=3, n=5, first_game=4)
    c = ReplayBuffer(tmp_path, spec, cfg=cfg)
    data = c.window_data()
    assert data["position"].tolist() == list(range(35))
    pairs = set(zip(data["game_id"].tolist(), data["move"].tolist()))
    assert pairs == {(g, m) for g in range(7) for m in range(5)}
    indices = [int(re.match(r"shard_(\d+)_", f).group(1)) for f in _files(tmp_path)]
    assert indices == list(range(7))
    # samples only ever come from the window's positions
    s = c.sample(200, np.random.default_rng(1))
    assert set(s["position"].tolist()) <= set(range(35))


def test_reload_after_window_slid_loads_only_the_window(tmp_path, spec, positions, rng):
    buf = ReplayBuffer(tmp_path, spec, cfg=SMALL)
    _fill(buf, positions, rng, games=12, n=6)
    # an unreadable shard far outside the window must not even be opened
    (tmp_path / "shard_00000000_000000000000_000006.npz").write_bytes(b"garbage")
    again = ReplayBuffer(tmp_path, spec, cfg=SMALL)
    assert again.stats().positions_in_window == 40
    np.testing.assert_array_equal(again.window_data()["position"], buf.window_data()["position"])
    np.testing.assert_array_equal(again.window_data()["obs"], buf.window_data()["obs"])


def test_augmentation_keeps_obs_pi_legal_consistent(tmp_path, spec, positions, rng):
    buf = ReplayBuffer(tmp_path, spec, cfg=BIG)
    _fill(buf, positions, rng, games=4, n=5)
    orig = buf.window_data()
    syms = symmetries(spec)
    assert len(buf.transforms) == 8
    s = buf.sample(400, np.random.default_rng(3))
    assert set(s["symmetry"].tolist()) == set(range(8))
    points = spec.board_shape[0] * spec.board_shape[1]
    for i in range(400):
        p = s["position"][i]
        obs, pi, legal = s["obs"][i], s["pi"][i], s["legal"][i]
        # the encoding survives the transform: the one-hot plane marks pi's best point...
        assert np.argmax(obs[0]) == np.argmax(pi[:points])
        # ...and the legal plane equals the transformed legal mask
        np.testing.assert_array_equal(obs[1].reshape(-1).astype(bool), legal[:points])
        assert legal[points] and pi[points] == pytest.approx(0.1)  # pass is fixed by every symmetry
        t = syms[s["symmetry"][i]]
        np.testing.assert_array_equal(obs, t.apply_obs(orig["obs"][p]))
        np.testing.assert_array_equal(pi, t.apply_policy(orig["pi"][p]))
        np.testing.assert_array_equal(legal, t.apply_policy(orig["legal"][p]))
        assert s["z"][i] == orig["z"][p]
    plain = buf.sample(50, np.random.default_rng(3), augment=False)
    assert not plain["symmetry"].any()
    np.testing.assert_array_equal(plain["obs"], orig["obs"][plain["position"]])


def test_explicit_transforms_hook(tmp_path, positions, rng):
    # a game with no symmetry still accepts caller-supplied transforms (here: a
    # left-right mirror of a 1-row board where action c is column c)
    spec = GameSpec("row", 4, (1, 1, 4), (1, 4), 4, symmetry="none")

    class Mirror:
        def apply_obs(self, obs):
            return obs[..., ::-1].copy()

        def apply_policy(self, pi):
            return pi[..., ::-1].copy()

    class Identity:
        def apply_obs(self, obs):
            return obs.copy()

        def apply_policy(self, pi):
            return pi.copy()

    assert len(ReplayBuffer(tmp_path / "a", spec).transforms) == 1  # 'none': identity only
    buf = ReplayBuffer(tmp_path / "b", spec, cfg=SMALL, transforms=[Identity(), Mirror()])
    obs = np.eye(4, dtype=np.float32).reshape(4, 1, 1, 4)
    pi = np.eye(4, dtype=np.float32)
    buf.add(obs, pi, np.zeros(4), np.ones((4, 4), bool), game_id=0, move=np.arange(4))
    s = buf.sample(64, np.random.default_rng(0))
    assert set(s["symmetry"].tolist()) == {0, 1}
    np.testing.assert_array_equal(s["obs"][:, 0, 0, :], s["pi"])  # one-hot obs column == policy column
    mirrored = s["symmetry"] == 1
    np.testing.assert_array_equal(np.argmax(s["pi"][mirrored], 1), 3 - s["position"][mirrored])


def test_sample_budget_and_warmup(tmp_path, spec, positions, rng):
    cfg = ReplayConfig(min_window=100, max_window=100, min_positions=8, max_samples_per_position=2.0)
    buf = ReplayBuffer(tmp_path, spec, cfg=cfg)
    assert not buf.can_sample(1)
    _add(buf, positions(rng, 5), 0)
    assert not buf.can_sample(1)  # 5 < min_positions
    _add(buf, positions(rng, 5), 1)
    assert buf.can_sample(20) and not buf.can_sample(21)
    buf.sample(16, rng)
    assert buf.can_sample(4) and not buf.can_sample(5)
    st = buf.stats()
    assert (st.samples_drawn, st.samples_allowed) == (16, 20)
    # a restarted trainer hands back what it had consumed
    again = ReplayBuffer(tmp_path, spec, cfg=cfg, samples_drawn=16)
    assert again.can_sample(4) and not again.can_sample(5)
    _add(again, positions(rng, 3), 2)  # new data refills the budget
    assert again.can_sample(10) and not again.can_sample(11)


def test_add_rejects_bad_data(tmp_path, spec, positions, rng):
    buf = ReplayBuffer(tmp_path, spec, cfg=SMALL)
    d = positions(rng, 3)
    bad = d["pi"].copy()
    illegal = np.flatnonzero(~d["legal"][1])[0]
    bad[1, illegal] = 0.05
    bad[1] /= bad[1].sum()
    with pytest.raises(ValueError, match=r"illegal actions in rows \[1\]"):
        buf.add(d["obs"], bad, d["z"], d["legal"], game_id=0, move=np.arange(3))
    with pytest.raises(ValueError, match="obs must be"):
        buf.add(d["obs"][:, :2], d["pi"], d["z"], d["legal"], game_id=0, move=np.arange(3))
    with pytest.raises(ValueError, match="sum to 1"):
        buf.add(d["obs"], d["pi"] * 2, d["z"], d["legal"], game_id=0, move=np.arange(3))
    with pytest.raises(ValueError, match=r"z must lie"):
        buf.add(d["obs"], d["pi"], d["z"] * 3 + 0.5, d["legal"], game_id=0, move=np.arange(3))
    assert _files(tmp_path) == [] and buf.stats().positions_total == 0
    with pytest.raises(ValueError, match="empty"):
        buf.sample(1, rng)


def _two_shards(tmp_path, spec, positions, rng):
    buf = ReplayBuffer(tmp_path, spec, cfg=SMALL)
    _add(buf, positions(rng, 8), 0)
    return _add(buf, positions(rng, 8), 1)


def test_corrupt_shard_error_names_the_file(tmp_path, spec, positions, rng):
    path = _two_shards(tmp_path, spec, positions, rng)
    raw = bytearray(path.read_bytes())
    mid = len(raw) // 2
    raw[mid : mid + 16] = bytes(b ^ 0xFF for b in raw[mid : mid + 16])
    path.write_bytes(bytes(raw))
    with pytest.raises(ReplayShardError) as e:
        ReplayBuffer(tmp_path, spec, cfg=SMALL)
    assert e.value.path == path and path.name in str(e.value)
    # configured to skip: the other shard still loads, and the loss is counted
    buf = ReplayBuffer(tmp_path, spec, cfg=dataclasses.replace(SMALL, skip_corrupt=True))
    st = buf.stats()
    assert (st.shards_skipped, st.positions_in_window, st.positions_total) == (1, 8, 16)
    assert set(buf.sample(50, rng)["position"].tolist()) <= set(range(8))


def test_truncated_shard_error_names_the_file(tmp_path, spec, positions, rng):
    path = _two_shards(tmp_path, spec, positions, rng)
    path.write_bytes(path.read_bytes()[: path.stat().st_size * 2 // 3])
    with pytest.raises(ReplayShardError, match=re.escape(path.name) + ".*truncated"):
        ReplayBuffer(tmp_path, spec, cfg=SMALL)


def test_shard_of_another_game_or_renamed_is_rejected(tmp_path, spec, positions, rng):
    path = _two_shards(tmp_path, spec, positions, rng)
    other = GameSpec("other", 26, (4, 5, 5), (5, 5), 50, pass_action=25, symmetry="dihedral8")
    with pytest.raises(ReplayShardError, match=r"shard_00000000_000000000000_000008\.npz: obs has shape"):
        ReplayBuffer(tmp_path, other, cfg=SMALL)
    renamed = path.with_name("shard_00000005_000000000016_000008.npz")
    path.rename(renamed)
    with pytest.raises(ReplayShardError, match=re.escape(renamed.name) + ".*meta"):
        ReplayBuffer(tmp_path, spec, cfg=SMALL)


def test_overlapping_shards_are_rejected(tmp_path, spec, positions, rng):
    path = _two_shards(tmp_path, spec, positions, rng)
    (tmp_path / "shard_00000002_000000000010_000008.npz").write_bytes(path.read_bytes())
    with pytest.raises(ReplayShardError, match="overlapping"):
        ReplayBuffer(tmp_path, spec, cfg=SMALL)


def test_config_is_a_structured_config():
    cfg = OmegaConf.structured(ReplayConfig)
    assert cfg.max_samples_per_position == 8.0
    with pytest.raises(ValueError, match="min_window"):
        ReplayConfig(min_window=10, max_window=5)


def test_next_game_id_follows_the_newest_shard_across_a_restart(tmp_path, spec, positions, rng):
    buf = ReplayBuffer(tmp_path, spec, cfg=BIG)
    assert buf.next_game_id() == 0
    _fill(buf, positions, rng, games=3, n=7)
    last = int(buf.window_data()["game_id"].max())
    assert buf.next_game_id() == last + 1
    assert ReplayBuffer(tmp_path, spec, cfg=BIG).next_game_id() == last + 1
