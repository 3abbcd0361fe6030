"""The class poll, drawn with Streamlit: a teacher starts a class, its students answer each page's question by peer
instruction, and the teacher's console shows the answers live.

Peer instruction (Crouch and Mazur, 2001).  In a class, a question's first round is each student's own answer: the
student reads that their answer is in, never whether it is right nor how the class answered, and the page keeps
what answers the question hidden ("Show me" is not offered: the teacher decides for the room).  The teacher sees
the spread live; may open a second round after a discussion (the students answer again; both rounds shown side by
side, the shift); "Reveal the answer" shows the right answer with its computed reason on the teacher's screen and
on every student's, and only then do the students' pages unfold.  A waiting student's page asks the store every
``WATCH_S`` whether the question moved on (``_watch``, a light fragment), and at each run.

* ``check_link()``: a link's class code and teacher key are checked once per session; a code that is malformed,
  unknown, closed or ended, or a key that does not open the class, is dropped from the URL with a short note.  The
  class then follows the session from page to page.  A student counts as joined at their first run in the class
  (``ClassStore.join``, by voter id: a reconnect or a reload joins nobody new).
* ``sidebar()``: outside a class, "Join a class" (a class code typed in) and "Start a class" (for as many students
  as the teacher states; starts bounded per tab and per network, hosting.classpoll.Starts); in a class, the class
  and, for its teacher, the presenter view.  A student sees no teacher's tool.
* ``question_state(page, question)``, ``count_answer(...)``, ``watch(...)``, ``after_reveal(...)``: the student's
  side of a question, called by draw.lesson.ask_first.  An answer is sent as the index of the choice, once per
  change (hosting.classpoll.LIMITER paces each voter), under the browser's voter id (hosting.classpoll.VoterCookie).
  The student reads that it is in only once the store holds it; a full class refuses it and says so; a store that
  cannot be reached keeps it in the session and sends it again every ``RETRY_S``.
* ``console(page, question, form)``: on the teacher's link, above the page: the question, its answers round by
  round (redrawn every ``REFRESH_S`` by an ``st.fragment(run_every=...)``), "18 of 24 answered", the buttons of
  peer instruction, the reveal with its reason, a QR code and the short way in for students, and "Manage the
  class" (every question's rounds, the answers as CSV, reset every question, end the class).

Without a class code nothing here draws or stores anything.  The store (hosting.classpoll) unavailable: the
question works as before for a student alone, a student's answer waits, the console says so; never an error box.
"""

from __future__ import annotations

import csv
import functools
import html
import io
import os
import secrets
import time
from urllib.parse import urlencode, urlsplit

import streamlit as st

from draw.assets import text
from draw.frame import CLASS, TEACHER
from draw.i18n import use_chosen
from hosting import classpoll, internals
from hosting.classpoll import AnswerClosed, ClassesFull, SeatsTaken, StoreUnavailable, TooManyStarts
from ui import format as fmt
from ui.i18n import N_, SOURCE, _, current, ngettext
from ui.theme import COLORS

REFRESH_S = 0.5  # the teacher's console is redrawn this often: a vote shows within about half a second (+ one run)
WATCH_S = 2.0  # a waiting student's page asks the class's state this often: a reveal shows within about 2 s
RETRY_S = 2.0  # an answer the store could not take is sent again this often
_STATE = "poll_class"  # session state: (code, teacher key or "") of the class this session is in
_OPENED = "poll_opened"  # session state: the classes this session opened, [(code, key)]
_JOINED = "poll_joined"  # session state: the class code this session's voter is counted as joined in
_VOTED = "poll_voted"  # session state: {page: (round, choice index)} of the votes the store holds
_ANSWERS = "poll_answers"  # session state: {page: {round: choice index}}: this student's answers the store holds
_PENDING = "poll_pending"  # session state: {page: choice index} of answers the store could not take yet
_REFUSED = "poll_refused"  # session state: {page: round} where the class was full when this voter answered
_SEEN = "poll_seen"  # session state: (code, store id, opening time) of the class as the store last showed it
_DRAWN = "poll_drawn"  # session state: {page: (round, revealed)} as this session's page was last drawn
_FULL = "poll_full_run"  # session state, for one call: a fragment is drawn by a full run, not run on its own
_CONFIRM = "poll_confirm"  # session state: "reset_all" or "end" while the teacher is asked to confirm it
_STYLE = "<style>" + text("poll.css") + "</style>"
IDLE_MIN = classpoll.IDLE_S // 60

CLOSED_FOR_TEACHER = N_("This class has ended, as every class does 12 hours after it starts. Start a new class from "
                      "the sidebar.")
IDLE_WORDS = N_("This class closed after {minutes} minutes in which nobody answered or watched its answers. Start a "
                "new class from the sidebar.")
