"""deploy/: the files parse, agree with the app's own settings, and HAProxy enforces what haproxy.cfg promises.

References:
- .streamlit/config.toml's server.maxUploadSize (MB, Streamlit counts 2**20 bytes): HAProxy's and the
  Ingress' body caps are that plus 1 MiB for the multipart envelope;
- HAProxy's own parser (`haproxy -c`), with Compose's environment (the file's defaults) and with the loopback
  one harness/balancer.py sets;
- a running HAProxy on deploy/haproxy.cfg in front of one replica (harness.balancer): its log says whether a
  request reached a replica (`streamlit/app1`) or was answered by HAProxy itself (`<NOSRV>`);
- the Dockerfile against the imports of app.py and every module it runs: each local package is copied.

Where haproxy is not installed the live tests are skipped, unless GELU_E2E_REQUIRED=1 (CI), where that fails.
"""

from __future__ import annotations

import ast
import asyncio
import os
import re
import socket
import subprocess
import time
import tomllib

import pytest
import yaml

from harness import balancer
from harness.browser import ROOT
from harness.streamlit_client import Session, cookie_header, run_sync
from tests.conftest import needs_haproxy

DEPLOY = ROOT / "deploy"
HAPROXY_CFG = (DEPLOY / "haproxy.cfg").read_text()
MAX_UPLOAD_MB = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())["server"]["maxUploadSize"]
UPLOADS_AT_ONCE = 8
RATE = 8000  # requests per 10 s from one address


# --- the files -------------------------------------------------------------------------------------


def test_the_body_caps_are_the_upload_cap_plus_the_envelope():
    cap = int(re.search(r"deny_status 413 if .*content-length\) gt (\d+)", HAPROXY_CFG).group(1))
    assert cap == (MAX_UPLOAD_MB + 1) * 2**20
    ingress = [d for d in yaml.safe_load_all((DEPLOY / "kubernetes.yaml").read_text()) if d["kind"] == "Ingress"][0]
    assert ingress["metadata"]["annotations"]["nginx.ingress.kubernetes.io/proxy-body-size"] == f"{MAX_UPLOAD_MB + 1}m"
    assert re.search(rf"sc_trackers\(1\) gt {UPLOADS_AT_ONCE}\b", HAPROXY_CFG)
    assert re.search(rf"sc_http_req_rate\(0\) gt {RATE}\b", HAPROXY_CFG)


def test_compose_runs_the_repository_image_behind_this_haproxy_cfg():
    compose = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())
    app, proxy = compose["services"]["app"], compose["services"]["haproxy"]
    assert app["build"] == {"context": "..", "dockerfile": "Dockerfile"} and (DEPLOY / ".." / "Dockerfile").exists()
    assert "ports" not in app, "replicas are reached through HAProxy only"
    assert "./haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro" in proxy["volumes"]
    assert any(p.endswith(":8080") for p in proxy["ports"])  # haproxy.cfg's default bind
    # the service name and port are haproxy.cfg's defaults for the replicas' DNS name
    assert '"${GELU_APP-app:8501}"' in HAPROXY_CFG and '"${GELU_DNS-127.0.0.11:53}"' in HAPROXY_CFG
    assert app["expose"] == ["8501"]


