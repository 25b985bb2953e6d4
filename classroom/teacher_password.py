"""The teacher password: what starts a live class and takes one back from another device.

The operator's $ATTENTION_LAB_TEACHER_PASSWORD when set; otherwise one generated on first need and kept in the data
folder (`teacher-password`, mode 600, shared by serve.py's replicas and kept across restarts), as Jupyter does with
its token: the server prints it at start (asgi.py, serve.py) and only someone at the server's console or files has
it. There is no password-free mode: a student who joined a class must not be able to start one of her own and read
the model's answers.
"""
from __future__ import annotations

import hmac
import os
import secrets
import sys
from pathlib import Path

from classroom.store import CODE_ALPHABET, data_folder

PASSWORD_ENV = "ATTENTION_LAB_TEACHER_PASSWORD"
PASSWORD_FILE = "teacher-password"


def password_file() -> Path:
    return data_folder() / PASSWORD_FILE


def teacher_password() -> str:
    """The operator's password, or the generated one (made now, atomically, when there is none yet)."""
    configured = os.environ.get(PASSWORD_ENV)
    if configured:
        return configured
    path = password_file()
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        # 3 groups of 4 from the class codes' alphabet (no 0/O, 1/I): 60 bits, read off a terminal easily.
        generated = "-".join("".join(secrets.choice(CODE_ALPHABET.lower()) for _ in range(4)) for _ in range(3))
        try:
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:  # another replica made it first: use theirs
            pass
        else:
            with os.fdopen(descriptor, "w") as file:
                file.write(generated + "\n")
            return generated
    return path.read_text().strip()


def is_teacher_password(given: str) -> bool:
    return bool(given) and hmac.compare_digest(given.encode("utf-8", "replace"), teacher_password().encode())


def announce_teacher_password(stream=sys.stderr) -> None:
    """Say at server start how a teacher starts a class (the password itself only when it was generated here)."""
    if os.environ.get(PASSWORD_ENV):
        print(f"Teacher password: the one in ${PASSWORD_ENV}.", file=stream, flush=True)
        return
    password = teacher_password()
    print(f"Teacher password (to start a class, Teacher page): {password}   (kept in {password_file()}; set "
          f"${PASSWORD_ENV} to choose one)", file=stream, flush=True)