IDLE_FOR_TEACHER = IDLE_WORDS.format(minutes=IDLE_MIN)
LOST_FOR_TEACHER = N_("The class store restarted without its data, so this class and its answers are gone. Start a "
                    "new class from the sidebar.")
ENDED_FOR_TEACHER = N_("You ended this class, and its answers are deleted. Start a new class from the sidebar.")
CLOSED_FOR_STUDENT = N_("This class has closed, so your answers are your own again and the page works as it does "
                        "alone.")
LOST_FOR_STUDENT = N_("This class's answers were lost when the class store restarted, so your answers are your own "
                    "again and the page works as it does alone.")
ENDED_FOR_STUDENT = N_("Your teacher ended the class, and its answers are deleted. Your answers are your own again, "
                     "and the page works as it does alone.")
WAIT_FIRST = N_("Answer on your own. Your teacher shows the answer to the whole class, and this page shows what "
              "answers the question then.")
IN_FIRST = N_("Your answer is in. Wait for your teacher to show the answer; until then you may change your answer, "
            "and nobody sees it but as part of the class's count.")
IN_SECOND = N_("Your second answer is in. Wait for your teacher to show the answer; until then you may change your "
             "answer.")
PENDING = N_("Your answer is not counted yet, because the class's answers cannot be reached just now; this page keeps "
           "it and sends it again every few seconds.")
UNSEEN = N_("The class's answers cannot be reached just now; this page asks again every few seconds, and your "
          "answer is kept.")
REFUSED = N_("Your answer is not counted, because this question already has an answer from as many students as your "
           "teacher said the class has.")
CLOSED_ROUND = N_("Your teacher has shown the answer, so a changed answer is not counted.")
FAST = N_("Answers are coming fast: wait a moment, then choose again to be counted.")


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
    """Why the store no longer holds class ``code``: "ended" (by its teacher), "lost" (its store restarted empty, or
    is another than the one this session saw it in), "idle" (closed unused, younger than 12 hours as this session
    last saw it) or "closed"."""
    seen_code, seen_store, opened = st.session_state.get(_SEEN) or ("", "", 0.0)
    seen_store, opened = (seen_store, opened) if seen_code == code else ("", 0.0)
    try:
        if classpoll.store().ended(code):
            return "ended"
        if classpoll.store().lost(code, seen_store):
            return "lost"
    except StoreUnavailable:
        pass
    return "idle" if opened and time.time() - opened < classpoll.CLASS_TTL_S else "closed"


def joined() -> tuple[str, str] | None:
    """(class code, teacher key or "") of this session's class, None when it is in none."""
    return st.session_state.get(_STATE)


def role() -> str | None:
    """"teacher" (on the class's teacher link), "student" (in a class) or None (in none)."""
    here = joined()
    return None if here is None else "teacher" if here[1] else "student"


def is_teacher() -> bool:
    return role() == "teacher"


def shown_code(code: str) -> str:
    """A class code as a room reads it aloud: upper case, in two groups of four (kept on one line).

    >>> shown_code("k7m2p9qx") == "K7M2\u00a0P9QX"
    True
    """
    return f"{code[:4]}\u00a0{code[4:]}".upper()


def typed_code(typed: str) -> str:
    """A class code as a student may type it (any case, spaces or dashes between its letters), as the app makes it.

    >>> typed_code(" K7M2-p9qx "), typed_code("K7M2 P9QX")
    ('k7m2p9qx', 'k7m2p9qx')
    """
    return "".join(c for c in typed.lower() if c not in " -\u00a0\t")


def _leave(notice: str | None = None) -> None:
    """This session leaves its class (the URL's class code and teacher key dropped), with a note why."""
    st.session_state.pop(_STATE, None)
    st.session_state.pop(_JOINED, None)
    for kept in (_VOTED, _ANSWERS, _PENDING, _REFUSED, _DRAWN):
        st.session_state.pop(kept, None)
    internals.drop_url_values([CLASS, TEACHER])
    if notice:
        st.session_state["poll_notice"] = notice


def _take(code: str, key: str) -> None:
    if (joined() or ("",))[0] != code:
        for kept in (_VOTED, _ANSWERS, _PENDING, _REFUSED, _DRAWN):
            st.session_state.pop(kept, None)
    st.session_state[_STATE] = (code, key)


def _join(code: str) -> None:
    """Count this student as joined (once per session and class; the store counts each voter once)."""
    if st.session_state.get(_JOINED) == code:
        return
    try:
        if classpoll.store().join(code, _voter(code)) is not None:
            st.session_state[_JOINED] = code
    except StoreUnavailable:
        pass  # the next run asks again


# ------------------------------------------------------------------ the link

