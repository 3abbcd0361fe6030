"""Replicas of the app behind HAProxy, all on this machine's loopback, with the very deploy/haproxy.cfg of Compose.

deploy/haproxy.cfg finds its replicas as Docker does it: the A records of one DNS name (`server-template`
with a `resolvers` section).  Here the same happens on loopback:

- each replica is `streamlit run app.py` on its own loopback address (127.0.0.2, 127.0.0.3, ...) and one
  shared port, as containers share a port on their own addresses;
- `NameServer` is a tiny DNS server on 127.0.0.1 that answers the name `app` with those addresses (A
  records; anything else: no such name);
- haproxy runs in the foreground on `-f deploy/haproxy.cfg`, with GELU_BIND, GELU_DNS and GELU_APP set for
  the three above (the file's defaults are Compose's).

`Balancer` is a context manager: inside, `base_url` is HAProxy's address and every replica has answered
through it; on the way out (or on any failure) HAProxy, the name server and every replica are stopped.
Nothing here sends traffic anywhere but 127.0.0.0/8.
"""

from __future__ import annotations

import os
import shutil
import socket
import struct
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
from contextlib import ExitStack
from http.cookies import SimpleCookie
from pathlib import Path

from harness.browser import ROOT, Server, free_port, stop_process

HAPROXY = os.environ.get("GELU_HAPROXY") or shutil.which("haproxy") or "/usr/sbin/haproxy"
CONFIG = ROOT / "deploy" / "haproxy.cfg"
COOKIE = "GELU_REPLICA"  # deploy/haproxy.cfg's sticky cookie
APP_NAME = "app"


def haproxy_missing() -> str | None:
    """Why HAProxy cannot be run here, or None."""
    return None if Path(HAPROXY).exists() else f"no haproxy at {HAPROXY} (apt-get install -y haproxy)"


# --- a DNS server for one name ---------------------------------------------------------------------


def dns_answer(query: bytes, records: dict[str, list[str]]) -> bytes | None:
    """The answer to one DNS query (RFC 1035): A records from `records`, NXDOMAIN for unknown names, and an
    empty answer for other types of a known name (HAProxy also asks for AAAA).  None for what is no query."""
    if len(query) < 12:
        return None
    ident, flags, qdcount = struct.unpack("!HHH", query[:6])
    if flags & 0x8000 or qdcount != 1:
        return None
    i, labels = 12, []
    while i < len(query) and query[i]:
        length = query[i]
        labels.append(query[i + 1 : i + 1 + length].decode("ascii", "replace"))
        i += 1 + length
    if i + 5 > len(query):
        return None
    qtype, qclass = struct.unpack("!HH", query[i + 1 : i + 5])
    question = query[12 : i + 5]
    name = ".".join(labels).lower()
    answers = []
    if name in records and qtype == 1 and qclass == 1:
        for address in records[name]:
            # a pointer to the name at offset 12, type A, class IN, TTL 5 s, 4 bytes of address
            answers.append(struct.pack("!HHHIH", 0xC00C, 1, 1, 5, 4) + socket.inet_aton(address))
    rcode = 0 if name in records else 3
    header = struct.pack("!HHHHHH", ident, 0x8180 | (flags & 0x0100) | rcode, 1, len(answers), 0, 0)
    return header + question + b"".join(answers)


class NameServer:
    """A DNS server on 127.0.0.1 (UDP, a free port) answering `records` ({"app": ["127.0.0.2", ...]})."""

    def __init__(self, records: dict[str, list[str]]):
        self.records = {k.lower(): v for k, v in records.items()}
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.address = f"127.0.0.1:{self.sock.getsockname()[1]}"
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="gelu-dns", daemon=True)

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                data, peer = self.sock.recvfrom(4096)
            except (TimeoutError, OSError):
                continue
            answer = dns_answer(data, self.records)
            if answer is not None:
                self.sock.sendto(answer, peer)

    def __enter__(self) -> NameServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        self.sock.close()


# --- process figures from /proc --------------------------------------------------------------------


