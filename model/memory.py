"""Give freed heap memory back to the operating system (glibc keeps it for reuse otherwise); read a budget in MiB
from the environment."""
from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os


def budget_from_environment(variable: str, default_megabytes: float) -> int:
    """Bytes of the budget $variable gives in MiB (0 keeps nothing), else of the default; ValueError for a value
    that is not a number of 0 MiB or more."""
    raw = os.environ.get(variable, "").strip()
    try:
        megabytes = float(raw) if raw else default_megabytes
    except ValueError:
        raise ValueError(f"{variable}={raw!r} is not a number of MiB") from None
    if not megabytes >= 0:  # also refuses NaN
        raise ValueError(f"{variable}={raw!r}: the budget must be 0 or more MiB")
    return int(megabytes * 2**20)


@functools.cache
def _malloc_trim():
    """glibc's malloc_trim, or None where the C library has none (musl, macOS, Windows)."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim = libc.malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim


def return_freed_memory() -> bool:
    """malloc_trim(0): release free memory at the top of every malloc arena and unused pages inside them.

    Python objects and torch tensors that were freed stay in the process's heap until then, so a server's RSS
    would not fall after a training ends. Returns True when memory was released, False when nothing was (or
    malloc_trim is unavailable: then it is a no-op). Pure Python, safe to call from any thread.
    """
    trim = _malloc_trim()
    return bool(trim(0)) if trim is not None else False
