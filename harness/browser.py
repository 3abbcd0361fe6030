"""Drive the real app: `streamlit run app.py` on a free local port, and Debian's Chromium through Playwright.

Shared by the browser tests, `benchmarks/bench_startup.py`, `benchmarks/bench_browser.py` and
`scripts/screenshots.py`.  Nothing here imports Streamlit: the app runs in its own process, as it would
for a class.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import tomllib
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from harness.memory import memory_kib

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("GELU_CHROMIUM", "/usr/bin/chromium")
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
DESKTOP = {"width": 1400, "height": 900}
PHONE = {"width": 390, "height": 844}
TIMEOUT_MS = 30_000

# Counts finished script runs on the page, from the server's own messages.  After a widget move Streamlit
# updates the URL at once but starts the rerun only ~100 ms later, and a fast rerun can start and finish
# within one React commit, so the stApp element's data-test-script-state may never show "running": a
# state change cannot be waited for.  Instead every websocket message is read for ForwardMsg field 6,
# script_finished (streamlit/proto/ForwardMsg.proto), and counted unless its status is 2,
# FINISHED_EARLY_FOR_RERUN (a run cut short by the next one).
RUN_COUNTER_JS = """
window.__geluRuns = 0;
(() => {
  const finishedRun = (buffer) => {
    const b = new Uint8Array(buffer);
    let i = 0;
    const varint = () => {
      let value = 0, scale = 1, byte;
      do { byte = b[i++]; value += (byte & 0x7f) * scale; scale *= 128; } while (byte & 0x80 && i < b.length);
      return value;
    };
    while (i < b.length) {
      const tag = varint(), field = Math.floor(tag / 8), wire = tag % 8;
      if (wire === 0) { const value = varint(); if (field === 6) return value !== 2; }
      else if (wire === 2) { const length = varint(); i += length; }  // not `i += varint()`: i is read first
      else if (wire === 1) i += 8;
      else if (wire === 5) i += 4;
      else return false;
    }
    return false;
  };
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener("message", (event) => {
        if (event.data instanceof ArrayBuffer && finishedRun(event.data)) {
          window.__geluFinishedAt = performance.now();  // timings for benchmarks/bench_browser.py
          // count it once Streamlit has handled the message and React has drawn: two frames later
          setTimeout(() => requestAnimationFrame(() => requestAnimationFrame(() => {
            window.__geluRuns += 1;
            window.__geluCountedAt = performance.now();
          })));
        }
      });
    }
  };
})();
"""
IDLE = "[data-testid='stApp'][data-test-connection-state='CONNECTED'][data-test-script-state='notRunning']"
MAIN = "[data-testid='stMain']"
SLIDER = "[data-testid='stSlider'] input[type=range]"
NUMBER = "[data-testid='stNumberInput'] input[type=number]"
EXCEPTION = "[data-testid='stException']"
ERROR_BOX = "[data-testid='stAlertContentError']"
FILE_INPUT = f"{MAIN} [data-testid='stFileUploader'] input[type=file]"  # the page's uploaders' file inputs


# --- the app's pages, as ui.pages declares them -----------------------------------------------------


@dataclass(frozen=True)
class AppPage:
    """One page of the app's navigation."""

    script: str  # "pages/curves.py"
    title: str
    url_path: str  # "curves"
    default: bool


def app_pages() -> list[AppPage]:
    """Every page of the app, in the navigation's order, from ui.pages (the table app.py reads)."""
    from ui.pages import PAGES

    return [AppPage(p.file, p.title, p.url_path, p.default) for p in PAGES.values()]


def theme_colors(config_file: Path = ROOT / ".streamlit" / "config.toml") -> dict[str, dict[str, str]]:
    """The [theme.light] and [theme.dark] sections of the app's config."""
    theme = tomllib.loads(config_file.read_text(encoding="utf-8")).get("theme", {})
    return {scheme: theme.get(scheme, {}) for scheme in ("light", "dark")}