def cpu_seconds(pid: int) -> float:
    """User + system CPU time a process has used so far."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def processes() -> dict[int, tuple[int, list[str]]]:
    """Every live process: pid -> (its parent's pid, the fields of /proc/<pid>/stat after the name)."""
    table = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:  # gone meanwhile
                continue
            fields = stat[stat.rindex(")") + 2 :].split()
            table[int(entry.name)] = (int(fields[1]), fields)
    return table


def descends(pid: int, root: int, table: dict[int, tuple[int, list[str]]], exclude: int | None = None) -> bool:
    """Whether ``pid`` is ``root`` or under it in ``table`` (``processes()``), and not under ``exclude``."""
    while pid > 1:
        if pid == exclude:
            return False
        if pid == root:
            return True
        pid = table[pid][0] if pid in table else 0
    return False


def tree_cpu_seconds(root: int, exclude: int | None = None) -> float:
    """User + system CPU time of ``root`` and every live descendant so far (each with its reaped children's; a
    closed browser's renderers are not reaped that way, see ``children_cpu_seconds``), leaving out the subtree of
    ``exclude`` (a server we started)."""
    table = processes()
    ticks = sum(sum(int(f) for f in fields[11:15]) for pid, (_, fields) in table.items()
                if descends(pid, root, table, exclude))
    return ticks / os.sysconf("SC_CLK_TCK")


def children_cpu_seconds(exclude: int | None = None) -> float:
    """User + system CPU time so far of this process's descendants (a benchmark's Playwright driver and Chromium),
    leaving out the subtree of ``exclude`` (the server it started).  Read it while the browser is open: Chromium's
    renderers are not reaped into a parent's total, so a closed browser's renderers no longer count."""
    return tree_cpu_seconds(os.getpid(), exclude=exclude) - cpu_seconds(os.getpid())


# --- the balancer ----------------------------------------------------------------------------------


def _shared_port(hosts: list[str]) -> int:
    """A port free on every one of `hosts` (checked by binding each)."""
    for _ in range(50):
        port = free_port()
        try:
            for host in hosts:
                with socket.socket() as sock:
                    sock.bind((host, port))
            return port
        except OSError:
            continue
    raise RuntimeError(f"no port free on all of {hosts}")


class Balancer:
    """`replicas` × `streamlit run <script>` behind `haproxy -f deploy/haproxy.cfg`, on loopback.

    `base_url` is HAProxy's; `servers` the replicas (harness.browser.Server, each with its own log);
    `log()` HAProxy's log (one line per request: `option httplog`).
    """

    def __init__(self, replicas: int = 2, app_dir: Path = ROOT, script: str = "app.py", config: Path = CONFIG,
                 extra_args: tuple[str, ...] = ()):  # fmt: skip
        if replicas < 1:
            raise ValueError("at least one replica")
        self.hosts = [f"127.0.0.{2 + i}" for i in range(replicas)]
        self.app_dir, self.script, self.config, self.extra_args = Path(app_dir), script, Path(config), extra_args
        self.servers: list[Server] = []
        self.proc: subprocess.Popen | None = None
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.log_path = Path(tempfile.mkstemp(prefix="gelu-haproxy-", suffix=".log")[1])
        self._stack = ExitStack()

    def start(self, timeout_s: float = 90.0) -> Balancer:
        try:
            missing = haproxy_missing()
            if missing:
                raise RuntimeError(missing)
            port = _shared_port(self.hosts)
            self.servers = [Server(self.app_dir, self.script, self.extra_args, host=h, port=port) for h in self.hosts]
            for server in self.servers:
                self._stack.enter_context(server)
            dns = self._stack.enter_context(NameServer({APP_NAME: self.hosts}))
            env = {**os.environ, "GELU_BIND": f"127.0.0.1:{self.port}", "GELU_DNS": dns.address,
                   "GELU_APP": f"{APP_NAME}:{port}"}  # fmt: skip
            with open(self.log_path, "wb") as log:
                self.proc = subprocess.Popen(
                    [HAPROXY, "-db", "-f", str(self.config)], stdout=log, stderr=subprocess.STDOUT, env=env
                )
            self._stack.callback(self._stop_haproxy)
            self.wait_for_replicas(timeout_s)
            return self
        except BaseException:
            self.stop()
            raise

    def wait_for_replicas(self, timeout_s: float) -> None:
        """Until a fresh visitor (no cookie) has been sent to every replica and found it ready (/readyz: start-up
        imports done, as HAProxy's own check asks). Not Streamlit's /_stcore/health, which says "ok" seconds
        earlier: HAProxy marks a replica UP once DNS names it, and its first check, failing on a replica still
        importing torch, would then take it DOWN under a test that had already begun (uploads answered 503)."""
        seen: set[str] = set()
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"haproxy exited with {self.proc.returncode}:\n{self.log()[-3000:]}")
            try:
                with urllib.request.urlopen(f"{self.base_url}/readyz", timeout=2) as resp:
                    cookie = SimpleCookie()
                    for header in resp.headers.get_all("Set-Cookie") or []:
                        cookie.load(header)
                    if resp.status == 200 and COOKIE in cookie:
                        seen.add(cookie[COOKIE].value)
            except (OSError, urllib.error.URLError):
                pass
            if len(seen) >= len(self.servers):
                return
            time.sleep(0.2)
        raise RuntimeError(f"HAProxy reached {len(seen)} of {len(self.servers)} replicas in {timeout_s} s:\n"
                           f"{self.log()[-3000:]}")  # fmt: skip

    def _stop_haproxy(self) -> None:
        stop_process(self.proc)

    def stop(self) -> None:
        self._stack.close()  # HAProxy first, then the name server, then the replicas (reverse order)

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def pids(self) -> dict[str, int]:
        """Every process serving the class: the replicas and HAProxy."""
        found = {f"replica {s.host}": s.proc.pid for s in self.servers if s.proc}
        if self.proc:
            found["haproxy"] = self.proc.pid
        return found

    def __enter__(self) -> Balancer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
        self.log_path.unlink(missing_ok=True)
