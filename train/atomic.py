"""Crash-safe file writes shared by replay shards and checkpoints.

A reader must see either the old directory content or the complete new file,
never a partial one: the bytes go to a hidden temporary file in the SAME
directory (os.replace is only atomic within one file system), are fsync'ed, and
the temporary file is renamed over the final name. The directory is fsync'ed
too, so the rename itself survives a power loss. Temporary names start with
'.tmp-' and end with '.tmp', so directory scans can recognise and ignore what
a crash left behind.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import BinaryIO, Callable

TEMP_PREFIX = ".tmp-"
TEMP_SUFFIX = ".tmp"


def is_temp_name(name: str) -> bool:
    """Whether `name` is a temporary file of write_atomic (a leftover of a crash if nobody is writing)."""
    return name.startswith(TEMP_PREFIX) and name.endswith(TEMP_SUFFIX)


def write_atomic(path: str | os.PathLike, write: Callable[[BinaryIO], None]) -> Path:
    """Call write(f) on a temporary file next to `path`, then atomically move it to `path`."""
    path = Path(path)
    # pid + random part: two processes (or a restarted one) never share a temp name
    tmp = path.with_name(f"{TEMP_PREFIX}{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}{TEMP_SUFFIX}")
    try:
        with open(tmp, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)
    return path


def fsync_dir(directory: str | os.PathLike) -> None:
    """Make renames and creations in `directory` durable (a no-op where directories cannot be opened)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # e.g. Windows: directories cannot be opened, and rename durability is the OS's business
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
