"""Tasks with exact verifiers for the LLM-step adapter: a character vocabulary, seeded problem
generators with disjoint train / test splits, and verifiers that never raise.

Countdown (the main task): reach a target from n numbers (3 in 1..20 by default, 4 supported) with
+ - * /, every number used exactly once, every intermediate result a positive integer. The
answer is one equation per line (a step), the last line ends with <eos>:

    prompt   <bos>3,5,7:8\\n
    answer   7-5=2\\n2*4=8<eos>          (here 4 is not a given number: reward 0)

The verifier needs only the problem statement, not a hidden answer, so a search may use it at
its terminal nodes (`Task.self_checkable`).

Arith (the second task): compute a*b+c (a two-digit, b one-digit, c two-digit), written as two
steps, `47*8=376\\n376+65=441<eos>`. Reward 1 when the number after the last '=' is the true
value. Its verifier computes the answer, so using it inside a search would hand the search the
answer: `self_checkable` is False and searches must rely on the value head there.

Splits: a problem's identity (the multiset of numbers and the target; a, b, c for arith) is
hashed with BLAKE2b; 20% of identities are test problems, 15% 'value' problems and the rest train.
The LM trains on 'train' only; the value head learns from the LM's rollouts on 'value' problems,
which the LM has not memorised, so its estimates are calibrated like they need to be on test
problems. The split is a property of the problem: no test problem is ever trained on, whatever
seeds are used.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import re
from typing import Sequence

import numpy as np

# ---------------------------------------------------------------- vocabulary
PAD, BOS, EOS = 0, 1, 2
SPECIALS = ("<pad>", "<bos>", "<eos>")
CHARS = "0123456789+-*/=,:\n"
VOCAB: tuple[str, ...] = SPECIALS + tuple(CHARS)
VOCAB_SIZE = len(VOCAB)
NEWLINE = VOCAB.index("\n")
GENERATABLE = np.array([t not in (PAD, BOS) for t in range(VOCAB_SIZE)])
"""bool [V]: tokens a model may produce (never <pad> or <bos>)."""
_CHAR_TO_ID = {c: i for i, c in enumerate(VOCAB) if i >= len(SPECIALS)}


def encode_text(text: str) -> list[int]:
    """Token ids of `text` (characters only; raises ValueError on a character outside the vocabulary)."""
    try:
        return [_CHAR_TO_ID[c] for c in text]
    except KeyError as e:
        raise ValueError(f"character {e.args[0]!r} is not in the vocabulary {CHARS!r}") from None


def decode_tokens(tokens: Sequence[int]) -> str:
    """Text of the generated tokens up to (not including) the first <eos>; other specials are dropped."""
    out = []
    for t in tokens:
        t = int(t)
        if t == EOS:
            break
        if len(SPECIALS) <= t < VOCAB_SIZE:
            out.append(VOCAB[t])
    return "".join(out)


SPLITS = ("train", "value", "test")


def _split_of(key: str, test_fraction: float, value_fraction: float) -> str:
    u = (int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "little") % 10_000) / 10_000
    if u < test_fraction:
        return "test"
    return "value" if u < test_fraction + value_fraction else "train"


@dataclasses.dataclass(frozen=True)
class Problem:
    """One task instance: the prompt tokens (starting with <bos>), and what the verifier needs."""

    key: str
    """Identity of the problem (decides the split; equal keys are the same problem)."""
    prompt: tuple[int, ...]
    numbers: tuple[int, ...]
    target: int


# Equation line: operands and result are non-negative integers without leading zeros.
_LINE = re.compile(r"(0|[1-9][0-9]*)([+\-*/])(0|[1-9][0-9]*)=(0|[1-9][0-9]*)")
# Longest numeral the verifiers read: bounds int() work on adversarial model outputs.
_MAX_DIGITS = 12


def _apply_op(a: int, op: str, b: int) -> int | None:
    """Countdown arithmetic: the result if it is a positive integer, else None."""
    if op == "+":
        r = a + b
    elif op == "-":
        r = a - b
    elif op == "*":
        r = a * b
    elif b != 0 and a % b == 0:
        r = a // b
    else:
        return None
    return r if r > 0 else None


def _steps(pool: tuple[int, ...]):
    """Every Countdown step from `pool`: ((a, op, b, a op b), the pool with a and b replaced by the
    result), for each pair a >= b and operation whose result is a positive integer."""
    for i, j in itertools.combinations(range(len(pool)), 2):
        a, b = max(pool[i], pool[j]), min(pool[i], pool[j])
        rest = tuple(x for k, x in enumerate(pool) if k not in (i, j))
        for op in "+-*/":
            r = _apply_op(a, op, b)
            if r is not None:
                yield (a, op, b, r), rest + (r,)


class Task:
    """A task: generator, verifier and answer formatting. Subclasses fill the hooks."""

    name: str = ""
    self_checkable: bool = False
    """True when the verifier needs only the prompt (a search may use it at terminal nodes)."""
    max_new_tokens: int = 32
    """Token limit of an answer (a generation reaching it is terminal)."""
    max_steps: int = 4
    """Step (line) limit of an answer."""
    test_fraction: float = 0.2
    value_fraction: float = 0.15

    # -- hooks
    def _random_problem(self, rng: np.random.Generator) -> Problem:
        raise NotImplementedError

    def solutions(self, problem: Problem) -> list[str]:
        """Every canonical correct answer text (without <eos>), for training targets."""
        raise NotImplementedError

    def verify(self, problem: Problem, text: str) -> float:
        """1.0 if `text` (the generated answer, up to <eos>) is correct, else 0.0; never raises."""
        raise NotImplementedError

    def answer_key(self, problem: Problem, text: str) -> str:
        """What majority voting compares: the final answer of `text` (normalised); '' if none."""
        raise NotImplementedError

    def broken_line(self, problem: Problem, text: str) -> int | None:
        """For a wrong answer, the index of the first line whose end makes it wrong whatever follows
        (what process labels of the value head read); None when the answer is right or the task
        cannot tell (its value head then learns from outcomes alone)."""
        return None

    # -- shared
    def finished(self, n_generated: int, n_lines: int, last_token: int) -> bool:
        """Whether an answer is over: <eos>, the step limit (n_lines newlines written) or the token limit."""
        return last_token == EOS or n_lines >= self.max_steps or n_generated >= self.max_new_tokens

    def finished_array(self, n_generated: np.ndarray, n_lines: np.ndarray, last_token: np.ndarray) -> np.ndarray:
        """finished() of whole arrays at once (bool [n]); the same rule."""
        return (last_token == EOS) | (n_lines >= self.max_steps) | (n_generated >= self.max_new_tokens)

    def split_of(self, problem: Problem) -> str:
        return _split_of(f"{self.name}:{problem.key}", self.test_fraction, self.value_fraction)

    def problems(self, split: str, n: int, *, seed: int, distinct: bool = True) -> list[Problem]:
        """n problems of `split` ('train', 'value' or 'test') drawn from a generator seeded by `seed`.

        distinct: no problem twice (raises ValueError if the split has fewer than n problems).
        """
        if split not in SPLITS:
            raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
        rng = np.random.default_rng([seed, SPLITS.index(split)])
        out: list[Problem] = []
        seen: set[str] = set()
        tries = 0
        while len(out) < n:
            tries += 1
            if tries > 200 * n + 10_000:
                raise ValueError(f"{self.name}: could not draw {n} distinct {split} problems "
                                 f"(found {len(out)}); ask for fewer")
            p = self._random_problem(rng)
            if self.split_of(p) != split or (distinct and p.key in seen):
                continue
            seen.add(p.key)
            out.append(p)
        return out

    def verify_tokens(self, problem: Problem, tokens: Sequence[int], vocab=None) -> float:
        """verify() of generated token ids (decoded up to the first <eos>, in `vocab`: the character
        vocabulary when None); never raises."""
        try:
            return self.verify(problem, decode_tokens(tokens) if vocab is None else vocab.text(tokens))
        except Exception:  # noqa: BLE001 - a verifier bug must not crash a search; counts as wrong
            return 0.0

    def training_sequence(self, problem: Problem, rng: np.random.Generator, vocab=None) -> list[int]:
        """prompt + one correct answer (uniform over solutions()) + <eos>, in `vocab` (default: characters)."""
        sols = self.solutions(problem)
        text = sols[int(rng.integers(len(sols)))]
        if vocab is None:
            return list(problem.prompt) + encode_text(text) + [EOS]
        return list(vocab.prompt(self, problem)) + vocab.encode_answer(text) + [EOS]

    # -- prompts for pretrained models (search/llm/vocab.py's ModelVocabulary)
    def prompt_text(self, problem: Problem) -> str:
        """The plain prompt as text ('3,5,7:8\\n' for Countdown), what TinyGPT reads after <bos>."""
        return decode_tokens(problem.prompt)

    def instruction(self, problem: Problem) -> str:
        """The problem in words for a chat model, ending in its plain prompt text's numbers."""
        return self.prompt_text(problem)

    def examples(self, n: int = 2) -> list[tuple[str, str]]:
        """n worked (instruction, answer) pairs from the train split, for a chat model's few-shot turns."""
        out = []
        for p in self.problems("train", n, seed=12345):
            out.append((self.instruction(p), self.solutions(p)[0]))
        return out


