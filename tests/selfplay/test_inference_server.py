import threading

import numpy as np
import pytest
import torch

from azero.selfplay.inference_server import InferenceServer
from azero.selfplay.network_evaluator import NetworkEvaluator


class RowSumEvaluator:
    """Deterministic: value = sum of the row's observation scaled by the weight version."""

    def __init__(self):
        self.scale = 1.0
        self.batch_sizes = []

    def load_state_dict(self, sd):
        self.scale = sd["scale"]

    def evaluate(self, obs, legal):
        self.batch_sizes.append(obs.shape[0])
        values = self.scale * obs.reshape(obs.shape[0], -1).sum(axis=1)
        priors = legal / np.maximum(legal.sum(axis=1, keepdims=True), 1)
        return priors.astype(np.float32), values.astype(np.float32)


def _request(i, rows=3, A=4):
    obs = np.full((rows, 1, 2, 2), float(i), dtype=np.float32)
    legal = np.ones((rows, A), dtype=bool)
    legal[:, i % A] = False
    return obs, legal


def test_concurrent_clients_get_their_own_rows_and_requests_are_batched():
    ev = RowSumEvaluator()
    results = {}
    barrier = threading.Barrier(8)
    with InferenceServer(ev, max_batch=64, max_wait_ms=50) as server:
        def worker(i):
            barrier.wait()
            for k in range(5):
                obs, legal = _request(i * 10 + k)
                results[(i, k)] = server.evaluate(obs, legal)
        threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        stats = server.stats()
    for (i, k), (priors, values) in results.items():
        v = i * 10 + k
        np.testing.assert_allclose(values, np.full(3, 4.0 * v))
        assert priors.shape == (3, 4) and np.all(priors[:, v % 4] == 0)
    assert stats["evaluations"] == 8 * 5 * 3
    # 8 simultaneous clients with a 50 ms window must share forward passes.
    assert stats["mean_batch"] > 3
    assert max(ev.batch_sizes) <= 64 + 3


def test_reload_applies_between_batches_and_never_mid_request():
    ev = RowSumEvaluator()
    with InferenceServer(ev, max_batch=8, max_wait_ms=0) as server:
        obs, legal = _request(1)
        _, v1 = server.evaluate(obs, legal)
        server.reload({"scale": 2.0})
        _, v2 = server.evaluate(obs, legal)
        assert server.stats()["weights_version"] == 1
    np.testing.assert_allclose(v2, 2 * v1)


def test_evaluator_error_reaches_the_caller_and_server_survives():
    class Flaky(RowSumEvaluator):
        def evaluate(self, obs, legal):
            if obs.flat[0] < 0:
                raise ValueError("bad batch")
            return super().evaluate(obs, legal)

    with InferenceServer(Flaky(), max_wait_ms=0) as server:
        obs, legal = _request(1)
        with pytest.raises(ValueError, match="bad batch"):
            server.evaluate(-obs, legal)
        _, v = server.evaluate(obs, legal)
        assert v.shape == (3,)


def test_submit_before_start_is_an_error():
    with pytest.raises(RuntimeError, match="start"):
        InferenceServer(RowSumEvaluator()).submit(*_request(0))


class TinyNet(torch.nn.Module):
    def __init__(self, A):
        super().__init__()
        self.lin = torch.nn.Linear(4, A)
        self.v = torch.nn.Linear(4, 1)

    def forward(self, x):
        f = x.flatten(1)
        return self.lin(f), torch.tanh(self.v(f)).squeeze(1)


def test_network_evaluator_masks_illegal_actions_and_handles_terminal_rows():
    torch.manual_seed(0)
    ev = NetworkEvaluator(TinyNet(5), device="cpu")
    obs = np.random.default_rng(0).normal(size=(3, 1, 2, 2)).astype(np.float32)
    legal = np.array([[1, 0, 1, 0, 1], [0, 0, 0, 0, 1], [0, 0, 0, 0, 0]], dtype=bool)
    priors, values = ev.evaluate(obs, legal)
    assert priors.dtype == np.float32 and values.shape == (3,)
    assert np.all(priors[~legal] == 0)
    np.testing.assert_allclose(priors[:2].sum(axis=1), 1.0, rtol=1e-6)
    assert priors[1, 4] == pytest.approx(1.0)
    assert np.all(priors[2] == 0)  # no legal action: all-zero prior, no NaN
    assert np.all(np.abs(values) <= 1)
    with pytest.raises(ValueError, match="expected obs"):
        ev.evaluate(obs[:, 0], legal)


def test_hot_reload_from_checkpoint_file(tmp_path):
    from azero.games import make_game
    from azero.train.checkpoint import CheckpointError, model_tensors, save_checkpoint
    from azero.train.network import NetworkConfig, PolicyValueNet

    spec = make_game("tictactoe").spec
    torch.manual_seed(0)
    served, trained = PolicyValueNet(spec, NetworkConfig.tiny()), PolicyValueNet(spec, NetworkConfig.tiny())
    with torch.no_grad():
        for p in trained.parameters():
            p.add_(0.1)
    path = save_checkpoint(tmp_path, step=1, tensors=model_tensors(trained), metadata={})
    states = make_game("tictactoe").new_states(4)
    obs, legal = states.encode(), states.legal_mask()
    # async_reload=False: the reload is in force at the next batch (OpenVINO's background compile
    # would answer it with the old weights until the compile lands; tests/train/test_precision.py)
    with InferenceServer(NetworkEvaluator(served, device="cpu", async_reload=False), max_wait_ms=0) as server:
        before = server.evaluate(obs, legal)
        server.reload_checkpoint(path)
        after = server.evaluate(obs, legal)
        expected = NetworkEvaluator(trained, device="cpu").evaluate(obs, legal)
        np.testing.assert_allclose(after[1], expected[1], rtol=1e-5, atol=1e-6)
        assert not np.allclose(before[1], after[1])
        broken = tmp_path / "broken.safetensors"
        broken.write_bytes(path.read_bytes()[:100])
        with pytest.raises(CheckpointError, match="broken.safetensors"):
            server.reload_checkpoint(broken)
        np.testing.assert_allclose(server.evaluate(obs, legal)[1], expected[1], rtol=1e-5, atol=1e-6)
