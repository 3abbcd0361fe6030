"""The lesson around each page, drawn with Streamlit: the goal and the lesson's GELU form above it, the page's
question asked before what answers it, and Previous / Next below it.

Predict, then check.  A page calls ``ask_first(page)`` right after what a student needs to understand its question
(never after a number that answers it).  Until the student commits, by choosing an answer (their prediction) or
"Show me" (no prediction), the rest of the page waits: ``ask_first`` raises ``NotYet``, which ``page_body`` catches
around the page, so nothing after the call is drawn.  Then the page unfolds (a rerun of the page alone, not of the
frame around it), and the question shows right or wrong with the computed reason.  The first answer is kept as the
prediction; an answer changed after the reveal says so.

A visitor who opens a shared link to a view (the URL holds any of the page's settings) sees it whole at once: a
teacher's deep link brings back the exact view.  The presenter view always asks first: the presenter decides when
the room sees the answer, and moves through the lesson by its own Previous / Next at the top of the page.

In a class, the question is asked by peer instruction (draw/class_poll.py): a student's answer is their own, no
right or wrong and no count, and the page waits, without "Show me", until the teacher reveals the answer; the
teacher's page waits under the console the same way, and both unfold at the reveal.
"""

from __future__ import annotations

from collections.abc import Mapping

import streamlit as st

from draw import class_poll
from draw.frame import CLASS, PRESENT, carried, code_for_view, fragment_start, page_link, presenting
from hosting import internals
from ui import pages as table
from ui.controls import LESSON_FORM
from ui.i18n import _

_COMMITTED = "lesson_committed"  # session state: page -> {"how": "predicted" | "shown" | "link", "first": choice}
_SEEN = "lesson_seen"  # session state: the pages this session has run, to tell an arrival from a rerun
IGNORED_IN_LINKS = {LESSON_FORM.key, PRESENT, "hide", class_poll.CLASS, class_poll.TEACHER}  # not a page's view


class NotYet(Exception):  # noqa: N818  (not an error: the rest of the page waits, as a return would)
    """Raised by ``ask_first`` while the student has not committed: the rest of the page is not drawn."""


def lesson_form() -> str:
    """The GELU form the lesson uses now ("tanh" unless the student chose another), as gelu_core names it."""
    value = st.session_state.get(LESSON_FORM.key)
    return value if value in LESSON_FORM.options["options"] else LESSON_FORM.default


# ------------------------------------------------------------------ above the page

def lesson_top(page: str, available: tuple[str, ...]) -> None:
    """Above the page: where it sits in the lesson and its learning goal; then, on a page that shows a GELU, the
    lesson's form, kept from page to page and in the link (``?form=exact``)."""
    row = table.PAGES.get(page)
    if row is None:
        return
    where = table.position(page, available)
    prefix = _("Step {n} of {total}").format(n=where[0], total=where[1]) if where else _("Aside")
    with st.container(key="lesson_goal"):
        st.caption(_("{where} · **Goal**: {goal}").format(where=prefix, goal=_(row.goal)))
    form = row.controls is not None and LESSON_FORM in row.controls
    if presenting():
        _presenter_nav(page, available, prefix, form)
    elif form:
        with st.container(key="lesson_form"):
            st.segmented_control(**LESSON_FORM.kwargs())


# ------------------------------------------------------------------ the page

def page_body(page: st.Page, name: str) -> None:
    """The page the student asked for, then, once it is answered, the code for its view; as an ``st.fragment``, so
    that what the page's own widgets change (the question's answer and "Show me", a control outside any part)
    reruns the page alone, not the frame around it (the sidebar, the navigation, the lesson's top and foot), which
    they do not change: the first visit's "Show me" sends the page, not the frame's 35 elements again.

    A page whose run can wait long on shared work (the training race, which its Stop ends; the lab's line:
    ``Page.waits``) runs in the app's run instead: Streamlit lets a click in a fragment wait until the run in progress
    ends, where the app's rerun interrupts it."""
    (_page if table.PAGES[name].waits else _page_alone)(page, name)


def _page(page: st.Page, name: str) -> None:
    fragment_start(code_outside=False)  # the code for this view is drawn here, below the page
    try:
        internals.run_page(page, again=internals.rerun_alone())
    except NotYet:  # the page asked its question first: the rest of it waits for the student's answer
        pass
    row = table.PAGES[name]
    if committed(name) or row.question is None:
        code_for_view(name, row.controls)  # it prints the view's numbers: they answer the question too


_page_alone = st.fragment(_page)


# ------------------------------------------------------------------ the question, first

def committed(page: str) -> dict | None:
    """How the student committed on this page ({"how", "first"}), or None while the page still waits."""
    return st.session_state.get(_COMMITTED, {}).get(page)


def _commit(page: str, how: str, first: str | None = None) -> None:
    st.session_state.setdefault(_COMMITTED, {})[page] = {"how": how, "first": first}


def forget(page: str) -> None:
    """The student's answer on this page is forgotten: the page asks its question again."""
    st.session_state.get(_COMMITTED, {}).pop(page, None)


def note_arrival(page: str) -> None:
    """On a page's first run in this session, before the link check drops any value: when the URL holds any of
    its settings (a shared view, usable or not) and the view is not the presenter's, the page is shown whole."""
    seen = st.session_state.setdefault(_SEEN, set())
    if page in seen:
        return
    seen.add(page)
    row = table.PAGES.get(page)
    if presenting() or row is None or row.question is None or row.controls is None or committed(page):
        return
    if CLASS in st.query_params:  # a class's link: the teacher shows the answer to the room
        return
    keys = {c.key for c in row.controls if c.bound} | set(row.controls.renamed)
    if any(key in st.query_params for key in keys - IGNORED_IN_LINKS):
        _commit(page, "link")


