"""serve.py: N warm replicas behind HAProxy; the generated configuration, the deployment files that must agree
with it, sticky sessions, a killed replica (students reconnect to the same view, it rejoins warm), uploads and
downloads through the proxy in a real browser, and SIGTERM leaving nothing running.

The tests that start servers share one serve.py (two replicas) and are marked slow.
"""
import asyncio
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

from classroom.teacher import ClassTeacher
from serving.haproxy import (COOKIE_SECRET_ENV, HEALTH_PATH, STICKY_COOKIE, haproxy_config_check, haproxy_binary,
                             render_config, server_states)
from serving.seat import SEAT_COOKIE
from serving.socket_caps import SOCKETS_PER_SEAT
from serving.streamlit_client import StreamlitClient
from serving.upload_gate import MAX_UPLOAD_BODY
from tests.conftest import run_in_own_loop

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"
KUBERNETES = DEPLOY / "kubernetes"
SCREENSHOT_DIR = Path(os.environ.get("SERVE_SCREENSHOTS", "/tmp"))  # throwaway pictures to look at


def need_haproxy() -> None:
    if haproxy_binary() is None:
        if os.environ.get("CI"):
            pytest.fail("Debian's haproxy is not installed; .ci/run installs it with apt")
        pytest.skip("haproxy not installed (apt-get install haproxy)")


def haproxy_setting(config: str, name: str) -> str:
    match = re.search(rf"^\s*{name}\s+(.+?)\s*$", config, re.M)
    assert match, f"{name!r} not in the HAProxy configuration"
    return match.group(1)


# ------------------------------------------------------------------------------------- files, no servers

def test_generated_haproxy_config_passes_haproxy_check(tmp_path):
    need_haproxy()
    config = render_config("127.0.0.1:18080", [18081, 18082], tmp_path / "haproxy.sock", [18091, 18092])
    # The replicas count wrong class codes per client address: HAProxy replaces X-Forwarded-For with the real one,
    # so a client cannot pose as another address (ui/seat.client_address reads the last entry).
    assert "http-request set-header X-Forwarded-For %[src]" in config
    path = tmp_path / "haproxy.cfg"
    path.write_text(config)
    valid, said = haproxy_config_check(path)
    assert valid, said
    assert haproxy_setting(config, "cookie").startswith(f"{STICKY_COOKIE} insert")
    assert haproxy_setting(config, "option httpchk") == f"GET {HEALTH_PATH}"
    assert haproxy_setting(config, "option").startswith("redispatch") or "option redispatch" in config
    assert haproxy_setting(config, "timeout tunnel") == "2h"  # the websocket outlives a lesson
    servers = re.findall(r"^\s*server (r\d) 127\.0\.0\.1:(\d+) cookie (r\d) port (\d+) disabled$", config, re.M)
    # each in maintenance until warm, checked on its liveness port (not behind its script runs)
    assert servers == [("r1", "18081", "r1", "18091"), ("r2", "18082", "r2", "18092")]
    path.write_text(config.replace("balance roundrobin", "balance no-such-algorithm"))
    assert not haproxy_config_check(path)[0]  # the check really checks
    # A request body over one upload's limit, and an upload without a Content-Length, never reach a replica.
    assert f"gt {MAX_UPLOAD_BODY} }}" in config and "status 411" in config
    # A seat's websockets across the replicas: tracked by its cookie, refused past the replicas' own caps together.
    assert f"req.cook({SEAT_COOKIE}) table seat_sockets" in config
    assert f"sc1_conn_cur(seat_sockets) gt {2 * SOCKETS_PER_SEAT} }}" in config
    assert haproxy_setting(config, "bind") == "127.0.0.1:18080" and "ssl_fc }" in config  # no TLS: plain HTTP
    # serve.py --tls-cert: HTTPS with the PEM, the plain-HTTP port only redirects, HAProxy's cookie is Secure too.
    pem = tmp_path / "tls.pem"
    made = subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
                           "/CN=attention-lab.test", "-keyout", str(tmp_path / "key.pem"), "-out",
                           str(tmp_path / "cert.pem")], capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    pem.write_text((tmp_path / "cert.pem").read_text() + (tmp_path / "key.pem").read_text())
    tls = render_config("127.0.0.1:18443", [18081], tmp_path / "haproxy.sock", [18091], tls_cert=pem,
                        http_bind="127.0.0.1:18080")
    path.write_text(tls)
    valid, said = haproxy_config_check(path)
    assert valid, said
    assert re.findall(r"^\s*bind (.+)$", tls, re.M) == [f"127.0.0.1:18443 ssl crt {pem}", "127.0.0.1:18080"]
    assert re.search(r"http-request redirect location https://\S+:18443%\[capture.req.uri\] code 301 unless "
                     r"\{ ssl_fc \}", tls)
    assert haproxy_setting(tls, "cookie").endswith("httponly secure")
    assert "http-request set-header X-Forwarded-Proto https if { ssl_fc }" in tls
    path.write_text(tls.replace(str(pem), str(tmp_path / "missing.pem")))
    assert not haproxy_config_check(path)[0]  # HAProxy reads the certificate


