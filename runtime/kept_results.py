"""The results store's second tier: computed results kept in a folder, so that another process (a replica started
again, the other replicas of serve.py, the test suite's servers and workers) reads what one process computed instead of
computing it again.

A result is kept under a digest of everything it depends on: the function's name and arguments (the result store's
key), the weights of the model an argument names (`model.families.fixed_weights_digest`: a shipped checkpoint's files,
the pinned sha256 of the pretrained encoder and of SmolLM2; results about any other model stay in the process) and the
code and words that computed and labelled it (`code_digest`: every source, lesson and word file of the product). A
change to any of them is another key; the old files age out by the folder's byte budget.

The format is data only, never pickle: one safetensors file per result, its arrays as tensors and the structure as
JSON in the file's metadata (dicts, lists, tuples, sets, strings, numbers, None, numpy arrays and scalars, torch
tensors, and the dataclasses and enums of the product's own modules, rebuilt field by field without running their
code). A value holding anything else (a plotly figure, a model) is not kept. A file that cannot be read is a miss and
is removed; a write goes to a temporary file first, so a reader never sees half a file.

ATTENTION_LAB_RESULTS_CACHE names the folder (unset: nothing is kept beyond the process); serve.py gives its replicas
one (run/results), the test suite one per run (tests/conftest.py). ATTENTION_LAB_RESULTS_CACHE_MB bounds it (default
DEFAULT_BUDGET_MB); past it the least recently used files go. Streamlit-free, like the store it serves.
"""
from __future__ import annotations

import dataclasses
import enum
import functools
import hashlib
import importlib
import json
import math
import os
import tempfile
import threading
from collections.abc import Hashable
from pathlib import Path
from typing import Any

import numpy as np

from model.memory import budget_from_environment

FOLDER_ENV = "ATTENTION_LAB_RESULTS_CACHE"
BUDGET_ENV = "ATTENTION_LAB_RESULTS_CACHE_MB"
DEFAULT_BUDGET_MB = 2048
ROOT = Path(__file__).resolve().parents[1]
# What a kept result may depend on, besides the weights: the product's code, its lessons and its words.
CODE_FOLDERS = ("model", "viz", "classroom", "runtime", "ui", "i18n", "app_pages", "lessons", "assets")
CODE_SUFFIXES = (".py", ".toml", ".json", ".txt", ".csv")
PRODUCT_MODULES = ("model.", "viz.", "classroom.", "runtime.", "ui.", "i18n.")  # whose types a file may name
SUFFIX = ".safetensors"


class NotKept(Exception):
    """The value (or key) holds something this format does not store."""


