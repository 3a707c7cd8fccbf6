"""Expert iteration, AlphaZero's loop for a language model (`azero llm iterate`): search, distil,
retrain, round after round.

    azero llm iterate --ckpt runs/llm/countdown.safetensors --rounds 2 --out runs/llm/iterate-countdown

Each round, from the previous round's network:
  1. search: the tree search (Gumbel at step level by default) solves `problems` train-split
     problems at `budget` generated tokens each; the verifier keeps the answers that are right
     (train problems: the reward is the training signal, as self-play's game result is). On a
     self-checkable task the tree also scores its finished answers by the verifier (`terminal`),
     as AlphaZero's tree scores a finished game by the rules;
  2. distil: the LM is fine-tuned on every verified trace found so far (prompt + trace + <eos>,
     loss on the trace), so one forward pass learns what the search found;
  3. retrain the value: the value head is refit on the new LM's own verified rollouts (head mode:
     the trunk is the distilled LM, left as distillation made it; joint mode: the whole network,
     with the LM loss on the verified traces; no ground-truth solutions enter either way).
Round 0 is the starting checkpoint, evaluated only. Every round is evaluated the same way on
test problems: greedy decoding (raw, one forward pass per token) and the search at
`eval_budget` tokens, each with its 95% Wilson interval.

Outputs in --out: round_<r>.safetensors (round 0 is not copied), iterate.json (the record: per
round the search's tokens, traces, losses, accuracies, wall clock and CPU hours; rewritten
atomically after each round) and iterate.log. A rerun with the same --out resumes after the last
finished round; a different configuration there is an error.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import time
from pathlib import Path
from typing import Callable

import numpy as np
import torch

from azero.eval.stats import wilson_interval
from azero.llm.baselines import greedy_decode
from azero.llm.compare import SEARCH_METHODS, CompareConfig, budget_search_config
from azero.search.llm.searchers import mcts_decode
from azero.search.llm.tasks import EOS, Task, make_task
from azero.search.llm.vocab import vocab_of
from azero.train.llm.engine import LMEngine
from azero.train.llm.model import load_checkpoint, save_checkpoint
from azero.train.llm.train import TrainConfig, finetune_lm, train_value

RECORD = "iterate.json"


@dataclasses.dataclass
class IterateConfig:
    """What `azero llm iterate` runs (countdown3, 2 cores: about 8 minutes a round with 500 test
    problems and --value-problems 8192 --value-steps 1000)."""

    rounds: int = 2
    problems: int = 8000
    """Train problems searched per round (distinct; a new draw each round)."""
    budget: int = 1024
    """Generated tokens per problem of the round's search."""
    method: str = "gumbel-step"
    """The search (one of compare.SEARCH_METHODS), with compare's defaults for it."""
    lm_epochs: float = 3.0
    """Distillation passes over the round's traces (all verified traces so far). A few: 400 steps of
    128 over the ~550 traces 1,000 problems gave (94 passes) memorised them (loss 0.01) and cost
    greedy accuracy 47.5% -> 36.5% on countdown3; more problems searched and few passes is
    STaR's recipe (4,000 problems, 2 passes: greedy 53.0% after 2 rounds; 8,000 and 3: 55.0%)."""
    lm_steps: int = 0
    """Distillation steps per round; 0: from lm_epochs (ceil(epochs x traces / lm_batch))."""
    lm_batch: int = 128
    lm_lr: float = 1e-3
    value_problems: int = 4096
    value_steps: int = 800
    value_mode: str = "joint"
    """The value refit: 'joint' (the whole network, value BCE plus the LM loss on every verified
    trace so far: the trunk learns features of correctness while distillation goes on; still no
    ground truth) or 'head' (the trunk is the distilled LM, left as it is; only the head's MLP fits:
    4x cheaper, but on countdown3 its held-out AUC fell each round, 0.81 -> 0.73 -> 0.72, where the
    joint refit's rose, 0.82 -> 0.83, and greedy and search gained less)."""
    eval_problems: int = 200
    eval_budget: int = 1024
    batch: int = 50
    """Problems searched in lockstep."""
    seed: int = 0
    terminal: str = "auto"
    """Terminal leaves of the round's search on train problems: 'verifier' (the task's reward, as
    AlphaZero's tree scores a finished game by its rules), 'value_head', or 'auto': the verifier
    where the task is self-checkable (its verifier needs only the prompt), else the value head.
    The evaluations' test-time search always uses the value head (verifier-free, as in compare)."""

    def check(self) -> None:
        if self.method not in SEARCH_METHODS:
            raise ValueError(f"method must be one of {SEARCH_METHODS}, got {self.method!r}")
        if self.lm_steps < 0 or not self.lm_epochs > 0:
            raise ValueError(f"lm_steps must be >= 0 and lm_epochs > 0, got {self.lm_steps} and {self.lm_epochs}")
        for name in ("rounds", "problems", "budget", "lm_batch", "value_problems", "value_steps",
                     "eval_problems", "eval_budget", "batch"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)} (a budget of 0 tokens leaves "
                                 f"no room for an answer)" if "budget" in name else
                                 f"{name} must be >= 1, got {getattr(self, name)}")
        if self.value_mode not in ("head", "joint"):
            raise ValueError(f"value_mode must be 'head' or 'joint', got {self.value_mode!r}")
        if self.terminal not in ("auto", "verifier", "value_head"):
            raise ValueError(f"terminal must be 'auto', 'verifier' or 'value_head', got {self.terminal!r}")
        if not self.lm_lr > 0:
            raise ValueError(f"lm_lr must be > 0, got {self.lm_lr}")