class Countdown(Task):
    """Countdown over `n_numbers` numbers in [1, max_number], targets in [1, max_target]."""

    self_checkable = True

    def __init__(self, n_numbers: int = 3, max_number: int = 20, max_target: int = 50):
        if n_numbers not in (3, 4):
            raise ValueError(f"countdown supports 3 or 4 numbers, got {n_numbers}")
        self.n_numbers, self.max_number, self.max_target = n_numbers, max_number, max_target
        self.name = f"countdown{n_numbers}"
        self.max_steps = n_numbers - 1  # every correct answer has exactly n - 1 lines
        self.max_new_tokens = 12 * (n_numbers - 1)
        self._solution_cache: dict[tuple[tuple[int, ...], int], list[str]] = {}

    @staticmethod
    def _search(pool: tuple[int, ...], target: int, lines: list[str], out: list[str]) -> None:
        """Every sequence of equations combining `pool` into exactly [target] (canonical: a >= b)."""
        if len(pool) == 1:
            if pool[0] == target:
                out.append("\n".join(lines))
            return
        for (a, op, b, r), rest in _steps(pool):
            Countdown._search(rest, target, lines + [f"{a}{op}{b}={r}"], out)

    def _reachable(self, numbers: tuple[int, ...]) -> list[int]:
        found: set[int] = set()

        def walk(pool: tuple[int, ...]) -> None:
            if len(pool) == 1:
                found.add(pool[0])
                return
            for _, rest in _steps(pool):
                walk(rest)

        walk(numbers)
        return sorted(t for t in found if 1 <= t <= self.max_target)

    def _random_problem(self, rng: np.random.Generator) -> Problem:
        while True:
            numbers = tuple(int(x) for x in rng.integers(1, self.max_number + 1, size=self.n_numbers))
            targets = self._reachable(numbers)
            if targets:
                break
        target = int(targets[int(rng.integers(len(targets)))])
        key = ",".join(map(str, sorted(numbers))) + f":{target}"
        prompt = [BOS] + encode_text(",".join(map(str, numbers)) + f":{target}\n")
        return Problem(key=key, prompt=tuple(prompt), numbers=numbers, target=target)

    def solutions(self, problem: Problem) -> list[str]:
        k = (tuple(sorted(problem.numbers)), problem.target)
        if k not in self._solution_cache:
            out: list[str] = []
            self._search(k[0], k[1], [], out)
            self._solution_cache[k] = sorted(set(out))
        return self._solution_cache[k]

    ERRORS = ("malformed", "arithmetic", "number not available", "misses the target")
    """What first_error can report, in the order it checks an answer."""

    def first_error(self, problem: Problem, text: str) -> str:
        """The first rule `text` breaks (one of ERRORS), or '' for a correct answer: a line count or a
        line that is not `a op b=r`, a wrong result, an operand that is not left in the pool, or a
        last result that is not the target."""
        return self._check(problem, text)[0]

    def broken_line(self, problem: Problem, text: str) -> int | None:
        error, line = self._check(problem, text)
        return line if error else None

    def _check(self, problem: Problem, text: str) -> tuple[str, int]:
        """(first_error, the index of the line that breaks it; 0 when correct)."""
        if not isinstance(text, str) or len(text) > 4 * self.max_new_tokens:
            return "malformed", 0
        pool = list(problem.numbers)
        lines = text.split("\n")
        steps = len(problem.numbers) - 1
        for k, line in enumerate(lines):
            if k == steps:
                return "malformed", k  # a line more than the answer has
            m = _LINE.fullmatch(line)
            if m is None or any(len(g) > _MAX_DIGITS for g in (m.group(1), m.group(3), m.group(4))):
                return "malformed", k
            a, op, b, r = int(m.group(1)), m.group(2), int(m.group(3)), int(m.group(4))
            if _apply_op(a, op, b) != r:
                return "arithmetic", k
            for x in (a, b):
                if x not in pool:
                    return "number not available", k
                pool.remove(x)
            pool.append(r)
        if len(lines) < steps:
            return "malformed", len(lines) - 1  # it stopped short
        return ("", 0) if pool == [problem.target] else ("misses the target", len(lines) - 1)

    def verify(self, problem: Problem, text: str) -> float:
        return 0.0 if self.first_error(problem, text) else 1.0

    def instruction(self, problem: Problem) -> str:
        numbers = ", ".join(map(str, problem.numbers))
        return (f"Make {problem.target} from the numbers {numbers}. Use every number exactly once, with + - * /, "
                f"and every intermediate result must be a positive whole number. Write one equation per line, "
                f"like a-b=c, with no spaces and no other text.")

    def answer_key(self, problem: Problem, text: str) -> str:
        # Every Countdown answer ends in the target, so votes compare whole solutions, each line
        # with its operands sorted and the lines in order: the most frequent way to solve it.
        lines = []
        for line in text.split("\n"):
            m = _LINE.fullmatch(line)
            if m is None:
                return ""
            a, b = sorted((m.group(1), m.group(3)), key=lambda s: (len(s), s))
            lines.append(f"{a}{m.group(2)}{b}={m.group(4)}")
        return "\n".join(lines)