@functools.lru_cache(maxsize=1)
def code_digest() -> str:
    """sha256 over the product's source, lesson, word and data files (names and bytes; the weights are the weights
    digest's), once per process."""
    digest = hashlib.sha256()
    for folder in CODE_FOLDERS:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix in CODE_SUFFIXES and path.is_file() and "__pycache__" not in path.parts:
                digest.update(path.relative_to(ROOT).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


# ------------------------------------------------------------------------------------------------- the format

def _type_name(value: Any) -> str:
    cls = type(value)
    name = f"{cls.__module__}:{cls.__qualname__}"
    if not cls.__module__.startswith(PRODUCT_MODULES) or "<locals>" in cls.__qualname__:
        raise NotKept(name)
    return name


def _product_type(name: str) -> type:
    module_name, _, qualname = name.partition(":")
    if not module_name.startswith(PRODUCT_MODULES):
        raise NotKept(name)
    found: Any = importlib.import_module(module_name)
    for part in qualname.split("."):
        found = getattr(found, part)
    if not isinstance(found, type):
        raise NotKept(name)
    return found


def encode(value: Any, arrays: dict[str, np.ndarray]) -> Any:
    """value as JSON-able data; its arrays go into `arrays` (named "0", "1", ...). NotKept if anything else is in it."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, enum.Enum):
        return {"$enum": _type_name(value), "value": encode(value.value, arrays)}
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"$float": repr(value)}
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "OUSV" or value.dtype.byteorder == ">":
            if value.dtype.kind == "U":  # texts (token labels): as a list, with the array's shape
                return {"$texts": value.tolist(), "dtype": value.dtype.str}
            raise NotKept(f"array of {value.dtype}")
        name = str(len(arrays))
        arrays[name] = np.ascontiguousarray(value)
        return {"$array": name}
    if isinstance(value, np.generic):
        return {"$scalar": value.dtype.str, "value": encode(value.item(), arrays)}
    if type(value).__module__ == "torch" and hasattr(value, "numpy"):  # a tensor (torch is imported by whoever made it)
        if value.dtype.is_complex or str(value.dtype) == "torch.bfloat16":
            raise NotKept(str(value.dtype))
        return {"$tensor": encode(value.detach().cpu().numpy(), arrays)["$array"]}
    if isinstance(value, list):
        return [encode(item, arrays) for item in value]
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return {"$tuple": [encode(item, arrays) for item in value]}
    if isinstance(value, (set, frozenset)):
        items = sorted((encode(item, arrays) for item in value), key=lambda item: json.dumps(item, sort_keys=True))
        return {"$frozenset" if isinstance(value, frozenset) else "$set": items}
    if isinstance(value, dict):
        if all(isinstance(key, str) and not key.startswith("$") for key in value):
            return {key: encode(item, arrays) for key, item in value.items()}
        return {"$dict": [[encode(key, arrays), encode(item, arrays)] for key, item in value.items()]}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {"$dataclass": _type_name(value),
                "fields": {field.name: encode(getattr(value, field.name), arrays) for field in dataclasses.fields(value)}}
    raise NotKept(type(value).__qualname__)


def decode(data: Any, arrays: dict[str, np.ndarray]) -> Any:
    """The value encode() wrote."""
    if isinstance(data, list):
        return [decode(item, arrays) for item in data]
    if not isinstance(data, dict):
        return data
    if "$array" in data:
        return arrays[data["$array"]]
    if "$tensor" in data:
        import torch

        return torch.from_numpy(arrays[data["$tensor"]])
    if "$texts" in data:
        return np.array(data["$texts"], dtype=data["dtype"])
    if "$float" in data:
        return float(data["$float"])
    if "$scalar" in data:
        return np.dtype(data["$scalar"]).type(decode(data["value"], arrays))
    if "$tuple" in data:
        return tuple(decode(item, arrays) for item in data["$tuple"])
    if "$frozenset" in data:
        return frozenset(decode(item, arrays) for item in data["$frozenset"])
    if "$set" in data:
        return {decode(item, arrays) for item in data["$set"]}
    if "$dict" in data:
        return {_hashable(decode(key, arrays)): decode(item, arrays) for key, item in data["$dict"]}
    if "$enum" in data:
        return _product_type(data["$enum"])(decode(data["value"], arrays))
    if "$dataclass" in data:
        cls = _product_type(data["$dataclass"])
        if not dataclasses.is_dataclass(cls):
            raise NotKept(data["$dataclass"])
        value = object.__new__(cls)  # its fields as they were; no __init__ or __post_init__ runs again
        for name, item in data["fields"].items():
            object.__setattr__(value, name, decode(item, arrays))
        return value
    return {key: decode(item, arrays) for key, item in data.items()}


def _hashable(key: Any) -> Any:
    return tuple(key) if isinstance(key, list) else key


def key_text(key: Hashable) -> str:
    """The store's key as canonical text (NotKept for a key holding anything the format does not store)."""
    arrays: dict[str, np.ndarray] = {}
    text = json.dumps(encode(key, arrays), sort_keys=True, separators=(",", ":"))
    if arrays:
        raise NotKept("an array in a key")
    return text


# ------------------------------------------------------------------------------------------------- the folder

class KeptResults:
    """Results in a folder, one safetensors file each, under a digest of (key, weights, code)."""

    def __init__(self, folder: Path, budget: int | None = None):
        self.folder = Path(folder)
        self.budget = budget_from_environment(BUDGET_ENV, DEFAULT_BUDGET_MB) if budget is None else budget
        self.reads = self.writes = self.unstorable = self.broken = 0
        self._lock = threading.Lock()

    def file_for(self, digest: str) -> Path:
        return self.folder / f"{digest}{SUFFIX}"

    @staticmethod
    def digest(key: Hashable, weights: tuple[str, ...] = ()) -> str | None:
        """The file name a result goes under, or None when the key cannot be written down."""
        try:
            text = key_text(key)
        except NotKept:
            return None
        return hashlib.sha256("\n".join((code_digest(), *weights, text)).encode()).hexdigest()[:40]

    def read(self, digest: str) -> tuple[bool, Any]:
        """(True, value) when a readable file is kept under digest; (False, None) otherwise (a broken file goes)."""
        from safetensors import SafetensorError, safe_open

        path = self.file_for(digest)
        try:
            with safe_open(path, framework="numpy") as file:
                arrays = {name: file.get_tensor(name) for name in file.keys()}
                value = decode(json.loads(file.metadata()["value"]), arrays)
        except FileNotFoundError:
            return False, None
        except (OSError, SafetensorError, ValueError, KeyError, TypeError, AttributeError, ImportError, NotKept):
            self.broken += 1
            path.unlink(missing_ok=True)
            return False, None
        try:
            os.utime(path)  # recently used: the last to go when the folder is over its budget
        except OSError:
            pass
        self.reads += 1
        return True, value

    def write(self, digest: str, value: Any) -> bool:
        """Keep value under digest; False (and nothing written) when it holds what the format does not store."""
        from safetensors.numpy import save_file

        arrays: dict[str, np.ndarray] = {}
        try:
            structure = json.dumps(encode(value, arrays), separators=(",", ":"))
        except NotKept:
            self.unstorable += 1
            return False
        self.folder.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=".writing-", suffix=SUFFIX, dir=self.folder)
        os.close(handle)
        try:
            save_file(arrays, temporary, metadata={"value": structure})
            os.replace(temporary, self.file_for(digest))
        except Exception:
            Path(temporary).unlink(missing_ok=True)
            raise
        self.writes += 1
        self._trim()
        return True

    def _trim(self) -> None:
        """Remove the least recently used files until the folder is within its budget."""
        with self._lock:
            files = []
            for path in self.folder.glob(f"*{SUFFIX}"):
                try:
                    stat = path.stat()
                except OSError:
                    continue
                if not path.name.startswith("."):
                    files.append((stat.st_mtime, stat.st_size, path))
            total = sum(size for _, size, _ in files)
            for _, size, path in sorted(files):
                if total <= self.budget:
                    break
                path.unlink(missing_ok=True)
                total -= size


def from_environment() -> KeptResults | None:
    """The folder ATTENTION_LAB_RESULTS_CACHE names now (one KeptResults per folder), or None when it names none."""
    return _kept_in(os.environ.get(FOLDER_ENV, "").strip())


@functools.cache
def _kept_in(folder: str) -> KeptResults | None:
    return KeptResults(Path(folder)) if folder else None
