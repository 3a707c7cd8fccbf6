"""Players from player specs (spec.py) for one game, sharing one network evaluator per checkpoint.

`raw:X` and `mcts:X@200` in one tournament load X once. Every network goes
through the one loader (checkpoints.py), every MCTS player is the one MctsPlayer.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from azero.agents.checkpoints import NO_NETWORK, checkpoint_planes, load_evaluator, resolve_checkpoint
from azero.agents.mcts import MctsPlayer
from azero.agents.player import Player
from azero.agents.simple import RandomPlayer, RawNetworkPlayer
from azero.agents.spec import PlayerSpec, parse_player_spec


class PlayerFactory:
    """Builds Player objects from specs for one game, sharing one network evaluator per checkpoint file.

    `pins` maps a spec's CKPT text to the checkpoint file it must use (a tournament
    records which file a run directory meant when it started, so a resume plays the
    same network even after training wrote newer checkpoints).
    """

    def __init__(self, game, *, device: str = "auto", threads: int | None = 1, precision: str = "auto",
                 backend: str = "auto", pins: dict[str, str] | None = None, game_name: str | None = None):
        """`game` None with `game_name`: a probe that only resolves checkpoints (to learn which feature
        set the game needs before it is built)."""
        self.game = game
        self.game_name = game.spec.name if game is not None else game_name
        self.device = device
        self.precision = precision
        self.backend = backend
        self.threads = threads
        self.pins: dict[str, str] = dict(pins or {})
        self._evaluators: dict[str, Any] = {}

    def checkpoint_file(self, ckpt: str) -> Path | None:
        """The file CKPT stands for (pinned, or resolved now and then pinned); None for 'none'."""
        if ckpt not in self.pins:
            path = resolve_checkpoint(ckpt, self.game_name)
            if path is None and ckpt != NO_NETWORK:
                raise ValueError(f"checkpoint {ckpt!r}: no network is shipped for {self.game_name}")
            # absolute: a resume may start elsewhere
            self.pins[ckpt] = NO_NETWORK if path is None else str(path.resolve())
        pinned = self.pins[ckpt]
        return None if pinned == NO_NETWORK else Path(pinned)

    def planes(self, ckpt: str) -> int | None:
        """Observation planes of CKPT's network; None for no network."""
        path = self.checkpoint_file(ckpt)
        return None if path is None else checkpoint_planes(path)

    def evaluator(self, ckpt: str):
        """The evaluator of CKPT for this game (one per checkpoint file); ValueError for a network of
        another game."""
        path = self.checkpoint_file(ckpt)
        key = NO_NETWORK if path is None else str(path.resolve())
        if key not in self._evaluators:
            self._evaluators[key] = load_evaluator(path, game=self.game, device=self.device, threads=self.threads,
                                                   precision=self.precision, backend=self.backend).evaluator
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
            return MctsPlayer(game.spec, self.evaluator(spec.checkpoint), spec.search_config(seed), name=spec.name)
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
    if not (game.spec.sgf and game.spec.has_pass):
        raise ValueError(f"player spec {spec.text!r}: GTP engines play Go only, not {game.spec.name}")


def _build_gtp(spec: PlayerSpec, game) -> Player:
    _require_go(spec, game)
    try:
        from azero.agents import gtp_player
    except ImportError as e:
        raise ValueError(f"player spec {spec.text!r}: GTP players need azero.agents.gtp_player, which is not "
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
        from azero.agents.openspiel_player import OpenSpielMctsPlayer

        return OpenSpielMctsPlayer(game, spec.simulations, rollouts=spec.rollouts, uct_c=spec.uct_c, seed=seed,
                                   name=spec.name)
    except NoOpenSpielTwinError as e:
        raise ValueError(f"player spec {spec.text!r}: OpenSpiel MCTS plays only games with an OpenSpiel twin: "
                         f"{e}") from None
    except ImportError as e:
        raise ValueError(f"player spec {spec.text!r}: needs OpenSpiel (pyspiel), which is not available "
                         f"({e})") from None


def _build_human(spec: PlayerSpec, game) -> Player:
    from azero.agents.human import HumanPlayer

    return HumanPlayer(game, name=spec.name)


def make_player(text: str, game, *, seed: int = 0, device: str = "auto", threads: int | None = 1) -> Player:
    """One player from one spec string (a factory of its own; use PlayerFactory to share networks)."""
    return PlayerFactory(game, device=device, threads=threads).build(parse_player_spec(text), seed=seed)