def test_kubernetes_manifests_agree_with_haproxy_on_probe_affinity_and_secret(tmp_path):
    config = render_config("127.0.0.1:18080", [18081], tmp_path / "haproxy.sock", [18091])
    deployment = yaml.safe_load((KUBERNETES / "deployment.yaml").read_text())
    ingress = yaml.safe_load((KUBERNETES / "ingress.yaml").read_text())
    service = yaml.safe_load((KUBERNETES / "service.yaml").read_text())
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    # The probe: the same path HAProxy checks, on the warm-up-gated port of serving/replica.py.
    probe = container["readinessProbe"]["httpGet"]
    assert probe["path"] == HEALTH_PATH == haproxy_setting(config, "option httpchk").split()[1]
    assert ports[probe["port"]] == int(container["command"][container["command"].index("--ready-port") + 1])
    assert container["command"][:3] == ["python", "-m", "serving.replica"]
    # The livenessProbe asks whether the event loop turns (serving/liveness.py), not Streamlit's health, which waits
    # behind a burst of script runs: a busy pod is never restarted mid-class for being busy.
    assert container["livenessProbe"]["httpGet"] == {"path": "/alive", "port": "ready"}
    assert "--liveness-port" in container["command"]
    # Affinity: a cookie, with the same name as HAProxy's, and websocket-long timeouts.
    notes = ingress["metadata"]["annotations"]
    assert notes["nginx.ingress.kubernetes.io/affinity"] == "cookie"
    assert notes["nginx.ingress.kubernetes.io/session-cookie-name"] == STICKY_COOKIE
    assert haproxy_setting(config, "cookie").split()[0] == STICKY_COOKIE
    assert int(notes["nginx.ingress.kubernetes.io/proxy-read-timeout"]) >= 3600
    # The body limit lets one upload through (the file and its form) and no more than that, as HAProxy's does.
    body = notes["nginx.ingress.kubernetes.io/proxy-body-size"]
    assert body.endswith("m") and MAX_UPLOAD_BODY <= int(body[:-1]) * 2**20 < MAX_UPLOAD_BODY + 2**20
    # TLS at the ingress: a Secret named in spec.tls for the rule's host, plain HTTP redirected, affinity cookie Secure.
    assert ingress["spec"]["tls"][0]["hosts"] == [ingress["spec"]["rules"][0]["host"]]
    assert ingress["spec"]["tls"][0]["secretName"] in (DEPLOY / "README.md").read_text()
    assert notes["nginx.ingress.kubernetes.io/ssl-redirect"] == "true"
    assert notes["nginx.ingress.kubernetes.io/session-cookie-secure"] == "true"
    # The shared secret: every pod reads it from one Secret into the variable serve.py sets for its replicas.
    env = {e["name"]: e for e in container["env"]}
    secret = env[COOKIE_SECRET_ENV]["valueFrom"]["secretKeyRef"]
    readme = (DEPLOY / "README.md").read_text()
    assert f"kubectl create secret generic {secret['name']} --from-literal={secret['key']}=" in readme
    database = env["ATTENTION_LAB_DATABASE_URL"]["valueFrom"]["secretKeyRef"]  # the class store every pod shares
    assert f"kubectl create secret generic {database['name']} --from-literal={database['key']}=" in readme
    assert "cookieSecret" not in (ROOT / ".streamlit" / "config.toml").read_text()  # never written in the repo
    # The Service and Ingress reach the pods' Streamlit port.
    assert service["spec"]["selector"] == deployment["spec"]["selector"]["matchLabels"]
    assert ports[service["spec"]["ports"][0]["targetPort"]] == int(
        container["command"][container["command"].index("--port") + 1])
    backend = ingress["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]
    assert backend["name"] == service["metadata"]["name"]
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    assert "--require-hashes" in dockerfile and "requirements.lock" in dockerfile
    assert not re.search(r"apt-get install[^\n]*chromium", dockerfile) and "serving.replica" in dockerfile


def test_without_haproxy_serve_says_what_to_install(tmp_path):
    # This very interpreter (a venv's python run through a symlink elsewhere would lose the venv's packages), with a
    # PATH that holds nothing, so no haproxy.
    empty_bin = tmp_path / "bin"
    empty_bin.mkdir()
    done = subprocess.run([sys.executable, "serve.py", "--replicas", "1", "--run-dir", str(tmp_path / "run")],
                          cwd=ROOT, capture_output=True, text=True, timeout=60, env={**os.environ, "PATH": str(empty_bin)})
    assert done.returncode == 2
    assert "apt-get install haproxy" in done.stderr and "make run" in done.stderr
    assert not (tmp_path / "run").exists()  # nothing was started or written


@pytest.mark.slow
@pytest.mark.server
def test_kubernetes_replica_is_ready_only_after_its_warm_up():
    """serving/replica.py (the container's command): its readiness endpoint says 503 until the warm-up is done."""
    from serving.streamlit_client import http_get

    ports = []
    for _ in range(3):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            ports.append(s.getsockname()[1])
    process = subprocess.Popen([sys.executable, "-m", "serving.replica", "--port", str(ports[0]), "--ready-port",
                                str(ports[1]), "--liveness-port", str(ports[2]), "--address", "127.0.0.1"], cwd=ROOT,
                               stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        statuses = []
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and process.poll() is None:
            status = http_get(f"http://127.0.0.1:{ports[1]}{HEALTH_PATH}", timeout=5)[0]
            if status:
                statuses.append(status)
            if status == 200:
                break
            time.sleep(0.1)
        assert statuses and statuses[0] == 503 and statuses[-1] == 200, statuses
        # Streamlit itself was healthy well before the probe said ready: the warm-up is what it waited for.
        assert http_get(f"http://127.0.0.1:{ports[0]}{HEALTH_PATH}")[0] == 200
        assert http_get(f"http://127.0.0.1:{ports[1]}/alive")[0] == 200  # the livenessProbe: the event loop turns
        assert http_get(f"http://127.0.0.1:{ports[1]}/anything-else")[0] == 404  # only the probes' paths
    finally:
        process.send_signal(signal.SIGTERM)
        output = process.communicate(timeout=60)[0]
    assert "replica warm: home" in output and "transformer_reverse" in output, output[-2000:]
    assert process.returncode == 0


# --------------------------------------------------------------------------- one serve.py for the rest

class Classroom:
    """A running serve.py with two replicas on 127.0.0.1; its output is collected by a thread."""

    def __init__(self, run_dir: Path):
        self.run_dir = run_dir
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.lines: list[str] = []
        self.data = run_dir / "data"  # the class database and teacher password of this serve.py alone
        environment = {**os.environ, "ATTENTION_LAB_DATA": str(self.data)}
        environment.pop("ATTENTION_LAB_TEACHER_PASSWORD", None)
        self.process = subprocess.Popen(
            [sys.executable, "serve.py", "--replicas", "2", "--port", str(self.port), "--host", "127.0.0.1",
             "--run-dir", str(run_dir)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            env=environment)
        threading.Thread(target=lambda: self.lines.extend(self.process.stdout), daemon=True).start()

    def wait_for(self, pattern: str, timeout: float, after: int = 0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in self.lines[after:]:
                if re.search(pattern, line):
                    return line
            if self.process.poll() is not None:
                pytest.fail(f"serve.py exited ({self.process.returncode}):\n{''.join(self.lines[-30:])}")
            time.sleep(0.2)
        pytest.fail(f"no line matching {pattern!r} within {timeout:.0f} s:\n{''.join(self.lines[-30:])}")

    def state(self) -> dict:
        return json.loads((self.run_dir / "serve.json").read_text())

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(timeout=60)


@pytest.fixture(scope="module")
def classroom(tmp_path_factory):
    need_haproxy()
    room = Classroom(tmp_path_factory.mktemp("serve"))
    try:
        room.wait_for(r"ready: http://", 240)
        yield room
    finally:
        room.stop()


def student(url: str, cookies: dict | None = None) -> StreamlitClient:
    return StreamlitClient(url, cookies)


async def open_view(client: StreamlitClient, path: str, query: str = "") -> None:
    await client.connect(path)
    outcome = await client.rerun(client.open_page_msg(path, query), 120, path)
    assert outcome.ok, outcome.problems


@pytest.mark.slow
def test_students_stick_to_warm_replicas_and_both_replicas_take_students(classroom):
    assert {r["state"] for r in classroom.state()["replicas"].values()} == {"ready"}
    assert all(s.startswith("UP") for s in server_states(classroom.run_dir / "haproxy.sock").values())
    warm_lines = [line for line in classroom.lines if "warm after" in line]
    assert len(warm_lines) == 2 and all("attention" in line and "positional" in line for line in warm_lines)

    async def scenario():
        clients = [student(classroom.url) for _ in range(4)]
        for client in clients:
            await open_view(client, "attention", "kind=cross")
        replicas = [c.cookies.get(STICKY_COOKIE) for c in clients]
        for client in clients:  # every later request of a student goes to its own replica
            assert client.set_text("sentence", "she is a student") is None
            outcome = await client.rerun(client.widget_rerun_msg(), 60)
            assert outcome.ok, outcome.problems
            assert client.cookies.get(STICKY_COOKIE) == replicas[clients.index(client)]
            await client.close()
        return replicas

    replicas = run_in_own_loop(scenario())
    assert set(replicas) == {"r1", "r2"}, replicas  # roundrobin spreads a class over both


@pytest.mark.slow
def test_killed_replica_students_reconnect_to_the_same_view_and_it_rejoins_warm(classroom):
    view = "kind=cross&layer=1&head=3&sentence=she+is+a+student"

    async def scenario():
        clients = [student(classroom.url) for _ in range(4)]
        for client in clients:
            await open_view(client, "attention", view)
        on = {c.cookies[STICKY_COOKIE] for c in clients}
        assert on == {"r1", "r2"}
        victim = clients[0].cookies[STICKY_COOKIE]
        before = classroom.state()["replicas"][victim]
        lines_before = len(classroom.lines)
        os.kill(before["pid"], signal.SIGKILL)
        for client in clients:
            if client.cookies[STICKY_COOKIE] == victim:
                deadline = time.monotonic() + 10
                while not client.closed and time.monotonic() < deadline:
                    await asyncio.sleep(0.05)
                assert client.closed, "the dead replica's websocket did not close"
                # As the front end: a new session with the same cookies, on the same URL.
                again = student(classroom.url, client.cookies)
                await open_view(again, client.page_path, client.query_string)
                assert again.cookies[STICKY_COOKIE] != victim
                assert again.query_string == client.query_string  # the same view, written back by the new replica
                assert not any("lost" in text for text in again.run_texts)
                await again.close()
            else:  # the other replica's students notice nothing: same websocket, same session
                assert not client.closed
                assert client.choose_option("attn_head", lambda options: options[0]) is None
                outcome = await client.rerun(client.widget_rerun_msg(client.fragment_id("attn_head")), 60)
                assert outcome.ok, outcome.problems
                await client.close()
        return victim, before, lines_before

    victim, before, lines_before = run_in_own_loop(scenario())
    classroom.wait_for(rf"{victim} \(pid \d+, port {before['port']}\) warm after", 180, after=lines_before)
    after = classroom.state()["replicas"][victim]
    assert after["pid"] != before["pid"] and after["restarts"] == before["restarts"] + 1 and after["state"] == "ready"
    deadline = time.monotonic() + 10
    while not all(s.startswith("UP") for s in server_states(classroom.run_dir / "haproxy.sock").values()):
        assert time.monotonic() < deadline, server_states(classroom.run_dir / "haproxy.sock")
        time.sleep(0.2)


def wait_all_ready(classroom: Classroom, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while not all(r["state"] == "ready" for r in classroom.state()["replicas"].values()):
        assert time.monotonic() < deadline, classroom.state()
        time.sleep(0.5)


def replica_of(page) -> str:
    return next(c["value"] for c in page.context.cookies() if c["name"] == STICKY_COOKIE)


def wait_for_new_replica(page, old: str, timeout: float = 30) -> float:
    """Seconds until the browser holds a cookie for another replica (it reconnected through HAProxy)."""
    start = time.monotonic()
    while replica_of(page) == old:
        assert time.monotonic() - start < timeout, "the browser did not move to a live replica"
        page.wait_for_timeout(100)
    return time.monotonic() - start


@pytest.mark.slow
def test_upload_and_download_through_the_proxy(page, classroom):
    from playwright.sync_api import expect

    from tests.browser_steps import no_exception, wait_idle

    page.goto(f"{classroom.url}/train")
    wait_idle(page)
    checkpoint = ROOT / "assets" / "checkpoints" / "transformer_reverse"
    page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(
        [str(checkpoint.with_suffix(".safetensors")), str(checkpoint.with_suffix(".json"))])
    page.get_by_role("button", name="Load these files").click()  # the files went to this session's replica
    expect(page.get_by_text(re.compile(r"Loaded as uploaded-[0-9a-f]{8}"))).to_be_visible()
    page.goto(f"{classroom.url}/attention?sentence=i+am+a+student&kind=encoder_self")
    wait_idle(page)
    button = page.get_by_role("button", name=re.compile(r"^(download\s*)?CSV$", re.I)).first
    with page.expect_download() as info:
        button.click()  # served from the media store of the replica that holds the session
    rows = open(info.value.path(), encoding="utf-8-sig").read().splitlines()
    assert rows[0].split(",")[1:] == [f"{j}: {t}" for j, t in enumerate(["i", "am", "a", "student", "<eos>"])]
    assert replica_of(page) in {"r1", "r2"}
    no_exception(page)


@pytest.mark.slow
def test_browser_on_a_killed_replica_returns_to_the_same_view_and_hears_its_training_is_lost(page, classroom):
    from playwright.sync_api import expect

    from i18n import translate
    from tests.browser_steps import no_exception, wait_idle

    wait_all_ready(classroom)
    page.goto(f"{classroom.url}/train")
    wait_idle(page)
    page.get_by_role("button", name="Start training").click()
    expect(page).to_have_url(re.compile(r"training=my-transformer_en-fr-\d+"))
    page.get_by_test_id("stSidebar").get_by_role("button", name=re.compile("Link to this view")).click()
    link = page.get_by_test_id("stCode").last
    expect(link).to_contain_text("/train")
    assert "training=" not in link.inner_text()  # the marker belongs to this tab, not to links it shares
    page.keyboard.press("Escape")
    victim = replica_of(page)
    os.kill(classroom.state()["replicas"][victim]["pid"], signal.SIGKILL)
    wait_for_new_replica(page, victim)
    lost = translate("en", "serve.training_lost", model="MODEL").split("MODEL**")[1].strip()[:30]  # after the bold id
    expect(page.get_by_text(lost, exact=False)).to_be_visible()
    no_exception(page)
    page.screenshot(path=SCREENSHOT_DIR / "serve_training_lost.png")

    # The view is in the URL: a student on the attention page lands on the same head after a crash.
    wait_all_ready(classroom)
    # An old, 0-based link (no v=): the app rewrites it as the same head counted from 1, before and after the crash.
    page.goto(f"{classroom.url}/attention?kind=cross&layer=1&head=3&sentence=she+is+a+student")
    wait_idle(page)
    heading = page.get_by_role("heading", name="Transformer attention")
    expect(heading).to_be_visible()
    victim = replica_of(page)
    os.kill(classroom.state()["replicas"][victim]["pid"], signal.SIGKILL)
    wait_for_new_replica(page, victim)
    wait_idle(page)
    expect(page.locator(".js-plotly-plot").first).to_be_visible()
    expect(page).to_have_url(re.compile(r"kind=cross&layer=2&v=2&head=4"))
    expect(page.get_by_test_id("stSidebar").get_by_label("Sentence", exact=True)).to_have_value("she is a student")
    no_exception(page)
    page.screenshot(path=SCREENSHOT_DIR / "serve_after_failover.png")


def _process_groups_alive(groups: set[int]) -> list[str]:
    alive = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z" and int(fields[2]) in groups:  # state, ppid, pgrp
            alive.append(f"{stat.parent.name} {(stat.parent / 'cmdline').read_bytes()[:80]!r}")
    return alive


def start_class(classroom: Classroom) -> ClassTeacher:
    """A class in serve.py's database, as the Teacher page starts one (the lesson's text kept with it)."""
    from classroom.store import DB_NAME, ClassStore

    return ClassStore(classroom.data / DB_NAME).create_class(
        "intro", lesson_source=(ROOT / "lessons" / "intro.toml").read_text(encoding="utf-8"))


async def join(client: StreamlitClient, path: str, query: str) -> None:
    """Open the join link (or a student's address after it): the app switches to the stop's page by itself."""
    await client.connect(path)
    outcome = await client.rerun(client.open_page_msg(path, query), 120)
    assert outcome.ok, outcome.problems


@pytest.mark.slow
def test_a_replica_killed_mid_burst_counts_every_student_once(classroom):
    """24 students on both replicas answer within 3 s; the replica holding most of them is killed 1.5 s in. Its
    students reconnect with their cookies (as Streamlit's front end does) and open their address again: whoever
    was counted sees their answer, whoever was not is asked and answers. Exactly one answer per student."""
    import random

    wait_all_ready(classroom)
    teacher = start_class(classroom)
    code = teacher.code
    rng = random.Random(0)

    async def answer(client: StreamlitClient) -> None:
        assert client.choose_option("q_intro_1_choice", rng.choice) is None
        outcome = await client.rerun(client.click_msg(client.button_id("Answer")), 60)
        assert outcome.ok, outcome.problems

    async def scenario():
        clients = [student(classroom.url) for _ in range(24)]
        for client in clients:
            await join(client, "", f"class={code}")
            assert client.find("q_intro_1_choice") is not None, client.run_texts[-5:]
        on = [c.cookies[STICKY_COOKIE] for c in clients]
        victim = max(set(on), key=on.count)
        pid = classroom.state()["replicas"][victim]["pid"]

        async def late_answer(client):
            await asyncio.sleep(rng.uniform(0, 3))
            try:
                await answer(client)
            except (AssertionError, TimeoutError, ConnectionError, OSError):
                pass  # in flight on the replica that died: the reconnect below settles it

        async def kill():
            await asyncio.sleep(1.5)
            os.kill(pid, signal.SIGKILL)

        await asyncio.gather(kill(), *(late_answer(c) for c in clients))
        reconnected = 0
        for index, client in enumerate(clients):
            if client.cookies[STICKY_COOKIE] != victim:
                continue
            deadline = time.monotonic() + 10
            while not client.closed and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            again = student(classroom.url, client.cookies)  # the same seat cookie: the same student
            await join(again, client.page_path, client.query_string)
            reconnected += 1
            if again.find("q_intro_1_choice") is not None:  # not counted before the crash: asked, answers now
                await answer(again)
            assert any(t.startswith(("Right", "Your answer")) for t in again.run_texts), again.run_texts[-5:]
            clients[index] = again
        for client in clients:
            if client.find("q_intro_1_choice") is not None:  # an answer lost on the live replica would show here
                await answer(client)
            await client.close()
        return victim, reconnected

    victim, reconnected = run_in_own_loop(scenario())
    assert reconnected >= 12  # the victim held at least half of them
    results = teacher.results("intro:1")
    assert results.answered == 24 and sum(results.counts.values()) == 24, results
    wait_all_ready(classroom)  # the killed replica is back and warm for the next test


@pytest.mark.slow
def test_the_teacher_keeps_her_class_when_her_replica_dies(browser, classroom):
    """Chromium: the teacher's replica is killed. Her page reconnects to the other replica, her browser takes the
    class back by itself (no password typed), and her Next still moves the student."""
    from playwright.sync_api import expect

    from tests.browser_steps import no_exception, wait_idle

    wait_all_ready(classroom)
    password = (classroom.data / "teacher-password").read_text().strip()
    teacher_context, student_context = browser.new_context(), browser.new_context()
    try:
        teacher = teacher_context.new_page()
        teacher.goto(f"{classroom.url}/teacher")
        wait_idle(teacher)
        teacher.locator(".st-key-class_start_password input").fill(password)  # the start form's
        teacher.get_by_role("button", name="Start a class").click()
        code_value = teacher.get_by_test_id("stMetric").filter(has_text="Class code").get_by_test_id("stMetricValue")
        expect(code_value).to_have_text(re.compile(r"^[A-Z2-9]{6}$"))
        code = code_value.inner_text()
        student_page = student_context.new_page()
        student_page.goto(f"{classroom.url}/?class={code}")
        wait_idle(student_page)
        expect(student_page.get_by_text("stop 1 of")).to_be_visible()
        victim = replica_of(teacher)
        os.kill(classroom.state()["replicas"][victim]["pid"], signal.SIGKILL)
        wait_for_new_replica(teacher, victim)
        expect(code_value).to_have_text(code, timeout=30000)  # her class, on the other replica
        wait_idle(teacher)
        teacher.get_by_role("button", name="Next stop").click()
        expect(teacher.get_by_text("The class is at stop 2 of")).to_be_visible(timeout=30000)
        try:
            expect(student_page.get_by_text("stop 2 of")).to_be_visible(timeout=30000)
        finally:
            teacher.screenshot(path=ROOT / "tests" / "screenshots" / "serve_teacher_after_failover.png")
            student_page.screenshot(path=ROOT / "tests" / "screenshots" / "serve_student_after_failover.png")
        no_exception(teacher)
        no_exception(student_page)
    finally:
        teacher_context.close()
        student_context.close()
    wait_all_ready(classroom)


@pytest.mark.slow
def test_sigterm_stops_every_process_serve_started(classroom):
    state = classroom.state()
    groups = {r["pid"] for r in state["replicas"].values()} | {state["haproxy_pid"]}  # each its own group
    assert _process_groups_alive(groups)
    classroom.process.send_signal(signal.SIGTERM)
    assert classroom.process.wait(timeout=60) == 0
    assert _process_groups_alive(groups) == []
    assert not (classroom.run_dir / "serve.json").exists()
    assert "stopped: every replica and HAProxy" in "".join(classroom.lines)