def check_link() -> None:
    """Take a link's class code (and teacher key) into the session, or drop them with a note saying why; count a
    student as joined."""
    notice = st.session_state.pop("poll_notice", None)
    if notice:
        st.info(notice, icon=":material/groups:")
    codes, keys = st.query_params.get_all(CLASS), st.query_params.get_all(TEACHER)
    if not codes and not keys:
        here = joined()
        if here is not None:  # a page switch dropped the URL's parameters: the class stays with the session
            st.query_params[CLASS] = here[0]
            if here[1]:
                st.query_params[TEACHER] = here[1]
    else:
        _check(codes, keys)
    if role() == "student":
        _join(joined()[0])


def _check(codes: list[str], keys: list[str]) -> None:
    code, key = (codes[0] if len(codes) == 1 else ""), (keys[0] if len(keys) == 1 else "")
    if joined() == (code, key):
        return  # checked when the session took it
    problem, take = None, None
    if not classpoll.valid_code(code):
        problem = (_("This link's class code is not one the app makes, so the page opens without a class.") if codes
                   else _("This link has a teacher key but no class code, so the page opens without a class."))
    else:
        try:
            if not classpoll.store().exists(code):
                why = _gone(code)
                problem = (
                    _("This link's class has ended: its teacher ended it, so the page opens without a class.")
                    if why == "ended" else
                    _("This link's class is gone, so the page opens without a class: the class store restarted "
                      "without its data.") if why == "lost" else
                    _("This link's class is not open, so the page opens without a class: a class closes 12 hours "
                      "after it starts, or after {minutes} minutes in which nobody answered or watched it.").format(
                        minutes=IDLE_MIN))
            elif keys and not (classpoll.KEY_RE.fullmatch(key) and classpoll.store().is_teacher(code, key)):
                problem = _("This link's teacher key does not open the class, so the page opens the students' view.")
                take = (code, "")
            else:
                take = (code, key)
        except StoreUnavailable:  # keep the link as it is: the next run asks again
            st.info(_("The class's answers cannot be reached just now; the question on each page still works."),
                    icon=":material/cloud_off:")
            return
    if take is None:
        internals.drop_url_values([CLASS, TEACHER])
        st.session_state.pop(_STATE, None)
    else:
        if not take[1] and keys:
            internals.drop_url_values([TEACHER])
        _take(*take)
    if problem:
        st.info(problem, icon=":material/groups:")


# ------------------------------------------------------------------ the sidebar

def base_url() -> str:
    """The app's address without its path or query: http://host:port/ as browsers write the root page."""
    parts = urlsplit(st.context.url or "")
    return f"{parts.scheme}://{parts.netloc}/" if parts.scheme and parts.netloc else "/"


def students_link(code: str) -> str:
    """The students' link to this view: the page's URL, its settings and the class code (never a teacher key)."""
    page = (st.context.url or "").split("?")[0]
    if page.count("/") == 2:  # http://host:port: the root page, written as browsers write it
        page += "/"
    view = [(k, v) for k in st.query_params if k not in (CLASS, TEACHER, "present", "hide")
            for v in st.query_params.get_all(k)]  # fmt: skip
    carried = [("lang", current())] if "lang" not in st.query_params and current() != SOURCE else []
    return page + "?" + urlencode(view + [(CLASS, code)] + carried)  # the teacher's language, unless English


def presenter_link(code: str, key: str) -> str:
    """The teacher's presenter link to this view: the students' link with ``present=true`` and the teacher key."""
    return students_link(code) + "&" + urlencode([("present", "true"), (TEACHER, key)])


def sidebar() -> None:
    """The sidebar's class box: outside a class "Join a class" and "Start a class"; in one, the class itself.
    (Plain text, not st.caption: a caption's grey on the sidebar's background is 4.1:1, under WCAG AA's 4.5.)"""
    here = role()
    if here == "student":
        with st.expander(_("Your class"), icon=":material/groups:", expanded=True):
            st.markdown(_("You are in class **{code}**. Your answers go to your teacher's count, without your "
                          "name.").format(code=shown_code(joined()[0])))
            st.button(_("Leave the class"), key="poll_leave", on_click=_leave,
                      args=(_("You left the class: your answers are your own again."),), icon=":material/logout:")
        return
    if here is None:
        with st.expander(_("Join a class"), icon=":material/login:"):
            st.text_input(_("Class code"), key="poll_join_code", max_chars=16, placeholder="K7M2 P9QX",
                          help=_("The code your teacher shows, eight letters and digits."))
            st.button(_("Join"), key="poll_join", on_click=_join_typed, icon=":material/login:")
            note = st.session_state.pop("poll_join_note", None)
            if note:
                st.warning(note, icon=":material/block:")
    with st.expander(_("Start a class"), icon=":material/groups:", expanded=here == "teacher"):
        if here != "teacher":
            st.markdown(_("Your students' answers to each page's question, for you to show the class: each answers "
                          "alone first, then you may let them discuss and answer again, then you reveal the answer. "
                          "Only the index of each answer is kept, while the class is open (12 hours at most); no "
                          "names."))
            st.number_input(_("Students in your class"), min_value=1, max_value=classpoll.MAX_VOTERS,
                            value=classpoll.DEFAULT_SIZE, step=1, key="poll_size",
                            help=_("Answers from more students than this are refused, and shown to you as refused."))
            st.button(_("Start a class"), key="poll_start", on_click=_start, icon=":material/add:")
            note = st.session_state.pop("poll_note", None)
            if note:
                st.warning(note, icon=":material/block:")
            return
        code, key = joined()
        st.markdown(_("Your class: code **{code}**.").format(code=shown_code(code)))
        st.markdown(_("Your students join by the students' link under Share this view, by the QR code on your "
                      "presenter view, or by typing the code under Join a class."))
        st.link_button(_("Open the presenter view"), presenter_link(code, key), icon=":material/co_present:")


