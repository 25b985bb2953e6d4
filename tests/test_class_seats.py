"""Issue 36, items 4 and 5: a class admits the seats its teacher allows (ballot stuffing), and wrong class codes or
passwords slow only the one who typed them (a limit that cannot lock out the teacher or her students).

Store tests run on SQLite and PostgreSQL (the `store` fixture); the page tests drive the app in AppTest, where a
browser's seat cookie is the session state's "_test_seat" (AppTest cannot send cookies)."""
import pytest
import streamlit as st

from classroom import guessing
from classroom.errors import ClassEnded, NoSuchClass, NotTheTeacher
from classroom.store import ADMITTED, FULL, WAITING, WAITING_PER_ADDRESS, ClassStore, NotAdmitted
from classroom.teacher_password import teacher_password
from tests.app_links import assert_healthy, open_from_link
from tests.conftest import run_in_own_loop
from tests.test_class_pages import _metric, _start_class  # noqa: F401  (the class pages' own fixture is autouse there)
from tests.test_class_pages import data_folder  # noqa: F401


@pytest.fixture()
def store(store_location):
    store = ClassStore(store_location)
    yield store
    store.close()


def test_sixty_forged_seats_beyond_the_class_size_wait_and_their_answers_are_not_stored(store):
    """The finding: 60 new students (a new connection or a forged seat cookie each) in 2.3 s answered and the teacher
    read "Answered 60". With a class of 30, the first 30 seats are admitted and the other 30 wait for her."""
    teacher = store.create_class("intro", class_size=30)
    code = teacher.code
    joins = [store.join(code, f"forged-{i}") for i in range(60)]  # a loopback client: no per-address limit
    assert joins.count(ADMITTED) == 30 and joins.count(WAITING) == 30
    stored = refused = 0
    for i in range(60):
        try:
            store.answer(code, f"forged-{i}", "q", str(i), None, stop=1)
            stored += 1
        except NotAdmitted:
            refused += 1
    assert (stored, refused) == (30, 30)
    with pytest.raises(NotAdmitted):
        store.answer(code, "never-joined", "q", "1", True, stop=1)
    assert teacher.results("q").answered == 30 and store.stored_answers(code) == 30
    seats = teacher.seats()
    assert (seats.size, seats.admitted, len(seats.waiting), seats.last_minute) == (30, 30, 30, 60)
    with pytest.raises(NotTheTeacher):
        store.teacher(code, "wrong", "intro").seats()


def test_one_address_fills_a_few_seats_and_its_waiting_list_is_bounded(tmp_path):
    store = ClassStore(tmp_path / "db", seats_per_address=5)
    teacher = store.create_class("intro", class_size=40)
    code = teacher.code
    burst = [store.join(code, f"script-{i}", address="10.0.0.66") for i in range(60)]
    assert burst.count(ADMITTED) == 5 and burst.count(WAITING) == WAITING_PER_ADDRESS
    assert burst.count(FULL) == 60 - 5 - WAITING_PER_ADDRESS  # refused, nothing stored
    assert store.join(code, "phone", address="10.0.0.7") == ADMITTED  # another student's phone is not held up
    assert store.join(code, "script-0", address="10.0.0.66") == ADMITTED  # a reload keeps its seat
    assert teacher.seats().admitted == 6


def test_the_teacher_admits_a_waiting_join_and_raises_the_class_size(store):
    teacher = store.create_class("intro", class_size=1)
    code = teacher.code
    assert store.join(code, "first") == ADMITTED
    assert store.join(code, "second") == WAITING and store.join(code, "second") == WAITING  # a reload still waits
    assert store.seat_status(code, "second") == WAITING and store.seat_status(code, "nobody") is None
    with pytest.raises(NotAdmitted):
        store.answer(code, "second", "q", "1", True, stop=1)
    with pytest.raises(NotTheTeacher):
        store.teacher(code, "wrong", "intro").admit()
    assert store.seat_status(code, "second") == WAITING
    assert teacher.admit(["second"]) == 1
    assert store.seat_status(code, "second") == ADMITTED
    store.answer(code, "second", "q", "1", True, stop=1)
    assert teacher.seats().size == 2  # grown to hold whom she let in
    assert store.join(code, "third") == WAITING
    with pytest.raises(NotTheTeacher):
        store.teacher(code, "wrong", "intro").set_class_size(10)
    teacher.set_class_size(10)
    assert store.join(code, "fourth") == ADMITTED and store.seat_status(code, "third") == WAITING  # she decides
    assert teacher.admit() == 1 and teacher.seats().waiting == ()
    with pytest.raises(NoSuchClass):
        store.join("ZZZZZZ", "s")
    teacher.end()
    with pytest.raises(ClassEnded):
        store.join(code, "fifth")
    with pytest.raises(ValueError):
        store.create_class("intro", class_size=0)


