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

int8. With precision 'int8' the network runs as a copy quantized by NNCF (post-training
quantization: int8 weights and activations, float32 where NNCF keeps it). Quantization needs
activation ranges, so it is calibrated on the positions the network itself has just evaluated:
the first batches run the float32 model while they are recorded, and once CALIBRATION_ROWS rows
are in, the current weights are recompiled quantized (through the same path as a reload, so in
the background with async_reload). The record keeps refreshing (one batch in CALIBRATION_EVERY
replaces the oldest), and each reload of new weights is quantized on it: calibration follows
what self-play plays. No game knowledge, nothing on disk. Measured on a 2-core AMD EPYC without
bf16 (`azero bench inference`): 1.6-2.2x OpenVINO float32's evaluations/s on the preset and 6x64
nets; a quantize takes 2-3 s, which the spaced background reloads absorb.

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


CALIBRATION_ROWS = 256
"""int8: rows recorded before the first quantized compile."""
CALIBRATION_MAX_ROWS = 512
"""int8: rows kept for calibration, the newest once the record is full (it may end one batch over)."""
CALIBRATION_BATCH_ROWS = 64
"""int8: rows kept of each evaluated batch (evenly strided), and the batch size NNCF is fed, so a
quantize costs a few seconds whatever the evaluator's batch size."""
CALIBRATION_EVERY = 8
"""int8: once the record is full, one evaluated batch in this many replaces its oldest rows."""


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


def import_nncf():
    """`import nncf` (OpenVINO's quantizer), quiet: no log lines, no progress bars.

    NNCF draws rich progress bars on standard output, which is GTP's protocol channel, from
    whatever thread quantizes; azero turns them off in NNCF's own progress module, never by
    redirecting sys.stdout (process-wide: it would swallow another thread's output)."""
    import logging

    import_openvino()  # its telemetry stub must be in place before nncf imports openvino
    import nncf
    from nncf.common.logging import track_progress

    nncf.set_log_level(logging.ERROR)
    for name in ("Progress", "WeightedProgress"):
        cls = getattr(track_progress, name, None)
        if isinstance(cls, type) and not getattr(cls, "_azero_quiet", False):
            setattr(track_progress, name, type(cls.__name__, (cls,), {"__init__": _quiet_init(cls), "_azero_quiet": True}))
    return nncf