class Arith(Task):
    """a*b+c with a in [10, 99], b in [2, 9], c in [10, 99], written as two steps."""

    name = "arith"
    self_checkable = False
    max_new_tokens = 24  # the longest answer, 99*9=891\n891+99=990<eos>, is 20 tokens
    max_steps = 2

    def _random_problem(self, rng: np.random.Generator) -> Problem:
        a, b, c = int(rng.integers(10, 100)), int(rng.integers(2, 10)), int(rng.integers(10, 100))
        prompt = [BOS] + encode_text(f"{a}*{b}+{c}:\n")
        return Problem(key=f"{a}*{b}+{c}", prompt=tuple(prompt), numbers=(a, b, c), target=a * b + c)

    def solutions(self, problem: Problem) -> list[str]:
        a, b, c = problem.numbers
        return [f"{a}*{b}={a * b}\n{a * b}+{c}={a * b + c}"]

    def instruction(self, problem: Problem) -> str:
        a, b, c = problem.numbers
        return (f"Compute {a}*{b}+{c} in two steps: first the product, then the sum. Write one equation per "
                f"line, like x*y=z, with no spaces and no other text.")

    def verify(self, problem: Problem, text: str) -> float:
        key = self.answer_key(problem, text)
        return 1.0 if key and int(key) == problem.target else 0.0

    def answer_key(self, problem: Problem, text: str) -> str:
        if not isinstance(text, str):
            return ""
        tail = text.rsplit("=", 1)[-1] if "=" in text else ""
        if not re.fullmatch(r"0|[1-9][0-9]*", tail) or len(tail) > _MAX_DIGITS:
            return ""
        return tail


