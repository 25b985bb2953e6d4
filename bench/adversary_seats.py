"""Seats and guesses, replayed against the class store: ballot stuffing and limits used as a weapon.

    python bench/adversary_seats.py [--store DSN-or-file]

Each burst is paced as a hostile client would send it (a bounded loop, then it stops); by default on a new SQLite file in a temporary
folder, or on the store named (a PostgreSQL DSN: use a scratch database, the bench creates classes in it).
1. 60 new students (a forged seat cookie each) answer within 2.3 s, into a class of 30, from a loopback client (no
   per-address limit: the class size alone bounds them);
2. the same 60 from one client address (the per-address limit, ClassStore.seats_per_address);
3. 35 wrong teacher passwords in 2.0 s from one session and browser at the class's address, then the guesser's right
   password and the real teacher's, from another browser at the same address;
4. 31 wrong class codes in 1.7 s from one browser, then a new student with the right code, and a joined student's
   reload (a seat in the class: no guess at all);
5. how many guesses one session or browser makes in an hour and a day, and what that means against 32^6 codes;
6. 1,001 wrong teacher passwords from one address, a new forged seat cookie (session and browser) every three
   guesses, then a teacher's new browser there: one typo, then the right password (issue 53: it waited 600 s, the
   rule before, when the address's ceiling turned any wrong guess into MAX_WAIT).
Printed: one row per scenario: what was sent, what got through, what was refused or held, and the figure.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from classroom import guessing  # noqa: E402
from classroom.store import (ADMITTED, CODE_ALPHABET, CODE_LENGTH, FULL, WAITING, ClassStore,  # noqa: E402
                             NotAdmitted)


def _paced(count: int, seconds: float):
    """Yield 0..count-1, the i-th at i * seconds / (count - 1) after the start."""
    start = time.perf_counter()
    for i in range(count):
        delay = start + i * seconds / max(count - 1, 1) - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        yield i


def stuffing(store: ClassStore, address: str | None, students: int = 60, seconds: float = 2.3,
             class_size: int = 30) -> dict:
    teacher = store.create_class("intro", class_size=class_size)
    code = teacher.code
    joins = {ADMITTED: 0, WAITING: 0, FULL: 0}
    stored = refused = 0
    start = time.perf_counter()
    for i in _paced(students, seconds):
        joins[store.join(code, f"forged-{i}", address)] += 1
        try:
            store.answer(code, f"forged-{i}", "intro:1", str(i), None, stop=1)
            stored += 1
        except NotAdmitted:
            refused += 1
    took = time.perf_counter() - start
    answered = teacher.results("intro:1").answered
    where = "one address" if address else "loopback (no per-address limit)"
    return {"scenario": f"{students} forged seats answer, class of {class_size}, {where}",
            "sent": students, "seconds": round(took, 1), "through": f"{joins[ADMITTED]} admitted, {stored} answers stored",
            "held": f"{joins[WAITING]} waiting, {joins[FULL]} refused, {refused} answers refused",
            "figure": f"teacher's screen: Answered {answered}"}


def passwords(store: ClassStore, wrong: int = 35, seconds: float = 2.0) -> dict:
    guesser, teacher, address = ("session:bench-g", "device:bench-g"), ("session:bench-t", "device:bench-t"), \
        "ip:10.1.2.3"
    checked = refused = 0
    start = time.perf_counter()
    for _ in _paced(wrong, seconds):
        if guessing.guess_wait(store, "password", guesser, address, time.time()):
            refused += 1  # refused before the password is compared
        else:
            checked += 1
            store.record_failure("password", (*guesser, address))
    took = time.perf_counter() - start
    own = guessing.guess_wait(store, "password", guesser, address, time.time())
    real = guessing.guess_wait(store, "password", teacher, address, time.time())
    return {"scenario": f"{wrong} wrong passwords, then the right one", "sent": wrong, "seconds": round(took, 1),
            "through": f"{checked} checked (wrong); the teacher's right one: checked after {real} s",
            "held": f"{refused} refused unread; the guesser's right one waits {own} s",
            "figure": "the teacher starts her class at once"}


def codes(store: ClassStore, wrong: int = 31, seconds: float = 1.7) -> dict:
    teacher = store.create_class("intro")
    code = teacher.code
    assert store.join(code, "joined-before") == ADMITTED
    guesser, address = ("session:bench-c", "device:bench-c"), "ip:10.1.2.3"
    checked = refused = 0
    start = time.perf_counter()
    for i in _paced(wrong, seconds):
        if guessing.guess_wait(store, "code", guesser, address, time.time()):
            refused += 1
            continue
        checked += 1
        guess = "".join(CODE_ALPHABET[(i * 7 + k) % len(CODE_ALPHABET)] for k in range(CODE_LENGTH))
        if store.session(guess) is None:
            store.record_failure("code", (*guesser, address))
    took = time.perf_counter() - start
    new = guessing.guess_wait(store, "code", ("session:bench-new", "device:bench-new"), address, time.time())
    joined = store.join(code, "new-student") if new == 0 else "refused"
    reload = store.seat_status(code, "joined-before")  # checked before any guess limit (ui/lesson_bar/bar.join)
    return {"scenario": f"{wrong} wrong class codes, then the join link", "sent": wrong, "seconds": round(took, 1),
            "through": f"{checked} checked (wrong); a new student: {joined} after {new} s; a reload: {reload}",
            "held": f"{refused} refused unread",
            "figure": f"the guesser waits {guessing.guess_wait(store, 'code', guesser, address, time.time())} s"}


def forged_cookies(store: ClassStore, wrong: int = 1001, per_cookie: int = 3) -> dict:
    address, checked, refused = "ip:10.4.5.6", 0, 0
    start = time.perf_counter()
    for i in range(wrong):
        guesser = (f"session:forged-{i // per_cookie}", f"device:forged-{i // per_cookie}")
        if guessing.guess_wait(store, "password", guesser, address, time.time()):
            refused += 1
        else:
            checked += 1
            store.record_failure("password", (*guesser, address))
    took = time.perf_counter() - start
    teacher = ("session:new-teacher", "device:new-teacher")
    store.record_failure("password", (*teacher, address))  # her typo
    wait = guessing.guess_wait(store, "password", teacher, address, time.time())
    return {"scenario": f"{wrong} wrong passwords, a forged cookie every {per_cookie}, then a new browser's typo and "
                        f"the right one", "sent": wrong, "seconds": round(took, 1),
            "through": f"{checked} checked (wrong), {refused} refused unread",
            "held": f"past {guessing.ADDRESS_CEILING} an hour the address leaves {guessing.FREE_GUESSES_CROWDED} free "
                    f"guesses a browser, not {guessing.FREE_GUESSES}",
            "figure": f"the teacher's right password after her typo: checked after {wait} s "
                      f"(the rule before: {guessing.MAX_WAIT:.0f} s)"}


def guess_rate() -> dict:
    hour, day = guessing.guesses_in(3600), guessing.guesses_in(86400)
    per_hour_later = day - guessing.guesses_in(86400 - 3600)
    space = len(CODE_ALPHABET) ** CODE_LENGTH
    years = space / 2 / (per_hour_later * 24 * 365)
    return {"scenario": "guesses of one session or browser", "sent": "", "seconds": "",
            "through": f"{hour} in the first hour, {per_hour_later} an hour after, {day} a day",
            "held": f"32^6 = {space:.3g} codes",
            "figure": f"about {years:.2g} years on average to hit one live class"}


def run(location: str | None = None) -> list[dict]:
    with tempfile.TemporaryDirectory() as folder:
        store = ClassStore(location or Path(folder) / "adversary.sqlite3", seats_per_address=5)
        try:
            return [stuffing(store, None), stuffing(store, "10.9.8.7"), passwords(store), codes(store), guess_rate(),
                    forged_cookies(store)]
        finally:
            store.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", help="a SQLite file or a PostgreSQL DSN (default: a new file, then deleted)")
    args = parser.parse_args(argv)
    rows = run(args.store)
    for row in rows:
        print(f"- {row['scenario']}: sent {row['sent']} in {row['seconds']} s" if row["sent"] else
              f"- {row['scenario']}:")
        print(f"    through: {row['through']}\n    held:    {row['held']}\n    => {row['figure']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
