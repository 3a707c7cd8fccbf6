"""A tiny causal transformer (GPT) over the task vocabulary, with an explicit KV-cache API and a
value head, plus safetensors checkpoints (no pickle).

    model = TinyGPT(GPTConfig())
    logits, hidden, kv = model(tokens_bt)                         # plain causal forward (training)
    logits, hidden, kv = model(new_bt, positions=pos_bt,          # the same logits, computed from a
                               past=(k, v, past_valid_bp),        # cache of earlier positions
                               new_valid=valid_bt)
    p_success = model.value(hidden)                               # value head on the last hidden state

Cache layout: k and v are float32 [L, B, H, P, D] (layers, rows, heads, cached positions, head
size); past_valid [B, P] marks which cached slots row b may attend to. Rows may have different
prefix lengths: a row's unused slots are simply invalid, and `positions` gives each new token's
absolute position (its learned position embedding), so the cached and uncached computations are
the same function of the token sequence. New tokens of a row attend to its valid cached slots and
causally to its own valid new tokens; an invalid (padding) new token attends to itself only so
its softmax stays finite (its outputs are ignored).

The value head is a two-layer MLP on the final (layer-normed) hidden state; it predicts the
probability that the answer continued from this prefix will be verified correct.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F

from azero.search.llm.tasks import VOCAB_SIZE
from azero.train.atomic import write_atomic

FORMAT = "azero-llm-1"


@dataclasses.dataclass
class GPTConfig:
    """Shape of the transformer."""

    vocab_size: int = VOCAB_SIZE
    """Token ids are in [0, vocab_size)."""
    max_len: int = 64
    """Longest sequence (prompt + answer); sizes the position embedding."""
    d_model: int = 160
    """Width of the residual stream."""
    n_layer: int = 4
    """Transformer blocks."""
    n_head: int = 4
    """Attention heads per block (d_model must be divisible by it)."""
    d_ff: int = 640
    """Hidden width of each block's MLP."""
    value_hidden: int = 128
    """Hidden width of the value head's MLP."""

    def __post_init__(self) -> None:
        if self.d_model % self.n_head:
            raise ValueError(f"d_model {self.d_model} is not divisible by n_head {self.n_head}")