# --- the server ------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def stop_process(proc: subprocess.Popen | None, timeout_s: float = 10) -> None:
    """Ask a child process to end (SIGTERM), and kill it if it has not within timeout_s."""
    if proc and proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def wait_until_ready(proc: subprocess.Popen, ready, timeout_s: float, what: str, log=lambda: "") -> None:
    """Poll ``ready()`` every 50 ms until it is true; RuntimeError (with ``log()`` appended) if ``proc`` exits first
    or ``timeout_s`` passes.  The caller stops the process on failure."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode}{log()}")
        if ready():
            return
        time.sleep(0.05)
    raise RuntimeError(f"{what} did not answer within {timeout_s} s{log()}")


class Server:
    """`streamlit run <script>` in app_dir on 127.0.0.1 and a free port, with app_dir's own config.

    Use as a context manager; `base_url` is ready (health check answered "ok") once inside.  `host` and `port`
    place it elsewhere on loopback (harness/balancer.py runs replicas on 127.0.0.2, 127.0.0.3, ...).
    """

    def __init__(
        self, app_dir: Path = ROOT, script: str = "app.py", extra_args: tuple[str, ...] = (),
        env: dict[str, str] | None = None, host: str = "127.0.0.1", port: int | None = None,
    ):  # fmt: skip
        self.app_dir, self.script, self.extra_args = Path(app_dir), script, extra_args
        self.env = env or {}
        self.host, self.port = host, port or free_port()
        self.base_url = f"http://{host}:{self.port}"
        self.proc: subprocess.Popen | None = None
        self.log_path = Path(tempfile.mkstemp(prefix="gelu-streamlit-", suffix=".log")[1])

    def start(self, timeout_s: float = 60.0) -> Server:
        cmd = [
            sys.executable, "-m", "streamlit", "run", self.script,
            "--server.address", self.host, "--server.port", str(self.port),
            "--server.headless", "true", "--browser.gatherUsageStats", "false", *self.extra_args,
        ]  # fmt: skip
        env = {**os.environ, "PYTHONUNBUFFERED": "1", **self.env}
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(cmd, cwd=self.app_dir, stdout=log, stderr=subprocess.STDOUT, env=env)
        try:
            wait_until_ready(self.proc, self.healthy, timeout_s, "streamlit (/_stcore/health)",
                             lambda: f":\n{self.log_tail()}")
            return self
        except BaseException:
            self.stop()  # never leave a server behind, even on Ctrl-C
            raise

    def healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.base_url}/_stcore/health", timeout=1) as resp:
                return resp.read() == b"ok"
        except (OSError, urllib.error.URLError):
            return False

    def stop(self) -> None:
        stop_process(self.proc)

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def log_tail(self, n: int = 40) -> str:
        return "\n".join(self.log().splitlines()[-n:])

    def rss_kib(self) -> dict[str, int]:
        """The server process's resident memory now (VmRSS) and at its peak (VmHWM), in KiB, from /proc."""
        return memory_kib(self.proc.pid)

    def __enter__(self) -> Server:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
        self.log_path.unlink(missing_ok=True)


@contextlib.contextmanager
def one_file_app(source: str) -> Iterator[Path]:
    """A temporary folder holding ``source`` as app.py beside the repository's .streamlit config: a floor app,
    served as the app is."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        shutil.copytree(ROOT / ".streamlit", folder / ".streamlit")
        (folder / "app.py").write_text(source)
        yield folder


def wait_ready(base_url: str, timeout_s: float = 60.0) -> float:
    """Seconds until the app says /readyz (its start-up imports done, as a server opened before the lesson);
    NaN if it did not within ``timeout_s``."""
    start = time.monotonic()
    while time.monotonic() - start < timeout_s:
        try:
            with urllib.request.urlopen(f"{base_url}/readyz", timeout=2) as resp:
                if resp.status == 200:
                    return time.monotonic() - start
        except (OSError, urllib.error.URLError):
            pass
        time.sleep(0.1)
    return float("nan")


# --- the browser -----------------------------------------------------------------------------------


def launch(playwright):
    """Debian's Chromium, headless, with nothing phoning home."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)


def new_context(browser, *, color_scheme: str = "light", viewport: dict | None = None, touch: bool = False,
                scripts: tuple[str, ...] = ()):
    """A fresh context (own cookies and cache) whose pages count finished script runs and may write and read the
    clipboard (the share box's Copy buttons); each page of it is its own Streamlit session.  ``touch``: its pages
    take touch; ``scripts``: more init scripts (harness.drag.FRAMES_JS records frames)."""
    context = browser.new_context(viewport=viewport or DESKTOP, color_scheme=color_scheme, has_touch=touch,
                                  permissions=["clipboard-read", "clipboard-write"])
    context.set_default_timeout(TIMEOUT_MS)
    context.add_init_script(RUN_COUNTER_JS)
    for script in scripts:
        context.add_init_script(script)
    return context


