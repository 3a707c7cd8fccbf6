"""Player specifications: one short string per player, for the command line and tournament files.

    mcts:CKPT@SIMS[:OPTION...]   the network of CKPT plus SIMS simulations of search per move.
                                 OPTION: 'puct' (default) or 'gumbel', or KEY=VALUE for a SearchConfig
                                 field (c_init=1.5, gumbel_num_considered=8, leaves_per_game=4, ...).
    raw:CKPT[:t=T]               the network's policy alone: argmax, or sampled at temperature T.
    random                       uniformly random legal moves.
    gtp:"COMMAND"                any GTP engine, started with COMMAND (quotes optional; Go only).
    gnugo:LEVEL                  GNU Go at LEVEL (0..10) over GTP (Go only).
    openspiel-mcts:SIMS[:rollouts=R][:uct_c=C]
                                 OpenSpiel's C++ MCTS (pyspiel.MCTSBot, solve off): SIMS simulations per
                                 move, leaves valued by R random rollouts (default 1), UCT constant C
                                 (default 2.0). Games with an OpenSpiel twin only: connect4, tictactoe,
                                 Go, openspiel:LOAD (azero.games.openspiel_twin).
    human                        moves typed at the terminal.

CKPT is a checkpoint file, a checkpoints folder, or a run directory (its newest
checkpoint). The spec string itself is the player's name in results, SGF files
and Elo tables, so the same spec always means the same player.

Network players built by one PlayerFactory share one NetworkEvaluator per
checkpoint file: `raw:X` and `mcts:X@200` in one tournament load X once.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
import shlex
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from azero.eval.players import MctsPlayer, Player, RandomPlayer, RawNetworkPlayer
from azero.search.config import ALGORITHMS, SearchConfig, play_config

ACCEPTED_FORMS = ("mcts:CKPT@SIMS[:puct|:gumbel][:KEY=VALUE...]", "raw:CKPT[:t=TEMPERATURE]", "random",
                  'gtp:"COMMAND"', "gnugo:LEVEL", "openspiel-mcts:SIMS[:rollouts=R][:uct_c=C]", "human")

# openspiel-mcts options and their defaults.
OPENSPIEL_MCTS_OPTIONS = {"rollouts": 1, "uct_c": 2.0}

# SearchConfig fields a spec may set. Excluded: simulations and algorithm have their own syntax; the
# seed comes from the match; root noise, move temperature and tree reuse are off for evaluation play
# (MctsPlayer forces that).
_SEARCH_OPTIONS = ("c_base", "c_init", "fpu_reduction", "leaves_per_game", "virtual_loss", "max_nodes",
                   "gumbel_num_considered", "gumbel_c_visit", "gumbel_c_scale", "gumbel_scale", "gumbel_rescale_q",
                   "score_utility", "score_scale")


def _spec_error(text: str, problem: str) -> ValueError:
    return ValueError(f"player spec {text!r}: {problem}; accepted forms: {', '.join(ACCEPTED_FORMS)}")


@dataclasses.dataclass(frozen=True)
class PlayerSpec:
    """A parsed player spec; `text` (the spec as written) is the player's name."""

    text: str
    kind: str
    """'mcts', 'raw', 'random', 'gtp', 'gnugo', 'openspiel-mcts' or 'human'."""
    checkpoint: str | None = None
    """mcts / raw: the CKPT part as written (file, checkpoints folder or run directory)."""
    simulations: int = 0
    """mcts, openspiel-mcts: simulations per move."""
    search: tuple[tuple[str, Any], ...] = ()
    """mcts: SearchConfig overrides (algorithm included), as (field, value) pairs."""
    temperature: float = 0.0
    """raw: 0 = argmax of the policy, > 0 = sample from policy^(1/T)."""
    command: str | None = None
    """gtp: the engine's command line."""
    level: int | None = None
    """gnugo: the level."""
    rollouts: int = OPENSPIEL_MCTS_OPTIONS["rollouts"]
    """openspiel-mcts: random rollouts per leaf evaluation."""
    uct_c: float = OPENSPIEL_MCTS_OPTIONS["uct_c"]
    """openspiel-mcts: the UCT exploration constant."""

    @property
    def name(self) -> str:
        return self.text

    @property
    def uses_network(self) -> bool:
        return self.kind in ("mcts", "raw")

    def search_config(self, seed: int = 0) -> SearchConfig:
        """mcts: the SearchConfig this spec plays with (no root noise, no tree reuse)."""
        return play_config(self.simulations, seed=seed, **dict(self.search))