class _Block(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.n_head = cfg.n_head
        self.ln1 = nn.LayerNorm(cfg.d_model)
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model)
        self.proj = nn.Linear(cfg.d_model, cfg.d_model)
        self.ln2 = nn.LayerNorm(cfg.d_model)
        self.fc = nn.Linear(cfg.d_model, cfg.d_ff)
        self.out = nn.Linear(cfg.d_ff, cfg.d_model)

    def forward(self, x, mask, past_k, past_v):
        B, T, C = x.shape
        H = self.n_head
        q, k, v = self.qkv(self.ln1(x)).split(C, dim=2)
        q, k, v = (t.view(B, T, H, C // H).transpose(1, 2) for t in (q, k, v))  # [B, H, T, D]
        if past_k is not None:
            k_all, v_all = torch.cat([past_k, k], dim=2), torch.cat([past_v, v], dim=2)
        else:
            k_all, v_all = k, v
        y = F.scaled_dot_product_attention(q, k_all, v_all, attn_mask=mask)
        x = x + self.proj(y.transpose(1, 2).reshape(B, T, C))
        x = x + self.out(F.gelu(self.fc(self.ln2(x))))
        return x, k, v


def attention_mask(tokens: torch.Tensor, positions: torch.Tensor | None, past, new_valid: torch.Tensor | None,
                   max_len: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(positions [B, T], visibility bool [B, T, P + T]) of a forward over `tokens` [B, T] after `past`.

    Shared by TinyGPT and the transformers adapter (hf.py), which take the same arguments:
    without `past` the plain causal mask (positions default to 0..T-1); with past =
    (k [L, B, H, P, D], v, past_valid bool [B, P]) the new tokens also see the valid cached slots.
    new_valid bool [B, T] marks each row's real new tokens; a padding query sees itself only,
    which keeps its softmax finite.
    """
    B, T = tokens.shape
    dev = tokens.device
    if positions is None:
        if past is not None:
            raise ValueError("forward: positions are required with a past cache")
        positions = torch.arange(T, device=dev).expand(B, T)
    if int(positions.max()) >= max_len:
        raise ValueError(f"forward: position {int(positions.max())} exceeds max_len {max_len}")
    causal = torch.ones(T, T, dtype=torch.bool, device=dev).tril()
    if new_valid is not None:
        eye = torch.eye(T, dtype=torch.bool, device=dev)
        self_mask = (causal & new_valid[:, None, :]) | eye  # [B, T, T]
    else:
        self_mask = causal.expand(B, T, T)
    if past is None:
        return positions, self_mask
    past_k, _, past_valid = past
    if past_k.shape[1] != B or past_valid.shape != (B, past_k.shape[3]):
        raise ValueError(f"forward: past of shape {tuple(past_k.shape)} / valid {tuple(past_valid.shape)} "
                         f"does not fit a batch of {B}")
    return positions, torch.cat([past_valid[:, None, :].expand(B, T, -1), self_mask], dim=2)


class TinyGPT(nn.Module):
    """Causal LM + value head; see the module docstring for the cache API."""

    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.cfg = cfg
        self.tok = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.pos = nn.Embedding(cfg.max_len, cfg.d_model)
        self.blocks = nn.ModuleList(_Block(cfg) for _ in range(cfg.n_layer))
        self.ln_f = nn.LayerNorm(cfg.d_model)
        self.head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)
        self.value_mlp = nn.Sequential(nn.Linear(cfg.d_model, cfg.value_hidden), nn.GELU(),
                                       nn.Linear(cfg.value_hidden, 1))
        self.apply(self._init)
        for blk in self.blocks:  # GPT-2: residual projections scaled by depth
            nn.init.normal_(blk.proj.weight, std=0.02 / math.sqrt(2 * cfg.n_layer))
            nn.init.normal_(blk.out.weight, std=0.02 / math.sqrt(2 * cfg.n_layer))

    @staticmethod
    def _init(m: nn.Module) -> None:
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, std=0.02)
            if getattr(m, "bias", None) is not None:
                nn.init.zeros_(m.bias)

    @property
    def kv_shape(self) -> tuple[int, int, int]:
        """(layers, heads, head size) of the keys (and values) of one cached position."""
        return self.cfg.n_layer, self.cfg.n_head, self.cfg.d_model // self.cfg.n_head

    def num_params(self, *, lm_only: bool = True) -> int:
        return sum(p.numel() for n, p in self.named_parameters() if not (lm_only and n.startswith("value_mlp")))

    def forward(self, tokens: torch.Tensor, *, positions: torch.Tensor | None = None,
                past: tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None = None,
                new_valid: torch.Tensor | None = None):
        """tokens long [B, T] -> (logits [B, T, V], hidden [B, T, d], (k, v) each [L, B, H, T, D]).

        Without `past` this is the plain causal forward (positions default to 0..T-1). With
        past = (k [L, B, H, P, D], v, past_valid bool [B, P]) the new tokens attend to the valid
        cached slots; `positions` long [B, T] is then required. new_valid bool [B, T] marks the
        real new tokens of each row (default all).
        """
        positions, mask = attention_mask(tokens, positions, past, new_valid, self.cfg.max_len)
        past_k, past_v = (past[0], past[1]) if past is not None else (None, None)
        mask = mask[:, None]  # [B, 1, T, P + T], broadcast over heads
        x = self.tok(tokens) + self.pos(positions)
        ks, vs = [], []
        for i, blk in enumerate(self.blocks):
            x, k, v = blk(x, mask, None if past_k is None else past_k[i], None if past_v is None else past_v[i])
            ks.append(k)
            vs.append(v)
        hidden = self.ln_f(x)
        return self.head(hidden), hidden, (torch.stack(ks), torch.stack(vs))

    def value(self, hidden: torch.Tensor) -> torch.Tensor:
        """Probability of a verified answer from each hidden state: [..., d] -> [...] in (0, 1)."""
        return torch.sigmoid(self.value_mlp(hidden).squeeze(-1))

    def value_logit(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.value_mlp(hidden).squeeze(-1)


# ---------------------------------------------------------------- checkpoints
class LLMCheckpointError(ValueError):
    """A file that is not a loadable azero LLM checkpoint."""


def write_tensors(path: str | os.PathLike, module: nn.Module, meta: dict) -> Path:
    """Write `module`'s tensors to `path` as safetensors with `meta` as JSON under the key 'azero',
    atomically (azero.train.atomic: readers never see a half-written file)."""
    import safetensors.torch

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tensors = {k: v.detach().contiguous().cpu() for k, v in module.state_dict().items()}
    blob = safetensors.torch.save(tensors, metadata={"azero": json.dumps(meta)})
    return write_atomic(path, lambda f: f.write(blob))


def read_tensors(path: str | os.PathLike, fmt: str, error: type[Exception], what: str) -> tuple[dict, dict]:
    """(tensors, metadata) of a write_tensors file whose metadata format is `fmt`.

    FileNotFoundError names `what` when there is no file; anything else unreadable raises `error`."""
    import safetensors
    import safetensors.torch

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no {what} at {path}")
    try:
        with safetensors.safe_open(str(path), framework="pt") as f:
            meta = json.loads((f.metadata() or {}).get("azero", "{}"))
        tensors = safetensors.torch.load_file(str(path))
    except Exception as e:  # noqa: BLE001 - any unreadable file becomes one clear error
        raise error(f"{path}: not a readable safetensors file ({e})") from None
    if meta.get("format") != fmt:
        raise error(f"{path}: format {meta.get('format')!r}, expected {fmt!r}")
    return tensors, meta


def save_checkpoint(path: str | os.PathLike, model: TinyGPT, *, task: str, info: dict | None = None) -> Path:
    """Write the model (LM + value head) to `path` as safetensors, atomically; metadata is JSON."""
    meta = {"format": FORMAT, "task": task, "config": dataclasses.asdict(model.cfg), "info": info or {}}
    return write_tensors(path, model, meta)


def load_checkpoint(path: str | os.PathLike) -> tuple[TinyGPT, dict]:
    """(model in eval mode, metadata {'task', 'config', 'info'}) from a file of save_checkpoint."""
    tensors, meta = read_tensors(path, FORMAT, LLMCheckpointError, "checkpoint")
    model = TinyGPT(GPTConfig(**meta["config"]))
    try:
        model.load_state_dict(tensors)
    except RuntimeError as e:
        raise LLMCheckpointError(f"{path}: tensors do not fit the stored config ({e})") from None
    model.eval()
    return model, meta