def train_terminal(task: Task, cfg: IterateConfig) -> str:
    """The terminal value of the rounds' search on train problems (cfg.terminal resolved for `task`)."""
    if cfg.terminal == "auto":
        return "verifier" if task.self_checkable else "value_head"
    if cfg.terminal == "verifier" and not task.self_checkable:
        raise ValueError(f"terminal 'verifier': task {task.name!r} is not self-checkable (its verifier knows the "
                         f"answer); use 'value_head' or 'auto'")
    return cfg.terminal


def _search(model, task: Task, problems, cfg: IterateConfig, budget: int, answer_tokens: float,
            terminal: str = "value_head"):
    """(answers, meter, search config) of cfg.method at `budget` tokens per problem."""
    ccfg = CompareConfig(seed=cfg.seed, batch=cfg.batch, terminal=terminal)
    tcfg = budget_search_config(cfg.method, ccfg, task, budget, answer_tokens=answer_tokens)
    eng = LMEngine(model)
    answers = []
    with eng.meter.timer():
        for i in range(0, len(problems), cfg.batch):
            answers += mcts_decode(eng, task, problems[i: i + cfg.batch], tcfg)
            eng.clear()
    return answers, eng.meter, tcfg


def evaluate(model, task: Task, cfg: IterateConfig) -> dict:
    """Greedy and search accuracy (95% Wilson intervals) on cfg.eval_problems test problems."""
    problems = task.problems("test", cfg.eval_problems, seed=cfg.seed)
    n = len(problems)
    eng = LMEngine(model)
    vocab = vocab_of(eng)
    greedy = greedy_decode(eng, task, problems)
    g = float(np.mean([task.verify_tokens(p, a, vocab) for p, a in zip(problems, greedy)]))
    answer_tokens = float(np.mean([len(a) for a in greedy]))
    answers, meter, tcfg = _search(model, task, problems, cfg, cfg.eval_budget, answer_tokens)
    s = float(np.mean([task.verify_tokens(p, a, vocab) for p, a in zip(problems, answers)]))
    return {"problems": n, "greedy": g, "greedy_ci": list(wilson_interval(g, n)),
            "greedy_tokens": answer_tokens, "search": s, "search_ci": list(wilson_interval(s, n)),
            "search_budget": cfg.eval_budget, "search_tokens": meter.generated_tokens / n,
            "search_simulations": tcfg.search.simulations}