def test_wrong_guesses_slow_the_guesser_not_its_address(store):
    """35 wrong passwords from one session: it waits, exponentially longer; another session or browser behind the
    same address guesses at once. Past the address's ceiling a guesser's free typos are one, not three."""
    now = 1_764_000_000.0
    guesser, teacher, address = ("session:g", "device:g"), ("session:t", "device:t"), "ip:10.0.0.1"
    for i in range(35):
        store.record_failure("password", (*guesser, address), now=now + i / 16)  # 35 in 2.1 s
    last = now + 34 / 16
    assert guessing.guess_wait(store, "password", guesser, address, last) == 600
    assert guessing.guess_wait(store, "password", teacher, address, last) == 0
    assert guessing.guess_wait(store, "password", ("session:g2", "device:g"), address, last) == 600  # a reload
    for i in range(3):  # three typos cost nothing, the fourth guess waits 2 s
        store.record_failure("code", ("session:typo", address), now=now + i)
    assert guessing.guess_wait(store, "code", ("session:typo",), address, now + 2) == 2
    assert [guessing.backoff(n) for n in (1, 2, 3, 4, 11, 12, 30)] == [0, 0, 2, 4, 512, 600, 600]
    assert guessing.guesses_in(3600) == 16 and guessing.guesses_in(86400) == 154
    store.record_failure("code", ("session:s1",) + (address,) * guessing.ADDRESS_CEILING, now=now)
    assert guessing.guess_wait(store, "code", ("session:fresh",), address, now + 5) == 0  # never guessed: checked
    # Past the ceiling two wrong guesses are free, not three: a teacher's new browser with one typo still gets in at
    # once (issue 53: it waited MAX_WAIT); the guess after a second wrong one waits 2 s, then 4 s, as elsewhere.
    assert guessing.guess_wait(store, "code", ("session:s1",), address, now + 0.5) == 0
    store.record_failure("code", ("session:s1", address), now=now + 1)
    assert guessing.guess_wait(store, "code", ("session:s1",), address, now + 1) == 2
    assert guessing.guess_wait(store, "code", ("session:s1",), "ip:10.0.0.2", now + 1) == 0  # 2 typos elsewhere
    assert [guessing.backoff(n, guessing.FREE_GUESSES_CROWDED) for n in (1, 2, 3, 12)] == [0, 2, 4, 600]


# ---- in the app (AppTest)
@pytest.fixture()
def seats_by_state(monkeypatch):
    """Each AppTest session's browser seat is its session state's "_test_seat" (a reload: the same seat)."""
    seat = lambda: st.session_state.get("_test_seat")  # noqa: E731
    monkeypatch.setattr("ui.live_class.classroom.browser_seat", seat)
    monkeypatch.setattr("ui.lesson_bar.bar.browser_seat", seat)


def _type_code(at, code: str) -> None:
    at.sidebar.text_input(key="class_code_input").input(code)
    next(b for b in at.sidebar.form_submit_button if b.label == "Join the class").click().run()
    assert_healthy(at)


def _warnings(at) -> str:
    return " ".join(w.value for w in at.warning)


def _in_class(at) -> bool:
    return any("stop 1 of" in m.value for m in at.markdown)


def _device(seat: str) -> str:
    """The guesser id the app records for a browser's seat (ui/live_class/classroom._guessers)."""
    import hashlib

    return f"device:{hashlib.sha256(f'guesser:{seat}'.encode()).hexdigest()[:24]}"


def test_thirty_five_wrong_passwords_then_the_right_one_starts_the_class(seats_by_state):
    """35 wrong passwords from the class's address (AppTest's clients are all "local"): 30 from other sessions of a
    script (recorded as the page records them), 5 typed here. The guesser waits, even with the right password; the
    real teacher, another browser at the same address, starts her class at once."""
    ClassStore().record_failure("password", ("ip:local",) * 30)
    guesser, _ = open_from_link("teacher", _test_seat="a" * 32)
    for i in range(5):
        guesser.text_input(key="class_start_password").input(f"guess-{i}")
        next(b for b in guesser.form_submit_button if b.label == "Start a class").click().run()
    assert "Too many wrong passwords from this browser" in _warnings(guesser) and not guesser.metric
    guesser.text_input(key="class_start_password").input(teacher_password())  # the guesser is slowed, even now
    next(b for b in guesser.form_submit_button if b.label == "Start a class").click().run()
    assert "Try again in" in _warnings(guesser) and not guesser.metric
    assert ClassStore().failures("password", "ip:local", 3600)[0] == 33  # the three free guesses were checked
    teacher, _ = open_from_link("teacher", _test_seat="b" * 32)  # the real teacher, the same address
    assert len(_start_class(teacher)) == 6


