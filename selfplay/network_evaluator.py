"""The search's evaluator protocol backed by a policy-value network, in-process.

`evaluate(obs[B, C, H, W], legal[B, A]) -> (priors[B, A], values[B])`: priors
are the softmax of the policy logits over legal actions only (illegal actions
get exactly 0), values are the value head's output in [-1, 1] from the
perspective of the player to move (the network sees observations from that
perspective, so no sign flip happens here).

Precision and backend (azero.train.precision): `precision='auto'` runs bf16 where the device
has it natively, `backend='auto'` runs OpenVINO on a CPU where it is installed. Whatever runs
the network, the search receives float32 priors and values. An OpenVINO model that cannot be
built or run falls back to torch at the same precision with one warning line, never a crash
in the middle of a run.
"""

from __future__ import annotations

import contextlib
import logging
import time

import numpy as np
import torch

from azero.train.openvino_backend import OpenVinoError, OpenVinoNet
from azero.train.precision import resolve_backend, resolve_precision

log = logging.getLogger(__name__)


def pick_device(requested: str = "auto") -> torch.device:
    """'auto' means CUDA when present, else CPU; 'cpu' or 'cuda[:N]' otherwise.

    ValueError, naming what is wrong, for a string that is not a device or a CUDA device
    this machine lacks (a run saved after a GPU burst, resumed on a CPU machine): callers
    fail before any work instead of deep inside torch."""
    if requested == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        device = torch.device(requested)
    except (RuntimeError, ValueError) as e:
        raise ValueError(f"{requested!r} is not a device: use 'auto', 'cpu' or 'cuda[:N]' ({e})") from e
    if device.type == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if count == 0:
            raise ValueError(f"{requested!r} but this machine has no CUDA device (torch {torch.__version__})")
        if device.index is not None and device.index >= count:
            raise ValueError(f"{requested!r} but this machine has {count} CUDA device(s)")
    elif device.type not in ("cpu", "mps"):
        raise ValueError(f"{requested!r}: azero runs on 'cpu' or 'cuda' ('auto' picks)")
    return device


def random_play_observations(game, rows: int = 512, seed: int = 0) -> np.ndarray:
    """Observations [rows, C, H, W] of positions reached by uniformly random legal moves, in eight
    groups 0, 4, ..., 28 moves deep (ended games stay as they ended): inputs to calibrate int8 on
    before a network's first real position, with no game knowledge beyond the rules."""
    rng = np.random.default_rng(seed)
    groups = []
    for g, n in enumerate(np.diff(np.linspace(0, rows, 9).astype(int))):
        states = game.new_states(int(n))
        for _ in range(4 * g):
            legal = states.legal_mask()
            moves = np.where(legal, rng.random(legal.shape), -1).argmax(axis=1).astype(np.int32)
            states.apply(np.where(states.terminal(), -1, moves).astype(np.int32))
        groups.append(states.encode())
    return np.concatenate(groups).astype(np.float32, copy=False)