def ask_first(page: str) -> None:
    """The page's question, here; the rest of the page waits (``NotYet``) until the student has committed, or, in a
    class, until the teacher has revealed the answer."""
    row = table.PAGES[page]
    question, form = row.question, lesson_form()
    role = class_poll.role()
    if role == "teacher" and _ask_teacher(page, question, form):
        return
    if role == "student":
        tally = class_poll.question_state(page, question)
        if tally is not None:
            _ask_in_class(page, question, form, tally)
            return
    with st.container(key="lesson_question", border=True):
        st.markdown(_("**Predict, then check**"))
        choice = st.radio(question.ask(form), question.choices, index=None, key=f"quiz_{page}", format_func=_)
        done = committed(page)
        if done is None and choice is not None:
            _commit(page, "predicted", choice)
            done = committed(page)
        if done is None:
            st.caption(_("Choose your answer before you look: the page shows what answers it once you have."))
            st.button(_("Show me without predicting"), key=f"show_{page}", on_click=_commit, args=(page, "shown"),
                      icon=":material/visibility:")
            raise NotYet
        _reveal(question, form, choice, done)


def _ask_in_class(page: str, question, form: str, tally) -> None:
    """A student's question in a class: their answer counted, the page waiting for the teacher's reveal."""
    with st.container(key="lesson_question", border=True):
        st.markdown(_("**Predict, then check**"))
        choice = st.radio(question.ask(form), question.choices, index=None, key=f"quiz_{page}", format_func=_)
        if tally.revealed:
            final = class_poll.last_answer(page, question, tally)
            _commit(page, "class", final)
            _reveal(question, form, choice, {"how": "predicted" if final else "shown", "first": final})
            class_poll.after_reveal(page, question, tally, form)
            return
        forget(page)  # a question started again folds the page back
        class_poll.count_answer(page, question, choice, tally)
        class_poll.watch(page, tally)
        raise NotYet


def _ask_teacher(page: str, question, form: str) -> bool:
    """The teacher's page under the console (which asks the question): it waits until the answer is revealed.
    False where the console could not read the class (the page then asks as it does alone)."""
    tally = class_poll.teacher_state(page)
    if tally is None or tally is class_poll.UNAVAILABLE:
        return False
    if tally.revealed:
        _commit(page, "class", question.answer(form)[0])
        return True
    forget(page)
    with st.container(key="lesson_question", border=True):
        st.caption(_("The rest of this page shows what answers the question: it unfolds, here and on every "
                     "student's screen, when you reveal the answer."))
    raise NotYet


def _reveal(question, form: str, choice: str | None, done: Mapping) -> None:
    right, why = question.answer(form)
    first = done["first"]
    if done["how"] == "predicted":
        if first == right:
            st.success(_("Right. {why}").format(why=why), icon=":material/check_circle:")
        else:
            st.warning(_("Not quite. {why}").format(why=why), icon=":material/lightbulb:")
        if choice != first:
            st.caption(_("You changed your answer after the reveal; your prediction was “{first}”.").format(
                first=_(first)))
    elif choice is not None:
        shown = st.success if choice == right else st.warning
        shown((_("Right. {why}") if choice == right else _("Not quite. {why}")).format(why=why),
              icon=":material/check_circle:")
        st.caption(_("You answered after seeing the page: this answer is not your prediction."))
    elif done["how"] == "shown":
        st.info(_("The answer: {right}. {why}").format(right=_(right), why=why), icon=":material/visibility:")
    else:
        st.caption(_("This view came from a link, so it is shown whole; the question is still yours to answer."))


def _presenter_nav(page: str, available: tuple[str, ...], where: str, form: bool) -> None:
    """The presenter view's top row: Previous and Next through the lesson, which keep the presenter view, the class
    and its teacher key (``frame.carried``), and the lesson's form, its label read by a screen reader only."""
    before, after = table.neighbours(page, available)
    with st.container(key="presenter_nav", horizontal=True, gap="medium", vertical_alignment="center"):
        if before is not None:
            page_link(before, label=_("Previous: {page}").format(page=_(table.PAGES[before].title)),
                      icon=":material/arrow_back:")
        st.markdown(where, width="content")
        if after is not None:
            page_link(after, label=_("Next: {page}").format(page=_(table.PAGES[after].title)),
                      icon=":material/arrow_forward:")
        if form:
            with st.container(key="lesson_form", width="content"):
                st.segmented_control(**LESSON_FORM.kwargs(), label_visibility="collapsed")


# ------------------------------------------------------------------ below the page

def lesson_footer(page: str, pages: Mapping[str, st.Page]) -> None:
    """Below the page: Previous and Next through the lesson."""
    with st.container(key="lesson_footer"):
        before, after = table.neighbours(page, tuple(pages))
        back, onward = st.columns(2)
        if before is not None:
            back.page_link(pages[before], label=_("Previous: {page}").format(page=pages[before].title),
                           icon=":material/arrow_back:",
                           query_params=carried())
        if after is not None:
            onward.page_link(pages[after], label=_("Next: {page}").format(page=pages[after].title),
                             icon=":material/arrow_forward:",
                             query_params=carried())