def new_page(browser, *, color_scheme: str = "light", viewport: dict | None = None):
    """A page in a fresh context (own cookies, own Streamlit session) that counts finished script runs; it may
    write and read the clipboard (the share box's Copy buttons)."""
    return new_context(browser, color_scheme=color_scheme, viewport=viewport).new_page()


# Kept contexts, one per (browser, colour scheme, touch, init scripts): tests that each want a page of their own take it
# from one of these (``kept_page``) rather than a fresh context.  A page is still its own Streamlit session (a session
# is a websocket, one per page); what its pages share is cookies and Chromium's cache, so the frontend's files are
# fetched and compiled once, not for every page: a page load in a kept context costs Chromium and the server less
# CPU than one in a fresh context.
_KEPT: dict[tuple, object] = {}


def kept_page(browser, *, color_scheme: str = "light", viewport: dict | None = None, touch: bool = False,
              scripts: tuple[str, ...] = ()):
    """A new page (its own Streamlit session) in this browser's kept context for ``color_scheme`` (with touch, and
    ``scripts``, e.g. harness.drag's frame recorder, where asked), at ``viewport``.  Close it with
    ``page.close()``: closing its context would close every other page kept in it."""
    key = (id(browser), color_scheme, touch, scripts)
    context = _KEPT.get(key)
    if context is None:
        context = new_context(browser, color_scheme=color_scheme, touch=touch, scripts=scripts)
        context.on("close", lambda _context, key=key: _KEPT.pop(key, None))
        _KEPT[key] = context
    page = context.new_page()
    if viewport and viewport != DESKTOP:
        page.set_viewport_size(viewport)
    return page


def runs(page) -> int:
    """How many script runs have finished on this page so far."""
    return page.evaluate("window.__geluRuns")


def wait_idle(page, after: int | None = None, timeout_ms: int = TIMEOUT_MS) -> None:
    """Wait until a script run later than `after` has finished and everything it sent is drawn.

    `after` is `runs(page)` read before the action; None waits for the first run of a fresh page.
    """
    page.wait_for_function("n => window.__geluRuns > n", arg=0 if after is None else after, timeout=timeout_ms)
    page.locator(IDLE).wait_for(state="attached", timeout=timeout_ms)
    wait_drawn(page, timeout_ms)


DRAWN = """() => !document.querySelector("[data-testid='stSkeleton'], [data-stale='true']")
  && [...document.querySelectorAll("[data-testid='stBidiComponentIsolated']")].every(
    (el) => el.dataset.geluMount && el.dataset.geluStarted === el.dataset.geluMount)"""


def wait_drawn(page, timeout_ms: int = TIMEOUT_MS) -> None:
    """Wait until no element is a loading skeleton (lazy charts, sliders) or stale (left from the last run), and every
    component has started what it was last given (its script and table fetched: draw/loader.js)."""
    page.wait_for_function(DRAWN, timeout=timeout_ms)


SHOW_ME = "[data-testid='stMain'] [class*='st-key-show_'] button"  # a page's "Show me without predicting"


def open_app(page, url: str, *, show: bool = True) -> None:
    """Load a URL of the app and wait for its first run to be drawn; ``show``: where the page asks its question
    first (draw/lesson.py), press "Show me without predicting" and wait for the whole page, as a student who
    wants to see it does."""
    page.goto(url, wait_until="commit")  # not "load": an offline favicon fetch can hold that for seconds
    wait_idle(page)
    if show and page.locator(SHOW_ME).count():
        before = runs(page)
        page.locator(SHOW_ME).first.click()
        wait_idle(page, before)


