"""Files that hold users' data are readable by their owner only: directories 0700, files
0600, whatever the process umask. SQLite gives its -wal and -shm files the mode of the
database file, so creating that file 0600 before SQLite opens it covers all three."""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

DIRECTORY_MODE = 0o700
FILE_MODE = 0o600


def private_directory(path: Path) -> Path:
    """Create ``path`` (and its parents) if missing; make ``path`` itself 0700 when this
    process owns it (a directory shared on purpose, owned by someone else, is left alone)."""
    path.mkdir(parents=True, exist_ok=True, mode=DIRECTORY_MODE)
    _tighten(path, DIRECTORY_MODE)
    return path


def private_file(path: Path) -> Path:
    """Create ``path`` empty and 0600 if missing, else make it 0600 when this process owns it."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    except FileExistsError:
        _tighten(path, FILE_MODE)
    else:
        os.close(fd)
        _tighten(path, FILE_MODE)  # the umask may only have removed bits; make it exact
    return path


def tighten_existing(path: Path) -> None:
    """0600 for an existing file this process owns (a store made before this rule)."""
    if path.exists():
        _tighten(path, FILE_MODE)


def _tighten(path: Path, mode: int) -> None:
    with contextlib.suppress(OSError):
        info = path.stat()
        if info.st_uid == os.getuid() and stat.S_IMODE(info.st_mode) != mode:
            os.chmod(path, mode)