def _write(path: Path, doc: dict) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=1))
    os.replace(tmp, path)


def run_iterate(ckpt: str | os.PathLike, out_dir: str | os.PathLike, cfg: IterateConfig, *,
                log: Callable[[str], None] = print) -> dict:
    """Run (or resume) cfg.rounds rounds from checkpoint `ckpt`; returns the record (module docstring)."""
    cfg.check()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model, meta = load_checkpoint(ckpt)
    task = make_task(meta["task"])
    terminal = train_terminal(task, cfg)
    # A split too small for the settings is an error now, not after the first evaluation.
    task.problems("train", cfg.problems, seed=cfg.seed * 1000 + 1)
    task.problems("test", cfg.eval_problems, seed=cfg.seed)
    record_path = out / RECORD
    wanted = {"start": str(ckpt), "task": task.name, "config": dataclasses.asdict(cfg)}
    if record_path.exists():
        doc = json.loads(record_path.read_text())
        for key in ("start", "task"):
            if doc.get(key) != wanted[key]:
                raise ValueError(f"{record_path}: this run started from {key}={doc.get(key)!r}, not "
                                 f"{wanted[key]!r}; use another --out")
        changed = {k for k, v in wanted["config"].items() if k != "rounds" and doc["config"].get(k) != v}
        if changed:
            raise ValueError(f"{record_path}: started with other settings ({', '.join(sorted(changed))}); "
                             f"resume with the same ones or use another --out")
        doc["config"]["rounds"] = cfg.rounds
    else:
        doc = {**wanted, "rounds": []}
    done = [r["round"] for r in doc["rounds"]]
    if done:
        last = max(done)
        if last > 0:
            model, _ = load_checkpoint(out / f"round_{last}.safetensors")
        log(f"[iterate] resuming after round {last}")
    traces: dict[tuple[str, tuple[int, ...]], tuple[list[int], int]] = {}
    for r in doc["rounds"]:  # the traces of finished rounds, to distil from again
        for key, seq, pl in r.get("_traces", []):
            traces[(key, tuple(seq))] = (seq, pl)

    if 0 not in done:
        t0, c0 = time.perf_counter(), time.process_time()
        ev = evaluate(model, task, cfg)
        doc["rounds"].append({"round": 0, "eval": ev, "wall_hours": (time.perf_counter() - t0) / 3600,
                              "cpu_hours": (time.process_time() - c0) / 3600})
        _write(record_path, doc)
        log(f"[iterate] round 0 (start): greedy {ev['greedy']:.3f}, {cfg.method} at {cfg.eval_budget} tokens "
            f"{ev['search']:.3f} on {ev['problems']} test problems")

    for rnd in range(1, cfg.rounds + 1):
        if rnd in done:
            continue
        t0, c0 = time.perf_counter(), time.process_time()
        problems = task.problems("train", cfg.problems, seed=cfg.seed * 1000 + rnd)
        eng = LMEngine(model)
        vocab = vocab_of(eng)
        greedy = greedy_decode(eng, task, problems[: min(len(problems), 200)])
        answer_tokens = float(np.mean([len(a) for a in greedy]))
        answers, meter, _ = _search(model, task, problems, cfg, cfg.budget, answer_tokens, terminal=terminal)
        solved, new = 0, []
        for p, a in zip(problems, answers):
            if task.verify_tokens(p, a, vocab) == 1.0:
                solved += 1
                prompt = list(vocab.prompt(task, p))
                toks = [t for t in a if t != EOS]
                seq = prompt + toks + [EOS]
                if (p.key, tuple(seq)) not in traces:
                    traces[(p.key, tuple(seq))] = (seq, len(prompt))
                    new.append([p.key, seq, len(prompt)])
        log(f"[iterate] round {rnd}: the search solved {solved}/{len(problems)} train problems "
            f"({meter.generated_tokens / len(problems):.0f} generated tokens each); {len(traces)} traces in all")
        seqs = [s for s, _ in traces.values()]
        pls = [pl for _, pl in traces.values()]
        if seqs:
            steps = cfg.lm_steps or max(1, math.ceil(cfg.lm_epochs * len(seqs) / cfg.lm_batch))
            loss = finetune_lm(model, seqs, pls, steps=steps, batch=cfg.lm_batch, lr=cfg.lm_lr,
                               seed=cfg.seed + rnd, log=log)
        else:  # nothing verified yet: the round only refits the value head
            loss, steps = None, 0
            log(f"[iterate] round {rnd}: no verified trace to distil; the LM is left as it was")
        tcfg = TrainConfig(value_problems=cfg.value_problems, value_steps=cfg.value_steps,
                           value_mode=cfg.value_mode, seed=cfg.seed + rnd, batch=cfg.lm_batch)
        torch.manual_seed(cfg.seed + rnd)
        value = train_value(model, task, tcfg, log=log,
                            lm_sequences=(seqs, pls) if cfg.value_mode == "joint" and seqs else None)
        save_checkpoint(out / f"round_{rnd}.safetensors", model, task=meta["task"],
                        info={"iterate_round": rnd, "start": str(ckpt), "config": dataclasses.asdict(cfg)})
        ev = evaluate(model, task, cfg)
        doc["rounds"].append({
            "round": rnd,
            "search": {"problems": len(problems), "solved": solved, "budget": cfg.budget, "terminal": terminal,
                       "generated_tokens": meter.generated_tokens, "forward_tokens": meter.forward_tokens,
                       "wall_s": meter.wall_s},
            "distil": {"traces": len(traces), "new_traces": len(new), "steps": steps, "loss": loss},
            "value": value, "eval": ev,
            "wall_hours": (time.perf_counter() - t0) / 3600, "cpu_hours": (time.process_time() - c0) / 3600,
            "_traces": new})
        _write(record_path, doc)
        log(f"[iterate] round {rnd}: greedy {ev['greedy']:.3f} [{ev['greedy_ci'][0]:.3f}, {ev['greedy_ci'][1]:.3f}], "
            f"{cfg.method} {ev['search']:.3f} [{ev['search_ci'][0]:.3f}, {ev['search_ci'][1]:.3f}] "
            f"({(time.perf_counter() - t0) / 60:.1f} min)")
    return doc


