"""The class poll, drawn with Streamlit: a teacher starts a class, the students' answers to each
page's predict-then-reveal question are tallied, and the teacher's view shows them live.

* ``sidebar()``: "Start a class", for as many students as the teacher states, makes a class code and two links:
  the students' (``class=<code>`` and the view) and the teacher's presenter link (the same, ``present=true`` and
  ``teacher=<key>``).  Starts are bounded per tab and per network (hosting.classpoll.Starts).
* ``check_link()``: a link's class code and teacher key are checked once per run; a code that is malformed,
  unknown or expired, or a key that does not open the class, is dropped from the URL with a short note.  The
  class then follows the session from page to page (kept in its session state, written back to the URL).
* ``student(page, question, choice)``: below the question: a student's answer is sent as the index of the
  choice, once per change (hosting.classpoll.LIMITER paces each voter), under the browser's voter id
  (hosting.classpoll.VoterCookie), so a reconnected or reloaded tab moves its vote and never adds one.  The
  student reads "Your answer is counted." only once the store has answered that it holds it; the class's tally
  shows then.  A full class refuses the answer and says so; a store that cannot be reached keeps the answer in
  the session and sends it again every ``RETRY_S`` (and at the next run), saying so meanwhile.
* ``teacher(page, question)``: on the teacher's link, a live chart of the answers (count and share) and the
  answers refused because the class was full, redrawn every ``REFRESH_S`` by an ``st.fragment(run_every=...)``,
  with "Reveal the answer" (marks the right choice) and "Reset this question".  A class that closed, or that a
  store restarted without its data lost, is named as such.

Without a class code nothing here draws or stores anything.  The store (hosting.classpoll) unavailable: the
question works as before, the teacher's view says the tally is unavailable; never an error box.
"""

from __future__ import annotations

import html
import os
import secrets
import time
from urllib.parse import urlencode

import streamlit as st

from hosting import classpoll, internals
from hosting.classpoll import ClassesFull, SeatsTaken, StoreUnavailable, TooManyStarts
from ui.theme import COLORS

CLASS, TEACHER = "class", "teacher"  # URL parameters (no widget binds them)
REFRESH_S = 1.0  # the teacher's chart is redrawn this often: a vote shows within about 1 s (+ one run)
RETRY_S = 2.0  # an answer the store could not take is sent again this often
_STATE = "poll_class"  # session state: (code, teacher key or "") of the class this session is in
_OPENED = "poll_opened"  # session state: the classes this session opened, [(code, key)]
_VOTED = "poll_voted"  # session state: {page: (round, choice index)} of the votes the store holds
_PENDING = "poll_pending"  # session state: {page: choice index} of answers the store could not take yet
_REFUSED = "poll_refused"  # session state: {page: round} where the class was full when this voter answered
_SEEN = "poll_seen"  # session state: (code, store id, opening time) of the class as the store last showed it
_RETRYING = "poll_retrying"  # session state, for one run: the retry fragment is drawn by a full run
BAR = COLORS["gelu"]
IDLE_MIN = classpoll.IDLE_S // 60

CLOSED_FOR_TEACHER = ("This class has ended, as every class does 12 hours after it starts. Start a new class from "
                      "the sidebar.")
IDLE_FOR_TEACHER = (f"This class closed after {IDLE_MIN} minutes in which nobody answered or watched its tally. "
                    "Start a new class from the sidebar.")
LOST_FOR_TEACHER = ("The class store restarted without its data, so this class and its answers are gone. Start a "
                    "new class from the sidebar.")
CLOSED_FOR_STUDENT = "This class has closed, so your answer is not shared with it."
LOST_FOR_STUDENT = "This class's answers were lost when the class store restarted, so your answer is not shared."
COUNTED = "Your answer is counted."
PENDING = ("Your answer is not counted yet, because the class's answers cannot be reached just now; this page keeps "
           "it and sends it again every few seconds.")
