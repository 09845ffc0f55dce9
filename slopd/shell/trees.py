"""Whole folders: copied into a hub, removed, or searched for files — never through a link.

Rules:
1. Nothing here follows a symlink or removes anything slopd did not make.
"""

from __future__ import annotations

import os
from pathlib import Path

from slopd.shell.fs import CREATE_FLAGS, DIR_FLAGS, fsync_dir, write_all
from slopd.shell.reads import CHUNK


def copy_into(source: Path, target_fd: int) -> int:
    """Copy the regular files and folders of `source` into `target_fd` (closed after); symlinks
    are skipped. Returns how many files were copied."""
    count = 0
    try:
        for item in os.scandir(source):
            if item.is_symlink():
                continue
            if item.is_dir(follow_symlinks=False):
                os.mkdir(item.name, 0o755, dir_fd=target_fd)
                count += copy_into(Path(item.path), os.open(item.name, DIR_FLAGS, dir_fd=target_fd))
            elif item.is_file(follow_symlinks=False):
                with open(item.path, "rb") as reader:
                    fd = os.open(item.name, CREATE_FLAGS, 0o644, dir_fd=target_fd)
                    try:
                        while chunk := reader.read(CHUNK):
                            write_all(fd, chunk)
                        os.fsync(fd)
                    finally:
                        os.close(fd)
                count += 1
        fsync_dir(target_fd)
    finally:
        os.close(target_fd)
    return count


def remove_tree(parent_fd: int, name: str) -> None:
    """Remove a tree slopd itself made (a replaced deliverable, a crash's leftovers), never
    following links."""
    fd = os.open(name, DIR_FLAGS, dir_fd=parent_fd)
    try:
        for item in os.scandir(fd):
            if item.is_dir(follow_symlinks=False):
                remove_tree(fd, item.name)
            else:
                os.unlink(item.name, dir_fd=fd)
    finally:
        os.close(fd)
    os.rmdir(name, dir_fd=parent_fd)


def has_files(directory: Path) -> bool:
    """Whether `directory` holds any regular file (not a link), at any depth."""
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return False
    return any(
        entry.is_file(follow_symlinks=False)
        or (entry.is_dir(follow_symlinks=False) and has_files(Path(entry.path)))
        for entry in entries
    )
