"""A light Streamlit client: one student's browser tab, as far as the server can tell, without a browser.

It speaks the protocol of Streamlit's own frontend (streamlit/static, `WebsocketConnection` and `App` in
the frontend's source), so a whole class of sessions fits in one asyncio process on a small machine:

1. HTTP as a browser opening a link: GET the page (index.html: a load balancer's sticky cookie is set here),
   then `/_stcore/health` (sets the `_streamlit_xsrf` cookie) and `/_stcore/host-config`.  Cookies are kept
   per session and sent with every later request, the websocket's upgrade included.
2. The websocket `ws://host:port/_stcore/stream`, subprotocols `["streamlit", <xsrf token>]` (the frontend's
   `getSessionTokens`: its auth token, else the XSRF cookie), with the Origin header a browser sends and
   permessage-deflate as a browser negotiates it.
3. BackMsg `rerun_script` (a ClientState) for every run: the URL's query string, the page (by `page_name`,
   the URL path, on the first run; by `page_script_hash` after, as the frontend does), the widget states,
   the hashes of the messages it has cached, and a context (timezone, locale, URL, colour scheme); a widget an
   `st.fragment` drew (its delta's `fragment_id`) names that fragment, which then reruns alone.
4. ForwardMsg in: `new_session` starts a run (a fragment's run keeps the rest of the page), deltas
   (`new_element`, `add_block`) build the page, a `ref_hash` stands for a cached message, `page_info_changed`
   is the new URL query string, `navigation` names the current page, and `script_finished` ends the run
   (status FINISHED_EARLY_FOR_RERUN = cut short by a newer run; the session waits on for the run that finishes).

Along the way every exception element (`Delta.new_element.exception`) and error alert
(`new_element.alert` of format ERROR) that reaches the session is kept, and the first slider (else number
input) of the page's main area, in the order the page draws it, is what `move()` steps: the new value is
sent as the browser's widget manager sends it (slider: double_array_value; number input: int_value or
double_value by its data type), with the states of the widgets moved before.  Widgets never touched are
not sent: the server keeps their values, as it does for a browser that sends their unchanged values.

Only `websockets` (a dependency of Streamlit itself) and Streamlit's protobuf classes are used; nothing
runs a script here.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import html
import re
import time
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from urllib.parse import parse_qsl, urlencode, urlsplit

from streamlit.proto.Alert_pb2 import Alert
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.NumberInput_pb2 import NumberInput
from streamlit.proto.WidgetStates_pb2 import WidgetState

FINISHED_EARLY_FOR_RERUN = ForwardMsg.ScriptFinishedStatus.Value("FINISHED_EARLY_FOR_RERUN")
MAIN = 0  # delta_path[0]: 0 the main area, 1 the sidebar (RootContainer)
TIMEOUT_S = 120.0
SHOW_ME_KEY = "show_"  # the key of a page's "Show me without predicting" starts so (draw/lesson.py)
USER_AGENT = "gelu-explorer-class-client/1 (Streamlit protocol; like a browser tab)"


class SessionError(RuntimeError):
    """The server closed the session, or a run did not finish in time."""


PUBLISHED = re.compile(r"[0-9a-f]{64}\.(?:js|json)\b")  # a name hosting.published serves (scripts, data)


def run_sync(coroutine):
    """`asyncio.run(coroutine)` on a thread of its own, so sync code may call it even where an event loop is already
    running in this thread (Playwright's sync API, held open by the browser tests' session fixture, keeps one)."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="streamlit-client") as pool:
        return pool.submit(asyncio.run, coroutine).result()


# --- a minimal HTTP/1.1 client (GET, one request per connection, as few bytes as possible) -----------


@dataclass
class HttpResponse:
    status: int
    headers: list[tuple[str, str]]
    body: bytes

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers if k.lower() == name.lower()), None)

    def set_cookies(self) -> dict[str, str]:
        found = {}
        for k, v in self.headers:
            if k.lower() == "set-cookie":
                cookie = SimpleCookie()
                cookie.load(v)
                found.update({name: morsel.value for name, morsel in cookie.items()})
        return found