def _join_typed() -> None:
    use_chosen()  # a callback runs before the page: in the session's language
    code = typed_code(st.session_state.get("poll_join_code") or "")
    if not classpoll.valid_code(code):
        st.session_state["poll_join_note"] = _("That is not a class code: a class code has eight letters and "
                                               "digits, as your teacher shows it.")
        return
    try:
        found = classpoll.store().exists(code)
    except StoreUnavailable:
        st.session_state["poll_join_note"] = _("The classes cannot be reached just now; try again in a minute.")
        return
    if not found:
        st.session_state["poll_join_note"] = _("No class is open with the code {code}: check it with your "
                                               "teacher.").format(code=shown_code(code))
        return
    _take(code, "")
    st.query_params[CLASS] = code
    st.session_state["poll_join_code"] = ""


STARTS_REFUSED = {
    "seats": N_("Classes started from your network already hold as many seats as one network may hold on this "
                "server; a seat comes free when its class closes, after {minutes} minutes without answers at most."),
    "pace": N_("Classes are being started quickly from your network; try again in a minute."),
}


def _start() -> None:
    use_chosen()  # a callback runs before the page: in the session's language
    opened = st.session_state.get(_OPENED) or []
    if len(opened) >= classpoll.CLASSES_PER_SESSION:
        st.session_state["poll_note"] = _("This tab has opened its share of classes.")
        return
    size = st.session_state.get("poll_size")
    size = size if isinstance(size, int) and 1 <= size <= classpoll.MAX_VOTERS else classpoll.DEFAULT_SIZE
    try:
        code, key = classpoll.STARTS.start(classpoll.store(), _address(), size)
    except TooManyStarts as refused:
        st.session_state["poll_note"] = _(STARTS_REFUSED[refused.reason]).format(minutes=IDLE_MIN)
        return
    except ClassesFull:
        st.session_state["poll_note"] = _("This server is running as many classes as it holds; try again later.")
        return
    except StoreUnavailable:
        st.session_state["poll_note"] = _("The class store cannot be reached just now; try again in a minute.")
        return
    st.session_state[_OPENED] = [*opened, (code, key)]
    _take(code, key)
    st.query_params[CLASS], st.query_params[TEACHER] = code, key


# ------------------------------------------------------------------ the answers, drawn

def _cell(n: int, total: int, round_label: str) -> str:
    share = n / total if total else 0.0
    return (f"<td><span class='gelu-poll-cell'><span class='gelu-poll-round'>{html.escape(round_label)}</span>"
            f"<span class='gelu-poll-track'><span class='gelu-poll-bar' style='width:{share * 100:.1f}%'></span>"
            f"</span><span class='gelu-poll-count'>{fmt.count(n)} · {fmt.share(share, 0)}</span></span></td>")


def answers_table(choices, rounds: list[tuple[str, tuple[int, ...]]], right: int | None, caption: str, *,
                  hidden: bool = False) -> str:
    """The answers as a table: a row per choice (the right one marked in words once revealed), a column per round
    (its label, its counts), each cell a bar and "count · share"; ``hidden``: the bars and counts kept from the
    room (still laid out, so nothing moves when they show)."""
    head = "".join(f"<th scope='col'>{html.escape(label)}</th>" for label, _ in rounds)
    rows = []
    right_words = html.escape(_("✓ right answer"))
    for i, choice in enumerate(choices):
        mark = f" <span class='gelu-poll-right'>{right_words}</span>" if i == right else ""
        cells = "".join(_cell(counts[i], sum(counts), label) for label, counts in rounds)
        rows.append(f"<tr class='{'gelu-poll-is-right' if i == right else ''}'>"
                    f"<th scope='row'>{html.escape(_(choice))}{mark}</th>{cells}</tr>")
    return (_STYLE + f"<table class='gelu-poll{' gelu-poll-hidden' if hidden else ''}' "
            f"style='--gelu-poll-bar: {COLORS['gelu']}; --gelu-poll-right: {COLORS['gelu_tanh']}'>"
            f"<caption>{html.escape(caption)}</caption><thead><tr><td></td>{head}</tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>")