def _convert(text: str, key: str, value: str) -> Any:
    default = getattr(SearchConfig(), key)
    kind = {"max_nodes": int}.get(key, type(default))
    try:
        if kind is bool:
            if value.lower() not in ("true", "false", "1", "0"):
                raise ValueError
            return value.lower() in ("true", "1")
        return kind(value)
    except ValueError:
        raise _spec_error(text, f"option {key}={value!r} is not a valid {kind.__name__}") from None


def _parse_sims(text: str, sims_text: str, hint: str = "") -> int:
    """SIMS of a spec: a positive integer, else a spec error."""
    try:
        sims = int(sims_text)
    except ValueError:
        raise _spec_error(text, f"simulations {sims_text!r} is not an integer") from None
    if sims < 1:
        raise _spec_error(text, f"simulations must be >= 1{hint}, got {sims}")
    return sims


def _parse_mcts(text: str, body: str) -> PlayerSpec:
    ckpt, at, rest = body.rpartition("@")
    if not at or not ckpt:
        raise _spec_error(text, "an mcts player needs CKPT@SIMS, e.g. mcts:runs/go9x9@200")
    sims_text, *options = rest.split(":")
    sims = _parse_sims(text, sims_text, " (use raw:CKPT for the network alone)")
    search: dict[str, Any] = {}
    for opt in options:
        if opt in ALGORITHMS:
            search["algorithm"] = opt
            continue
        key, eq, value = opt.partition("=")
        if not eq:
            raise _spec_error(text, f"unknown option {opt!r} (algorithms: {', '.join(ALGORITHMS)})")
        if key not in _SEARCH_OPTIONS:
            raise _spec_error(text, f"unknown search option {key!r} (settable: {', '.join(_SEARCH_OPTIONS)})")
        search[key] = _convert(text, key, value)
    spec = PlayerSpec(text, "mcts", checkpoint=ckpt, simulations=sims, search=tuple(sorted(search.items())))
    try:
        spec.search_config()  # SearchConfig validates ranges and combinations
    except (ValueError, TypeError) as e:
        raise _spec_error(text, str(e)) from None
    return spec


def _parse_raw(text: str, body: str) -> PlayerSpec:
    ckpt, temperature = body, 0.0
    head, sep, last = body.rpartition(":")
    # Only a trailing 't=...' is an option, so checkpoint paths with ':' still work.
    if sep and last.startswith(("t=", "temperature=")):
        ckpt = head
        value = last.partition("=")[2]
        try:
            temperature = float(value)
        except ValueError:
            raise _spec_error(text, f"temperature {value!r} is not a number") from None
        if not math.isfinite(temperature) or temperature < 0:
            raise _spec_error(text, f"temperature must be a finite number >= 0, got {value}")
    if not ckpt:
        raise _spec_error(text, "a raw player needs a checkpoint, e.g. raw:runs/go9x9")
    return PlayerSpec(text, "raw", checkpoint=ckpt, temperature=temperature)


def _parse_openspiel_mcts(text: str, body: str) -> PlayerSpec:
    sims_text, *options = body.split(":")
    if not sims_text.strip():
        raise _spec_error(text, "an openspiel-mcts player needs SIMS, e.g. openspiel-mcts:1000")
    sims = _parse_sims(text, sims_text)
    values: dict[str, Any] = {}
    for opt in options:
        key, eq, value = opt.partition("=")
        if not eq or key not in OPENSPIEL_MCTS_OPTIONS:
            raise _spec_error(text, f"unknown openspiel-mcts option {opt!r} "
                                    f"(settable: {', '.join(k + '=' for k in OPENSPIEL_MCTS_OPTIONS)})")
        if key in values:
            raise _spec_error(text, f"option {key} given twice")
        if key == "rollouts":
            try:
                values[key] = int(value)
            except ValueError:
                raise _spec_error(text, f"rollouts {value!r} is not an integer") from None
            if values[key] < 1:
                raise _spec_error(text, f"rollouts must be >= 1, got {values[key]}")
        else:
            try:
                values[key] = float(value)
            except ValueError:
                raise _spec_error(text, f"uct_c {value!r} is not a number") from None
            if not math.isfinite(values[key]) or values[key] < 0:
                raise _spec_error(text, f"uct_c must be a finite number >= 0, got {value}")
    return PlayerSpec(text, "openspiel-mcts", simulations=sims, **values)