async def http_request(
    base_url: str, method: str, path: str, headers: dict[str, str] | None = None, body: bytes = b"",
    timeout_s: float = 30.0, local_address: str | None = None,
) -> HttpResponse:  # fmt: skip
    """One HTTP/1.1 request to a plain-http `base_url` (`Connection: close`), from `local_address` where given (a
    loopback address other than 127.0.0.1: another client); the whole answer."""
    parts = urlsplit(base_url)
    if parts.scheme != "http":
        raise ValueError(f"only http:// is spoken here, not {base_url}")
    host, port = parts.hostname, parts.port or 80
    lines = [f"{method} {path} HTTP/1.1", f"Host: {parts.netloc}", "Connection: close", f"User-Agent: {USER_AGENT}"]
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
    if body or method in ("PUT", "POST"):
        lines.append(f"Content-Length: {len(body)}")
    request = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body

    async def exchange() -> bytes:
        reader, writer = await asyncio.open_connection(
            host, port, local_addr=(local_address, 0) if local_address else None)
        try:
            writer.write(request)
            await writer.drain()
            return await reader.read()  # to EOF: the server closes after its answer
        finally:
            writer.close()
            try:
                await writer.wait_closed()
            except OSError:
                pass

    raw = await asyncio.wait_for(exchange(), timeout_s)
    head, _, payload = raw.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    fields = [tuple(s.strip() for s in line.split(":", 1)) for line in header_lines if ":" in line]
    response = HttpResponse(int(status_line.split()[1]), fields, payload)
    if (response.header("transfer-encoding") or "").lower() == "chunked":
        response.body = _dechunk(payload)
    return response


def _dechunk(data: bytes) -> bytes:
    out, i = bytearray(), 0
    while i < len(data):
        end = data.index(b"\r\n", i)
        size = int(data[i:end].split(b";")[0], 16)
        if size == 0:
            break
        out += data[end + 2 : end + 2 + size]
        i = end + 2 + size + 2
    return bytes(out)


def cookie_header(cookies: dict[str, str]) -> str:
    return "; ".join(f"{k}={v}" for k, v in cookies.items())


# --- what the page holds ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Control:
    """A slider or number input as the server drew it."""

    id: str
    kind: str  # "slider" | "number_input"
    label: str
    value: tuple[float, ...]  # one value; a range slider two
    default: tuple[float, ...]
    min: float
    max: float
    step: float
    integer: bool  # NumberInput.DataType INT: sent as int_value
    query_param_key: str
    fragment_id: str = ""  # the st.fragment drawing it (Delta.fragment_id): its moves rerun that fragment alone

    def stepped(self, direction: int = 1) -> tuple[float, ...]:
        """One step of the first value (a range slider's lower thumb) towards `direction`, turning back at an end,
        as a browser's arrow key moves it: never past max (or a range's upper value), never below min."""
        first, rest = self.value[0], self.value[1:]
        top = rest[0] if rest else self.max
        new = first + direction * self.step
        if new > top + 1e-12 or new < self.min - 1e-12:
            new = first - direction * self.step
        new = round(new / self.step) * self.step if self.step else new  # no 0.1 + 0.2 drift
        new = min(max(new, self.min), top)
        return (float(int(round(new))) if self.integer else float(round(new, 12)),) + rest

    def state(self, value: tuple[float, ...]) -> WidgetState:
        """The WidgetState a browser sends for this control at `value`."""
        state = WidgetState(id=self.id)
        if self.kind == "slider":
            state.double_array_value.data[:] = list(value)
        elif self.integer:
            state.int_value = int(value[0])
        else:
            state.double_value = float(value[0])
        return state

    def url_query(self, query: str, value: tuple[float, ...]) -> str:
        """`query` with this control's URL parameter at `value`, as the frontend writes a bound widget into the
        address bar: the key repeated per value, integral numbers without ".0", left out at the default."""
        if not self.query_param_key:
            return query
        pairs = [(k, v) for k, v in parse_qsl(query, keep_blank_values=True) if k != self.query_param_key]
        if tuple(value) != tuple(self.default):
            pairs += [(self.query_param_key, _url_number(v)) for v in value]
        return urlencode(pairs)