def _rounds(tally) -> list[tuple[str, tuple[int, ...]]]:
    if tally.before is not None:
        return [(_("Round 1: alone"), tally.before), (_("Round 2: after discussion"), tally.counts)]
    return [(_("Round 1: alone"), tally.counts)]


def answered_words(answered: int, present: int) -> str:
    """How many of the students present have answered, as one whole sentence for each case."""
    if present == 0:
        return _("No student has joined yet.")
    if answered == 0:
        return ngettext("No answer yet from the {n} student who joined.",
                        "No answer yet from the {n} students who joined.", present).format(n=fmt.count(present))
    if answered == present == 1:
        return _("The 1 student who joined has answered.")
    return _("{answered} of {present} answered").format(answered=fmt.count(answered), present=fmt.count(present))


def answered_count(words: str) -> int | None:
    """The number of answers ``answered_words`` says, read back from the words on a page; None where it says none.

    >>> answered_count("18 of 24 answered"), answered_count("No answer yet from the 3 students who joined.")
    (18, 0)
    """
    import re

    if "No student has joined yet." in words or "No answer yet from" in words:
        return 0
    if "The 1 student who joined has answered." in words:
        return 1
    found = re.search(r"([\d,]+) of [\d,]+ answered", words)
    return int(found.group(1).replace(",", "")) if found else None


def _refused(n: int, size: int) -> str:
    """The teacher's note on answers refused because the class was full (at most ``size`` are counted)."""
    if n >= size:
        return ngettext("At least {n} more student answered than the {size} this class is set for; that answer is "
                        "not counted.",
                        "At least {n} more students answered than the {size} this class is set for; they are not "
                        "counted.", n).format(n=fmt.count(n), size=fmt.count(size))
    return ngettext("{n} more student answered than the {size} this class is set for; that answer is not counted.",
                    "{n} more students answered than the {size} this class is set for; their answers are not "
                    "counted.", n).format(n=fmt.count(n), size=fmt.count(size))


def right_index(question, form: str) -> int:
    return question.choices.index(question.answer(form)[0])


def shift_words(tally, right: int) -> str | None:
    """Once both rounds are in: the right answer's share in each, as one sentence."""
    if tally.before is None or not sum(tally.before) or not tally.total:
        return None
    one, two = tally.before[right] / sum(tally.before), tally.counts[right] / tally.total
    return _("The right answer had {first} of the answers in round 1 and {second} in round 2.").format(
        first=fmt.share(one, 0), second=fmt.share(two, 0))


# ------------------------------------------------------------------ the student

class Unavailable:
    """The class's answers cannot be reached just now: the student's answer waits, and the page with it."""

    revealed = False


UNAVAILABLE = Unavailable()


def question_state(page: str, question):
    """Before a student's question is drawn, in a class: the question's Tally (its round, whether revealed), or
    UNAVAILABLE; None when the class is gone (the session leaves it, with a note, and the page works alone).
    A new round (the teacher opened the second, or started the question again) clears the student's choice, so
    that they answer it anew."""
    code = joined()[0]
    try:
        tally = classpoll.store().tally(code, page, len(question.choices))
    except StoreUnavailable:
        return UNAVAILABLE
    if tally is None:
        why = _gone(code)
        _leave()
        st.info(_(ENDED_FOR_STUDENT) if why == "ended" else _(LOST_FOR_STUDENT) if why == "lost" else
                _(CLOSED_FOR_STUDENT),
                icon=":material/groups:")
        return None
    _seen(code, tally)
    answers = st.session_state.setdefault(_ANSWERS, {}).get(page, {})
    if answers and max(answers) < tally.first:  # the teacher started the question again: earlier answers go
        st.session_state[_ANSWERS].pop(page, None)
        st.session_state.get(_VOTED, {}).pop(page, None)
    drawn = st.session_state.get(_DRAWN, {}).get(page)
    if drawn is not None and drawn[0] != tally.round and not tally.revealed:
        st.session_state[f"quiz_{page}"] = None  # a new round since the page was drawn: the student answers anew
    st.session_state.setdefault(_DRAWN, {})[page] = (tally.round, tally.revealed)
    return tally


def first_answer(page: str, tally) -> int | None:
    """The student's round-1 answer (index), while round 2 is open."""
    return st.session_state.get(_ANSWERS, {}).get(page, {}).get(tally.first)


def last_answer(page: str, question, tally) -> str | None:
    """The student's last answer in this question's rounds that the store holds (their final one), or None."""
    answers = st.session_state.get(_ANSWERS, {}).get(page, {})
    kept = [r for r in answers if r >= tally.first]
    return question.choices[answers[max(kept)]] if kept else None


