"""Debian's redis-server on loopback and a free port, for the class poll's tests and benchmark.

`RedisServer` is a context manager: inside, `url` (redis://127.0.0.1:<port>/0) answers PING; `stop()` ends it
mid-test (the poll's "Redis down" case), `kill()` ends it with SIGKILL (a crash: nothing flushed on the way out),
and `start()` brings it back on the same port and directory.  By default nothing is written to disk (no RDB, no
AOF) and memory is capped (maxmemory) so a runaway test cannot eat the machine; `deployed=True` runs the
command deploy/docker-compose.yml gives its Redis instead (its append-only file in this server's own
directory), as a restarted Redis of a deployment comes back.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

from harness.browser import ROOT, free_port, stop_process, wait_until_ready

REDIS_SERVER = os.environ.get("GELU_REDIS_SERVER") or shutil.which("redis-server") or "/usr/bin/redis-server"


def redis_missing() -> str | None:
    """Why redis-server cannot be run here, or None."""
    if Path(REDIS_SERVER).exists():
        return None
    return f"no redis-server at {REDIS_SERVER} (apt-get install -y redis-server)"


def deployed_args(compose: Path = ROOT / "deploy" / "docker-compose.yml") -> list[str]:
    """The redis-server options deploy/docker-compose.yml runs its Redis with, less ``--dir`` (a container's path)."""
    import yaml

    command = list(yaml.safe_load(compose.read_text())["services"]["redis"]["command"])[1:]
    if "--dir" in command:
        at = command.index("--dir")
        del command[at : at + 2]
    return command


class RedisServer:
    def __init__(self, port: int | None = None, maxmemory: str = "64mb", deployed: bool = False):
        self.port, self.maxmemory, self.deployed = port or free_port(), maxmemory, deployed
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen | None = None
        self.dir = tempfile.mkdtemp(prefix="gelu-redis-")

    def ping(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def start(self, timeout_s: float = 10.0) -> RedisServer:
        options = (deployed_args() if self.deployed else
                   ["--save", "", "--appendonly", "no", "--maxmemory", self.maxmemory])
        cmd = [REDIS_SERVER, *options, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", self.dir,
               "--daemonize", "no", "--loglevel", "warning"]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_until_ready(self.proc, self.ping, timeout_s, "redis-server")
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        stop_process(self.proc)
        self.proc = None

    def kill(self) -> None:
        """SIGKILL, as a crash or an out-of-memory kill ends it: no shutdown, nothing flushed on the way out."""
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def used_memory(self) -> int:
        """Redis's own figure for the memory it holds (INFO memory, used_memory), in bytes."""
        import redis

        return int(redis.Redis.from_url(self.url).info("memory")["used_memory"])

    def __enter__(self) -> RedisServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)
