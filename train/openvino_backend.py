"""A policy-value network compiled by OpenVINO for the CPU, with hot reload of new weights.

Why: on this project's CPUs (AMD EPYC with avx512_bf16) OpenVINO's bf16 kernels run the preset
nets about 1.5x faster than torch's bf16 autocast and 2.5-3x faster than torch float32
(`azero bench inference` prints the table). The model comes from the torch module in memory
through OpenVINO's PyTorch frontend (a TorchScript trace of the same weights that were read from
safetensors): no ONNX file, no cache on disk, nothing unpickled.

Hot reload. OpenVINO bakes weights into the compiled model as constants, which is what lets it
fold BatchNorm into the convolutions and pre-pack bf16 weights, so new weights mean a new
compile. Tracing the network again each time would cost ~1 s of Python holding the GIL (measured:
self-play fell from 8.8k to 1.3k evals/s with back-to-back reloads). So the network is traced
once, by torch.export, into a template whose weights are graph inputs; a reload clones the
template, puts the new tensors in as constants and compiles: ~0.1 s for the go9x9 preset, and
the same inference speed as a direct conversion. With `async_reload` the compile runs in a
background thread and the compiled model is swapped in between two batches; callers keep
evaluating with the previous weights meanwhile, and only the newest pending weights are compiled.
Background compiles are spaced so that they take at most `reload_duty` of one core (after a
compile of c seconds the next starts no sooner than c * (1 / reload_duty - 1) later). With
`async_reload=False` the reload compiles in the caller's thread, and a one-worker run sees the
same weights at the same batch on every run (deterministic).

Threads. One compiled model serves many threads; each thread gets its own infer request (a
request is not thread-safe). OpenVINO runs one request per stream at a time, so `streams` is the
number of threads that call at once (the local runner's in-process workers): measured on 2 cores,
two callers on one single-thread stream got 15.5k evals/s together, on two streams 28.6k.
"""

from __future__ import annotations

import copy
import sys
import threading
import time
import warnings

import numpy as np
import torch


class OpenVinoError(RuntimeError):
    """OpenVINO is missing, or could not convert, compile or run the network."""


def import_openvino():
    """`import openvino`, with OpenVINO's usage telemetry kept out of this process.

    Its model converter sends telemetry unless the user opted out, and on Linux does it from a
    thread pool that starts a multiprocessing 'fork' child per event. Forked from a process with
    other threads (torch, Ray, OpenVINO's own), the child deadlocked in OpenVINO's destructors and
    never exited: a CI run left 237 of them, one holding a pipe that hung a GNU Go start for 600 s,
    and the interpreter's exit blocked joining them. azero sends nothing: marking the package
    absent before openvino is first imported makes the converter take its own no-op stub, its
    fallback when the telemetry package is not installed."""
    sys.modules.setdefault("openvino_telemetry", None)
    import openvino

    return openvino


class _WeightsAsInputs(torch.nn.Module):
    """forward(obs, *weights) -> an exported graph module's outputs (it takes its weights first)."""

    def __init__(self, graph_module: torch.nn.Module):
        super().__init__()
        self.graph_module = graph_module

    def forward(self, obs, *weights):
        return self.graph_module(*weights, obs)