def parse_player_spec(text: str) -> PlayerSpec:
    """Parse one spec string (module docstring); ValueError naming the spec and the accepted forms."""
    if not isinstance(text, str) or not text.strip():
        raise _spec_error(str(text), "empty spec")
    text = text.strip()
    kind, sep, body = text.partition(":")
    if not sep:
        if text in ("random", "human"):
            return PlayerSpec(text, text)
        raise _spec_error(text, "unknown player")
    if kind == "mcts":
        return _parse_mcts(text, body)
    if kind == "raw":
        return _parse_raw(text, body)
    if kind == "gtp":
        command = body.strip()
        if len(command) >= 2 and command[0] == command[-1] and command[0] in "\"'":
            command = command[1:-1].strip()
        try:
            argv = shlex.split(command)
        except ValueError as e:
            raise _spec_error(text, f"cannot split the command line ({e})") from None
        if not argv:
            raise _spec_error(text, "a gtp player needs a command, e.g. gtp:\"gnugo --mode gtp\"")
        return PlayerSpec(text, "gtp", command=command)
    if kind == "gnugo":
        try:
            level = int(body)
        except ValueError:
            raise _spec_error(text, f"level {body!r} is not an integer") from None
        if not 0 <= level <= 10:
            raise _spec_error(text, f"GNU Go levels are 0..10, got {level}")
        return PlayerSpec(text, "gnugo", level=level)
    if kind == "openspiel-mcts":
        return _parse_openspiel_mcts(text, body)
    raise _spec_error(text, f"unknown player kind {kind!r}")


_GO_NXN = re.compile(r"go([0-9]+)x\1")


def game_from_name(name: str, planes: Iterable[int] = ()):
    """make_game(name), plus 'goNxN' for Go on any board size (the name GoGame's spec carries).

    planes: the observation planes of the networks that will play it. A game with richer feature
    sets (Go: basic, extended) is built with the set the richest network reads; networks that read
    fewer planes get the leading ones (PlayerFactory), so nets of both kinds meet in one match."""
    from azero.games import make_game

    m = _GO_NXN.fullmatch(name)
    game = make_game("go", board_size=int(m.group(1))) if m and name != "go9x9" else make_game(name)
    richest = max(planes, default=0)
    if richest > game.spec.obs_shape[0] and hasattr(game, "with_planes"):
        game = game.with_planes(richest)
    return game


def checkpoint_planes(path: str | os.PathLike) -> int:
    """Observation planes (C) of the network a checkpoint holds (a file, or a run's newest one)."""
    from azero.train.checkpoint import load_checkpoint

    return int(load_checkpoint(resolve_checkpoint(path)).metadata["network"]["obs_shape"][0])


class FirstPlanes:
    """An evaluator for a network that reads the first `planes` planes of a game's richer
    observations (Go basic inside extended: see games/go.py); everything else passes through."""

    def __init__(self, evaluator, planes: int):
        self.inner = evaluator
        self.planes = planes

    @property
    def has_score(self) -> bool:
        return bool(getattr(self.inner, "has_score", False))

    def evaluate(self, obs, legal):
        return self.inner.evaluate(np.ascontiguousarray(obs[:, : self.planes]), legal)

    def evaluate_with_score(self, obs, legal):
        return self.inner.evaluate_with_score(np.ascontiguousarray(obs[:, : self.planes]), legal)

    def ownership(self, obs):
        owner = getattr(self.inner, "ownership", None)
        return owner(np.ascontiguousarray(obs[:, : self.planes])) if owner is not None else None

    def __getattr__(self, name):
        return getattr(self.inner, name)