def test_the_kubernetes_manifest_probes_health_and_keeps_students_on_their_pod():
    every = list(yaml.safe_load_all((DEPLOY / "kubernetes.yaml").read_text()))
    assert {d["kind"] for d in every} == {"Deployment", "Service", "Ingress", "PersistentVolumeClaim"}
    docs = {d["kind"]: d for d in every if d["metadata"]["name"] == "gelu-explorer"}  # the app's, not Redis's
    pod = docs["Deployment"]["spec"]["template"]["spec"]["containers"][0]
    assert pod["readinessProbe"]["httpGet"]["path"] == "/readyz"  # after the start-up imports
    assert pod["livenessProbe"]["httpGet"]["path"] == "/_stcore/health"
    assert pod["ports"][0]["containerPort"] == 8501
    labels = docs["Deployment"]["spec"]["template"]["metadata"]["labels"]
    assert docs["Deployment"]["spec"]["selector"]["matchLabels"] == labels == docs["Service"]["spec"]["selector"]
    notes = docs["Ingress"]["metadata"]["annotations"]
    assert notes["nginx.ingress.kubernetes.io/affinity"] == "cookie"
    assert int(notes["nginx.ingress.kubernetes.io/proxy-read-timeout"]) >= 3600  # a lesson's open websocket
    backend = docs["Ingress"]["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]
    assert backend["name"] == docs["Service"]["metadata"]["name"]



def test_the_replicas_share_one_class_poll_store():
    """Reference: hosting.classpoll.make_store, which reads GELU_CLASS_STORE; the Redis it names is a service
    of the same file (Compose's service name, Kubernetes' Service name and port)."""
    from hosting import classpoll

    compose = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())
    url = compose["services"]["app"]["environment"][classpoll.ENV]
    assert isinstance(classpoll.make_store(url), classpoll.RedisStore) and url.startswith("redis://redis:6379/")
    assert "redis" in compose["services"] and "redis" in compose["services"]["app"]["depends_on"]
    assert "ports" not in compose["services"]["redis"], "Redis is reached by the replicas only"
    every = list(yaml.safe_load_all((DEPLOY / "kubernetes.yaml").read_text()))
    app = next(d for d in every if d["kind"] == "Deployment" and d["metadata"]["name"] == "gelu-explorer")
    env = {e["name"]: e["value"] for e in app["spec"]["template"]["spec"]["containers"][0]["env"]}
    host, port = env[classpoll.ENV].removeprefix("redis://").split("/")[0].split(":")
    service = next(d for d in every if d["kind"] == "Service" and d["metadata"]["name"] == host)
    assert service["spec"]["ports"][0]["port"] == int(port)
    assert any(d["kind"] == "Deployment" and d["spec"]["selector"]["matchLabels"] == service["spec"]["selector"]
               for d in every)