COUNTED_UNSEEN = ("Your answer is counted; the class's answers cannot be reached just now, so their tally is not "
                  "shown.")
REFUSED = ("Your answer is not counted, because this question already has an answer from as many students as your "
           "teacher said the class has.")


def _voter(code: str) -> str:
    """This browser's voter id in class ``code``: from its voter cookie (hosting.classpoll.VoterCookie), the same
    on every replica and after every reconnect; without one, a random id kept in this session.  A client chooses
    its cookie, as it chooses to open another session: either way one more voter, within the class's size."""
    cookie = st.context.cookies.get(classpoll.VOTER_COOKIE)
    if isinstance(cookie, str) and classpoll.KEY_RE.fullmatch(cookie):
        return classpoll.voter_id(code, cookie)
    return st.session_state.setdefault("poll_voter", secrets.token_hex(8))


def _address() -> str | None:
    """The client's network address: the last X-Forwarded-For entry where the app is reached only through a proxy
    that appends it (``GELU_BEHIND_PROXY=1``: deploy/), else the websocket's peer."""
    behind = os.environ.get(classpoll.BEHIND_PROXY_ENV, "").strip() == "1"
    forwarded, peer = st.context.headers.get_all("X-Forwarded-For"), st.context.ip_address
    forwarded = [f for f in forwarded if isinstance(f, str)] if isinstance(forwarded, list) else []
    return classpoll.client_address(forwarded, peer if isinstance(peer, str) else None, behind)


def _seen(code: str, tally) -> None:
    st.session_state[_SEEN] = (code, tally.store, tally.opened)


def _gone(code: str) -> str:
    """Why the store no longer holds class ``code``: "lost" (its store restarted empty, or is another than the one
    this session saw it in), "idle" (closed unused, younger than 12 hours as this session last saw it) or
    "closed"."""
    seen_code, seen_store, opened = st.session_state.get(_SEEN) or ("", "", 0.0)
    seen_store, opened = (seen_store, opened) if seen_code == code else ("", 0.0)
    try:
        if classpoll.store().lost(code, seen_store):
            return "lost"
    except StoreUnavailable:
        pass
    return "idle" if opened and time.time() - opened < classpoll.CLASS_TTL_S else "closed"


def joined() -> tuple[str, str] | None:
    """(class code, teacher key or "") of this session's class, None when it is in none."""
    return st.session_state.get(_STATE)


def is_teacher() -> bool:
    return bool((joined() or ("", ""))[1])


# ------------------------------------------------------------------ the link

def check_link() -> None:
    """Take a link's class code (and teacher key) into the session, or drop them with a note saying why."""
    codes, keys = st.query_params.get_all(CLASS), st.query_params.get_all(TEACHER)
    if not codes and not keys:
        here = joined()
        if here is not None:  # a page switch dropped the URL's parameters: the class stays with the session
            st.query_params[CLASS] = here[0]
            if here[1]:
                st.query_params[TEACHER] = here[1]
        return
    code, key = (codes[0] if len(codes) == 1 else ""), (keys[0] if len(keys) == 1 else "")
    if joined() == (code, key):
        return  # checked when the session took it
    problem, take = None, None
    if not classpoll.valid_code(code):
        problem = ("This link's class code is not one the app makes, so the page opens without a class." if codes
                   else "This link has a teacher key but no class code, so the page opens without a class.")
    else:
        try:
            if not classpoll.store().exists(code):
                problem = (
                    "This link's class is gone, so the page opens without a class: the class store restarted "
                    "without its data." if _gone(code) == "lost" else
                    f"This link's class is not open, so the page opens without a class: a class closes 12 hours "
                    f"after it starts, or after {IDLE_MIN} minutes in which nobody answered or watched it.")
            elif keys and not (classpoll.KEY_RE.fullmatch(key) and classpoll.store().is_teacher(code, key)):
                problem = "This link's teacher key does not open the class, so the page opens the students' view."
                take = (code, "")
            else:
                take = (code, key)
        except StoreUnavailable:  # keep the link as it is: the next run asks again
            st.info("The class's tally cannot be reached just now; the question on each page still works.",
                    icon=":material/cloud_off:")
            return
    if take is None:
        internals.drop_url_values([CLASS, TEACHER])
        st.session_state.pop(_STATE, None)
    else:
        if not take[1] and keys:
            internals.drop_url_values([TEACHER])
        if (joined() or ("",))[0] != code:
            for kept in (_VOTED, _PENDING, _REFUSED):
                st.session_state.pop(kept, None)
        st.session_state[_STATE] = take
    if problem:
        st.info(problem, icon=":material/groups:")