def _quiet_init(cls):
    def __init__(self, *args, **kwargs):
        kwargs["disable"] = True
        cls.__init__(self, *args, **kwargs)
    return __init__


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
        self._nncf = None
        if precision == "int8":
            try:
                self._nncf = import_nncf()
            except Exception as e:
                raise OpenVinoError(f"precision int8 needs nncf, which is not importable ({type(e).__name__}: {e})") from e
        self._core = ov.Core()
        if streams < 1 or not 0 < reload_duty <= 1:
            raise ValueError(f"OpenVinoNet: need streams >= 1 and 0 < reload_duty <= 1, got {streams}, {reload_duty}")
        self.reload_duty = reload_duty
        # Pinning binds each compiled model's inference threads to the first cores, so two models
        # (two worker processes, or analysis parts) pin to the same core and a pinned thread cannot
        # move to a core a Python thread left free: off unless asked for (run.cpu_pinning). int8
        # keeps float32 where NNCF leaves an operation unquantized.
        self._config = {"INFERENCE_PRECISION_HINT": "f32" if precision == "int8" else precision,
                        "NUM_STREAMS": int(streams),
                        "PERFORMANCE_HINT": "LATENCY", "ENABLE_CPU_PINNING": bool(pinning)}
        if threads:  # threads per stream; OpenVINO counts them over all streams
            self._config["INFERENCE_NUM_THREADS"] = int(threads) * int(streams)
        self.precision = precision
        self.async_reload = async_reload
        # int8 calibration: recent input rows in chunks, their count, the ring's next slot, calls
        self._calibration: list[np.ndarray] = []
        self._calibration_rows = 0
        self._calibration_next = 0
        self._calibration_calls = 0
        self._calibration_lock = threading.Lock()
        self._quantize_pending = False
        self.quantize_seconds = 0.0
        """Seconds spent quantizing (int8; part of compile_seconds / reload_seconds)."""
        # A private float32 CPU copy to export (the caller's module may live on another device or train on).
        self._staging = copy.deepcopy(net).cpu().float().eval()
        self._obs_shape = tuple(int(d) for d in net.obs_shape)
        t0 = time.perf_counter()
        self._model, self._names = self._template()
        self._state = self._staging.state_dict()   # the newest weights handed in (int8 requantizes them)
        # (compiled model, weights version, quantized): replaced as one tuple
        compiled, quantized = self._compile()
        self._current = (compiled, 0, quantized)
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

    @property
    def quantized(self) -> bool:
        """Whether the model in use runs int8 (precision int8, once calibrated)."""
        return self._current[2]

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
        """(compiled model, quantized): the template with `state`'s tensors (default: the staging
        copy's) as constants; for int8 quantized on the calibration record once it is full enough."""
        state = self._staging.state_dict() if state is None else state
        try:
            model = self._model.clone()
            for param, name in zip(list(model.get_parameters())[1:], self._names):
                constant = self._ov.op.Constant(np.ascontiguousarray(state[name].detach().cpu().numpy()))
                param.output(0).replace(constant.output(0))
                model.remove_parameter(param)
        except Exception as e:
            raise OpenVinoError(f"OpenVINO could not compile the network ({type(e).__name__}: {e})") from e
        batches = self._calibration_record()
        quantized = bool(batches)
        if quantized:
            model = self._quantize(model, batches)
        try:
            return self._core.compile_model(model, "CPU", self._config), quantized
        except Exception as e:
            raise OpenVinoError(f"OpenVINO could not compile the network ({type(e).__name__}: {e})") from e

    def _quantize(self, model, batches: list[np.ndarray]):
        """`model` quantized by NNCF on `batches` (int8 weights and activations). The full bias
        correction: on the shipped networks the fast one quantizes 1.3-2.4x sooner (connect four
        8x64: 1.7 s against 3.5 s; Go: 1.1 s against 1.5-2.8 s) but its mean value error is 8% and
        22% larger (|dv| 0.0142 against 0.0132, 0.0115 against 0.0095; policy KL within 2%, the
        same 200-simulation search moves), and int8's strength, not its reload time, is what held
        it back (README, int8 A/B)."""
        t0 = time.perf_counter()
        nncf = self._nncf
        try:
            quantized = nncf.quantize(model, nncf.Dataset(batches), subset_size=len(batches),
                                      preset=nncf.QuantizationPreset.MIXED, fast_bias_correction=False)
        except Exception as e:
            raise OpenVinoError(f"NNCF could not quantize the network to int8 ({type(e).__name__}: {e})") from e
        self.quantize_seconds += time.perf_counter() - t0
        return quantized

    # -- int8 calibration ------------------------------------------------------
    def _calibration_record(self) -> list[np.ndarray]:
        """The record as batches of CALIBRATION_BATCH_ROWS rows to quantize on: [] unless int8
        with at least CALIBRATION_ROWS rows in."""
        if self._nncf is None:
            return []
        with self._calibration_lock:
            chunks = list(self._calibration)
        rows = np.concatenate(chunks) if chunks else None
        if rows is None or len(rows) < CALIBRATION_ROWS:
            return []
        return [rows[i:i + CALIBRATION_BATCH_ROWS] for i in range(0, len(rows), CALIBRATION_BATCH_ROWS)]

    def calibrate(self, obs: np.ndarray) -> None:
        """int8: make (the last CALIBRATION_MAX_ROWS of) `obs` [N, C, H, W], rows like those the
        network will see, the calibration record and quantize the current weights on it before
        returning. Benchmarks use it so that every timed batch runs int8; no-op at other precisions."""
        if self._nncf is None:
            return
        if len(obs) < CALIBRATION_ROWS:
            raise ValueError(f"calibrate: {len(obs)} rows are fewer than the {CALIBRATION_ROWS} int8 needs")
        obs = np.ascontiguousarray(obs[-CALIBRATION_MAX_ROWS:], dtype=np.float32)
        with self._calibration_lock:
            self._calibration = [obs[i:i + CALIBRATION_BATCH_ROWS].copy()
                                 for i in range(0, len(obs), CALIBRATION_BATCH_ROWS)]
            self._calibration_rows = len(obs)
            self._calibration_next = 0
            self._quantize_pending = True
        self.reload(self._state, copy_tensors=False)
        self.wait_reload()

    def _record(self, obs: np.ndarray) -> None:
        """Keep rows of `obs` for calibration (int8); once enough rows are in and the model in use
        is not quantized yet, queue the newest weights for a quantized compile."""
        with self._calibration_lock:
            self._calibration_calls += 1
            filling = self._calibration_rows < CALIBRATION_MAX_ROWS
            refreshing = not filling and self._calibration_calls % CALIBRATION_EVERY == 0
            # rows are copied only when kept: once the record is full, 7 batches in 8 cost a counter
            if filling or refreshing:
                rows = obs[::max(1, len(obs) // CALIBRATION_BATCH_ROWS)][:CALIBRATION_BATCH_ROWS].copy()
            if filling:
                self._calibration.append(rows)
                self._calibration_rows += len(rows)
            elif refreshing:
                slot = self._calibration_next % len(self._calibration)
                self._calibration_rows += len(rows) - len(self._calibration[slot])
                self._calibration[slot] = rows
                self._calibration_next = slot + 1
            if self._calibration_rows < CALIBRATION_ROWS or self._current[2] or self._quantize_pending:
                return
            self._quantize_pending = True
        self.reload(self._state, copy_tensors=False)

    # -- inference -----------------------------------------------------------
    def infer(self, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if self._reload_error is not None:
            raise OpenVinoError(f"a weights reload failed: {self._reload_error}") from self._reload_error
        compiled, version, _ = self._current
        local = self._local
        if getattr(local, "version", None) != version:
            local.request = compiled.create_infer_request()
            local.version = version
        obs = np.ascontiguousarray(obs, dtype=np.float32)
        try:
            out = local.request.infer({0: obs})
        except Exception as e:
            raise OpenVinoError(f"OpenVINO inference failed ({type(e).__name__}: {e})") from e
        if self._nncf is not None:
            self._record(obs)
        # infer() returns copies of the output tensors, so the next call does not overwrite them;
        # outputs after the logits (value, and score for nets with a score head) are one per row
        return (out[0].astype(np.float32, copy=False),
                *(out[k].reshape(-1).astype(np.float32, copy=False) for k in range(1, len(out))))

    # -- hot reload ------------------------------------------------------------
    def reload(self, state_dict: dict, *, copy_tensors: bool = True) -> None:
        """Compile `state_dict` (a PolicyValueNet state) and swap it in: in the background when
        async_reload (returns at once), else before returning. Weights queued while a compile runs
        replace each other: only the newest is compiled next. `copy_tensors=False`: the tensors are
        this object's own CPU copies already (int8's requantization of the newest weights)."""
        state = ({k: v.detach().to("cpu", copy=True) for k, v in state_dict.items()} if copy_tensors
                 else state_dict)
        with self._lock:
            self._state = state
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
            compiled, quantized = self._compile(state)
        except BaseException as e:  # reported by the next infer(); the evaluator falls back to torch
            self._reload_error = e
            return False
        finally:
            self._quantize_pending = False
        self._current = (compiled, self._current[1] + 1, quantized)
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