def count_answer(page: str, question, choice: str | None, tally) -> None:
    """Send the student's answer (once per change) while the question is not revealed, and say where it stands:
    in, waiting for the store, refused (class full) or paced; never whether it is right, nor the class's count."""
    code = joined()[0]
    pending = st.session_state.setdefault(_PENDING, {})
    if choice is None or choice not in question.choices:
        if tally is not UNAVAILABLE and tally.stage == 2:
            first = first_answer(page, tally)
            st.info(_("Round 2: talk it over, then answer again. In round 1 you answered “{first}”.").format(
                first=_(question.choices[first])) if first is not None else _("Round 2: talk it over, then answer."),
                icon=":material/forum:")
        else:
            st.caption(_(WAIT_FIRST))
        if tally is UNAVAILABLE:
            st.caption(_(UNSEEN))
        return
    index, n = question.choices.index(choice), len(question.choices)
    voted = st.session_state.setdefault(_VOTED, {})
    refused = st.session_state.setdefault(_REFUSED, {})
    rnd = None if tally is UNAVAILABLE else tally.round
    if rnd is None and (voted.get(page) or (0, None))[1] == index and page not in pending:
        st.success(_(IN_FIRST), icon=":material/how_to_vote:")  # counted before the store went away
        st.caption(_(UNSEEN))
        return
    if rnd is not None and refused.get(page) == rnd:  # full before this voter answered: nothing counts this round
        st.caption(_(REFUSED))
        return
    if rnd is None or voted.get(page) != (rnd, index):
        voter = _voter(code)
        if pending.get(page) != index and not classpoll.LIMITER.allow(voter):  # a retry is not a new answer
            st.caption(_(FAST))
            return
        pending[page] = index
        try:
            counted = classpoll.store().vote(code, page, voter, index, n)
        except SeatsTaken:
            pending.pop(page, None)
            refused[page] = rnd
            st.caption(_(REFUSED))
            return
        except AnswerClosed:
            pending.pop(page, None)
            st.caption(_(CLOSED_ROUND))
            return
        except StoreUnavailable:
            st.session_state[_FULL] = True
            _retry(code, page)
            return
        pending.pop(page, None)
        if counted is None:
            st.caption(_(CLOSED_FOR_STUDENT))
            return
        voted[page] = (counted, index)
        st.session_state.setdefault(_ANSWERS, {}).setdefault(page, {})[counted] = index
        rnd = counted
        stage = 1 if tally is UNAVAILABLE else rnd - tally.first + 1
    else:
        stage = tally.stage
    with st.container(key=f"poll_student_{page}"):
        st.success(_(IN_SECOND) if stage == 2 else _(IN_FIRST), icon=":material/how_to_vote:")


def watch(page: str, tally) -> None:
    """While the student waits: a light fragment asks the store every WATCH_S whether the question moved on (a new
    round, the reveal, the class gone), and runs the whole page again when it did."""
    if tally is UNAVAILABLE:
        return
    st.session_state[_FULL] = True
    _watch(joined()[0], page, (tally.round, tally.revealed))


@st.fragment(run_every=WATCH_S)
def _watch(code: str, page: str, drawn: tuple[int, bool]) -> None:
    use_chosen()
    if st.session_state.pop(_FULL, False):
        return  # drawn by the page's run, which has just read the state
    try:
        now = classpoll.store().phase(code, page)
    except StoreUnavailable:
        return
    if now != drawn:
        st.rerun(scope="app")


def after_reveal(page: str, question, tally, form: str) -> None:
    """Once revealed, below the reveal: the student's own two answers where there were two rounds, and the class's
    answers, round by round."""
    answers = st.session_state.get(_ANSWERS, {}).get(page, {})
    one, two = answers.get(tally.first), answers.get(tally.first + 1)
    if tally.stage == 2 and one is not None and two is not None:
        st.caption(_("In round 1 you answered “{first}”; in round 2, “{second}”.").format(
            first=_(question.choices[one]), second=_(question.choices[two])))
    with st.container(key=f"poll_student_{page}"):
        st.html(answers_table(question.choices, _rounds(tally), right_index(question, form),
                              _("Your class's answers")))


@st.fragment(run_every=RETRY_S)
def _retry(code: str, page: str) -> None:
    """While an answer waits for the store: says so and, every RETRY_S, asks the store again; once it answers,
    the whole page runs again, and counts the answer (``count_answer``)."""
    use_chosen()
    if not st.session_state.pop(_FULL, False):  # a run of this fragment alone, not of the page that drew it
        try:
            classpoll.store().phase(code, page)
        except StoreUnavailable:
            pass
        else:
            st.rerun(scope="app")
    st.caption(_(PENDING))


# ------------------------------------------------------------------ the teacher