# ------------------------------------------------------------------ the teacher's sidebar

def _links(code: str, key: str) -> tuple[str, str]:
    base = (st.context.url or "").split("?")[0]
    if base.count("/") == 2:  # http://host:port: the root page, written as browsers write it
        base += "/"
    view = [(k, v) for k in st.query_params if k not in (CLASS, TEACHER, "present", "hide")
            for v in st.query_params.get_all(k)]  # fmt: skip
    students = base + "?" + urlencode(view + [(CLASS, code)])
    return students, base + "?" + urlencode(view + [("present", "true"), (CLASS, code), (TEACHER, key)])


def sidebar() -> None:
    """The sidebar's "Start a class": a button, then the class's two links.  (Plain text, not st.caption: a
    caption's grey on the sidebar's background is 4.1:1, under WCAG AA's 4.5.)"""
    with st.expander("Start a class", icon=":material/groups:", expanded=bool(st.session_state.get(_OPENED))):
        opened = st.session_state.get(_OPENED) or []
        if not opened:
            st.markdown("Your students' answers to each page's question, tallied live for you. Only the index of "
                        "each answer is kept, while the class is open (12 hours at most); no names.")
            st.number_input("Students in your class", min_value=1, max_value=classpoll.MAX_VOTERS,
                            value=classpoll.DEFAULT_SIZE, step=1, key="poll_size",
                            help="Answers from more students than this are refused, and shown to you as refused.")
            st.button("Start a class", key="poll_start", on_click=_start, icon=":material/add:")
            note = st.session_state.pop("poll_note", None)
            if note:
                st.warning(note, icon=":material/block:")
            return
        code, key = opened[-1]
        students, teacher = _links(code, key)
        st.markdown(f"Class code **{code}**")
        st.markdown("Students' link: answers are counted, the tally shows after answering.")
        st.code(students, language=None, wrap_lines=True)
        st.markdown("Your presenter link: the live answers. Keep it to yourself.")
        st.code(teacher, language=None, wrap_lines=True)
        st.link_button("Open the presenter view", teacher, icon=":material/co_present:")


STARTS_REFUSED = {
    "seats": ("Classes started from your network already hold as many seats as one network may hold on this server; "
              f"a seat comes free when its class closes, after {IDLE_MIN} minutes without answers at most."),
    "pace": "Classes are being started quickly from your network; try again in a minute.",
}


def _start() -> None:
    opened = st.session_state.get(_OPENED) or []
    if len(opened) >= classpoll.CLASSES_PER_SESSION:
        st.session_state["poll_note"] = "This tab has opened its share of classes."
        return
    size = st.session_state.get("poll_size")
    size = size if isinstance(size, int) and 1 <= size <= classpoll.MAX_VOTERS else classpoll.DEFAULT_SIZE
    try:
        code, key = classpoll.STARTS.start(classpoll.store(), _address(), size)
    except TooManyStarts as refused:
        st.session_state["poll_note"] = STARTS_REFUSED[refused.reason]
        return
    except ClassesFull:
        st.session_state["poll_note"] = "This server is running as many classes as it holds; try again later."
        return
    except StoreUnavailable:
        st.session_state["poll_note"] = "The class store cannot be reached just now; try again in a minute."
        return
    st.session_state[_OPENED] = [*opened, (code, key)]
    st.session_state[_STATE] = (code, key)
    for kept in (_VOTED, _PENDING, _REFUSED):
        st.session_state.pop(kept, None)
    st.query_params[CLASS], st.query_params[TEACHER] = code, key


