"""Any GTP engine as a match player (GNU Go, azero's own `azero gtp`, KataGo, ...).

`GtpProcess` runs one engine command line as a subprocess and exchanges
commands and responses with it: every command carries an id, and the answer
must echo it; an answer that does not come within the timeout, an engine that
exits, or a malformed answer raise GtpEngineError with the engine's last
stderr lines; an answer '? message' raises GtpError.

`GtpPlayer` implements the match protocol of azero.agents.player. An engine
keeps its own board, so each game slot is played by an engine process whose
board holds exactly that game: the player records every slot's moves (from
observe()) and, before asking a genmove, brings the engine's board up to date
-- by playing the missing moves when the engine's board is a prefix of the
game, else by clear_board and replaying the whole game. At most `max_engines`
processes run (default 2, one per core on a small machine); with more
concurrent games than engines, engines move between games by that replay.
Engines with different games answer their genmoves in parallel threads (the
work is in the subprocesses; the threads only wait on pipes).

Where the engine's rules and azero's differ (GNU Go runs with positional
superko, matching azero, but other engines may use simple ko), a genmove
answer that azero's rules refuse is replaced by a pass and counted in
`replaced_moves`; an engine that resigns also passes (azero's games have no
resignation) and is recorded in `resigned`. Both are logged.

`gnugo_player(level)` is GNU Go 3.8 with Chinese (area) rules and
--capture-all-dead: it removes its opponent's dead stones before passing, so
azero's Tromp-Taylor count of the final position is fair to it.
`query_final_score=True` asks every engine for `final_score` when a game ends.
"""

from __future__ import annotations

import collections
import concurrent.futures
import dataclasses
import logging
import os
import queue
import shlex
import shutil
import subprocess
import threading
import time
from typing import Sequence

import numpy as np

from azero.agents.player import Player
from azero.games.base import NO_ACTION, IllegalActionError
from azero.games.go import GoGame
from azero.gtp.protocol import parse_response

log = logging.getLogger(__name__)

GNUGO_PATHS = ("gnugo", "/usr/games/gnugo", "/usr/bin/gnugo", "/usr/local/bin/gnugo")


class GtpError(RuntimeError):
    """The engine answered a command with '? message'."""

    def __init__(self, engine: str, command: str, message: str):
        self.engine, self.command, self.message = engine, command, message
        super().__init__(f"GTP engine {engine!r} refused {command!r}: {message}")


class GtpEngineError(RuntimeError):
    """The engine died, did not answer in time, or broke the protocol; it cannot be used any more."""