def test_the_poll_store_persists_alike_in_compose_and_kubernetes():
    """Reference: Redis's own options.  An append-only file fsynced before each answer (appendfsync always: an
    answer a student was told is counted is on disk), nothing evicted (a full Redis refuses, it never drops a
    class), in a directory on a volume that outlives the container (Compose: a named volume; Kubernetes: a
    PersistentVolumeClaim); Kubernetes runs the very options Compose does.  The replicas take a client's address
    from X-Forwarded-For (the per-network bounds of hosting.classpoll.Starts)."""
    from hosting import classpoll

    compose = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())
    redis, app = compose["services"]["redis"], compose["services"]["app"]
    command = redis["command"]
    options = dict(zip(command[1::2], command[2::2], strict=True))
    assert command[0] == "redis-server" and options["--appendonly"] == "yes" and options["--appendfsync"] == "always"
    assert options["--maxmemory-policy"] == "noeviction" and options["--save"] == ""
    volume, path = redis["volumes"][0].split(":")[:2]
    assert path == options["--dir"] and volume in compose["volumes"]
    assert app["environment"][classpoll.BEHIND_PROXY_ENV] == "1"
    every = list(yaml.safe_load_all((DEPLOY / "kubernetes.yaml").read_text()))
    pod = next(d for d in every if d["kind"] == "Deployment" and d["metadata"]["name"] == "gelu-explorer-redis")
    spec = pod["spec"]["template"]["spec"]
    container = spec["containers"][0]
    assert container["args"] == command[1:]
    mount = next(m for m in container["volumeMounts"] if m["mountPath"] == options["--dir"])
    claim = next(v for v in spec["volumes"] if v["name"] == mount["name"])["persistentVolumeClaim"]["claimName"]
    assert any(d["kind"] == "PersistentVolumeClaim" and d["metadata"]["name"] == claim for d in every)
    app_pod = next(d for d in every if d["kind"] == "Deployment" and d["metadata"]["name"] == "gelu-explorer")
    env = {e["name"]: e["value"] for e in app_pod["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env[classpoll.BEHIND_PROXY_ENV] == "1"


def test_haproxy_sends_a_safe_request_again_to_another_replica():
    """Reference: HAProxy's configuration manual (2.6), retry-on and option redispatch; nginx's proxy_next_upstream
    (ingress-nginx's annotation).  A request its replica took and never answered (the replica died), or answered
    502/503, is sent again, each time to another replica; only GET and HEAD (METH_GET), which change nothing; a
    connection that failed is retried for every method, as HAProxy always does (nothing was sent).  The Ingress
    does the same, and never sends a non-idempotent request twice."""
    retry_on = re.search(r"^\s*retry-on (.+)$", HAPROXY_CFG, flags=re.M).group(1).split("#")[0].split()
    assert {"conn-failure", "empty-response", "response-timeout", "502", "503"} <= set(retry_on)
    assert re.search(r"^\s*option redispatch 1\b", HAPROXY_CFG, flags=re.M)
    assert re.search(r"^\s*retries [1-9]\b", HAPROXY_CFG, flags=re.M)
    assert re.search(r"^\s*http-request disable-l7-retry unless METH_GET\s*$", HAPROXY_CFG, flags=re.M)
    every = yaml.safe_load_all((DEPLOY / "kubernetes.yaml").read_text())
    notes = next(d for d in every if d["kind"] == "Ingress")["metadata"]["annotations"]
    retried = notes["nginx.ingress.kubernetes.io/proxy-next-upstream"].split()
    assert {"error", "timeout", "http_502", "http_503"} <= set(retried) and "non_idempotent" not in retried


def local_imports(path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        found |= {n.split(".")[0] for n in names if (ROOT / n.split(".")[0]).is_dir()}
    return found


def test_the_image_holds_every_local_package_the_app_imports():
    files = [ROOT / "app.py", *(ROOT / "pages").glob("*.py")]
    packages: set[str] = set()
    while files:
        path = files.pop()
        for name in local_imports(path) - packages:
            packages.add(name)
            files += (ROOT / name).rglob("*.py")
    copied = set(re.findall(r"^COPY .*?(\w+)/ \./\1/$", (ROOT / "Dockerfile").read_text(), flags=re.M))
    assert {"gelu_core", "ui"} <= packages
    assert packages <= copied, f"the Dockerfile does not copy {packages - copied}"


@pytest.mark.parametrize("where", ["compose (the defaults)", "loopback (harness.balancer)"])
def test_haproxy_accepts_the_file(where):
    needs_haproxy()
    env = dict(os.environ)
    for key in ("GELU_BIND", "GELU_DNS", "GELU_APP"):
        env.pop(key, None)
    if where.startswith("loopback"):
        env.update(GELU_BIND="127.0.0.1:18080", GELU_DNS="127.0.0.1:10053", GELU_APP="app:18501")
    done = subprocess.run([balancer.HAPROXY, "-c", "-f", str(DEPLOY / "haproxy.cfg")], env=env,
                          capture_output=True, text=True, timeout=30)  # fmt: skip
    assert done.returncode == 0 and "Configuration file is valid" in done.stdout + done.stderr, done.stderr


# --- HAProxy at work -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def proxy():
    needs_haproxy()
    with balancer.Balancer(replicas=1) as b:
        yield b


def raw_request(proxy, head: str, source: str = "127.0.0.1") -> socket.socket:
    """A connection from `source` (another loopback address: another client) that has sent `head` only."""
    host, port = proxy.base_url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=5, source_address=(source, 0))
    sock.sendall(head.encode("latin-1"))
    return sock


def status_of(sock: socket.socket, wait_s: float = 1.0) -> int | None:
    """The status HAProxy or the replica answered on `sock`, or None if none came within wait_s."""
    sock.settimeout(wait_s)
    try:
        data = sock.recv(4096)
    except TimeoutError:
        return None
    return int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/") else None


def served_by(proxy, marker: str) -> str:
    """Who answered the logged request whose line holds `marker`: a replica ("streamlit/app1") or HAProxy
    itself ("gelu/<NOSRV>")."""
    for _ in range(20):
        lines = [line for line in proxy.log().splitlines() if marker in line]
        if lines:
            return lines[-1].split()[3]
        time.sleep(0.1)
    raise AssertionError(f"no log line for {marker}")


def test_metrics_never_reach_a_replica(proxy):
    for path in ("/_stcore/metrics", "/some/base/_stcore/metrics"):
        sock = raw_request(proxy, f"GET {path}?probe=metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        assert status_of(sock) == 404
        sock.close()
        assert served_by(proxy, f"{path}?probe=metrics") == "gelu/<NOSRV>"
    sock = raw_request(proxy, "GET /_stcore/health?probe=health HTTP/1.1\r\nHost: x\r\n\r\n")
    assert status_of(sock) == 200  # the same client, an allowed path: it does reach the replica
    sock.close()
    assert served_by(proxy, "probe=health").startswith("streamlit/")


def test_uploads_over_the_cap_or_without_a_length_stop_at_haproxy(proxy):
    too_big = (MAX_UPLOAD_MB + 1) * 2**20 + 1
    head = "PUT /_stcore/upload_file/s/big HTTP/1.1\r\nHost: x\r\n"
    sock = raw_request(proxy, f"{head}Content-Length: {too_big}\r\n\r\n")
    assert status_of(sock) == 413  # at once, before a byte of the body
    sock.close()
    assert served_by(proxy, "/_stcore/upload_file/s/big") == "gelu/<NOSRV>"
    head = "PUT /_stcore/upload_file/s/chunked HTTP/1.1\r\nHost: x\r\n"
    sock = raw_request(proxy, f"{head}Transfer-Encoding: chunked\r\n\r\n")
    assert status_of(sock) == 411
    sock.close()


def test_one_client_gets_a_limited_number_of_uploads_at_once(proxy):
    host, port = proxy.base_url.removeprefix("http://").split(":")

    async def upload(s: Session, n: int):
        """The headers of an upload from a second client address, its body still on its way."""
        reader, writer = await asyncio.open_connection(host, int(port), local_addr=("127.0.0.51", 0))
        token, cookies = s.cookies["_streamlit_xsrf"], cookie_header(s.cookies)
        writer.write((
            f"PUT /_stcore/upload_file/{s.session_id}/file{n} HTTP/1.1\r\nHost: x\r\nCookie: {cookies}\r\n"
            f"X-Xsrftoken: {token}\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: 100000\r\n\r\n"
        ).encode())  # fmt: skip
        await writer.drain()
        return reader, writer

    async def status(reader, wait_s: float) -> int | None:
        try:
            line = await asyncio.wait_for(reader.readline(), wait_s)
        except TimeoutError:
            return None
        return int(line.split()[1]) if line.startswith(b"HTTP/") else None

    async def scene():
        async with Session(proxy.base_url, "ffn", "ffn_input=Upload") as s:  # a live session takes uploads
            await s.run()
            held = []
            try:
                for n in range(UPLOADS_AT_ONCE):
                    held.append(await upload(s, n))
                    await asyncio.sleep(0.05)
                waiting = [await status(reader, 0.2) for reader, _ in held]
                reader, writer = await upload(s, 99)
                one_more = await status(reader, 2.0)
                writer.close()
            finally:
                for _, writer in held:
                    writer.close()
            await asyncio.sleep(0.5)
            reader, writer = await upload(s, 100)
            after = await status(reader, 0.5)
            writer.close()
            return waiting, one_more, after

    waiting, one_more, after = run_sync(scene())
    assert waiting == [None] * UPLOADS_AT_ONCE, f"the held uploads should still be running: {waiting}"
    assert one_more == 429, "one upload more than allowed at once"
    assert after is None, "once the others ended, a new upload is let through"
    assert served_by(proxy, "file99") == "gelu/<NOSRV>" and served_by(proxy, "file100").startswith("streamlit/")


def test_one_client_gets_a_limited_request_rate(proxy):
    """RATE + 1 requests pipelined on one connection from a third client address: haproxy.cfg allows RATE in 10 s.

    The requests ask for the metrics, which HAProxy answers itself (404) at once: no replica is kept busy, and
    each request still counts."""
    one = "GET /_stcore/metrics HTTP/1.1\r\nHost: x\r\n\r\n"
    sock = raw_request(proxy, one * (RATE + 1), source="127.0.0.52")
    sock.settimeout(30)
    data = b""
    try:
        while data.count(b"HTTP/1.1 ") < RATE + 1:
            chunk = sock.recv(1 << 16)
            if not chunk:
                break
            data += chunk
    finally:
        sock.close()
    statuses = [int(m) for m in re.findall(rb"HTTP/1.1 (\d{3})", data)]
    assert statuses[:RATE] == [404] * RATE and statuses[RATE:] == [429], (len(statuses), statuses[-3:])


def test_the_frontend_code_reaches_a_browser_compressed(proxy):
    """Plotly's chunk of Streamlit's frontend, asked for as a browser does: gzip through HAProxy, and the bytes
    unpacked are the file Streamlit serves (reference: the file in Streamlit's own static folder)."""
    import gzip
    import urllib.request
    from pathlib import Path

    import streamlit

    chunk = next((Path(streamlit.__file__).parent / "static" / "static" / "js").glob("PlotlyChart.*.js"))
    request = urllib.request.Request(f"{proxy.base_url}/static/js/{chunk.name}", headers={"Accept-Encoding": "gzip"})
    with urllib.request.urlopen(request, timeout=30) as response:
        encoding, body = response.headers.get("Content-Encoding"), response.read()
    assert encoding == "gzip" and len(body) < chunk.stat().st_size / 2
    assert gzip.decompress(body) == chunk.read_bytes()
