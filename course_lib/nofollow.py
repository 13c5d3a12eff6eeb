"""Opening a checked path without following links, for reads and for writes.

A path can pass every check (links resolved, confined to the root) and still change before it is
used: a folder on the way swapped for a symbolic link, a note swapped for a link to another
note. So a checked path is opened one component at a time from the root, each with O_NOFOLLOW:
a link on the way fails the open (ELOOP or ENOTDIR) instead of being followed. `fs_server`
opens its reads the same way. A write then happens *inside the folder opened*, by its file
descriptor (`os.replace(..., dst_dir_fd=folder)`), so it changes exactly that folder's entry.

A hard link is not a link to follow: it *is* the other file. One inside the root that names a
file outside it would read or change that file, so a file with more than one link is refused
(`EMLINK`).

POSIX only: it needs `dir_fd` (Linux and macOS have it).

    data, info = read_inside(root, ["docs", "plan.md"], limit)   # or OSError: see refusal()
    folder = open_folder(root, ["docs"])   # a directory descriptor, to write inside it
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Sequence
from pathlib import Path

READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0)
"""Open a file to read: not through a link; a FIFO swapped in does not hang the open."""


def open_folder(root: Path, parts: Sequence[str]) -> int:
    """A descriptor of the folder `root/parts...`, opened component by component, no link followed.
    Close it with `os.close`.

    Raises:
        OSError: ELOOP or ENOTDIR (a link or a file on the way), FileNotFoundError, PermissionError.
    """
    directory = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
    folder = os.open(root, directory)
    try:
        for part in parts:
            inner = os.open(part, directory, dir_fd=folder)
            os.close(folder)
            folder = inner
    except BaseException:
        os.close(folder)
        raise
    return folder


def single_file(fd: int) -> os.stat_result:
    """The status of an open file, if it is a regular file with exactly one link.

    Raises:
        OSError: EINVAL (not a regular file) or EMLINK (more than one hard link).
    """
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        raise OSError(errno.EINVAL, "not a regular file")
    if info.st_nlink != 1:
        raise OSError(errno.EMLINK, "more than one hard link")
    return info


def read_inside(root: Path, parts: Sequence[str], limit: int) -> tuple[bytes, os.stat_result]:
    """The bytes of the regular, single-link file `root/parts...` (no link followed on the way)
    and its status, read once opened: what was checked is what is read.

    Raises:
        OSError: as `open_folder` and `single_file`; EFBIG when it holds over `limit` bytes.
    """
    folder = open_folder(root, parts[:-1])
    try:
        with os.fdopen(os.open(parts[-1], READ_FLAGS, dir_fd=folder), "rb") as file:
            info = single_file(file.fileno())
            data = file.read(limit + 1)
    finally:
        os.close(folder)
    if len(data) > limit:
        raise OSError(errno.EFBIG, "too large")
    return data, info


def refusal(error: OSError) -> tuple[str, str] | None:
    """The course's error code and a reason for an `OSError` from these opens, or None for an
    error that is not a refusal (a real failure: let it propagate)."""
    if isinstance(error, FileNotFoundError):
        return "NOT_FOUND", "no such file"
    if isinstance(error, PermissionError):
        return "FORBIDDEN", "permission denied"
    reasons = {
        errno.ELOOP: ("FORBIDDEN", "a symbolic link is on the way (it appeared after the check); not followed"),
        errno.ENOTDIR: ("FORBIDDEN", "a folder on the way was replaced; not followed"),
        errno.EMLINK: ("FORBIDDEN", "the file has more than one hard link (it may be a file elsewhere); refused"),
        errno.EINVAL: ("INVALID_INPUT", "not a regular file"),
        errno.EFBIG: ("INVALID_INPUT", "file is too large to read whole"),
    }
    return reasons.get(error.errno)