def teacher_state(page: str):
    """On the teacher's link, for the page's question: the Tally the console drew above it in this run, UNAVAILABLE,
    or None (no console drawn)."""
    return st.session_state.get("poll_console_tally", {}).get(page)


def console(page: str, question, form: str) -> None:
    """On the teacher's link, above the page: the question and its answers for the room, the peer instruction's
    buttons, the way in for students (QR code, address and class code), and "Manage the class"."""
    if not is_teacher() or question is None:
        return
    code = joined()[0]
    with st.container(key="class_console"):
        live, join = st.columns([3, 1], gap="large")
        with live:
            st.session_state[_FULL] = True
            _console(page, question, form, code)
        if joined() is None:
            return
        with join:
            _join_card(code)
        _manage(code, form)


@st.fragment(run_every=REFRESH_S)
def _console(page: str, question, form: str, code: str) -> None:
    use_chosen()
    full = st.session_state.pop(_FULL, False)
    tallies = st.session_state.setdefault("poll_console_tally", {})
    st.html(f"{_STYLE}<p class='gelu-console-question'>{html.escape(question.ask(form))}</p>")
    try:
        tally = classpoll.store().tally(code, page, len(question.choices))
    except StoreUnavailable:
        tallies[page] = UNAVAILABLE
        st.warning(_("The class's answers are unavailable just now (their store cannot be reached). The questions "
                     "still work for every student; this view tries again every second."), icon=":material/cloud_off:")
        return
    if tally is None:
        why = _gone(code)
        tallies[page] = None
        _leave(_(ENDED_FOR_TEACHER) if why == "ended" else _(LOST_FOR_TEACHER) if why == "lost" else
               _(IDLE_WORDS).format(minutes=IDLE_MIN) if why == "idle" else _(CLOSED_FOR_TEACHER))
        st.rerun(scope="app")
    _seen(code, tally)
    tallies[page] = tally
    drawn = st.session_state.setdefault(_DRAWN, {})
    if not full and drawn.get(page) != (tally.round, tally.revealed):
        st.rerun(scope="app")  # the page unfolds or folds with the reveal (also when another tab revealed)
    drawn[page] = (tally.round, tally.revealed)
    right = right_index(question, form) if tally.revealed else None
    spread = tally.revealed or st.session_state.get("poll_spread", True)
    with st.container(key="class_poll_teacher"):
        if tally.revealed:  # first: at 1280 x 720 the answer and its reason stay above the fold
            answer, why = question.answer(form)
            st.success(_("The answer: {right}. {why}").format(right=_(answer), why=why), icon=":material/check_circle:")
        st.html(answers_table(question.choices, _rounds(tally), right, _("The class's answers"), hidden=not spread)
                + f"<p class='gelu-console-answered' role='status'>{answered_words(tally.total, tally.present)}</p>"
                + (f"<p class='gelu-console-shift'>{html.escape(shift_words(tally, right))}</p>"
                   if tally.revealed and shift_words(tally, right) else ""))
        if tally.refused:
            st.caption(_refused(tally.refused, tally.size))
        buttons = st.container(horizontal=True, gap="small")
        buttons.button(_("Open round 2"), key=f"poll_round2_{page}", disabled=tally.stage == 2 or tally.revealed,
                       on_click=_act, args=("next_round", code, page), icon=":material/forum:",
                       help=_("The students answer again after talking it over; round 1 stays beside it."))
        buttons.button(_("Reveal the answer"), key=f"poll_reveal_{page}", disabled=tally.revealed,
                       on_click=_act, args=("reveal", code, page), icon=":material/visibility:",
                       help=_("Shows the right answer and why on every student's screen, and unfolds the page."))
        buttons.button(_("Reset this question"), key=f"poll_reset_{page}", on_click=_act, args=("reset", code, page),
                       icon=":material/restart_alt:",
                       help=_("Starts the question again from round 1; its answers are deleted."))
        if not tally.revealed:
            buttons.toggle(_("Show the answers"), key="poll_spread", value=True,
                           help=_("Off: the room sees how many answered, not what; the bars come back when you "
                                  "reveal the answer."))


def _act(what: str, code: str, page: str = "") -> None:
    try:
        if what in ("reset_all", "end"):
            getattr(classpoll.store(), what)(code)
        else:
            getattr(classpoll.store(), what)(code, page)
    except StoreUnavailable:
        pass  # the console says so on its next drawing
    st.session_state.pop(_CONFIRM, None)


@functools.lru_cache(maxsize=64)
def qr_image(link: str) -> str:
    """The QR code of ``link`` as an SVG data URI (segno, made here: nothing fetched), dark modules on white with the
    quiet zone of 4 modules around, for an <img> (st.html keeps an image, not inline SVG)."""
    import segno

    return segno.make(link, error="m").svg_data_uri(scale=10, border=4, dark="#000000", light="#ffffff")