def resolve_checkpoint(path: str | os.PathLike) -> Path:
    """A checkpoint file as given; for a run directory or a checkpoints folder, its newest checkpoint."""
    from azero.train.checkpoint import latest_checkpoint

    p = Path(path)
    if p.is_file():
        return p
    if p.is_dir():
        for folder in (p / "checkpoints", p):
            found = latest_checkpoint(folder)
            if found is not None:
                return found
        raise FileNotFoundError(f"{p}: no checkpoint (ckpt_*.safetensors) in it or in {p / 'checkpoints'}")
    raise FileNotFoundError(f"checkpoint {p} does not exist (expected a checkpoint file or a run directory)")


class PaddedMctsPlayer(MctsPlayer):
    """MctsPlayer whose search batch is rounded up to a power of two, unused rows inactive.

    A match asks for moves in sub-batches of every size from 1 to its game count;
    one tree per size would hold sum(1..B) trees. Powers of two hold at most 2B
    trees (the rows padded in are skipped by the search: `active` False).
    """

    def act(self, slots, states) -> np.ndarray:
        n = len(states)
        size = 1 << max(n - 1, 0).bit_length()
        if size == n:
            return super().act(slots, states)
        index = np.concatenate([np.arange(n), np.zeros(size - n, np.int64)]).astype(np.int64)
        padded = states.take(index)
        active = np.arange(size) < n
        search = self._searches.get(size)
        if search is None:
            from azero.search.mcts import MCTS

            search = self._searches[size] = MCTS(self.spec, self.evaluator, self.search_cfg, batch_size=size)
        result = search.run(padded, active=active)
        self.last_result = result
        return result.action[:n].astype(np.int32)


class PlayerFactory:
    """Builds Player objects from specs for one game, sharing one network evaluator per checkpoint file.

    `pins` maps a spec's CKPT text to the checkpoint file it must use (a tournament
    records which file a run directory meant when it started, so a resume plays the
    same network even after training wrote newer checkpoints).
    """

    def __init__(self, game, *, device: str = "cpu", threads: int | None = 1, precision: str = "auto",
                 backend: str = "auto",
                 pins: dict[str, str] | None = None):
        self.game = game
        self.device = device
        self.precision = precision
        self.backend = backend
        self.threads = threads
        self.pins: dict[str, str] = dict(pins or {})
        self._evaluators: dict[str, Any] = {}

    def checkpoint_file(self, ckpt: str) -> Path:
        """The file CKPT stands for (pinned, or resolved now and then pinned)."""
        if ckpt not in self.pins:
            self.pins[ckpt] = str(resolve_checkpoint(ckpt).resolve())  # absolute: a resume may start elsewhere
        return Path(self.pins[ckpt])

    def evaluator(self, ckpt: str):
        from azero.selfplay.network_evaluator import NetworkEvaluator
        from azero.train.checkpoint import network_from_checkpoint

        path = self.checkpoint_file(ckpt)
        key = str(path.resolve())
        if key not in self._evaluators:
            net = network_from_checkpoint(path)
            spec = self.game.spec
            c, shape = int(net.obs_shape[0]), tuple(spec.obs_shape)
            prefix = (c < shape[0] and tuple(net.obs_shape[1:]) == shape[1:]
                      and getattr(self.game, "planes_prefix_ok", lambda _: False)(c))
            if (tuple(net.obs_shape) != shape and not prefix) or int(net.num_actions) != spec.num_actions:
                raise ValueError(
                    f"checkpoint {path} is a network for observations {tuple(net.obs_shape)} and "
                    f"{net.num_actions} actions; game {spec.name} has {shape} and {spec.num_actions}")
            evaluator = NetworkEvaluator(net, device=self.device, threads=self.threads,
                                         precision=self.precision, backend=self.backend)
            self._evaluators[key] = FirstPlanes(evaluator, c) if prefix else evaluator
        return self._evaluators[key]

    def build(self, spec: PlayerSpec | str, *, seed: int = 0) -> Player:
        """A fresh Player for `spec`; `seed` drives its random choices (random moves, sampling, Gumbel)."""
        if isinstance(spec, str):
            spec = parse_player_spec(spec)
        game = self.game
        if spec.kind == "random":
            return RandomPlayer(seed=seed, name=spec.name)
        if spec.kind == "raw":
            return RawNetworkPlayer(self.evaluator(spec.checkpoint), temperature=spec.temperature, seed=seed,
                                    name=spec.name)
        if spec.kind == "mcts":
            return PaddedMctsPlayer(game.spec, self.evaluator(spec.checkpoint), spec.search_config(seed),
                                    name=spec.name)
        if spec.kind in ("gtp", "gnugo"):
            return _build_gtp(spec, game)
        if spec.kind == "openspiel-mcts":
            return _build_openspiel_mcts(spec, game, seed)
        if spec.kind == "human":
            return _build_human(spec, game)
        raise ValueError(f"player spec {spec.text!r}: unknown kind {spec.kind!r}")

    def close(self) -> None:
        self._evaluators.clear()


