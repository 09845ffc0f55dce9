"""renameat2(2) (Linux): swap two names atomically, or rename without ever replacing.

Rules:
1. `swap(dir_fd, a, b)` exchanges what `a` and `b` name, in one step no other writer can get
   between; afterwards `a` names what `b` named. Both must exist.
2. `rename_new(dir_fd, source, target)` renames `source` to `target` only if `target` does not
   exist (RENAME_NOREPLACE): FileExistsError otherwise, and nothing changed. A watcher sees a
   rename into the directory — a complete file — where link-then-unlink shows a file created
   with two links for a moment.
3. Where the call is missing (not Linux, an old libc) or the filesystem refuses it (EINVAL,
   ENOSYS, EOPNOTSUPP: some network and FUSE filesystems), both return False having done
   nothing, and the caller falls back (a plain replace; a link and an unlink).
4. Any other failure is the OSError it is.
"""

from __future__ import annotations

import ctypes
import errno
import os
from functools import cache
from typing import Any

RENAME_NOREPLACE = 1
RENAME_EXCHANGE = 2
_UNSUPPORTED = {errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.EXDEV}


@cache
def _renameat2() -> Any | None:
    try:
        function = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    function.restype = ctypes.c_int
    return function


def swap(dir_fd: int, a: str, b: str) -> bool:
    """Rule 1."""
    return _rename(dir_fd, a, b, RENAME_EXCHANGE)


def rename_new(dir_fd: int, source: str, target: str) -> bool:
    """Rule 2."""
    return _rename(dir_fd, source, target, RENAME_NOREPLACE)


def _rename(dir_fd: int, source: str, target: str, flags: int) -> bool:
    function = _renameat2()
    if function is None:
        return False
    if function(dir_fd, os.fsencode(source), dir_fd, os.fsencode(target), flags) == 0:
        return True
    code = ctypes.get_errno()
    if code in _UNSUPPORTED:
        return False
    if code == errno.EEXIST:
        raise FileExistsError(code, os.strerror(code), target)
    raise OSError(code, os.strerror(code), target)