# ------------------------------------------------------------------ the student

def _bars(counts, shares, choices, right: int | None, label: str) -> str:
    rows = []
    for i, (choice, n, share) in enumerate(zip(choices, counts, shares, strict=True)):
        mark = " <span class='gelu-poll-right'>✓ right answer</span>" if i == right else ""
        rows.append(
            f"<li class='gelu-poll-row{' gelu-poll-is-right' if i == right else ''}'>"
            f"<span class='gelu-poll-label'>{html.escape(choice)}{mark}</span>"
            f"<span class='gelu-poll-track'><span class='gelu-poll-bar' style='width:{share * 100:.1f}%'></span></span>"
            f"<span class='gelu-poll-count'>{n} · {share * 100:.0f}%</span></li>"
        )
    return (
        "<style>"
        ".gelu-poll ul { list-style: none; margin: 0; padding: 0; display: grid; gap: 0.45rem; }"
        ".gelu-poll-row { display: grid; grid-template-columns: minmax(8rem, 2fr) 3fr auto; gap: 0.6rem;"
        " align-items: center; }"
        ".gelu-poll-track { height: 1.1rem; border-radius: 0.3rem; background: rgba(138, 148, 166, 0.22); }"
        f".gelu-poll-bar {{ display: block; height: 100%; border-radius: 0.3rem; background: {BAR}; }}"
        f".gelu-poll-is-right .gelu-poll-bar {{ background: {COLORS['gelu_tanh']}; }}"
        ".gelu-poll-right { font-weight: 600; white-space: nowrap; }"
        ".gelu-poll-count { font-variant-numeric: tabular-nums; white-space: nowrap; }"
        "@media (max-width: 640px) { .gelu-poll-row { grid-template-columns: 1fr auto; }"
        " .gelu-poll-track { grid-column: 1 / -1; grid-row: 2; } }"
        "</style>"
        f"<div class='gelu-poll' role='group' aria-label='{html.escape(label)}'><ul>{''.join(rows)}</ul></div>"
    )


def student(page: str, question, choice: str | None, on_again=None) -> None:
    """Below the question: count this browser's answer (once per change) and, once counted, the class's tally.
    ``on_again``: called when the student answers a question the teacher started again (a new prediction)."""
    here = joined()
    if here is None or here[1] or choice is None or choice not in question.choices:
        return
    code, index, n = here[0], question.choices.index(choice), len(question.choices)
    voted = st.session_state.setdefault(_VOTED, {})
    pending = st.session_state.setdefault(_PENDING, {})
    store = classpoll.store()
    try:
        tally = store.tally(code, page, n)
        if tally is None:
            st.caption(LOST_FOR_STUDENT if _gone(code) == "lost" else CLOSED_FOR_STUDENT)
            return
        _seen(code, tally)
        if page in voted and voted[page][0] != tally.round and voted[page][1] == index:
            st.caption("Your teacher started this question again: choose an answer to be counted.")
            st.button("Answer again", key=f"poll_again_{page}", on_click=_answer_again, args=(page, on_again))
            return
        refused = st.session_state.setdefault(_REFUSED, {})
        if refused.get(page) == tally.round:  # full before this voter answered: no answer of theirs counts this round
            st.caption(REFUSED)
            return
        if voted.get(page) != (tally.round, index):
            voter = _voter(code)
            if pending.get(page) != index and not classpoll.LIMITER.allow(voter):  # a retry is not a new answer
                st.caption("Answers are coming fast: wait a moment, then choose again to be counted.")
                return
            pending[page] = index
            try:
                counted = store.vote(code, page, voter, index, n)
            except SeatsTaken:
                pending.pop(page, None)
                refused[page] = tally.round
                st.caption(REFUSED)
                return
            pending.pop(page, None)
            if counted is None:
                st.caption(CLOSED_FOR_STUDENT)
                return
            voted[page] = (counted, index)
            tally = store.tally(code, page, n) or tally
    except StoreUnavailable:
        if (voted.get(page) or (0, None))[1] == index and page not in pending:
            st.caption(COUNTED_UNSEEN)
        else:
            pending[page] = index
            st.session_state[_RETRYING] = True
            _retry(code, page, n)
        return
    with st.container(key=f"poll_student_{page}"):
        st.caption(COUNTED)
        st.markdown(f"**Your class so far** ({tally.total} answer{'s' if tally.total != 1 else ''})")
        st.html(_bars(tally.counts, tally.shares(), question.choices, None, "Your class's answers"))


