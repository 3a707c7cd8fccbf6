"""Inference and training precision, and the inference backend, resolved once per evaluator.

Settings (config keys `run.precision`, `run.backend`, `train.precision`; CLI `--precision`, `--backend`):

    precision  'auto' | 'f32' | 'bf16' | 'int8' (int8: inference only, OpenVINO only)
        auto: bf16 where the device computes it natively (CUDA; a CPU with the avx512_bf16,
        amx_bf16 or aarch64 bf16 instructions), f32 elsewhere. On a CPU without native bf16
        the conversions cost more than the narrower arithmetic saves, so auto never picks it.
        int8: OpenVINO runs a copy quantized by NNCF, calibrated on the positions the network
        has just evaluated (azero.train.openvino_backend); never picked by auto.
    backend    'auto' | 'torch' | 'openvino'
        auto: OpenVINO on a CPU when it is installed (`azero bench inference` measures it
        ahead of torch at both precisions on the preset nets), torch elsewhere and on CUDA.

Only the network's arithmetic narrows. The search gets float32 priors and values; replay
targets, master weights, optimizer state and checkpoints stay float32 (bf16 has float32's
exponent range, so autocast needs no loss scaling).
"""

from __future__ import annotations

import functools
from pathlib import Path

PRECISIONS = ("auto", "f32", "bf16")
"""What the trainer can compute in (train.precision)."""
INFERENCE_PRECISIONS = (*PRECISIONS, "int8")
"""What inference can run at (run.precision, --precision): int8 only on the OpenVINO backend."""
BACKENDS = ("auto", "torch", "openvino")

# CPU flags (x86 /proc/cpuinfo "flags", aarch64 "Features") that mean bf16 arithmetic in hardware.
NATIVE_BF16_FLAGS = frozenset({"avx512_bf16", "amx_bf16", "bf16"})


def add_inference_arguments(parser) -> None:
    """--precision and --backend, defined once for every command that runs a network."""
    parser.add_argument("--precision", choices=INFERENCE_PRECISIONS, default="auto",
                        help="network arithmetic (default auto: bf16 where the CPU or GPU has it natively; "
                             "int8: OpenVINO, quantized on the positions it evaluates)")
    parser.add_argument("--backend", choices=BACKENDS, default="auto",
                        help="inference engine (default auto: OpenVINO on a CPU where installed, else torch)")


def check_choice(key: str, value: str, allowed: tuple[str, ...]) -> str:
    """`value` if it is one of `allowed`, else ValueError naming the key and the allowed values."""
    if value not in allowed:
        raise ValueError(f"{key} must be one of {', '.join(allowed)}; got {value!r}")
    return value


@functools.lru_cache(maxsize=1)
def cpu_flags() -> frozenset[str]:
    """This CPU's feature flags (empty where /proc/cpuinfo is unreadable, e.g. macOS)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return frozenset()
    flags: set[str] = set()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            flags.update(value.split())
    return frozenset(flags)


def cpu_has_native_bf16(flags: frozenset[str] | set[str] | None = None) -> bool:
    """Whether the CPU has bf16 instructions; `flags` overrides the probe (tests force a CPU without)."""
    return bool(NATIVE_BF16_FLAGS & set(cpu_flags() if flags is None else flags))


def resolve_precision(requested: str, device_type: str, *, cpu_flags_override=None) -> str:
    """'f32', 'bf16' or 'int8' for `requested` on a device of type `device_type` ('cpu', 'cuda', ...)."""
    check_choice("precision", requested, INFERENCE_PRECISIONS)
    if requested != "auto":
        return requested
    if device_type == "cuda":
        return "bf16"
    if device_type == "cpu" and cpu_has_native_bf16(cpu_flags_override):
        return "bf16"
    return "f32"


@functools.lru_cache(maxsize=1)
def nncf_available() -> bool:
    """Whether NNCF, which quantizes the network for precision int8, imports."""
    try:
        from azero.train.openvino_backend import import_nncf

        import_nncf()
    except Exception:  # ImportError, or a broken install failing while it loads
        return False
    return True


@functools.lru_cache(maxsize=1)
def openvino_available() -> bool:
    from azero.train.openvino_backend import import_openvino

    try:
        import_openvino()
    except Exception:  # an ImportError, or a broken install that fails while loading its libraries
        return False
    return True


def resolve_backend(requested: str, device_type: str) -> str:
    """'torch' or 'openvino' for `requested`; 'openvino' only ever runs on the CPU.

    An explicit 'openvino' that is not installed is still returned: the evaluator then falls
    back to torch with one warning line, the same path as a model that fails to compile."""
    check_choice("backend", requested, BACKENDS)
    if requested == "auto":
        return "openvino" if device_type == "cpu" and openvino_available() else "torch"
    if requested == "openvino" and device_type != "cpu":
        raise ValueError(f"backend 'openvino' runs on the CPU only, not on {device_type!r}: "
                         "use backend=torch (or auto) there")
    return requested
