"""Self-play workers in child processes of the local runner (`run.worker_processes=true`).

Why: worker threads of one process take turns on one interpreter lock between their network
calls, and the learner waits for them. A worker process has an interpreter and a network of its
own, the learner trains in the driver while the workers play (local.py), and with synchronous
reloads the run is deterministic for its seed with any number of workers. Measured on connect four
(`azero bench run`): 1.72 cores busy against 1.48 with threads, but only 1.08x the positions/s,
inside the noise: two workers do about 1.4x of one in every placement on this 2-core machine.

Protocol: one Pipe per worker, tuples between this run's own processes (nothing is read from disk):

    driver -> worker   ("play", moves, weights | None, version, resign_below)   weights: numpy arrays
                       ("close",)
    worker -> driver   ("ok", records, evaluations, batches, cpu_seconds) | ("error", traceback text)

Weights travel only when their version differs from the one the worker last received. Children
start with 'spawn' (a fork would copy the driver's OpenMP and OpenVINO thread state) and ignore
SIGINT / SIGTERM: the driver owns the stop, saves its checkpoint and then closes them. A child
whose driver died reads EOF from its pipe and exits.
"""

from __future__ import annotations

import multiprocessing
import signal
import time
import traceback

import torch

CLOSE_TIMEOUT_S = 10.0
"""How long close() waits for a worker to exit by itself before killing it."""
ROUND_WAIT_S = 120.0
"""How long close() lets a round in progress finish; a child that hangs mid-round is killed after it."""


class WorkerProcessError(RuntimeError):
    """A self-play worker process failed or died; the message names the worker and why."""


def numpy_weights(state_dict: dict) -> dict:
    """A state dict as numpy arrays on the CPU (what crosses the pipe: plain arrays, no tensor sharing)."""
    return {k: v.detach().to("cpu").numpy().copy() for k, v in state_dict.items()}


def _serve(conn, game_cfg, search_cfg, selfplay_cfg, model_cfg, seed, weights, device, threads, inference):
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    from azero.runs.roles import SelfPlay  # in the child: the driver's imports are not inherited by spawn

    try:
        actor = SelfPlay(game_cfg, search_cfg, selfplay_cfg, seed=seed, model_cfg=model_cfg, device=device,
                         threads=threads, inference=inference,
                         weights={k: torch.from_numpy(v) for k, v in weights.items()})
    except Exception:
        conn.send(("error", traceback.format_exc()))
        return
    while True:
        try:
            msg = conn.recv()
        except EOFError:
            break
        if msg[0] == "close":
            break
        try:
            _, moves, new_weights, version, resign = msg
            if new_weights is not None:
                new_weights = {k: torch.from_numpy(v) for k, v in new_weights.items()}
            records, evaluations = actor.play(moves, new_weights, version, resign_below=resign)
            conn.send(("ok", records, evaluations, actor.own.batches, time.process_time()))
        except Exception:
            conn.send(("error", traceback.format_exc()))
            break
    actor.close()
    conn.close()


class WorkerProcess:
    """One self-play worker (roles.SelfPlay with a network of its own) in a child process.

    `start` hands it a round and returns at once; `result` waits for that round's finished games.
    The driver can train in between."""

    def __init__(self, index: int, game_cfg, search_cfg, selfplay_cfg, model_cfg, *, seed: int,
                 weights: dict, device: str = "cpu", threads: int | None = 1, inference: dict | None = None):
        ctx = multiprocessing.get_context("spawn")
        self.index = index
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(
            target=_serve, name=f"azero-selfplay-{index}", daemon=True,
            args=(child, game_cfg, search_cfg, selfplay_cfg, model_cfg, seed, numpy_weights(weights), device,
                  threads, inference or {}))
        self.process.start()
        child.close()
        self.version_sent = 0  # the child starts from `weights`, version 0
        self.evaluations = 0
        self.batches = 0
        self.cpu_seconds = 0.0
        self._pending = False

    def start(self, moves: int, weights: dict | None, version: int, *, resign_below: float | None) -> None:
        """Begin a round of `moves` lockstep moves; `weights` (numpy, see numpy_weights) are sent only
        when `version` is new to this worker."""
        if self._pending:
            raise WorkerProcessError(f"self-play worker {self.index}: a round is already in progress")
        send = weights if version != self.version_sent else None
        try:
            self.conn.send(("play", moves, send, version, resign_below))
        except (BrokenPipeError, EOFError, OSError) as e:
            raise self._died(e) from e
        self.version_sent = version
        self._pending = True

    def result(self) -> list:
        """The games that finished in the round begun by start()."""
        if not self._pending:
            raise WorkerProcessError(f"self-play worker {self.index}: no round in progress")
        try:
            msg = self.conn.recv()
        except (EOFError, OSError) as e:
            raise self._died(e) from e
        self._pending = False
        if msg[0] == "error":
            raise WorkerProcessError(f"self-play worker {self.index} failed:\n{msg[1]}")
        _, records, self.evaluations, self.batches, self.cpu_seconds = msg
        return records

    def _died(self, error: BaseException) -> WorkerProcessError:
        self.process.join(timeout=1.0)
        # A child that failed while building its network sent its traceback before exiting.
        try:
            if self.conn.poll(0):
                msg = self.conn.recv()
                if msg[0] == "error":
                    return WorkerProcessError(f"self-play worker {self.index} failed:\n{msg[1]}")
        except (EOFError, OSError):
            pass
        return WorkerProcessError(f"self-play worker {self.index} (pid {self.process.pid}) died "
                                  f"(exit code {self.process.exitcode}): {error!r}")

    def close(self) -> None:
        """Stop the child: a clean exit if it is idle or finishes its round in time, killed otherwise.

        The child ignores SIGTERM (the driver owns the stop), so a child that does not exit is sent
        SIGKILL; it holds nothing the run needs (its games travel over the pipe), and a hung child
        left alive would hang the interpreter's exit, which joins daemonic children."""
        try:
            if self._pending:
                # Drain a round in progress so that the child is not blocked writing it to the pipe.
                deadline = time.monotonic() + ROUND_WAIT_S
                while self.process.is_alive() and time.monotonic() < deadline:
                    if self.conn.poll(min(1.0, ROUND_WAIT_S)):
                        self.conn.recv()
                        break
                self._pending = False
            self.conn.send(("close",))
        except (BrokenPipeError, EOFError, OSError):
            pass
        self.process.join(timeout=CLOSE_TIMEOUT_S)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(timeout=CLOSE_TIMEOUT_S)
        self.conn.close()


def children_cpu_seconds(workers) -> float:
    """CPU seconds the worker processes have reported so far (each one's own process time)."""
    return float(sum(w.cpu_seconds for w in workers))