def format_record(doc: dict) -> str:
    """The record as a table: per round, search tokens, traces, raw and search accuracy, CPU hours."""
    lines = [f"task {doc['task']}, from {doc['start']}, {doc['config']['method']}; accuracy % [95% CI] on "
             f"{doc['rounds'][0]['eval']['problems'] if doc['rounds'] else '?'} test problems",
             f"{'round':>5} {'search tokens':>14} {'traces':>7} {'greedy':>18} {'search':>18} {'CPU h':>6}"]
    for r in sorted(doc["rounds"], key=lambda r: r["round"]):
        ev = r["eval"]
        tok = f"{r['search']['generated_tokens']:,}" if "search" in r else "-"
        tr = str(r["distil"]["traces"]) if "distil" in r else "-"
        lines.append(f"{r['round']:>5} {tok:>14} {tr:>7} "
                     f"{100 * ev['greedy']:>6.1f} [{100 * ev['greedy_ci'][0]:.0f}-{100 * ev['greedy_ci'][1]:.0f}]".ljust(41)
                     + f"{100 * ev['search']:>6.1f} [{100 * ev['search_ci'][0]:.0f}-{100 * ev['search_ci'][1]:.0f}]"
                     .rjust(18) + f" {r['cpu_hours']:>6.2f}")
    return "\n".join(lines)
