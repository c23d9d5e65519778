"""Private files: the server's data directory is 0700 and the files holding keys are 0600,
so other accounts on the host read neither (the umask decides nothing here)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

DIR_MODE = 0o700
FILE_MODE = 0o600


def private_dir(path: Path) -> Path:
    """Create ``path`` (and missing parents) owner-only; an existing directory of ours that
    others can enter is narrowed to owner-only."""
    path.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
    _narrow(path, DIR_MODE)
    return path


def private_file(path: Path) -> Path:
    """Create ``path`` empty and owner-only if it is missing, else narrow it to owner-only.
    SQLite gives its -wal and -shm files the mode of the database file, so a database
    created through this stays private with its journals."""
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, FILE_MODE)
    except FileExistsError:
        _narrow(path, FILE_MODE)
    else:
        os.close(fd)
    for journal in (path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        if journal.exists():
            _narrow(journal, FILE_MODE)
    return path


def _narrow(path: Path, mode: int) -> None:
    found = path.stat()
    if found.st_uid == os.getuid() and stat.S_IMODE(found.st_mode) & ~mode:
        path.chmod(stat.S_IMODE(found.st_mode) & mode)