def _url_number(v: float) -> str:
    return str(int(v)) if v == int(v) else repr(v)


@dataclass(frozen=True)
class Seen:
    """What the client keeps of one element: enough to find controls and trouble, not the element itself."""

    kind: str  # the Element oneof ("slider", "alert", "exception", ...) or "block"
    control: Control | None = None
    trouble: str | None = None  # an exception's type/message, an error alert's body
    text: str = ""  # a markdown element's first 200 characters (what a short readout says); a radio's, button's
    # or rerunning expander's label
    widget_id: str = ""  # a radio's id and options (the class poll's question: Session.answer); a button's or a
    # rerunning expander's id (Session.click, Session.expand)
    options: tuple[str, ...] = ()
    fragment_id: str = ""  # the st.fragment drawing it (Delta.fragment_id): a widget's click reruns that fragment alone


def summarize(msg: ForwardMsg) -> Seen | None:
    """The summary of a delta message (None for anything else)."""
    if msg.WhichOneof("type") != "delta":
        return None
    delta = msg.delta
    if delta.WhichOneof("type") == "add_block":
        block = delta.add_block
        if block.WhichOneof("type") == "expandable" and block.expandable.id:  # an expander that reruns when toggled
            return Seen("block", text=block.expandable.label, widget_id=block.expandable.id)
        return Seen("block")
    if delta.WhichOneof("type") != "new_element":
        return None
    element = delta.new_element
    kind = element.WhichOneof("type") or ""
    if kind == "exception":
        exc = element.exception
        return Seen(kind, trouble=f"{exc.type}: {exc.message}".strip(": ") or "exception (no details sent)")
    if kind == "alert" and element.alert.format == Alert.ERROR:
        return Seen(kind, trouble=element.alert.body or "error box")
    if kind == "alert":  # info, warning, success: what a note says
        return Seen(kind, text=element.alert.body[:200])
    if kind == "slider" and not element.slider.options:
        s = element.slider
        value = tuple(s.value) if s.set_value and len(s.value) else tuple(s.default)
        control = Control(s.id, kind, s.label, value, tuple(s.default), s.min, s.max, s.step, False, s.query_param_key)
        return Seen(kind, control)
    if kind == "number_input":
        n = element.number_input
        value = n.value if n.set_value else n.default
        integer = n.data_type == NumberInput.INT
        lo = n.min if n.has_min else float("-inf")
        hi = n.max if n.has_max else float("inf")
        step = n.step or 1.0
        control = Control(n.id, kind, n.label, (value,), (n.default,), lo, hi, step, integer, n.query_param_key)
        return Seen(kind, control)
    if kind == "markdown":
        return Seen(kind, text=element.markdown.body[:200])
    if kind == "html":  # its words, without its style, script or tags (the class poll's answers are drawn so)
        body = re.sub(r"<(style|script)\b.*?</\1>", " ", element.html.body, flags=re.S)
        return Seen(kind, text=" ".join(html.unescape(re.sub(r"<[^>]+>", " ", body)).split())[:2000])
    if kind == "radio":
        return Seen(kind, text=element.radio.label, widget_id=element.radio.id, options=tuple(element.radio.options))
    if kind == "button":
        return Seen(kind, text=element.button.label, widget_id=element.button.id)
    return Seen(kind)


@dataclass
class Run:
    """One script run the session asked for: when, how it ended, and what trouble it showed."""

    sent_at: float
    finished_at: float | None = None
    status: int | None = None
    troubles: list[str] = field(default_factory=list)

    @property
    def seconds(self) -> float | None:
        return None if self.finished_at is None else self.finished_at - self.sent_at


def texts(elements: dict[tuple[int, ...], Seen]) -> list[str]:
    """The markdown texts of the page in drawing order."""
    return [elements[p].text for p in sorted(elements) if elements[p].kind == "markdown"]