@st.fragment(run_every=RETRY_S)
def _retry(code: str, page: str, n: int) -> None:
    """While an answer waits for the store: says so and, every RETRY_S, asks the store again; once it answers,
    the whole page runs again, and counts the answer (``student``)."""
    if not st.session_state.pop(_RETRYING, False):  # a run of this fragment alone, not of the page that drew it
        try:
            classpoll.store().tally(code, page, n)
        except StoreUnavailable:
            pass
        else:
            st.rerun(scope="app")
    st.caption(PENDING)


def _answer_again(page: str, on_again=None) -> None:
    st.session_state[f"quiz_{page}"] = None
    st.session_state.get(_VOTED, {}).pop(page, None)
    if on_again is not None:
        on_again()


# ------------------------------------------------------------------ the teacher

def teacher(page: str, question) -> None:
    """On the teacher's link: the live tally of this page's question (nothing for anyone else)."""
    here = joined()
    if here is None or not here[1]:
        return
    with st.container(key="class_poll_teacher"):
        _teacher_panel(page, question, here[0])


def _right_index(question) -> int | None:
    for i, c in enumerate(question.choices):
        if question.reveal(c)[0]:
            return i
    return None


@st.fragment(run_every=REFRESH_S)
def _teacher_panel(page: str, question, code: str) -> None:
    st.markdown(f"#### What your class answered\n{question.text}")
    store = classpoll.store()
    try:
        tally = store.tally(code, page, len(question.choices))
    except StoreUnavailable:
        st.warning("The class tally is unavailable just now (its store cannot be reached). The questions "
                   "still work for every student; this view tries again every second.", icon=":material/cloud_off:")
        return
    if tally is None:
        why = _gone(code)
        st.info(LOST_FOR_TEACHER if why == "lost" else IDLE_FOR_TEACHER if why == "idle" else CLOSED_FOR_TEACHER,
                icon=":material/groups:")
        return
    _seen(code, tally)
    right = _right_index(question) if tally.revealed else None
    st.html(_bars(tally.counts, tally.shares(), question.choices, right, "The class's answers"))
    st.caption(f"{tally.total} answer{'s' if tally.total != 1 else ''} · class {code} · "
               f"redrawn every {REFRESH_S:g} s")
    if tally.refused:
        st.caption(_refused(tally.refused, tally.size))
    reveal, reset = st.columns(2)
    reveal.button("Reveal the answer", key=f"poll_reveal_{page}", disabled=tally.revealed,
                  on_click=_act, args=("reveal", code, page), icon=":material/visibility:")
    reset.button("Reset this question", key=f"poll_reset_{page}", on_click=_act, args=("reset", code, page),
                 icon=":material/restart_alt:")


def _refused(n: int, size: int) -> str:
    """The teacher's note on answers refused because the class was full (at most ``size`` are counted)."""
    if n >= size:
        return f"At least {n} more students answered than the {size} this class is set for; they are not counted."
    if n == 1:
        return f"1 more student answered than the {size} this class is set for; that answer is not counted."
    return f"{n} more students answered than the {size} this class is set for; their answers are not counted."


def _act(what: str, code: str, page: str) -> None:
    try:
        getattr(classpoll.store(), what)(code, page)
    except StoreUnavailable:
        pass  # the panel says so on its next drawing