def _require_go(spec: PlayerSpec, game) -> None:
    if game.spec.pass_action is None or not game.spec.name.startswith("go"):
        raise ValueError(f"player spec {spec.text!r}: GTP engines play Go only, not {game.spec.name}")


def _build_gtp(spec: PlayerSpec, game) -> Player:
    _require_go(spec, game)
    try:
        from azero.eval import gtp_player
    except ImportError as e:
        raise ValueError(f"player spec {spec.text!r}: GTP players need azero.eval.gtp_player, which is not "
                         f"available ({e})") from None
    params = game.spec.params
    # The arena asks final_score itself (before finish), so the player need not ask again at finish.
    common = dict(board_size=params["board_size"], komi=params["komi"], name=spec.name, query_final_score=False)
    if spec.kind == "gnugo":
        return gtp_player.gnugo_player(spec.level, **common)
    return gtp_player.GtpPlayer(shlex.split(spec.command), **common)


def _build_openspiel_mcts(spec: PlayerSpec, game, seed: int) -> Player:
    from azero.games.openspiel_twin import NoOpenSpielTwinError

    try:
        from azero.eval.openspiel_player import OpenSpielMctsPlayer

        return OpenSpielMctsPlayer(game, spec.simulations, rollouts=spec.rollouts, uct_c=spec.uct_c, seed=seed,
                                   name=spec.name)
    except NoOpenSpielTwinError as e:
        raise ValueError(f"player spec {spec.text!r}: OpenSpiel MCTS plays only games with an OpenSpiel twin: "
                         f"{e}") from None
    except ImportError as e:
        raise ValueError(f"player spec {spec.text!r}: needs OpenSpiel (pyspiel), which is not available "
                         f"({e})") from None


class TerminalPlayer(Player):
    """A person at the terminal: each move is read as one line in the game's notation.

    Meant for one game at a time (--parallel 1); with several games it asks for each in turn,
    naming the game. An illegal or unreadable move is refused with the reason and asked again.
    """

    def __init__(self, game, *, name: str = "human", inp=None, out=None):
        import sys

        self.game = game
        self.name = name
        self.inp = inp if inp is not None else sys.stdin
        self.out = out if out is not None else sys.stdout

    def act(self, slots, states) -> np.ndarray:
        from azero.games.base import IllegalActionError

        actions = np.zeros(len(states), np.int32)
        legal = states.legal_mask()
        for k, slot in enumerate(np.asarray(slots).tolist()):
            self.out.write(states.render(k) + "\n")
            while True:
                self.out.write(f"game {slot}, your move ({self.name}): ")
                self.out.flush()
                line = self.inp.readline()
                if not line:
                    raise ValueError(f"player {self.name!r}: end of input while a move was expected")
                try:
                    action = self.game.str_to_action(line.strip())
                except IllegalActionError as e:
                    self.out.write(f"  not a move: {e}\n")
                    continue
                if not legal[k, action]:
                    self.out.write(f"  {line.strip()} is not legal here\n")
                    continue
                actions[k] = action
                break
        return actions


def _build_human(spec: PlayerSpec, game) -> Player:
    try:  # azero.eval.human's own match player, should it ever offer one
        from azero.eval.human import HumanPlayer  # type: ignore[attr-defined]
    except ImportError:
        return TerminalPlayer(game, name=spec.name)
    return HumanPlayer(game, name=spec.name)


def make_player(text: str, game, *, seed: int = 0, device: str = "cpu", threads: int | None = 1) -> Player:
    """One player from one spec string (a factory of its own; use PlayerFactory to share networks)."""
    return PlayerFactory(game, device=device, threads=threads).build(parse_player_spec(text), seed=seed)