class NetworkEvaluator:
    """Runs a torch policy-value network on batches of observations.

    `self.net` is always the torch module with the current weights (reload_checkpoint and the
    fallback read it); with the OpenVINO backend `self.openvino` runs a compiled copy of it.
    """

    def __init__(self, net: torch.nn.Module, *, device: str | torch.device = "auto", threads: int | None = None,
                 precision: str = "auto", backend: str = "auto", async_reload: bool = True, streams: int = 1,
                 pinning: bool = False, reload_duty: float = 0.25):
        """`threads`: CPU threads per forward pass (torch's are process-wide); `streams`: threads that
        call evaluate() at the same time (OpenVINO runs that many requests in parallel); `pinning`:
        OpenVINO binds its threads to cores (run.cpu_pinning); `reload_duty`: the most of one core
        OpenVINO's background compiles of new weights may take."""
        self.device = pick_device(device) if isinstance(device, str) else device
        self.net = net.to(self.device).eval()
        self.precision = resolve_precision(precision, self.device.type)
        self.backend = resolve_backend(backend, self.device.type)
        if backend == "auto" and not hasattr(net, "obs_shape"):
            self.backend = "torch"  # OpenVINO traces a fixed input shape: only nets that declare it
        if self.precision == "int8" and self.backend != "openvino":
            raise ValueError(f"precision int8 runs on the OpenVINO backend (a CPU), not on {self.backend} "
                             f"({self.device.type}): use precision f32 or bf16 there, or backend openvino")
        if self.device.type == "cuda":
            # channels_last + bf16 autocast: the fast path for convolutions on recent GPUs.
            self.net = self.net.to(memory_format=torch.channels_last)
        if threads is not None and self.device.type == "cpu":
            torch.set_num_threads(threads)
        self.openvino = None
        if self.backend == "openvino":
            try:
                self.openvino = OpenVinoNet(self.net, precision=self.precision, threads=threads or None,
                                            streams=streams, async_reload=async_reload, pinning=pinning,
                                            reload_duty=reload_duty)
            except OpenVinoError as e:
                self._fall_back(e)
        self.evaluations = 0
        self.batches = 0
        self.forward_seconds = 0.0
        """Wall time spent inside the network's forward pass (what `azero bench selfplay` compares with)."""

    @property
    def describe(self) -> str:
        """'openvino bf16', 'torch f32', 'openvino int8', ...: what runs the network (int8 runs float32
        until its calibration record is full: OpenVinoNet.quantized)."""
        return f"{'openvino' if self.openvino is not None else 'torch'} {self.precision}"

    def _fall_back(self, error: Exception) -> None:
        if self.precision == "int8":
            self.precision = "f32"  # torch has no int8 path here: the fallback is float32
        log.warning("OpenVINO backend unavailable, running the network with torch %s instead: %s",
                    self.precision, error)
        self.openvino = None
        self.backend = "torch"

    def load_state_dict(self, state_dict: dict) -> None:
        """Swap in new weights between two batches (hot reload)."""
        self.net.load_state_dict(state_dict)
        self.net.eval()
        if self.openvino is not None:
            self.openvino.reload(state_dict)

    def wait_reload(self) -> None:
        """Until a background reload (OpenVINO) has swapped the newest weights in; no-op for torch."""
        if self.openvino is not None:
            self.openvino.wait_reload()

    def calibrate(self, obs: np.ndarray) -> None:
        """Precision int8: quantize now on `obs` (positions like those to come) instead of on the first
        batches evaluated; no-op at other precisions."""
        if self.openvino is not None:
            self.openvino.calibrate(obs)

    def close(self) -> None:
        """Stop a background reload (OpenVINO) without compiling weights still queued."""
        if self.openvino is not None:
            self.openvino.close()

    def _autocast(self):
        if self.precision == "bf16":
            return torch.autocast(self.device.type, dtype=torch.bfloat16)
        return contextlib.nullcontext()

    @property
    def has_score(self) -> bool:
        """Whether the network predicts the final score (evaluate_with_score; see search/evaluators.py)."""
        return bool(getattr(self.net, "has_score", False))

    @torch.inference_mode()
    def forward(self, obs: np.ndarray) -> tuple[torch.Tensor, ...]:
        """The raw network: (logits [B, A], values [B]) as float32 tensors on self.device (no masking),
        plus scores [B] for a net with a score head."""
        if self.openvino is not None:
            try:
                return tuple(torch.from_numpy(x) for x in self.openvino.infer(obs))
            except OpenVinoError as e:
                self._fall_back(e)
        x = torch.from_numpy(np.ascontiguousarray(obs, dtype=np.float32)).to(self.device, non_blocking=True)
        if self.device.type == "cuda":
            x = x.contiguous(memory_format=torch.channels_last)
        with self._autocast():
            out = self.net(x)
        if self.device.type == "cuda":
            torch.cuda.synchronize()  # so the forward time is not attributed to the copy below
        return (out[0].float(), *(y.float().reshape(-1) for y in out[1:]))

    def evaluate(self, obs: np.ndarray, legal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self._evaluate(obs, legal)[:2]

    @torch.inference_mode()
    def ownership(self, obs: np.ndarray) -> np.ndarray | None:
        """float32 [B, H*W]: expected final owner of each point in [-1, 1], player to move's view;
        None for a net without an ownership head. Torch float32 (a rare call: pass decisions, analysis)."""
        if not getattr(self.net, "has_ownership", False):
            return None
        x = torch.from_numpy(np.ascontiguousarray(obs, dtype=np.float32)).to(self.device)
        return torch.tanh(self.net.heads(x)["ownership"]).float().cpu().numpy()

    def evaluate_with_score(self, obs: np.ndarray, legal: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(priors, values, scores float32 [B]): scores in points, player to move's view."""
        if not self.has_score:
            raise ValueError("evaluate_with_score: this network has no score head (model.score_head)")
        return self._evaluate(obs, legal)

    @torch.inference_mode()
    def _evaluate(self, obs: np.ndarray, legal: np.ndarray) -> tuple[np.ndarray, ...]:
        if obs.ndim != 4 or legal.ndim != 2 or obs.shape[0] != legal.shape[0]:
            raise ValueError(f"evaluate: expected obs [B, C, H, W] and legal [B, A] with the same B, "
                             f"got {obs.shape} and {legal.shape}")
        mask = torch.from_numpy(np.ascontiguousarray(legal, dtype=bool)).to(self.device)
        t0 = time.perf_counter()
        out = self.forward(obs)
        logits, value = out[0], out[1]
        self.forward_seconds += time.perf_counter() - t0
        logits = logits.float().masked_fill(~mask, float("-inf"))
        # Rows with no legal action (terminal leaves) would be all -inf: give them zeros.
        no_legal = ~mask.any(dim=1, keepdim=True)
        logits = logits.masked_fill(no_legal, 0.0)
        priors = torch.softmax(logits, dim=1).masked_fill(no_legal, 0.0)
        self.evaluations += obs.shape[0]
        self.batches += 1
        return (priors.cpu().numpy().astype(np.float32, copy=False),
                *(y.cpu().numpy().astype(np.float32, copy=False) for y in out[1:]))