class GtpProcess:
    """One GTP engine subprocess: send(command) -> result text, with a timeout per command."""

    STDERR_LINES = 40
    """Lines of the engine's stderr kept for error messages."""

    def __init__(self, command: Sequence[str] | str, *, timeout: float = 60.0, name: str | None = None,
                 cwd: str | os.PathLike | None = None, env: dict | None = None):
        self.argv = shlex.split(command) if isinstance(command, str) else [str(a) for a in command]
        if not self.argv:
            raise ValueError("GtpProcess: empty command line")
        self.timeout = timeout
        self.name = name or os.path.basename(self.argv[0])
        # A full path and close_fds=False let subprocess use posix_spawn (when cwd is None), which
        # reports a failed exec without the error pipe of its fork path: a CI run once hung 600 s
        # reading that pipe while starting GNU Go, because a process another thread forked at that
        # moment (OpenVINO's telemetry, now kept out) held its write end. Python's own descriptors
        # are not inheritable (PEP 446), so the engine gets no more than its three pipes.
        executable = self.argv[0] if os.path.dirname(self.argv[0]) else \
            shutil.which(self.argv[0], path=os.pathsep.join(os.get_exec_path(env)))
        try:
            if executable is None:
                raise FileNotFoundError(f"{self.argv[0]!r} is not on PATH")
            self.proc = subprocess.Popen([executable, *self.argv[1:]], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, env=env,
                                         close_fds=False)
        except OSError as e:
            raise GtpEngineError(f"cannot start GTP engine {self.argv!r}: {e}") from e
        self._lines: queue.Queue = queue.Queue()
        self._stderr: collections.deque = collections.deque(maxlen=self.STDERR_LINES)
        self._next_id = 0
        self._broken: str | None = None
        # Reader threads: a pipe read cannot time out, a queue get can; and an engine that writes
        # much to stderr must never block on a full pipe nobody reads.
        threading.Thread(target=self._read_stdout, daemon=True, name=f"gtp-out-{self.name}").start()
        threading.Thread(target=self._read_stderr, daemon=True, name=f"gtp-err-{self.name}").start()

    def _read_stdout(self) -> None:
        for raw in iter(self.proc.stdout.readline, b""):
            self._lines.put(raw.decode("utf-8", errors="replace").rstrip("\r\n"))
        self._lines.put(None)  # end of output: the engine exited or closed stdout

    def _read_stderr(self) -> None:
        for raw in iter(self.proc.stderr.readline, b""):
            line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
            self._stderr.append(line)
            log.debug("%s stderr: %s", self.name, line)

    @property
    def alive(self) -> bool:
        return self._broken is None and self.proc.poll() is None

    def stderr_tail(self) -> str:
        return "\n".join(self._stderr)

    def _fail(self, problem: str) -> GtpEngineError:
        """Mark the engine unusable (its state is unknown after this) and describe why."""
        self._broken = problem
        if self.proc.poll() is None:
            self.proc.kill()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        time.sleep(0.05)  # let the stderr reader catch the last words
        tail = self.stderr_tail()
        code = self.proc.returncode
        return GtpEngineError(f"GTP engine {self.name!r} ({' '.join(self.argv)}): {problem}"
                              + (f" [exit code {code}]" if code is not None else "")
                              + (f"\nlast stderr lines:\n{tail}" if tail else ""))

    def send(self, command: str, timeout: float | None = None) -> str:
        """Send one command; return the result text of '=' or raise GtpError on '?'."""
        if "\n" in command or "\r" in command:
            raise ValueError(f"a GTP command is one line, got {command!r}")
        if self._broken is not None:
            raise GtpEngineError(f"GTP engine {self.name!r} is unusable: {self._broken}")
        self._next_id += 1
        ident = str(self._next_id)
        try:
            self.proc.stdin.write(f"{ident} {command}\n".encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError) as e:
            raise self._fail(f"died before {command!r} could be sent ({e})") from None
        limit = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + limit
        lines: list[str] = []
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise self._fail(f"no answer to {command!r} within {limit:g}s")
            try:
                line = self._lines.get(timeout=remaining)
            except queue.Empty:
                continue
            if line is None:
                raise self._fail(f"exited while answering {command!r}")
            if not lines:
                if not line.strip():
                    continue  # blank lines between responses
                if line[0] not in "=?":
                    log.warning("%s: ignoring non-GTP output %r", self.name, line[:200])
                    continue
                lines.append(line)
            elif line.strip():
                lines.append(line)
            else:
                break  # the empty line that ends a response
        response = parse_response(lines)
        if response.id != ident:
            raise self._fail(f"answered id {response.id!r} to command {ident} {command!r} (out of step)")
        if not response.ok:
            raise GtpError(self.name, command, response.text)
        return response.text

    def close(self, timeout: float = 5.0) -> None:
        """quit, then wait for the process (killed if it lingers)."""
        if self.proc.poll() is None and self._broken is None:
            try:
                self.send("quit", timeout=timeout)
            except (GtpError, GtpEngineError):
                pass
        if self.proc.poll() is None:
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                stream.close()
            except OSError:
                pass

    def __enter__(self) -> "GtpProcess":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


@dataclasses.dataclass(eq=False)
class _Engine:
    process: GtpProcess
    moves: list[int]
    """The actions on the engine's board, in order (Black first, alternating)."""
    last_used: int = 0


