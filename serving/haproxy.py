"""HAProxy in front of the replicas: the generated configuration, its check, and the runtime API.

The template is deploy/haproxy.cfg.template (string.Template placeholders); serve.py writes the result where a
person can read it (run/haproxy.cfg). Each replica is a `server rN 127.0.0.1:PORT cookie rN disabled` line: it
starts in maintenance and serve.py enables it over the stats socket once it is warm. Its health check goes to the
replica's liveness port (`port N`: serving/liveness.py), not through Streamlit's event loop, so a burst of script
runs cannot get a working replica marked down.
"""
from __future__ import annotations

import shutil
import socket
import subprocess
from pathlib import Path
from string import Template

from serving.seat import SEAT_COOKIE
from serving.socket_caps import SOCKETS_PER_SEAT
from serving.upload_gate import MAX_UPLOAD_BODY

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = ROOT / "deploy" / "haproxy.cfg.template"
BACKEND = "app"
STICKY_COOKIE = "attention_lab_replica"  # the cookie HAProxy inserts: the replica's name (r1, r2, ...)
HEALTH_PATH = "/_stcore/health"  # Streamlit's own health endpoint; Kubernetes probes the same path
# Streamlit reads server.cookieSecret from this variable; every replica must have the same value (XSRF cookies).
COOKIE_SECRET_ENV = "STREAMLIT_SERVER_COOKIE_SECRET"
INSTALL_HINT = ("serve.py needs HAProxy as the load balancer in front of the Streamlit replicas, and `haproxy` is not "
                "on PATH.\nInstall Debian's package:  sudo apt-get install haproxy\n(on other systems: your package "
                "manager's haproxy, 2.4 or newer). One teacher without it: `make run` (streamlit run asgi.py).")


def replica_name(index: int) -> str:
    return f"r{index + 1}"


def render_config(bind: str, replica_ports: list[int], stats_socket: Path, liveness_ports: list[int],
                  tls_cert: Path | None = None, http_bind: str | None = None) -> str:
    """`liveness_ports[i]`: where replica i answers HAProxy's health check (ATTENTION_LAB_LIVENESS_PORT).
    With `tls_cert` (a PEM holding the certificate and its key, as HAProxy reads it) `bind` serves HTTPS, and
    `http_bind`, if given, answers plain HTTP with a redirect to the same host on `bind`'s port."""
    servers = "\n".join(f"    server {replica_name(i)} 127.0.0.1:{port} cookie {replica_name(i)} port {check} disabled"
                        for i, (port, check) in enumerate(zip(replica_ports, liveness_ports, strict=True)))
    binds, redirect = f"    bind {bind}", ""
    if tls_cert is not None:
        binds = f"    bind {bind} ssl crt {tls_cert}" + (f"\n    bind {http_bind}" if http_bind else "")
        https_port = bind.rsplit(":", 1)[1]
        # The Host header without its port (the plain-HTTP one), then HTTPS's port, then the path and query.
        redirect = ("    http-request redirect location https://%[req.hdr(host),regsub(:[0-9]+$,)]:"
                    f"{https_port}%[capture.req.uri] code 301 unless {{ ssl_fc }}")
    return Template(TEMPLATE.read_text()).substitute(
        bind=bind, binds=binds, https_redirect=redirect, replicas=len(replica_ports), servers=servers,
        stats_socket=stats_socket, cookie=STICKY_COOKIE, cookie_secure=" secure" if tls_cert else "",
        health_path=HEALTH_PATH, max_body=MAX_UPLOAD_BODY, seat_cookie=SEAT_COOKIE,
        seat_sockets=SOCKETS_PER_SEAT * max(2, len(replica_ports)))


def haproxy_binary() -> str | None:
    return shutil.which("haproxy")


def haproxy_config_check(path: Path) -> tuple[bool, str]:
    """`haproxy -c -f path`: (valid, what haproxy said)."""
    done = subprocess.run([haproxy_binary() or "haproxy", "-c", "-f", str(path)], capture_output=True, text=True)
    return done.returncode == 0, (done.stdout + done.stderr).strip()


def runtime_command(stats_socket: Path, command: str, timeout: float = 5.0) -> str:
    """One command on HAProxy's runtime API (the stats socket), e.g. 'set server app/r1 state ready'."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.settimeout(timeout)
        connection.connect(str(stats_socket))
        connection.sendall(command.encode() + b"\n")
        chunks = []
        while chunk := connection.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks).decode()


def set_replica_state(stats_socket: Path, name: str, state: str) -> None:
    """state: 'ready' (takes students) or 'maint' (takes none; its students go to another replica)."""
    answer = runtime_command(stats_socket, f"set server {BACKEND}/{name} state {state}").strip()
    if answer:
        raise RuntimeError(f"haproxy refused 'set server {BACKEND}/{name} state {state}': {answer}")


def server_states(stats_socket: Path) -> dict[str, str]:
    """Replica name -> HAProxy's status column (UP, DOWN, MAINT, ...) from 'show stat'."""
    lines = runtime_command(stats_socket, "show stat").splitlines()
    header = lines[0].lstrip("# ").split(",")
    states = {}
    for line in lines[1:]:
        row = dict(zip(header, line.split(",")))
        if row.get("pxname") == BACKEND and row.get("svname") not in ("FRONTEND", "BACKEND", None):
            states[row["svname"]] = row["status"]
    return states