class Sum(Arith):
    """The sum of n numbers in [1, max_number], written as n - 1 steps, `7+5=12\\n12+9=21<eos>`:
    the two- and three-step arithmetic a small pretrained model (SmolLM2-135M) partly solves with
    a few-shot prompt. Like Arith, reward 1 when the number after the last '=' is the sum, and not
    self-checkable (its verifier computes the answer)."""

    def __init__(self, n_terms: int = 3, max_number: int = 12):
        if n_terms not in (3, 4):
            raise ValueError(f"sum supports 3 or 4 numbers, got {n_terms}")
        self.n_terms, self.max_number = n_terms, max_number
        self.name = f"sum{n_terms}"
        self.max_steps = n_terms - 1
        # a line has at most 10 characters (36+12=48 and its newline), and <eos> ends the answer
        self.max_new_tokens = 10 * (n_terms - 1) + 1

    def _random_problem(self, rng: np.random.Generator) -> Problem:
        numbers = tuple(int(x) for x in rng.integers(1, self.max_number + 1, size=self.n_terms))
        expr = "+".join(map(str, numbers))
        return Problem(key=expr, prompt=tuple([BOS] + encode_text(f"{expr}:\n")), numbers=numbers,
                       target=sum(numbers))

    def solutions(self, problem: Problem) -> list[str]:
        lines, acc = [], problem.numbers[0]
        for x in problem.numbers[1:]:
            lines.append(f"{acc}+{x}={acc + x}")
            acc += x
        return ["\n".join(lines)]

    def instruction(self, problem: Problem) -> str:
        expr = "+".join(map(str, problem.numbers))
        return (f"Compute {expr} one addition at a time, left to right. Write one equation per line, like "
                f"x+y=z, with no spaces and no other text.")


