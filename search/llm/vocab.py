"""The token vocabulary a model decodes the tasks in: which ids exist, which a model may generate,
which end a step, how ids read as text, and how a problem's prompt is written in them.

Two kinds:

* `CHAR_VOCAB`, the task's own character vocabulary (tasks.VOCAB: <pad>, <bos>, <eos> and 18
  characters, one token each). TinyGPT is trained in it; a transformers model can be mapped onto
  it character by character (hf.token_map) when it was fine-tuned that way.
* `ModelVocabulary`, a pretrained model's own tokens, of any length. The answer alphabet is a
  constraint on the detokenised text: a model token may be generated iff its text is non-empty,
  made of the task's characters only, and holds a newline at most as its last character (so every
  step ends at a token boundary). For SmolLM2's tokenizer that is 250 of its 49,152 tokens (single
  digits, operators, runs of '-', '*', '=' ...). The prompt is the task's instruction in the
  model's chat template (or <bos> + the plain prompt text for a model without one), tokenised the
  model's own way; prompt tokens outside the answer alphabet get ids in a reserved block, assigned
  on first use, that are never generatable.

Ids: 0 <pad>, 1 <bos>, 2 <eos> in both (the tasks' PAD / BOS / EOS), so `finished()` keeps its
meaning. Every method reads the vocabulary of its engine (`vocab_of(engine)`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np

from azero.search.llm.tasks import BOS, CHARS, EOS, GENERATABLE, NEWLINE, PAD, SPECIALS, VOCAB_SIZE, decode_tokens

if TYPE_CHECKING:
    from azero.search.llm.tasks import Problem, Task


class VocabularyError(ValueError):
    """A tokenizer or a text that cannot be used for a task (names the character or token)."""


class CharVocabulary:
    """The task's character vocabulary (see the module docstring)."""

    kind = "chars"

    def __init__(self):
        self.size = VOCAB_SIZE
        self.generatable = GENERATABLE
        """bool [V]: ids a model may produce."""
        self.step_end = np.arange(VOCAB_SIZE) == NEWLINE
        """bool [V]: ids whose text ends a step (a line)."""
        self.version = 0

    def text(self, tokens: Sequence[int]) -> str:
        """Text of generated ids up to (not including) the first <eos>; other specials dropped."""
        return decode_tokens(tokens)

    def token_text(self, token: int) -> str:
        return self.text([token])

    def prompt(self, task: "Task", problem: "Problem") -> tuple[int, ...]:
        return tuple(problem.prompt)

    def encode_answer(self, text: str) -> list[int]:
        from azero.search.llm.tasks import encode_text

        return encode_text(text)

    def lines(self, tokens: Sequence[int]) -> int:
        return int(sum(bool(self.step_end[int(t)]) for t in tokens if 0 <= int(t) < self.size))


CHAR_VOCAB = CharVocabulary()


def vocab_of(engine) -> "CharVocabulary | ModelVocabulary":
    """The vocabulary an engine's model decodes in (the character vocabulary unless it says otherwise)."""
    return getattr(engine, "vocab", None) or CHAR_VOCAB


