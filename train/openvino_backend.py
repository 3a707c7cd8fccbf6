"""A policy-value network compiled by OpenVINO for the CPU, with hot reload of new weights.

Why: on this project's CPUs (AMD EPYC with avx512_bf16) OpenVINO's bf16 kernels run the preset
nets about 1.5x faster than torch's bf16 autocast and 2.5-3x faster than torch float32
(`azero bench inference` prints the table). The model comes from the torch module in memory
through OpenVINO's PyTorch frontend (a TorchScript trace of the same weights that were read from
safetensors): no ONNX file, no cache on disk, nothing unpickled.

Hot reload. OpenVINO bakes weights into the compiled model (as constants, which is what lets it
fold BatchNorm into the convolutions and pre-pack bf16 weights), so new weights mean a new trace
and compile: about 1 s for the go9x9 preset on one core, measured by `azero bench inference`.
Self-play reloads after every training round, so with `async_reload` the compile runs in a
background thread and the compiled model is swapped in between two batches; callers keep
evaluating with the previous weights meanwhile, and only the newest pending weights are compiled.
With `async_reload=False` the reload compiles in the caller's thread: slower, but a one-worker
run then sees exactly the same weights at the same batch on every run (deterministic).

Threads. One compiled model serves many threads; each thread gets its own infer request (a
request is not thread-safe). OpenVINO runs one request per stream at a time, so `streams` is the
number of threads that call at once (the local runner's in-process workers): measured on 2 cores,
two callers on one single-thread stream got 15.5k evals/s together, on two streams 28.6k.
"""

from __future__ import annotations

import copy
import threading
import time
import warnings

import numpy as np
import torch


class OpenVinoError(RuntimeError):
    """OpenVINO is missing, or could not convert, compile or run the network."""


class OpenVinoNet:
    """infer(obs [B, C, H, W] float32) -> (logits [B, A], values [B]) as float32 numpy arrays."""

    def __init__(self, net: torch.nn.Module, *, precision: str, threads: int | None = 1, streams: int = 1,
                 async_reload: bool = True):
        try:
            import openvino as ov
        except Exception as e:  # ImportError, or a broken install failing to load its libraries
            raise OpenVinoError(f"openvino is not importable ({type(e).__name__}: {e})") from e
        self._ov = ov
        self._core = ov.Core()
        if streams < 1:
            raise ValueError(f"OpenVinoNet: streams must be >= 1, got {streams}")
        self._config = {"INFERENCE_PRECISION_HINT": precision, "NUM_STREAMS": int(streams),
                        "PERFORMANCE_HINT": "LATENCY"}
        if threads:  # threads per stream; OpenVINO counts them over all streams
            self._config["INFERENCE_NUM_THREADS"] = int(threads) * int(streams)
        self.precision = precision
        self.async_reload = async_reload
        # A private copy: the caller's module keeps training while a background compile traces this one.
        self._staging = copy.deepcopy(net).cpu().float().eval()
        self._obs_shape = tuple(int(d) for d in net.obs_shape)
        t0 = time.perf_counter()
        self._current = (self._compile(), 0)   # (compiled model, weights version): replaced as one tuple
        self.compile_seconds = time.perf_counter() - t0
        """Seconds the first conversion + compile took (what a synchronous reload costs)."""
        self._local = threading.local()
        self._lock = threading.Lock()
        self._pending: dict | None = None
        self._reloader: threading.Thread | None = None
        self._reload_error: BaseException | None = None
        self.reloads = 0
        """Weights versions compiled and swapped in after the first."""
        self.reload_seconds = 0.0
        """Total seconds spent converting + compiling reloads (in the background when async)."""

    @property
    def version(self) -> int:
        return self._current[1]

    def _compile(self):
        example = torch.zeros((1, *self._obs_shape), dtype=torch.float32)
        try:
            with warnings.catch_warnings(), torch.no_grad():
                # the forward's shape check reads tensor shapes in Python, which a trace warns about;
                # and torch deprecates jit.trace, which OpenVINO's frontend still calls
                warnings.simplefilter("ignore", torch.jit.TracerWarning)
                warnings.simplefilter("ignore", DeprecationWarning)
                model = self._ov.convert_model(self._staging, example_input=example,
                                               input=[self._ov.PartialShape([-1, *self._obs_shape])])
            return self._core.compile_model(model, "CPU", self._config)
        except Exception as e:
            raise OpenVinoError(f"OpenVINO could not compile the network ({type(e).__name__}: {e})") from e

    # -- inference -----------------------------------------------------------
    def infer(self, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if self._reload_error is not None:
            raise OpenVinoError(f"a weights reload failed: {self._reload_error}") from self._reload_error
        compiled, version = self._current
        local = self._local
        if getattr(local, "version", None) != version:
            local.request = compiled.create_infer_request()
            local.version = version
        try:
            out = local.request.infer({0: np.ascontiguousarray(obs, dtype=np.float32)})
        except Exception as e:
            raise OpenVinoError(f"OpenVINO inference failed ({type(e).__name__}: {e})") from e
        # infer() returns copies of the output tensors, so the next call does not overwrite them
        logits, values = out[0], out[1]
        return logits.astype(np.float32, copy=False), values.reshape(-1).astype(np.float32, copy=False)

    # -- hot reload ------------------------------------------------------------
    def reload(self, state_dict: dict) -> None:
        """Compile `state_dict` (a PolicyValueNet state) and swap it in: in the background when
        async_reload (returns at once), else before returning. Weights queued while a compile runs
        replace each other: only the newest is compiled next."""
        state = {k: v.detach().to("cpu", copy=True) for k, v in state_dict.items()}
        with self._lock:
            self._pending = state
            if not self.async_reload:
                self._drain()
                return
            if self._reloader is None:
                # not a daemon: interpreter exit waits for a compile in flight (~1 s) instead of
                # tearing down OpenVINO's threads under it ("terminate called without an active exception")
                self._reloader = threading.Thread(target=self._reload_loop, name="azero-openvino-reload")
                self._reloader.start()

    def _swap_in(self, state: dict) -> bool:
        """Compile `state` and make it current; False (error kept for the next infer()) on failure."""
        t0 = time.perf_counter()
        try:
            self._staging.load_state_dict(state)
            compiled = self._compile()
        except BaseException as e:  # reported by the next infer(); the evaluator falls back to torch
            self._reload_error = e
            return False
        self._current = (compiled, self._current[1] + 1)
        self.reloads += 1
        self.reload_seconds += time.perf_counter() - t0
        return True

    def _drain(self) -> None:
        """Synchronous reload: compile what is pending now (the caller holds the lock)."""
        state, self._pending = self._pending, None
        if state is not None:
            self._swap_in(state)

    def _reload_loop(self) -> None:
        while True:
            with self._lock:
                state, self._pending = self._pending, None
                if state is None:
                    self._reloader = None
                    return
            if not self._swap_in(state):
                with self._lock:
                    self._reloader = None
                return

    def wait_reload(self, timeout: float | None = None) -> None:
        """Block until every queued reload is compiled and swapped in (tests, benchmarks, shutdown)."""
        deadline = None if timeout is None else time.perf_counter() + timeout
        while True:
            with self._lock:
                thread = self._reloader
            if thread is None:
                return
            thread.join(None if deadline is None else max(0.0, deadline - time.perf_counter()))
            if deadline is not None and time.perf_counter() >= deadline:
                return
