"""Swap two names in one directory atomically: renameat2(2) with RENAME_EXCHANGE (Linux).

Rules:
1. `swap(dir_fd, a, b)` exchanges what `a` and `b` name, in one step no other writer can get
   between; afterwards `a` names what `b` named. Both must exist.
2. Where the call is missing (not Linux, an old libc) or the filesystem refuses it (EINVAL,
   ENOSYS, EOPNOTSUPP: some network and FUSE filesystems), `swap` returns False having done
   nothing, and the caller falls back to a plain replace.
3. Any other failure is the OSError it is.
"""

from __future__ import annotations

import ctypes
import errno
import os
from functools import cache
from typing import Any

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
    function = _renameat2()
    if function is None:
        return False
    if function(dir_fd, os.fsencode(a), dir_fd, os.fsencode(b), RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in _UNSUPPORTED:
        return False
    raise OSError(code, os.strerror(code), b)