class ModelVocabulary:
    """A pretrained tokenizer's own tokens, constrained to the task alphabet (module docstring)."""

    kind = "model"

    def __init__(self, tokenizer, model_vocab_size: int, *, alphabet: str = CHARS, chat: bool | None = None,
                 prompt_slots: int = 4096, system: str | None = None):
        self.tokenizer = tokenizer
        self.alphabet = alphabet
        eos = tokenizer.eos_token_id
        if eos is None:
            raise VocabularyError("the tokenizer defines no eos token (needed for the task's <eos>)")
        bos = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else eos
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else eos
        n = min(len(tokenizer), model_vocab_size)
        special = set(getattr(tokenizer, "all_special_ids", []) or [])
        texts = tokenizer.batch_decode([[i] for i in range(n)], skip_special_tokens=False,
                                       clean_up_tokenization_spaces=False)
        allowed_chars = set(alphabet)
        answer_ids = [i for i, s in enumerate(texts)
                      if i not in special and s and set(s) <= allowed_chars and "\n" not in s[:-1]]
        singles = {texts[i] for i in answer_ids if len(texts[i]) == 1}
        missing = [c for c in alphabet if c not in singles]
        if missing:
            raise VocabularyError(f"the tokenizer has no token for the task character(s) {''.join(missing)!r}: "
                                  f"every character of {alphabet!r} must be a token by itself, so that every "
                                  f"answer can be written")
        first = len(SPECIALS)
        self._answer_end = first + len(answer_ids)
        self.size = self._answer_end + prompt_slots
        self.to_model = np.full(self.size, pad, np.int64)
        """int64 [V]: the model id of every vocabulary id (unassigned prompt ids: the pad token)."""
        self.to_model[PAD], self.to_model[BOS], self.to_model[EOS] = pad, bos, eos
        self.to_model[first:self._answer_end] = answer_ids
        self._texts = ["", "", ""] + [texts[i] for i in answer_ids] + [""] * prompt_slots
        self._from_model = {m: first + j for j, m in enumerate(answer_ids)}
        self._from_model.setdefault(eos, EOS)
        self._single = {texts[m]: v for m, v in self._from_model.items() if v >= first and len(texts[m]) == 1}
        self._next_prompt = self._answer_end
        self.generatable = np.zeros(self.size, np.bool_)
        self.generatable[EOS] = True
        self.generatable[first:self._answer_end] = True
        self.step_end = np.array([s.endswith("\n") for s in self._texts], np.bool_)
        self.chat = bool(getattr(tokenizer, "chat_template", None)) if chat is None else chat
        if self.chat and not getattr(tokenizer, "chat_template", None):
            raise VocabularyError("chat prompts asked for, but the tokenizer has no chat template")
        self.system = system
        self.version = 0
        """Bumped whenever a prompt id is assigned (to_model changed)."""
        self._prompts: dict[tuple[str, str], tuple[int, ...]] = {}

    @property
    def answer_tokens(self) -> int:
        """How many model tokens the answer alphabet admits."""
        return self._answer_end - len(SPECIALS)

    # ------------------------------------------------------------------ reading ids
    def token_text(self, token: int) -> str:
        t = int(token)
        return self._texts[t] if 0 <= t < self.size else ""

    def text(self, tokens: Sequence[int]) -> str:
        out = []
        for t in tokens:
            t = int(t)
            if t == EOS:
                break
            if len(SPECIALS) <= t < self._answer_end:
                out.append(self._texts[t])
        return "".join(out)

    def lines(self, tokens: Sequence[int]) -> int:
        return int(sum(bool(self.step_end[int(t)]) for t in tokens if 0 <= int(t) < self.size))

    # ------------------------------------------------------------------ writing text
    def _ids_of(self, model_ids: Sequence[int], *, prompt: bool) -> list[int]:
        unk = getattr(self.tokenizer, "unk_token_id", None)
        out = []
        for m in model_ids:
            m = int(m)
            if unk is not None and m == unk:
                raise VocabularyError(f"the tokenizer cannot encode part of the task text (it gives the unknown "
                                      f"token {self.tokenizer.unk_token!r})")
            v = self._from_model.get(m)
            if v is None:
                if not prompt:
                    raise VocabularyError(f"model token {m} ({self.tokenizer.decode([m])!r}) is outside the "
                                          f"answer alphabet {self.alphabet!r}")
                if self._next_prompt >= self.size:
                    raise VocabularyError(f"more than {self.size - self._answer_end} distinct prompt tokens: "
                                          f"build the vocabulary with more prompt_slots")
                v = self._next_prompt
                self._next_prompt += 1
                self._from_model[m] = v
                self.to_model[v] = m
                self._texts[v] = self.tokenizer.decode([m])
                self.version += 1
            out.append(v)
        return out

    def encode_answer(self, text: str) -> list[int]:
        """Ids of answer text, tokenised the model's way (every token must lie in the alphabet)."""
        bad = sorted(set(text) - set(self.alphabet))
        if bad:
            raise VocabularyError(f"character(s) {''.join(bad)!r} are not in the task alphabet {self.alphabet!r}")
        # Line by line: a BPE may merge across a newline ('\n1'), and such tokens are not generatable
        # (a step must end at a token boundary). A line the tokenizer writes with a token outside the
        # alphabet (a leading-space piece, say) is written one character per token instead.
        out: list[int] = []
        newline = self._from_model_char("\n")
        for k, line in enumerate(text.split("\n")):
            if k:
                out.append(newline)
            ids = [self._from_model.get(int(m)) for m in self.tokenizer.encode(line, add_special_tokens=False)]
            if any(v is None or not self.generatable[v] for v in ids):
                ids = [self._from_model_char(c) for c in line]
            out += ids
        return out

    def _from_model_char(self, ch: str) -> int:
        """The id of the single-character token `ch` (one exists for every alphabet character)."""
        return self._single[ch]

    def prompt_text(self, task: "Task", problem: "Problem") -> str:
        """The text the model sees before its answer (chat template applied when there is one)."""
        if not self.chat:
            return task.prompt_text(problem)
        messages = [{"role": "system", "content": self.system}] if self.system else []
        for question, answer in task.examples():
            messages += [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]
        messages.append({"role": "user", "content": task.instruction(problem)})
        return self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)

    def prompt(self, task: "Task", problem: "Problem") -> tuple[int, ...]:
        """The prompt ids of `problem` (cached per task and problem)."""
        key = (task.name, problem.key + "|" + ",".join(map(str, problem.numbers)))
        got = self._prompts.get(key)
        if got is None:
            text = self.prompt_text(task, problem)
            model_ids = self.tokenizer.encode(text, add_special_tokens=False)
            # A plain prompt starts with <bos> as TinyGPT's do; a chat template carries its own markers.
            got = tuple(([BOS] if not self.chat else []) + self._ids_of(model_ids, prompt=True))
            self._prompts[key] = got
        return got