def words(elements: dict[tuple[int, ...], Seen]) -> list[str]:
    """Everything the page says in words, in drawing order: markdown, alerts, HTML's text, radios' and buttons'
    labels."""
    return [elements[p].text for p in sorted(elements) if elements[p].text]


def first_control(elements: dict[tuple[int, ...], Seen]) -> Control | None:
    """The first slider of the main area in drawing order, else its first number input (as the browser tests)."""
    for kind in ("slider", "number_input"):
        paths = sorted(p for p, seen in elements.items() if p and p[0] == MAIN and seen.kind == kind and seen.control)
        if paths:
            return elements[paths[0]].control
    return None


# --- one session -----------------------------------------------------------------------------------


class Session:
    """One student's tab on `base_url`, at `path` ("", "curves", "ffn") with a `query` string ("a=1&b=2").

    `await open()` does the browser's HTTP requests and opens the websocket; `await run()` asks for a run and
    waits until it finished; `await move()` steps the page's first control and waits for that rerun;
    `await reconnect()` does what the frontend does when its websocket closed under it.  `local_address` (a
    loopback address such as 127.0.0.61) makes every connection come from there: another client address.
    Use `async with Session(...) as s:` so the websocket is always closed.
    """

    def __init__(self, base_url: str, path: str = "", query: str = "", *, timeout_s: float = TIMEOUT_S,
                 compression: str | None = "deflate", local_address: str | None = None):  # fmt: skip
        self.base_url = base_url.rstrip("/")
        self.local_address = local_address
        self.compression = compression  # offered to the server as a browser offers it (None: not offered)
        self.path, self.query_string, self.timeout_s = path.strip("/"), query.lstrip("?"), timeout_s
        self.cookies: dict[str, str] = {}
        self.ws = None
        self.session_id: str | None = None
        self.page_script_hash = ""
        self.elements: dict[tuple[int, ...], Seen] = {}  # the page as the current run draws it
        self.cache: dict[str, Seen] = {}  # the frontend's message cache: hash -> what it held
        self.published: set[str] = set()  # what the components drawn so far fetch (hosting.published's names)
        self.fetched: set[str] = set()  # ... and what this tab has fetched of them
        self.fetched_bytes = 0
        self.moved: dict[str, WidgetState] = {}  # widget id -> the state this tab last sent
        self.troubles: list[str] = []  # every exception and error box that reached this tab
        self.exceptions = self.error_boxes = 0  # the same, counted by kind
        self.runs: list[Run] = []
        self.fragments: dict[str, float] = {}  # fragment id -> seconds between its runs (st.fragment(run_every=...))
        self._fragment_run = False  # the run asked for is a fragment's: the page around it stays
        self._run_fragments: tuple[str, ...] = ()  # the fragments the current run reruns alone (its new_session)
        self._drawn: set[tuple[int, ...]] = set()  # the paths the current run has drawn
        self.closed_reason: str | None = None  # set when the server closed the websocket
        self._pending: Run | None = None
        self._finished = asyncio.Event()
        self._reader: asyncio.Task | None = None

    # -- connecting --

    @property
    def ws_url(self) -> str:
        return "ws" + self.base_url[len("http") :] + "/_stcore/stream"

    async def get(self, path: str, headers: dict[str, str] | None = None) -> HttpResponse:
        headers = {**(headers or {}), **({"Cookie": cookie_header(self.cookies)} if self.cookies else {})}
        response = await http_request(self.base_url, "GET", path, headers, timeout_s=self.timeout_s,
                                      local_address=self.local_address)
        self.cookies.update(response.set_cookies())
        return response

    def page_path(self) -> str:
        """The page's path and query string, as the address bar holds it."""
        return f"/{self.path}" + (f"?{self.query_string}" if self.query_string else "")

    async def open(self) -> Session:
        page = await self.get(self.page_path())
        if page.status != 200:
            raise SessionError(f"GET /{self.path} answered {page.status}")
        for probe in ("/_stcore/health", "/_stcore/host-config"):  # the frontend's own first requests
            await self.get(probe)
        await self._connect()
        return self

    async def _connect(self, session_id: str | None = None) -> None:
        """Open the websocket (with the session id to resume, as the frontend sends it on a reconnect) and start
        reading it; cookies the upgrade's answer sets (a load balancer's, once it chose another replica) are kept."""
        from websockets.asyncio.client import connect

        headers = {"Origin": self.base_url, "User-Agent": USER_AGENT}
        if self.cookies:
            headers["Cookie"] = cookie_header(self.cookies)
        token = self.cookies.get("_streamlit_xsrf", "PLACEHOLDER_AUTH_TOKEN")
        self.ws = await asyncio.wait_for(
            connect(self.ws_url, subprotocols=["streamlit", token, *([session_id] if session_id else [])],
                    additional_headers=headers, max_size=None, open_timeout=self.timeout_s,
                    compression=self.compression,
                    local_addr=(self.local_address, 0) if self.local_address else None),
            self.timeout_s,
        )  # fmt: skip
        for value in self.ws.response.headers.get_all("Set-Cookie"):
            self.cookies.update(HttpResponse(101, [("Set-Cookie", value)], b"").set_cookies())
        self.closed_reason = None
        self._reader = asyncio.create_task(self._read(), name=f"streamlit-client-{self.path or 'home'}")

    async def reconnect(self) -> Run:
        """What the frontend does when its websocket closed under it (its replica died): a new websocket with the
        same cookies, naming the session it had (a replica that never held it starts a new one), then a run with
        every widget state this tab has set, its answers among them.  The run that finishes is returned."""
        if self._reader is not None:
            self._reader.cancel()
            try:
                await self._reader
            except (asyncio.CancelledError, Exception):
                pass
        await self._connect(self.session_id)
        return await self.run(list(self.moved.values()))

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
        if self._reader is not None:
            self._reader.cancel()
            try:
                await self._reader
            except (asyncio.CancelledError, Exception):
                pass

    async def __aenter__(self) -> Session:
        return await self.open()

    async def __aexit__(self, *exc) -> None:
        await self.close()

    # -- talking --

    def rerun_message(self, widget_states: list[WidgetState] | None = None, fragment_id: str = "",
                      auto: bool = False) -> BackMsg:
        """The BackMsg the frontend's sendRerunBackMsg builds (``fragment_id``: a widget's fragment, rerun alone;
        ``auto``: the fragment's timed run)."""
        msg = BackMsg()
        client = msg.rerun_script
        client.query_string = self.query_string
        if fragment_id:
            client.fragment_id, client.is_auto_rerun = fragment_id, auto
        if self.page_script_hash:
            client.page_script_hash = self.page_script_hash
        else:
            client.page_name = self.path  # the first run: the page is named by the URL's path
        client.widget_states.widgets.extend(widget_states or [])
        client.cached_message_hashes.extend(self.cache)
        ctx = client.context_info
        ctx.timezone, ctx.timezone_offset, ctx.locale = "UTC", 0, "en-US"
        ctx.url = f"{self.base_url}/{self.path}" + (f"?{self.query_string}" if self.query_string else "")
        ctx.color_scheme = "light"
        return msg

    async def run(self, widget_states: list[WidgetState] | None = None, fragment_id: str = "",
                  auto: bool = False) -> Run:
        """Ask for a script run, wait for the run that finishes (not one cut short), and return it.  With
        ``fragment_id``, the run of that fragment alone (a widget's move in it, or with ``auto`` its timer's run, as
        ``fragments`` makes a browser ask for it): the page's other elements stay as they are.

        Raises SessionError if the websocket closes first or no run finishes within the timeout; the Run
        then stays in `runs` unfinished."""
        if self.ws is None:
            raise SessionError("not open")
        run = Run(sent_at=time.perf_counter())
        self.runs.append(run)
        self._pending = run
        self._fragment_run = bool(fragment_id)
        self._finished.clear()
        states = widget_states or list(self.moved.values()) if auto else widget_states
        await self.ws.send(self.rerun_message(states, fragment_id, auto).SerializeToString())
        try:
            await asyncio.wait_for(self._finished.wait(), self.timeout_s)
        except TimeoutError:
            raise SessionError(f"no run finished within {self.timeout_s:.0f} s") from None
        if run.finished_at is None:
            raise SessionError(f"websocket closed during the run: {self.closed_reason}")
        await self.fetch_published()
        return run

    async def fetch_published(self) -> None:
        """GET what the run's components name (their scripts and tables, hosting.published) and this tab has not
        fetched yet, as a browser's loader.js does once the run is drawn (gzip accepted); counted in ``fetched``."""
        for name in sorted(self.published - self.fetched):
            self.fetched.add(name)
            self.fetched_bytes += len((await self.get(f"/_gelu/{name}", {"Accept-Encoding": "gzip"})).body)

    def control(self) -> Control | None:
        """The page's first slider (else number input), with the value this tab gave it last."""
        control = first_control(self.elements)
        if control is not None and control.id in self.moved:
            state = self.moved[control.id]
            if state.WhichOneof("value") == "double_array_value":
                value = tuple(state.double_array_value.data)
            else:
                value = (float(getattr(state, state.WhichOneof("value"))),)
            control = dataclasses.replace(control, value=value)
        return control

    async def move(self, direction: int = 1) -> Run:
        """One arrow-key step of the page's first control, and the rerun it causes.  On a page that still asks its
        question first (draw/lesson.py), the student first presses "Show me without predicting" (``show_me``)."""
        control = self.control()
        if control is None and await self.show_me() is not None:
            control = self.control()
        if control is None:
            raise SessionError(f"no slider or number input on /{self.path}")
        value = control.stepped(direction)
        self.moved[control.id] = control.state(value)
        self.query_string = control.url_query(self.query_string, value)
        return await self.run(list(self.moved.values()), control.fragment_id)

    async def answer(self, index: int) -> Run:
        """Choose option `index` of the page's last radio in the main area (the lesson's question, below the
        page), as a click on it sends it, and wait for that rerun."""
        radios = [seen for p, seen in sorted(self.elements.items()) if p and p[0] == MAIN and seen.kind == "radio"]
        if not radios:
            raise SessionError(f"no radio on /{self.path}")
        state = WidgetState(id=radios[-1].widget_id)
        state.string_value = radios[-1].options[index]  # a radio's value goes as its option's text
        self.moved[state.id] = state
        return await self.run(list(self.moved.values()), radios[-1].fragment_id)

    def enter(self, label: str, value: float) -> None:
        """Type ``value`` into the number input labelled ``label`` (anywhere on the page, the sidebar too); it is
        sent with the next run, as the frontend sends a number input's value once it is committed."""
        found = [seen.control for seen in self.elements.values()
                 if seen.kind == "number_input" and seen.control and seen.control.label == label]  # fmt: skip
        if not found:
            raise SessionError(f"no number input {label!r} on /{self.path}")
        self.moved[found[0].id] = found[0].state((float(value),))

    async def show_me(self) -> Run | None:
        """Press the page's "Show me without predicting" where the page waits for its question (a student who wants
        the whole page); the run it causes, or None where the page asks nothing now."""
        found = [seen for seen in self.elements.values()
                 if seen.kind == "button" and f"-{SHOW_ME_KEY}" in (seen.widget_id or "")]  # fmt: skip
        if not found:
            return None
        trigger = WidgetState(id=found[0].widget_id)
        trigger.trigger_value = True
        return await self.run([*self.moved.values(), trigger], found[0].fragment_id)

    async def expand(self, label: str, open_: bool = True) -> Run:
        """Open (or close) the expander labelled ``label`` whose state reruns the page (a key and on_change), as a
        click on its summary sends it."""
        found = [seen for seen in self.elements.values() if seen.kind == "block" and seen.widget_id
                 and seen.text == label]
        if not found:
            raise SessionError(f"no expander {label!r} on /{self.path}")
        state = WidgetState(id=found[0].widget_id)
        state.bool_value = open_
        self.moved[state.id] = state
        return await self.run(list(self.moved.values()), found[0].fragment_id)

    async def click(self, label: str) -> Run:
        """Press the button labelled `label` (anywhere on the page, the sidebar too), as a click sends it: a
        trigger, true for this one run."""
        found = [seen for seen in self.elements.values() if seen.kind == "button" and seen.text == label]
        if not found:
            raise SessionError(f"no button {label!r} on /{self.path}")
        trigger = WidgetState(id=found[0].widget_id)
        trigger.trigger_value = True
        return await self.run([*self.moved.values(), trigger], found[0].fragment_id)

    def _clear_stale(self) -> None:
        """After a fragment's run, what it drew before and did not draw again is gone, as the frontend removes it:
        everything inside the fragment's own container (the shortest path drawn with its id) that this run left."""
        for fragment_id in self._run_fragments:
            roots = [path for path, seen in self.elements.items() if seen.fragment_id == fragment_id]
            if not roots:
                continue
            root = min(roots, key=len)
            for path in [p for p in self.elements if p[:len(root)] == root and p not in self._drawn]:
                del self.elements[path]

    # -- listening --

    async def _read(self) -> None:
        from websockets.exceptions import ConnectionClosed

        try:
            async for data in self.ws:
                msg = ForwardMsg()
                msg.ParseFromString(data)
                self.handle(msg)
        except ConnectionClosed as closed:
            self.closed_reason = f"{closed.rcvd.code if closed.rcvd else 'no close frame'}"
        else:
            self.closed_reason = "closed"
        finally:
            if self.closed_reason is None:
                self.closed_reason = "reader stopped"
            self._finished.set()  # wake a waiting run(); it sees finished_at is None

    def handle(self, msg: ForwardMsg) -> None:
        """Take one ForwardMsg in, as the frontend would."""
        kind = msg.WhichOneof("type")
        if kind == "new_session":
            self._run_fragments, self._drawn = tuple(msg.metadata.run.fragment_ids), set()
            if not msg.metadata.run.fragment_ids and not self._fragment_run:
                # a new run redraws the page, and its fragments ask for their timers again; a fragment's run
                # redraws the fragment in place
                self.elements, self.fragments = {}, {}
            self.session_id = msg.new_session.initialize.session_id or self.session_id
            if msg.new_session.page_script_hash:
                self.page_script_hash = msg.new_session.page_script_hash
        elif kind == "navigation" and msg.navigation.page_script_hash:
            self.page_script_hash = msg.navigation.page_script_hash
        elif kind == "auto_rerun":
            self.fragments[msg.auto_rerun.fragment_id] = msg.auto_rerun.interval
        elif kind == "stop_auto_rerun":
            for fragment_id in msg.stop_auto_rerun.fragment_ids:
                self.fragments.pop(fragment_id, None)
        elif kind == "page_info_changed":
            self.query_string = msg.page_info_changed.query_string
        elif kind in ("delta", "ref_hash"):
            if kind == "delta" and msg.delta.new_element.WhichOneof("type") == "bidi_component":
                part = msg.delta.new_element.bidi_component
                self.published.update(PUBLISHED.findall(part.js_content + part.json))
            seen = self.cache.get(msg.ref_hash) if kind == "ref_hash" else summarize(msg)
            if seen is None:
                return
            if kind == "delta" and msg.delta.fragment_id:
                control = seen.control and dataclasses.replace(seen.control, fragment_id=msg.delta.fragment_id)
                seen = dataclasses.replace(seen, control=control, fragment_id=msg.delta.fragment_id)
            if kind == "delta" and msg.metadata.cacheable and msg.hash:
                self.cache[msg.hash] = seen
            self.elements[tuple(msg.metadata.delta_path)] = seen
            self._drawn.add(tuple(msg.metadata.delta_path))
            if seen.trouble:
                self.troubles.append(seen.trouble)
                if seen.kind == "exception":
                    self.exceptions += 1
                else:
                    self.error_boxes += 1
                if self._pending is not None:
                    self._pending.troubles.append(seen.trouble)
        elif kind == "script_finished":
            if msg.script_finished == FINISHED_EARLY_FOR_RERUN or self._pending is None:
                return
            self._clear_stale()
            run, self._pending = self._pending, None
            run.finished_at, run.status = time.perf_counter(), msg.script_finished
            self._finished.set()