class OpenVinoNet:
    """infer(obs [B, C, H, W] float32) -> (logits [B, A], values [B]) as float32 numpy arrays, plus
    scores [B] for a net with a score head (the outputs of the net's forward)."""

    def __init__(self, net: torch.nn.Module, *, precision: str, threads: int | None = 1, streams: int = 1,
                 async_reload: bool = True, reload_duty: float = 0.25, pinning: bool = False):
        try:
            ov = import_openvino()
        except Exception as e:  # ImportError, or a broken install failing to load its libraries
            raise OpenVinoError(f"openvino is not importable ({type(e).__name__}: {e})") from e
        self._ov = ov
        self._core = ov.Core()
        if streams < 1 or not 0 < reload_duty <= 1:
            raise ValueError(f"OpenVinoNet: need streams >= 1 and 0 < reload_duty <= 1, got {streams}, {reload_duty}")
        self.reload_duty = reload_duty
        # Pinning binds each compiled model's inference threads to the first cores, so two models
        # (two worker processes, or analysis parts) pin to the same core and a pinned thread cannot
        # move to a core a Python thread left free: off unless asked for (run.cpu_pinning).
        self._config = {"INFERENCE_PRECISION_HINT": precision, "NUM_STREAMS": int(streams),
                        "PERFORMANCE_HINT": "LATENCY", "ENABLE_CPU_PINNING": bool(pinning)}
        if threads:  # threads per stream; OpenVINO counts them over all streams
            self._config["INFERENCE_NUM_THREADS"] = int(threads) * int(streams)
        self.precision = precision
        self.async_reload = async_reload
        # A private float32 CPU copy to export (the caller's module may live on another device or train on).
        self._staging = copy.deepcopy(net).cpu().float().eval()
        self._obs_shape = tuple(int(d) for d in net.obs_shape)
        t0 = time.perf_counter()
        self._model, self._names = self._template()
        self._current = (self._compile(), 0)   # (compiled model, weights version): replaced as one tuple
        self.compile_seconds = time.perf_counter() - t0
        """Seconds the one-off export + conversion + first compile took."""
        self._local = threading.local()
        self._lock = threading.Lock()
        self._pending: dict | None = None
        self._reloader: threading.Thread | None = None
        self._reload_error: BaseException | None = None
        self._next_compile_at = 0.0
        self._wake = threading.Event()  # set by wait_reload: compile what is pending now, no spacing
        self.reloads = 0
        """Weights versions compiled and swapped in after the first."""
        self.reload_seconds = 0.0
        """Total seconds spent converting + compiling reloads (in the background when async)."""

    @property
    def version(self) -> int:
        return self._current[1]

    def _template(self):
        """The network as an OpenVINO model whose inputs are (obs, *weights), weights in state_dict order."""
        example = torch.zeros((2, *self._obs_shape), dtype=torch.float32)
        try:
            with warnings.catch_warnings(), torch.no_grad():
                # the forward's shape check reads tensor shapes in Python, which a trace warns about;
                # torch deprecates jit.trace, which OpenVINO's frontend still calls
                warnings.simplefilter("ignore")
                batch = torch.export.Dim("batch", min=1, max=1 << 16)
                exported = torch.export.export(self._staging, (example,), dynamic_shapes=({0: batch},))
                names = [spec.target for spec in exported.graph_signature.input_specs
                         if spec.kind.name in ("PARAMETER", "BUFFER")]
                state = self._staging.state_dict()
                graph = _WeightsAsInputs(exported.graph_module)
                traced = torch.jit.trace(graph, (example, *(state[n] for n in names)), check_trace=False)
                shapes = [self._ov.PartialShape([-1, *self._obs_shape])]
                shapes += [self._ov.PartialShape(list(state[n].shape)) for n in names]
                model = self._ov.convert_model(traced, input=shapes)
        except Exception as e:
            raise OpenVinoError(f"OpenVINO could not convert the network ({type(e).__name__}: {e})") from e
        return model, names

    def _compile(self, state: dict | None = None):
        """Compile the template with `state`'s tensors (default: the staging copy's) as constants."""
        state = self._staging.state_dict() if state is None else state
        try:
            model = self._model.clone()
            for param, name in zip(list(model.get_parameters())[1:], self._names):
                constant = self._ov.op.Constant(np.ascontiguousarray(state[name].detach().cpu().numpy()))
                param.output(0).replace(constant.output(0))
                model.remove_parameter(param)
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
        # infer() returns copies of the output tensors, so the next call does not overwrite them;
        # outputs after the logits (value, and score for nets with a score head) are one per row
        return (out[0].astype(np.float32, copy=False),
                *(out[k].reshape(-1).astype(np.float32, copy=False) for k in range(1, len(out))))

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
            compiled = self._compile(state)
        except BaseException as e:  # reported by the next infer(); the evaluator falls back to torch
            self._reload_error = e
            return False
        self._current = (compiled, self._current[1] + 1)
        self.reloads += 1
        done = time.perf_counter()
        self.reload_seconds += done - t0
        self._next_compile_at = done + (done - t0) * (1.0 / self.reload_duty - 1.0)
        return True

    def _drain(self) -> None:
        """Synchronous reload: compile what is pending now (the caller holds the lock)."""
        state, self._pending = self._pending, None
        if state is not None:
            self._swap_in(state)

    def _reload_loop(self) -> None:
        while True:
            # weights arriving during the wait replace the pending ones: only the newest is compiled
            self._wake.wait(max(0.0, self._next_compile_at - time.perf_counter()))
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
        """Block until every queued reload is compiled and swapped in (tests, benchmarks)."""
        deadline = None if timeout is None else time.perf_counter() + timeout
        self._wake.set()
        try:
            while True:
                with self._lock:
                    thread = self._reloader
                if thread is None:
                    return
                thread.join(None if deadline is None else max(0.0, deadline - time.perf_counter()))
                if deadline is not None and time.perf_counter() >= deadline:
                    return
        finally:
            self._wake.clear()

    def close(self) -> None:
        """Drop weights not yet compiled and stop the background reloader (end of a run)."""
        with self._lock:
            self._pending = None
            thread = self._reloader
        self._wake.set()
        if thread is not None:
            thread.join()
        self._wake.clear()