def test_thirty_one_wrong_codes_slow_only_their_browser(seats_by_state):
    """31 wrong class codes from one browser: 4 typed here (the fourth is refused unread), 27 by a script with the
    same seat cookie. That browser waits, reloaded or not, even with the right code; a new student with the join link
    joins at once, and a joined student who reloads is not asked anything."""
    teacher, _ = open_from_link("teacher")
    code = _start_class(teacher)
    joined, _ = open_from_link(None, {"class": code}, _test_seat="c" * 32)
    assert _in_class(joined)
    guesser, _ = open_from_link(None, _test_seat="d" * 32)
    for guess in ("AAAAAA", "BBBBBB", "CCCCCC", "DDDDDD"):
        _type_code(guesser, guess)
    assert "Too many wrong class codes from this browser" in _warnings(guesser)
    assert not guesser.title  # refused before the page ran: a refused guess costs little
    ClassStore().record_failure("code", (_device("d" * 32), "ip:local"), now=None)
    for _ in range(26):
        ClassStore().record_failure("code", (_device("d" * 32), "ip:local"))
    again, _ = open_from_link(None, {"class": code}, _test_seat="d" * 32)  # its reload, with the right code
    assert not _in_class(again) and "Try again in" in _warnings(again)
    student, _ = open_from_link(None, {"class": code}, _test_seat="e" * 32)  # a new student with the join link
    assert _in_class(student) and "Too many" not in _warnings(student)
    reloaded, _ = open_from_link(None, {"class": code}, _test_seat="c" * 32)  # a joined student reloads
    assert _in_class(reloaded)


def test_a_full_class_makes_a_join_wait_until_the_teacher_lets_it_in(seats_by_state):
    teacher, _ = open_from_link("teacher", _test_seat="f" * 32)
    teacher.number_input(key="class_start_size").set_value(1)
    code = _start_class(teacher)
    assert _metric(teacher, "Joined") == "0 of 1"
    first, _ = open_from_link(None, {"class": code}, _test_seat="1" * 32)
    assert _in_class(first)
    second, _ = open_from_link(None, {"class": code}, _test_seat="2" * 32)
    assert not _in_class(second)
    assert any("The class is full: the teacher has been asked" in i.value for i in second.info)
    teacher.run()
    assert _metric(teacher, "Joined") == "1 of 1" and "1 waiting to be let in" in _warnings(teacher)
    teacher.button(key="class_admit_all").click().run()
    assert_healthy(teacher)
    assert _metric(teacher, "Joined") == "2 of 2" and not [b for b in teacher.button if b.key == "class_admit_all"]
    second.run()  # the waiting page's poll (every few seconds) finds the seat and joins
    assert_healthy(second)
    assert _in_class(second)


def test_the_kubernetes_pods_take_the_students_address_from_the_ingress():
    """uvicorn (Streamlit's server) takes X-Forwarded-For only from $FORWARDED_ALLOW_IPS. With the deployment's
    value a request from an ingress-nginx pod is the student's own address; with uvicorn's default it would be the
    ingress's, the one address the whole school shared."""
    from pathlib import Path

    import yaml
    from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

    deployment = yaml.safe_load((Path(__file__).resolve().parents[1] / "deploy/kubernetes/deployment.yaml").read_text())
    env = {e["name"]: e.get("value") for e in deployment["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert int(env["ATTENTION_LAB_SEATS_PER_ADDRESS"]) > 0

    def client_seen(trusted: str, forwarded: bytes) -> str:
        seen = {}

        async def app(scope, receive, send):
            seen["client"] = scope["client"][0]

        scope = {"type": "http", "client": ("10.244.1.17", 40000), "headers": [(b"x-forwarded-for", forwarded)]}
        run_in_own_loop(ProxyHeadersMiddleware(app, trusted_hosts=trusted)(scope, None, None))
        return seen["client"]

    assert client_seen(env["FORWARDED_ALLOW_IPS"], b"192.168.5.23") == "192.168.5.23"
    assert client_seen(env["FORWARDED_ALLOW_IPS"], b"6.6.6.6, 192.168.5.23") == "192.168.5.23"  # no posing
    assert client_seen("127.0.0.1,::1", b"192.168.5.23") == "10.244.1.17"  # uvicorn's default: the ingress