# A page given a new window size is laid out as a load at that size once: Streamlit's sidebar has taken the state
# it takes for that width (collapsed up to the theme's md breakpoint, docs/testing.md "Browser tests") and finished
# sliding (no CSS transition runs), and every chart has been drawn again at its box's width by Streamlit (its layout
# width, and its SVG's, that of the element holding it: a chart is relaid out a moment after the box changes).
RELAID_JS = """(width) => {
  if (window.innerWidth !== width) return false;
  if (document.getAnimations().some((a) => a.playState === "running" && a instanceof CSSTransition)) return false;
  const sidebar = document.querySelector("[data-testid='stSidebar']");
  if (sidebar) {
    const r = sidebar.getBoundingClientRect(), collapsed = sidebar.getAttribute("data-collapsed") === "true";
    if (collapsed ? r.right > 1 : r.left < -1) return false;  // still sliding in or out
  }
  return [...document.querySelectorAll("[data-testid='stMain'] .js-plotly-plot")].every((gd) => {
    const svg = gd.querySelector(".main-svg"), fl = gd._fullLayout;
    return fl && svg && Math.abs(fl.width - gd.clientWidth) <= 1
      && Math.abs(svg.getBoundingClientRect().width - fl.width) <= 1;
  });
}"""


def resize(page, viewport: dict, timeout_ms: int = TIMEOUT_MS) -> None:
    """Give a loaded page another window size, and wait until it is laid out and drawn as at that size (RELAID_JS)."""
    if page.viewport_size == viewport:
        return
    page.set_viewport_size(viewport)
    page.wait_for_function(RELAID_JS, arg=viewport["width"], timeout=timeout_ms, polling="raf")
    wait_drawn(page, timeout_ms)
    page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")


def act(page, action, timeout_ms: int = TIMEOUT_MS) -> None:
    """Do something that reruns the script (`action()`), then wait for that rerun to be drawn."""
    before = runs(page)
    action()
    wait_idle(page, after=before, timeout_ms=timeout_ms)


def choose(page, multiselect, option: str) -> None:
    """Pick ``option`` in a Streamlit multiselect and wait for the rerun it makes.

    A click on the box focuses it but does not always open its list (with the box at the foot of the sidebar's
    first screen, as the presenter's "Hide in the presenter view" is, the click often leaves it closed); ArrowDown
    opens it from the keyboard, as a keyboard user does, so the list is open whatever the layout.
    """
    multiselect.locator("input").first.click()
    choice = page.get_by_role("option", name=option, exact=True)
    if not choice.count():
        page.keyboard.press("ArrowDown")
    choice.wait_for(state="visible", timeout=TIMEOUT_MS)
    act(page, choice.click)


def query(url: str) -> dict[str, list[str]]:
    """The query parameters of a URL."""
    return parse_qs(urlsplit(url).query, keep_blank_values=True)


def first_control(page):
    """The first slider in the page's main area (not the sidebar), else its first number input; or None.

    Returns the control's <input> (range or number) and how to move it: the slider by ArrowRight, the
    number by ArrowUp then Enter (Streamlit commits a number on Enter), each the other way at the maximum.
    """
    for selector in (SLIDER, NUMBER):
        control = page.locator(f"{MAIN} {selector}").first
        if control.count():
            return control
    return None


def move(page, control) -> None:
    """One keyboard step of a control from `first_control`, waiting for the rerun it causes."""
    at_max = float(control.input_value()) >= float(control.get_attribute("max") or "inf")
    control.focus()
    if control.get_attribute("type") == "range":
        act(page, lambda: control.press("ArrowLeft" if at_max else "ArrowRight"))
    else:
        act(page, lambda: (control.press("ArrowDown" if at_max else "ArrowUp"), control.press("Enter")))


def shared_link(page, button: str = "Copy link") -> str:
    """Press one of the sidebar's share buttons and read what it put on the clipboard."""
    page.locator("[data-testid='stSidebar'] .gelu-share button", has_text=button).first.click()
    page.wait_for_function("() => /copied/.test(document.querySelector('.gelu-share-note').textContent)")
    return page.evaluate("navigator.clipboard.readText()")


def control_state(control) -> tuple[str, str]:
    """(the input's value, the value as drawn): a slider's thumb label, or a number input's own text."""
    if control.get_attribute("type") != "range":
        return control.input_value(), control.input_value()
    thumb = control.locator("xpath=ancestor::*[@data-testid='stSlider']//*[@data-testid='stSliderThumbValue']")
    return control.input_value(), thumb.first.inner_text().strip()


