"""Dynamic batching of evaluation requests from many self-play workers.

Workers call `client.evaluate(obs, legal)` (the search's evaluator protocol)
from their own threads. The server thread takes the first waiting request,
then keeps collecting until `max_batch` rows are queued or `max_wait_ms` has
passed since that first request, runs one forward pass on the concatenation
and hands every caller its slice. A larger batch amortises the network's fixed
cost (the GPU case); the wait bound caps the latency that buys.

New weights are applied between two batches (`reload`), so a hot reload never
drops or splits a request: every request is answered entirely by one version.
"""

from __future__ import annotations

import copy
import queue
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass

import numpy as np


@dataclass
class _Request:
    obs: np.ndarray
    legal: np.ndarray
    future: Future
    enqueued: float


class InferenceServer:
    """Owns an evaluator (e.g. NetworkEvaluator) and serves it to many clients."""

    def __init__(self, evaluator, *, max_batch: int = 1024, max_wait_ms: float = 2.0):
        if max_batch < 1 or max_wait_ms < 0:
            raise ValueError(f"max_batch must be >= 1 and max_wait_ms >= 0, got {max_batch}, {max_wait_ms}")
        self.evaluator = evaluator
        self.max_batch = max_batch
        self.max_wait = max_wait_ms / 1000.0
        self._queue: queue.Queue[_Request | None] = queue.Queue()
        self._pending_weights = None
        self._weights_lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self.weights_version = 0
        self._rows = 0
        self._batches = 0
        self._latency_sum = 0.0
        self._requests = 0
        self._busy = 0.0
        self._started_at = None

    # -- lifecycle ---------------------------------------------------------
    def start(self) -> "InferenceServer":
        if self._thread is None:
            self._stop.clear()
            self._started_at = time.perf_counter()
            self._thread = threading.Thread(target=self._serve, name="azero-inference", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self._stop.set()
            self._queue.put(None)
            self._thread.join()
            self._thread = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    # -- client side -------------------------------------------------------
    def submit(self, obs: np.ndarray, legal: np.ndarray) -> Future:
        if self._thread is None:
            raise RuntimeError("InferenceServer.submit before start()")
        fut: Future = Future()
        self._queue.put(_Request(obs, legal, fut, time.perf_counter()))
        return fut

    @property
    def has_score(self) -> bool:
        """The served network predicts scores: every batch then carries them (evaluate_with_score)."""
        return bool(getattr(self.evaluator, "has_score", False))

    def evaluate(self, obs: np.ndarray, legal: np.ndarray):
        """Blocking evaluator protocol: same signature as the in-process evaluator."""
        return self.submit(obs, legal).result()[:2]

    def evaluate_with_score(self, obs: np.ndarray, legal: np.ndarray):
        """(priors, values, scores): the evaluator protocol's score variant (see search/evaluators.py)."""
        out = self.submit(obs, legal).result()
        if len(out) != 3:
            raise ValueError("evaluate_with_score: the served network has no score head")
        return out

    def reload(self, state_dict: dict) -> None:
        """Queue new weights; they take effect before the next batch."""
        with self._weights_lock:
            self._pending_weights = state_dict

    def reload_checkpoint(self, path) -> None:
        """Hot reload from a checkpoint file. The file is read and checked against the network
        here, in the caller's thread, so a corrupt or mismatched file raises CheckpointError to
        the caller and the server keeps serving the old weights."""
        from azero.train.checkpoint import load_checkpoint, load_model_state

        ckpt = load_checkpoint(path)
        probe = copy.deepcopy(self.evaluator.net).cpu()
        load_model_state(probe, ckpt)  # validates names and shapes
        self.reload({k: v for k, v in probe.state_dict().items()})

    def stats(self) -> dict:
        elapsed = max(time.perf_counter() - (self._started_at or time.perf_counter()), 1e-9)
        return {
            "batches": self._batches,
            "evaluations": self._rows,
            "mean_batch": self._rows / max(self._batches, 1),
            "evals_per_s": self._rows / elapsed,
            "mean_queue_latency_ms": 1000.0 * self._latency_sum / max(self._requests, 1),
            "busy_fraction": self._busy / elapsed,
            "weights_version": self.weights_version,
        }

    # -- server thread -----------------------------------------------------
    def _collect(self, first: _Request) -> list[_Request]:
        batch = [first]
        rows = first.obs.shape[0]
        deadline = first.enqueued + self.max_wait
        while rows < self.max_batch:
            timeout = deadline - time.perf_counter()
            try:
                req = self._queue.get(timeout=timeout) if timeout > 0 else self._queue.get_nowait()
            except queue.Empty:
                break
            if req is None:  # stop sentinel: serve what we have, then exit
                self._stop.set()
                break
            batch.append(req)
            rows += req.obs.shape[0]
        return batch

    def _serve(self) -> None:
        while not self._stop.is_set():
            first = self._queue.get()
            if first is None:
                break
            batch = self._collect(first)
            with self._weights_lock:
                weights, self._pending_weights = self._pending_weights, None
            t0 = time.perf_counter()
            try:
                if weights is not None:
                    self.evaluator.load_state_dict(weights)
                    self.weights_version += 1
                obs = np.concatenate([r.obs for r in batch]) if len(batch) > 1 else batch[0].obs
                legal = np.concatenate([r.legal for r in batch]) if len(batch) > 1 else batch[0].legal
                scored = getattr(self.evaluator, "has_score", False)
                out = self.evaluator.evaluate_with_score(obs, legal) if scored else self.evaluator.evaluate(obs, legal)
            except BaseException as e:  # a failed batch fails its callers, not the server
                for r in batch:
                    r.future.set_exception(e)
                continue
            t1 = time.perf_counter()
            self._busy += t1 - t0
            start = 0
            for r in batch:
                n = r.obs.shape[0]
                r.future.set_result(tuple(x[start:start + n] for x in out))
                start += n
                self._latency_sum += t0 - r.enqueued
            self._requests += len(batch)
            self._rows += start
            self._batches += 1
        # Fail whatever is still queued so no worker waits forever.
        while True:
            try:
                r = self._queue.get_nowait()
            except queue.Empty:
                break
            if r is not None:
                r.future.set_exception(RuntimeError("inference server stopped"))