class Game24(Countdown):
    """Game24 (the task TS-LLM and ReSCALE report on): four numbers in 1..13 make 24 with + - * /,
    each number used once. Every solvable multiset is a problem (1,346 of the 1,820), split once and
    for all: the 500 with the lowest hash of their key are 'test', then 15% of the rest 'value',
    the others 'train'.

    Steps are Countdown's: positive integer intermediate results, one equation per line. So the 16
    multisets whose only solutions pass through a fraction (3,3,8,8: 8/(3-8/3)) are not problems
    here; under the usual rules 1,362 are solvable.
    """

    TEST_PROBLEMS = 500

    def __init__(self):
        super().__init__(4, max_number=13, max_target=24)
        self.name = "game24"
        self.max_new_tokens = 40  # three lines of up to 12 characters (13*13=169), and <eos>
        ranked = sorted(self._all(), key=lambda p: hashlib.blake2b(f"game24:{p.key}".encode(),
                                                                      digest_size=8).digest())
        n_value = round(self.value_fraction * (len(ranked) - self.TEST_PROBLEMS))
        self._split = {p.key: ("test" if k < self.TEST_PROBLEMS else
                               "value" if k < self.TEST_PROBLEMS + n_value else "train")
                       for k, p in enumerate(ranked)}
        self._by_split = {name: [p for p in ranked if self._split[p.key] == name] for name in SPLITS}

    def _problem(self, numbers: tuple[int, ...]) -> Problem:
        key = ",".join(map(str, sorted(numbers))) + ":24"
        prompt = [BOS] + encode_text(",".join(map(str, numbers)) + ":24\n")
        return Problem(key=key, prompt=tuple(prompt), numbers=numbers, target=24)

    def _all(self) -> list[Problem]:
        out = []
        for numbers in itertools.combinations_with_replacement(range(1, 14), 4):
            if 24 in self._reachable(numbers):
                out.append(self._problem(numbers))
        return out

    def all_problems(self, split: str) -> list[Problem]:
        """Every problem of `split`, in the split's fixed order."""
        if split not in SPLITS:
            raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
        return list(self._by_split[split])

    def split_of(self, problem: Problem) -> str:
        return self._split.get(problem.key, "train")

    def _random_problem(self, rng: np.random.Generator) -> Problem:
        numbers = sorted(self._split)[int(rng.integers(len(self._split)))]
        values = [int(x) for x in numbers.split(":")[0].split(",")]
        rng.shuffle(values)  # the prompt's order varies; the problem (its key) does not
        return self._problem(tuple(values))

    def problems(self, split: str, n: int, *, seed: int, distinct: bool = True) -> list[Problem]:
        """n problems of `split` in a seeded order (each shown with its numbers in a seeded order);
        distinct: at most the split's size."""
        pool = self.all_problems(split)
        if distinct and n > len(pool):
            raise ValueError(f"game24: the {split} split has {len(pool)} problems, asked for {n}")
        rng = np.random.default_rng([seed, SPLITS.index(split), 24])
        order = rng.permutation(len(pool)) if distinct else rng.integers(len(pool), size=n)
        out = []
        for k in order[:n]:
            values = list(pool[int(k)].numbers)
            rng.shuffle(values)
            out.append(self._problem(tuple(int(v) for v in values)))
        return out


TASKS = ("countdown", "countdown4", "arith", "game24", "sum3", "sum4")


def make_task(name: str) -> Task:
    """'countdown' (3 numbers), 'countdown4' (4 numbers), 'arith', 'game24', 'sum3' or 'sum4'
    ('countdown3', the task's own name, is 'countdown')."""
    if name in ("countdown", "countdown3"):
        # 3 numbers in 1..20, targets <= 50: about 12,800 distinct problems, enough that the LM cannot
        # memorise its ~8,300 training problems and the value head sees ~1,900 unseen ones.
        return Countdown(3)
    if name == "countdown4":
        return Countdown(4, max_number=10, max_target=60)
    if name == "arith":
        return Arith()
    if name == "game24":
        return Game24()
    if name in ("sum3", "sum4"):
        return Sum(int(name[-1]))
    raise ValueError(f"unknown task {name!r}; choose one of {TASKS}")