# Opening a deep link (/curves) makes Streamlit's frontend probe /curves/_stcore/health and
# /curves/_stcore/host-config to learn whether "curves" is a base URL path; the 404s it gets are expected
# and logged by Chromium as console errors.  A resource from another origin fails where there is no
# internet, which says nothing about the page itself: `ThirdParty` lists those hosts instead (and the page
# test allows none).  Everything else counts.
def _is_expected(message, local_origin: str) -> bool:
    url = (message.location or {}).get("url", "")
    if not message.text.startswith("Failed to load resource"):
        return False
    if not url.startswith(local_origin):
        return True
    return "404" in message.text and url.rsplit("/_stcore/", 1)[-1] in ("health", "host-config")


class ConsoleErrors:
    """Console errors and uncaught page errors seen on a page, minus the expected ones above."""

    def __init__(self, page, local_origin: str):
        self.errors: list[str] = []
        self.local_origin = local_origin
        page.on("console", self._on_console)
        page.on("pageerror", lambda exc: self.errors.append(f"pageerror: {exc}"))

    def _on_console(self, message) -> None:
        if message.type == "error" and not _is_expected(message, self.local_origin):
            location = (message.location or {}).get("url", "")
            self.errors.append(f"console: {message.text} ({location})")


class ThirdParty:
    """Every request a page makes to a host other than the app's own."""

    def __init__(self, page, local_origin: str):
        self.urls: list[str] = []
        page.on("request", lambda req: None if req.url.startswith(local_origin) else self.urls.append(req.url))

    @property
    def hosts(self) -> set[str]:
        return {urlsplit(u).hostname for u in self.urls if urlsplit(u).scheme in ("http", "https", "ws", "wss")}


THEME_JS = """() => {
  const bg = (s) => { const e = document.querySelector(s); return e ? getComputedStyle(e).backgroundColor : null; };
  const main = document.querySelector("[data-testid='stMain']");
  return {background: bg("[data-testid='stApp']"), sidebar: bg("[data-testid='stSidebar']"),
          text: getComputedStyle(main.querySelector("h1") || main.querySelector("p") || main).color,
          overflow: main.scrollWidth - main.clientWidth};
}"""


def look(page) -> dict:
    """What the page looks like, in numbers: its background, sidebar and text colours as "#rrggbb", and how many
    pixels its main area is wider than the window (0 when nothing sticks out sideways)."""
    found = page.evaluate(THEME_JS)
    for key in ("background", "sidebar", "text"):
        if found[key]:
            rgb = [int(v) for v in found[key][found[key].index("(") + 1 : -1].split(",")[:3]]
            found[key] = "#" + "".join(f"{v:02x}" for v in rgb)
    return found


def set_scheme(page, color_scheme: str) -> None:
    """Switch the browser's prefers-color-scheme; Streamlit follows it live, then charts redraw."""
    page.emulate_media(color_scheme=color_scheme)
    page.wait_for_timeout(300)
    wait_drawn(page)


def screenshot_full(page, path: Path) -> None:
    """A screenshot of the whole page: Streamlit scrolls inside its main block, so grow the viewport to fit."""
    viewport = page.viewport_size
    height = page.evaluate("() => document.querySelector(\"[data-testid='stMain']\").scrollHeight")
    page.set_viewport_size({"width": viewport["width"], "height": max(viewport["height"], min(height, 8000))})
    try:
        page.wait_for_timeout(300)  # Plotly redraws on resize
        wait_drawn(page)
        path.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(path))
    finally:
        page.set_viewport_size(viewport)


def shoot_pages(browser, base_url: str, out_dir: Path, pages: list[AppPage] | None = None) -> list[Path]:
    """Every page, light and dark, desktop (1400x900) and phone (390x844), as full-length PNGs in out_dir."""
    written = []
    for app_page in pages or app_pages():
        url = f"{base_url}/{'' if app_page.default else app_page.url_path}"
        for device, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
            page = new_page(browser, color_scheme="light", viewport=viewport)
            try:
                open_app(page, url)
                for scheme in ("light", "dark"):
                    set_scheme(page, scheme)
                    path = out_dir / f"{app_page.url_path}-{scheme}-{device}.png"
                    screenshot_full(page, path)
                    written.append(path)
            finally:
                page.context.close()
    return written