class GtpPlayer(Player):
    """A GTP engine command line as a match player for Go (see the module docstring)."""

    def __init__(self, command: Sequence[str] | str, *, board_size: int = 9, komi: float = 7.5,
                 name: str | None = None, max_engines: int = 2, timeout: float = 60.0,
                 query_final_score: bool = False, setup_commands: Sequence[str] = ()):
        if max_engines < 1:
            raise ValueError(f"max_engines must be >= 1, got {max_engines}")
        self.command = command
        self.game = GoGame(board_size, komi)
        self.max_engines = max_engines
        self.timeout = timeout
        self.query_final_score = query_final_score
        self.setup_commands = tuple(setup_commands)
        self._name = name
        self._engines: list[_Engine] = []
        self._bound: dict[int, _Engine] = {}
        self._tick = 0
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None
        self.histories: list[list[int]] = []
        self.final_scores: dict[int, str] = {}
        """slot -> the engine's final_score answer (e.g. 'B+3.5'), for games that ended."""
        self.replaced_moves: dict[int, int] = collections.Counter()
        """slot -> genmove answers azero's rules refused (played as pass instead)."""
        self.resigned: set[int] = set()

    @property
    def name(self) -> str:
        """The name given, else the first engine's 'name version' (known once it has started), else 'gtp'."""
        return self._name or "gtp"

    @name.setter
    def name(self, value: str) -> None:
        self._name = value

    # ------------------------------------------------------------------ engines
    def _spawn(self) -> _Engine:
        process = GtpProcess(self.command, timeout=self.timeout)
        n = self.game.board_size
        try:
            process.send(f"boardsize {n}")
            process.send(f"komi {self.game.komi:g}")
            process.send("clear_board")
            for c in self.setup_commands:
                process.send(c)
            if self._name is None:
                self._name = process.send("name")
                try:
                    self._name = f"{self._name} {process.send('version')}".strip()
                except GtpError:
                    pass  # version is optional in practice
        except Exception:
            process.close()
            raise
        engine = _Engine(process, [])
        self._engines.append(engine)
        return engine

    def _engine_for(self, slot: int, load: dict) -> _Engine:
        engine = self._bound.get(slot)
        if engine is None:
            busy = {id(e) for e in self._bound.values()}
            free = [e for e in self._engines if id(e) not in busy]
            if free:
                engine = free[0]
            elif len(self._engines) < self.max_engines:
                engine = self._spawn()
            else:
                # All engines hold live games: share the least loaded; the replay in _sync keeps it right.
                engine = min(self._engines, key=lambda e: (load.get(id(e), 0), e.last_used))
            self._bound[slot] = engine
        self._tick += 1
        engine.last_used = self._tick
        load[id(engine)] = load.get(id(engine), 0) + 1
        return engine

    def _sync(self, engine: _Engine, slot: int) -> None:
        """Make the engine's board hold the game of `slot` (missing moves, or clear and replay)."""
        history = self.histories[slot]
        p = engine.process
        if engine.moves != history[: len(engine.moves)]:
            p.send("clear_board")
            engine.moves = []
        for k in range(len(engine.moves), len(history)):
            action = history[k]
            p.send(f"play {'bw'[k % 2]} {self.game.action_to_str(action)}")
            engine.moves.append(action)

    def _genmove(self, engine: _Engine, slot: int, colour: int, legal: np.ndarray) -> int:
        self._sync(engine, slot)
        if colour != len(self.histories[slot]) % 2:
            raise RuntimeError(f"slot {slot}: asked to move for player {colour} but the recorded game has "
                               f"{len(self.histories[slot])} moves (observe() missed a move?)")
        answer = engine.process.send(f"genmove {'bw'[colour]}").strip()
        pass_action = self.game.board_size ** 2
        if answer.lower() == "resign":
            log.info("%s resigned in slot %d; azero's games have no resignation, so it passes", self.name, slot)
            self.resigned.add(slot)
            return pass_action
        try:
            action = self.game.str_to_action(answer)
        except IllegalActionError:
            raise engine.process._fail(f"genmove answered {answer!r}, not a vertex") from None
        engine.moves.append(action)
        if not legal[action]:
            log.warning("%s played %s in slot %d, illegal under azero's rules (positional superko); "
                        "it passes instead", self.name, answer, slot)
            self.replaced_moves[slot] += 1
            return pass_action
        return action

    # ------------------------------------------------------------------ match protocol
    def start(self, n: int) -> None:
        self.histories = [[] for _ in range(n)]
        self._bound = {}
        self.final_scores = {}
        self.replaced_moves = collections.Counter()
        self.resigned = set()

    def act(self, slots, states) -> np.ndarray:
        slots = np.asarray(slots, dtype=np.int64)
        to_play = states.to_play()
        legal = states.legal_mask()
        load: dict = {}
        groups: dict[int, list[int]] = {}
        engines: dict[int, _Engine] = {}
        for k, slot in enumerate(slots.tolist()):
            engine = self._engine_for(slot, load)
            groups.setdefault(id(engine), []).append(k)
            engines[id(engine)] = engine
        actions = np.full(len(slots), NO_ACTION, np.int32)

        def run(key: int) -> None:
            for k in groups[key]:
                actions[k] = self._genmove(engines[key], int(slots[k]), int(to_play[k]), legal[k])

        if len(groups) == 1:
            run(next(iter(groups)))
        else:
            if self._pool is None:
                self._pool = concurrent.futures.ThreadPoolExecutor(self.max_engines, thread_name_prefix="gtp")
            for future in [self._pool.submit(run, key) for key in groups]:
                future.result()
        return actions

    def observe(self, slots, actions) -> None:
        for slot, action in zip(np.asarray(slots).tolist(), np.asarray(actions).tolist()):
            if action != NO_ACTION:
                self.histories[slot].append(int(action))

    def final_score(self, slot: int) -> str:
        """The engine's final_score for the game in `slot` as recorded so far (e.g. 'W+4.5')."""
        engine = self._engine_for(slot, {})
        self._sync(engine, slot)
        return engine.process.send("final_score").strip()

    def finish(self, slots) -> None:
        for slot in np.asarray(slots).tolist():
            if self.query_final_score:
                self.final_scores[slot] = self.final_score(slot)
            self._bound.pop(slot, None)  # the engine is free for another game

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        for engine in self._engines:
            engine.process.close()
        self._engines = []
        self._bound = {}


