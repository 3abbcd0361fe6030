"""The class poll, drawn with Streamlit: a teacher starts a class, the students' answers to each
page's predict-then-reveal question are tallied, and the teacher's view shows them live.

* ``sidebar()``: "Start a class" makes a class code and two links: the students' (``class=<code>`` and the
  view) and the teacher's presenter link (the same, ``present=true`` and ``teacher=<key>``).
* ``check_link()``: a link's class code and teacher key are checked once per run; a code that is malformed,
  unknown or expired, or a key that does not open the class, is dropped from the URL with a short note.  The
  class then follows the session from page to page (kept in its session state, written back to the URL).
* ``student(page, question, choice)``: below the question: a student's answer is sent as the index of the
  choice, once per change (hosting.classpoll.LIMITER paces each session); the class's tally shows only after
  answering.
* ``teacher(page, question)``: on the teacher's link, a live chart of the answers (count and share), redrawn
  every ``REFRESH_S`` by an ``st.fragment(run_every=...)``, with "Reveal the answer" (marks the right choice) and
  "Reset this question".

Without a class code nothing here draws or stores anything.  The store (hosting.classpoll) unavailable: the
question works as before, the teacher's view says the tally is unavailable; never an error box.
"""

from __future__ import annotations

import html
from urllib.parse import urlencode

import streamlit as st

from hosting import classpoll, internals
from hosting.classpoll import ClassesFull, StoreUnavailable
from ui.theme import COLORS

CLASS, TEACHER = "class", "teacher"  # URL parameters (no widget binds them)
REFRESH_S = 1.0  # the teacher's chart is redrawn this often: a vote shows within about 1 s (+ one run)
_STATE = "poll_class"  # session state: (code, teacher key or "") of the class this session is in
_OPENED = "poll_opened"  # session state: the classes this session opened, [(code, key)]
_VOTED = "poll_voted"  # session state: {page: (round, choice index)} of the votes this session cast
BAR = COLORS["gelu"]


def _voter() -> str:
    """This session's voter id: random, made on its first vote, kept in its (server-side) session state.  A
    client cannot choose it, and it says nothing about the student."""
    import secrets

    return st.session_state.setdefault("poll_voter", secrets.token_hex(8))


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
        problem = "this link's class code is not one the app makes" if codes else "a teacher key needs a class code"
    else:
        try:
            if not classpoll.store().exists(code):
                problem = "this class is not open (it may have ended: a class lasts 12 hours)"
            elif keys and not (classpoll.KEY_RE.fullmatch(key) and classpoll.store().is_teacher(code, key)):
                problem = "this link's teacher key does not open the class: it opens the students' view"
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
            st.session_state.pop(_VOTED, None)
        st.session_state[_STATE] = take
    if problem:
        st.info(f"Part of this link could not be used: {problem}.", icon=":material/groups:")


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
                        "each answer is kept, for 12 hours; no names.")
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


def _start() -> None:
    opened = st.session_state.get(_OPENED) or []
    if len(opened) >= classpoll.CLASSES_PER_SESSION:
        st.session_state["poll_note"] = "This tab has opened its share of classes."
        return
    try:
        code, key = classpoll.store().open_class()
    except ClassesFull:
        st.session_state["poll_note"] = "This server is running as many classes as it holds; try again later."
        return
    except StoreUnavailable:
        st.session_state["poll_note"] = "The class store cannot be reached just now; try again in a minute."
        return
    st.session_state[_OPENED] = [*opened, (code, key)]
    st.session_state[_STATE] = (code, key)
    st.session_state.pop(_VOTED, None)
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


def student(page: str, question, choice: str | None) -> None:
    """Below the question: count this session's answer (once per change) and, once answered, the class's tally."""
    here = joined()
    if here is None or here[1] or choice is None or choice not in question.choices:
        return
    code, index, n = here[0], question.choices.index(choice), len(question.choices)
    voted = st.session_state.setdefault(_VOTED, {})
    store = classpoll.store()
    try:
        tally = store.tally(code, page, n)
        if tally is None:
            st.caption("This class has ended: your answer is not shared.")
            return
        if page in voted and voted[page][0] != tally.round and voted[page][1] == index:
            st.caption("Your teacher started this question again: choose an answer to be counted.")
            st.button("Answer again", key=f"poll_again_{page}", on_click=_answer_again, args=(page,))
            return
        if voted.get(page) != (tally.round, index):
            voter = _voter()
            if not classpoll.LIMITER.allow(voter):
                st.caption("Answers are coming fast: wait a moment, then choose again to be counted.")
                return
            counted = store.vote(code, page, voter, index, n)
            if counted is None:
                st.caption("This question has as many answers as it can count: yours is not added.")
                return
            voted[page] = (counted, index)
            tally = store.tally(code, page, n) or tally
    except StoreUnavailable:
        st.caption("The class's answers cannot be reached just now; your answer above still stands.")
        return
    with st.container(key=f"poll_student_{page}"):
        st.markdown(f"**Your class so far** ({tally.total} answer{'s' if tally.total != 1 else ''})")
        st.html(_bars(tally.counts, tally.shares(), question.choices, None, "Your class's answers"))


def _answer_again(page: str) -> None:
    st.session_state[f"quiz_{page}"] = None
    st.session_state.get(_VOTED, {}).pop(page, None)


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
        st.info("This class has ended (a class lasts 12 hours). Start a new one from the sidebar.",
                icon=":material/groups:")
        return
    right = _right_index(question) if tally.revealed else None
    st.html(_bars(tally.counts, tally.shares(), question.choices, right, "The class's answers"))
    st.caption(f"{tally.total} answer{'s' if tally.total != 1 else ''} · class {code} · "
               f"redrawn every {REFRESH_S:g} s")
    reveal, reset = st.columns(2)
    reveal.button("Reveal the answer", key=f"poll_reveal_{page}", disabled=tally.revealed,
                  on_click=_act, args=("reveal", code, page), icon=":material/visibility:")
    reset.button("Reset this question", key=f"poll_reset_{page}", on_click=_act, args=("reset", code, page),
                 icon=":material/restart_alt:")


def _act(what: str, code: str, page: str) -> None:
    try:
        getattr(classpoll.store(), what)(code, page)
    except StoreUnavailable:
        pass  # the panel says so on its next drawing
