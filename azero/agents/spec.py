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

CKPT follows --checkpoint's convention (agents/checkpoints.py): a checkpoint file, a
checkpoints folder or a run directory (its newest checkpoint), 'shipped' (the
game's shipped network) or, for mcts, 'none' (search on random rollouts). The
spec string itself is the player's name in results, SGF files and Elo tables, so
the same spec always means the same player. factory.py builds players from specs.
"""

from __future__ import annotations

import dataclasses
import math
import shlex
from typing import Any

from azero.search.config import ALGORITHMS, SearchConfig, play_config

ACCEPTED_FORMS = ("mcts:CKPT@SIMS[:puct|:gumbel][:KEY=VALUE...]", "raw:CKPT[:t=TEMPERATURE]", "random",
                  'gtp:"COMMAND"', "gnugo:LEVEL", "openspiel-mcts:SIMS[:rollouts=R][:uct_c=C]", "human")

# openspiel-mcts options and their defaults.
OPENSPIEL_MCTS_OPTIONS = {"rollouts": 1, "uct_c": 2.0}

# SearchConfig fields a spec may set. Excluded: simulations and algorithm have their own syntax; the
# seed comes from the match; root noise, move temperature and tree reuse are off for evaluation play
# (MctsPlayer forces that).
SEARCH_OPTIONS = ("c_base", "c_init", "fpu_reduction", "leaves_per_game", "virtual_loss", "max_nodes",
                  "gumbel_num_considered", "gumbel_c_visit", "gumbel_c_scale", "gumbel_scale", "gumbel_rescale_q",
                  "score_utility", "score_scale", "solver", "symmetry", "policy_temperature",
                  "final_q_share", "graph", "graph_stop")


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


def search_option(key: str, value: str) -> Any:
    """The value of SearchConfig field `key` written as `value` (ValueError naming either if bad).
    The fields a player may set are SEARCH_OPTIONS; the rest belong to the match or to self-play."""
    if key not in SEARCH_OPTIONS:
        raise ValueError(f"unknown search option {key!r} (settable: {', '.join(SEARCH_OPTIONS)})")
    default = getattr(SearchConfig(), key)
    kind = {"max_nodes": int}.get(key, type(default))
    try:
        if kind is bool:
            if value.lower() not in ("true", "false", "1", "0"):
                raise ValueError
            return value.lower() in ("true", "1")
        return kind(value)
    except ValueError:
        raise ValueError(f"option {key}={value!r} is not a valid {kind.__name__}") from None


def search_overrides(pairs, *, simulations: int = 1, algorithm: str = "puct") -> dict[str, Any]:
    """--search KEY=VALUE options as SearchConfig overrides, checked one by one and then together (a
    combination SearchConfig refuses is named here, before any network is loaded)."""
    out: dict[str, Any] = {}
    for pair in pairs or ():
        key, eq, value = pair.partition("=")
        if not eq or not key:
            raise ValueError(f"--search {pair!r}: expected KEY=VALUE, e.g. graph=true")
        try:
            out[key] = search_option(key, value)
        except ValueError as e:
            raise ValueError(f"--search {pair!r}: {e}") from None
    if not out:
        return out
    try:
        play_config(max(1, simulations), algorithm=algorithm, **out)  # the budget is the command's to check
    except (ValueError, TypeError) as e:
        raise ValueError(f"{' '.join('--search ' + p for p in pairs)}: {e}") from None
    return out


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
        try:
            search[key] = search_option(key, value)
        except ValueError as e:
            raise _spec_error(text, str(e)) from None
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