def find_gnugo() -> str | None:
    """Path of the gnugo binary (PATH, then Debian's /usr/games), or None when it is not installed."""
    for candidate in GNUGO_PATHS:
        path = shutil.which(candidate)
        if path:
            return path
    return None


def gnugo_player(level: int = 1, *, board_size: int = 9, komi: float = 7.5, binary: str | None = None,
                 max_engines: int = 2, query_final_score: bool = True, timeout: float = 60.0,
                 name: str | None = None) -> GtpPlayer:
    """GNU Go at `level` (0..10) with Chinese rules, positional superko (azero's ko rule) and
    --capture-all-dead (it removes dead stones before passing, which Tromp-Taylor scoring needs)."""
    binary = binary or find_gnugo()
    if binary is None:
        raise FileNotFoundError("GNU Go is not installed (apt-get install gnugo puts it in /usr/games/gnugo)")
    if not 0 <= int(level) <= 10:
        raise ValueError(f"GNU Go level must be in 0..10, got {level}")
    command = [binary, "--mode", "gtp", "--level", str(int(level)), "--chinese-rules", "--capture-all-dead",
               "--positional-superko"]
    return GtpPlayer(command, board_size=board_size, komi=komi, max_engines=max_engines, timeout=timeout,
                     query_final_score=query_final_score, name=name or f"gnugo-L{int(level)}")