def _join_card(code: str) -> None:
    link = students_link(code)
    host = urlsplit(base_url()).netloc
    alt = html.escape(_("QR code of the students’ link"))
    scan = _("Scan the code, or open <strong>{host}</strong> and type the class code:").format(host=html.escape(host))
    st.html(f"{_STYLE}<div class='gelu-join'>"
            f"<img class='gelu-join-qr' src='{qr_image(link)}' alt='{alt}'>"
            f"<div>{scan}</div>"
            f"<div class='gelu-join-code'>{shown_code(code)}</div></div>")


def overview_rows(tallies: dict, questions: dict, form: str) -> list[dict]:
    """The class's questions in the lesson's order: per page its title and, per round, its answers and how many were
    right (once revealed)."""
    rows = []
    for page, (title, question) in questions.items():
        tally = tallies.get(page)
        right = right_index(question, form)
        cells = {_("Page"): _(title)}
        rounds = (tally.before, tally.counts) if tally.before is not None else (tally.counts, None)
        for (answers, rights), counts in zip(((_("Round 1: answers"), _("Round 1: right")),
                                              (_("Round 2: answers"), _("Round 2: right"))), rounds, strict=True):
            cells[answers] = "–" if counts is None else fmt.count(sum(counts))
            cells[rights] = ("–" if counts is None or not sum(counts) or not tally.revealed
                             else fmt.share(counts[right] / sum(counts), 0))
        cells[_("Answer shown")] = _("yes") if tally.revealed else _("no")
        rows.append(cells)
    return rows


def answers_csv(tallies: dict, questions: dict, form: str) -> str:
    """The class's answers as CSV: question, round, choice, count (a row per choice of each round held); no
    identities; plain integers, as a spreadsheet reads them in any language."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["question", "round", "choice", "count"])
    for page, (_row, question) in questions.items():
        tally = tallies[page]
        rounds = [tally.before, tally.counts] if tally.before is not None else [tally.counts]
        for number, counts in enumerate(rounds, start=1):
            for choice, n in zip(question.choices, counts, strict=True):
                writer.writerow([question.ask(form), number, _(choice), int(n)])
    return out.getvalue()


def _manage(code: str, form: str) -> None:
    """"Manage the class": every question's rounds, the answers as CSV, reset every question, end the class; read
    from the store only while it is open."""
    from ui.pages import PAGES

    box = st.expander(_("Manage the class"), icon=":material/settings:", key="poll_manage", on_change="rerun")
    with box:
        if not box.open:
            return
        questions = {p: (row.title, row.question) for p, row in PAGES.items() if row.question is not None}
        try:
            tallies = classpoll.store().overview(code, {p: len(q.choices) for p, (_, q) in questions.items()})
        except StoreUnavailable:
            st.warning(_("The class's answers cannot be reached just now; try again in a moment."),
                       icon=":material/cloud_off:")
            return
        if tallies is None:
            return
        st.markdown(_("**Every question of the lesson, round by round**"))
        rows = overview_rows(tallies, questions, form)
        st.table({k: [r[k] for r in rows] for k in rows[0]}, hide_index=True)
        st.download_button(_("Download the answers (CSV)"), data=answers_csv(tallies, questions, form),
                           file_name=f"gelu-explorer-class-{code}.csv", mime="text/csv", on_click="ignore",
                           icon=":material/download:", key="poll_csv")
        confirm = st.session_state.get(_CONFIRM)
        if confirm == "reset_all":
            st.warning(_("Start every question again from round 1? Every answer of the class is deleted."),
                       icon=":material/restart_alt:")
            yes, no = st.columns(2)
            yes.button(_("Yes, reset every question"), key="poll_reset_all_yes", on_click=_act,
                       args=("reset_all", code))
            no.button(_("Keep the answers"), key="poll_reset_all_no", on_click=st.session_state.pop, args=(_CONFIRM,))
        elif confirm == "end":
            st.warning(_("End the class now? Its answers are deleted at once, and your students are told."),
                       icon=":material/logout:")
            yes, no = st.columns(2)
            yes.button(_("Yes, end the class"), key="poll_end_yes", on_click=_end, args=(code,))
            no.button(_("Keep the class"), key="poll_end_no", on_click=st.session_state.pop, args=(_CONFIRM,))
        else:
            row = st.container(horizontal=True, gap="small")
            row.button(_("Reset every question"), key="poll_reset_all", on_click=st.session_state.__setitem__,
                       args=(_CONFIRM, "reset_all"), icon=":material/restart_alt:")
            row.button(_("End the class"), key="poll_end", on_click=st.session_state.__setitem__,
                       args=(_CONFIRM, "end"),
                       icon=":material/logout:")


def _end(code: str) -> None:
    use_chosen()  # a callback runs before the page: in the session's language
    _act("end", code)
    _leave(_(ENDED_FOR_TEACHER))
