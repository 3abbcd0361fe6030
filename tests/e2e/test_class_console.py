"""The teacher's console in real browsers: peer instruction across two replicas, a presenter view that moves through
the lesson, a room that can read it, a student who sees no teacher's tool, a QR code that is the students' link,
and every new screen axe-clean, by keyboard, at a phone's width for students.

References: the answers each test casts (by choice index, counted with collections.Counter); the store's own tally
(Redis, through hosting.classpoll.RedisStore); the reveal's sentence and the numbers it quotes, computed by the page's
own ``QUESTION`` (tests/e2e/test_predict_first.answer_numbers); the URL's query as the browser holds it; the QR code
as Chromium draws it, decoded by zxing-cpp (PyPI) from a screenshot; computed styles in px; axe-core's WCAG A and AA
rules (tests/e2e/test_accessibility.axe).  Tolerances: a student's page learns of a new round or the reveal within
WATCH_S + 3 s (its watch's timer, one run, a busy machine); the room's type at least 32 px.
"""

from __future__ import annotations

import csv
import io
from collections import Counter

import pytest

from draw.class_poll import IN_FIRST, IN_SECOND, WATCH_S
from harness import balancer
from harness import browser as driver
from hosting import classpoll
from tests.conftest import needs_haproxy
from tests.e2e.test_accessibility import axe, summary_of
from tests.e2e.test_class_poll import start_in_browser, wait_for_count
from tests.e2e.test_predict_first import SCREEN_TEXT_JS, answer_numbers, plain
from ui.pages import PAGES

pytestmark = pytest.mark.e2e

CHOICES = PAGES["home"].question.choices
ROOM = {"width": 1280, "height": 720}  # a projector
LEARNS_MS = (WATCH_S + 3.0) * 1000


@pytest.fixture(scope="module")
def replicas(redis_server):
    needs_haproxy()
    mp = pytest.MonkeyPatch()
    mp.setenv(classpoll.ENV, redis_server.url)  # the replicas inherit it (harness.browser.Server: os.environ)
    try:
        with balancer.Balancer(replicas=2) as lb:
            yield lb
    finally:
        mp.undo()


def presenter(browser, base_url: str, code: str, key: str, path: str = "", scheme: str = "light"):
    page = driver.new_page(browser, viewport=ROOM, color_scheme=scheme)
    driver.open_app(page, f"{base_url}/{path}?present=true&class={code}&teacher={key}", show=False)
    page.locator(".st-key-class_poll_teacher").wait_for()
    return page


def choose(page, choice: str) -> None:
    driver.act(page, lambda: page.locator(".st-key-lesson_question [data-testid='stRadio']")
               .get_by_text(choice, exact=True).click())


def screen_text(page) -> str:
    return plain(page.evaluate(SCREEN_TEXT_JS))


def clean(*pages) -> None:
    for page in pages:
        assert page.locator(driver.EXCEPTION).count() == 0 and page.locator(driver.ERROR_BOX).count() == 0


def test_peer_instruction_across_two_replicas(browser, replicas, redis_server):
    """A teacher and three students, each a browser context of its own, through HAProxy to two replicas, one Redis.
    Round 1: each student reads that their answer is in and nothing else (no right or wrong, no count, none of the
    reveal's numbers, no Show me); the console counts 3 of 3.  Round 2: every student's page asks again by itself;
    the console shows both rounds side by side.  The reveal: every student's page unfolds by itself with right or
    wrong and the reason; the console says the shift.  The CSV's counts are the votes cast."""
    teacher = driver.new_page(browser, viewport=ROOM)
    students = [driver.new_page(browser, viewport=driver.PHONE) for _ in range(3)]
    try:
        code, key = start_in_browser(teacher, replicas.base_url)
        driver.open_app(teacher, f"{replicas.base_url}/?present=true&class={code}&teacher={key}", show=False)
        for s in students:
            driver.open_app(s, f"{replicas.base_url}/?class={code}", show=False)
        teacher.get_by_text("No answer yet from the 3 students who joined.").wait_for(timeout=10_000)
        numbers = answer_numbers("home")
        first, second = [0, 1, 2], [1, 1, 0]
        for s, pick in zip(students, first, strict=True):
            assert s.locator(driver.SHOW_ME).count() == 0, "a student in a class is offered Show me"
            choose(s, CHOICES[pick])
            s.get_by_text(IN_FIRST).wait_for()
            said = screen_text(s)
            assert "Right." not in said and "Not quite." not in said and s.locator(".gelu-poll").count() == 0
            assert not [n for n in numbers if n in said], f"round 1 shows the answer's numbers to a student: {said}"
        for choice, n in Counter(first).items():
            wait_for_count(teacher, choice, n)
        teacher.get_by_text("3 of 3 answered").wait_for()
        assert not [n for n in numbers if n in screen_text(teacher)], "the room sees the answer before the reveal"

        driver.act(teacher, lambda: teacher.get_by_role("button", name="Open round 2").click())
        for s, pick in zip(students, second, strict=True):
            s.get_by_text("Round 2: talk it over, then answer again.", exact=False).wait_for(timeout=LEARNS_MS)
            assert s.locator(".st-key-lesson_question input[type=radio]:checked").count() == 0
            choose(s, CHOICES[pick])
            s.get_by_text(IN_SECOND).wait_for()
            assert s.locator(".gelu-poll").count() == 0 and "Right." not in screen_text(s)
        for choice, n in Counter(second).items():
            wait_for_count(teacher, choice, n)
        heads = teacher.locator(".st-key-class_poll_teacher .gelu-poll thead th").all_inner_texts()
        assert heads == ["Round 1: alone", "Round 2: after discussion"], heads
        rows = teacher.locator(".st-key-class_poll_teacher .gelu-poll tbody tr")
        shown = [[c.split(" ·")[0] for c in rows.nth(i).locator(".gelu-poll-count").all_inner_texts()]
                 for i in range(3)]
        assert shown == [[str(Counter(first)[i]), str(Counter(second)[i])] for i in range(3)], shown

        driver.act(teacher, lambda: teacher.get_by_role("button", name="Reveal the answer").click())
        right, why = PAGES["home"].question.answer("tanh")
        teacher.get_by_text(f"The answer: {right}. {why}").wait_for()
        teacher.get_by_text("The right answer had 33% of the answers in round 1 and 67% in round 2.").wait_for()
        for s, pick in zip(students, second, strict=True):
            verdict = "Right." if CHOICES[pick] == right else "Not quite."
            s.get_by_text(f"{verdict} {why}").wait_for(timeout=LEARNS_MS)
            driver.wait_drawn(s)
            said = screen_text(s)
            assert not [n for n in numbers if n not in said], "a student's page did not unfold at the reveal"
        tally = classpoll.RedisStore(redis_server.url).tally(code, "home", 3)
        assert tally.before == tuple(Counter(first)[i] for i in range(3)) and tally.revealed
        assert tally.counts == tuple(Counter(second)[i] for i in range(3)) and tally.joined == 3

        driver.act(teacher, lambda: teacher.locator(".st-key-poll_manage summary").click())
        with teacher.expect_download() as got:
            teacher.get_by_role("button", name="Download the answers (CSV)").click()
        rows = list(csv.DictReader(io.StringIO(open(got.value.path(), encoding="utf-8").read())))
        asked = PAGES["home"].question.ask("tanh")
        home = {(r["round"], r["choice"]): int(r["count"]) for r in rows if r["question"] == asked}
        assert home == {**{("1", c): Counter(first)[i] for i, c in enumerate(CHOICES)},
                        **{("2", c): Counter(second)[i] for i, c in enumerate(CHOICES)}}, home
        assert sum(int(r["count"]) for r in rows) == len(first) + len(second)  # no other question answered
        assert list(rows[0]) == ["question", "round", "choice", "count"]
        clean(teacher, *students)
    finally:
        for page in (teacher, *students):
            page.context.close()


def go(teacher, link: str, title: str) -> None:
    """Follow the presenter's ``link`` (Previous / Next) and wait until its page, titled ``title``, is drawn with the
    console.  A finished run alone does not say so: the console's timer reruns its fragment every few seconds, and
    one of those can end between the click and the new page's run."""
    nav = teacher.locator(".st-key-presenter_nav")
    driver.act(teacher, lambda: nav.get_by_role("link", name=link).click())
    teacher.locator("[data-testid='stMain'] h1").filter(has_text=title).wait_for()
    teacher.locator(".st-key-class_poll_teacher").wait_for()
    driver.wait_drawn(teacher)


def test_the_presenter_view_moves_through_the_lesson_readable_by_a_room(browser, server):
    """Previous / Next at the top of the presenter view keep present, the class and the teacher key; at 1280 x 720
    the question, its answers (labels and counts at least 32 px) and the buttons are on the first screen, nothing
    sticks out sideways; charts' type is enlarged and the Gate's axis titles lie within their charts."""
    teacher = driver.new_page(browser, viewport=ROOM)
    try:
        code, key = start_in_browser(teacher, server.base_url)
        driver.open_app(teacher, f"{server.base_url}/?present=true&class={code}&teacher={key}", show=False)
        kept = {"present": ["true"], "class": [code], "teacher": [key]}
        go(teacher, "Next: The gate", "The gate")
        assert teacher.url.split("?")[0].endswith("/gate") and driver.query(teacher.url) == kept, teacher.url
        assert PAGES["gate"].question.ask("tanh") in teacher.locator(".st-key-class_console").inner_text()
        go(teacher, "Previous: Home", "GELU Explorer")
        assert driver.query(teacher.url) == kept, teacher.url
        go(teacher, "Next: The gate", "The gate")

        sizes = teacher.evaluate("""() => [...document.querySelectorAll(
            '.st-key-class_console .gelu-poll th[scope=row], .st-key-class_console .gelu-poll-count,'
            + ' .gelu-console-answered')].map((e) => parseFloat(getComputedStyle(e).fontSize))""")
        assert len(sizes) == 7 and min(sizes) >= 32, sizes
        for what in (".gelu-console-question", ".st-key-class_poll_teacher .gelu-poll",
                     ".gelu-console-answered", "button:has-text('Reveal the answer')"):
            box = teacher.locator(what).first.bounding_box()
            assert box and box["y"] + box["height"] <= ROOM["height"], f"{what} is below the first screen: {box}"
        assert driver.look(teacher)["overflow"] <= 0

        driver.act(teacher, lambda: teacher.get_by_role("button", name="Reveal the answer").click())
        teacher.locator(".js-plotly-plot").first.wait_for()
        driver.wait_drawn(teacher)
        teacher.wait_for_timeout(500)
        charts = teacher.evaluate("""() => [...document.querySelectorAll("[data-testid='stMain'] .js-plotly-plot")]
          .map((gd) => {
            const svg = gd.querySelector('.main-svg').getBoundingClientRect();
            const titles = [...gd.querySelectorAll('.xtitle, .ytitle')].map((t) => t.getBoundingClientRect());
            const tick = gd.querySelector('.xtick text');
            return {inside: titles.every((r) => r.left >= svg.left - 1 && r.right <= svg.right + 1
                                           && r.top >= svg.top - 1 && r.bottom <= svg.bottom + 1),
                    tick: tick ? parseFloat(getComputedStyle(tick).fontSize) : 0};
          })""")
        assert charts and all(c["inside"] for c in charts), charts
        assert min(c["tick"] for c in charts) >= 18, charts  # 13 px ticks, times PRESENTER_CHART_TYPE
        clean(teacher)
    finally:
        teacher.context.close()


def test_a_student_sees_no_teachers_tool_and_the_qr_code_is_the_students_link(browser, server):
    """A student who came by the class's link (desktop width: the sidebar shown) has no "Start a class", no
    presenter settings, no presenter link; a visitor outside any class has "Start a class" and joins by typing the
    code as the room reads it.  The teacher's QR code decodes to the students' link, which the share box holds (no
    teacher key); the presenter link it copies holds the key, and the box keeps showing what it copied."""
    import zxingcpp
    from PIL import Image

    teacher = driver.new_page(browser)
    student = driver.new_page(browser)
    visitor = driver.new_page(browser)
    try:
        code, key = start_in_browser(teacher, server.base_url)
        link = f"{server.base_url}/?class={code}"
        teacher.wait_for_function("(want) => document.querySelector('.gelu-share-url').value === want", arg=link)
        presenter_link = driver.shared_link(teacher, "Copy presenter link")
        assert driver.query(presenter_link) == {"class": [code], "teacher": [key], "present": ["true"]}
        teacher.wait_for_timeout(1500)  # three of the box's redraws
        assert teacher.locator(".gelu-share-url").input_value() == presenter_link
        assert "Presenter link copied" in teacher.locator(".gelu-share-note").inner_text()

        driver.open_app(teacher, presenter_link, show=False)
        qr = teacher.locator(".gelu-join-qr")
        qr.wait_for()
        decoded = [r.text for r in zxingcpp.read_barcodes(Image.open(io.BytesIO(qr.screenshot())))]
        assert decoded == [link], decoded
        assert classpoll.CODE_RE.fullmatch(code) and code.upper()[:4] in teacher.locator(".gelu-join").inner_text()

        driver.open_app(student, link, show=False)
        sidebar = student.locator("[data-testid='stSidebar']")
        said = sidebar.inner_text()
        for tool in ("Start a class", "Hide in the presenter view", "Copy presenter link", "Join a class"):
            assert tool not in said, f"a student sees {tool!r}"
        assert "Your class" in said and "Leave the class" in said

        driver.open_app(visitor, server.base_url + "/", show=False)
        aside = visitor.locator("[data-testid='stSidebar']")
        assert "Start a class" in aside.inner_text() and "Copy presenter link" in aside.inner_text()
        aside.get_by_text("Join a class").click()
        aside.get_by_label("Class code", exact=True).fill(f" {code[:4].upper()} {code[4:].upper()} ")
        aside.get_by_label("Class code", exact=True).press("Enter")
        driver.act(visitor, lambda: aside.get_by_role("button", name="Join").click())
        visitor.wait_for_function("(code) => new URL(location.href).searchParams.get('class') === code", arg=code)
        visitor.locator("[data-testid='stSidebar']").get_by_text("Leave the class").wait_for()
        clean(teacher, student, visitor)
    finally:
        for page in (teacher, student, visitor):
            page.context.close()


def focus_and_press(page, name: str, key: str = "Enter", most: int = 120) -> None:
    """Tab until the button named ``name`` has the focus, then press ``key`` (keyboard alone)."""
    for _ in range(most):
        page.keyboard.press("Tab")
        if page.evaluate("(name) => document.activeElement.innerText.trim().endsWith(name)", name):
            driver.act(page, lambda: page.keyboard.press(key))
            return
    raise AssertionError(f"Tab never reached {name!r}")


def test_the_new_screens_are_axe_clean_by_keyboard_and_at_a_phones_width(browser, server):
    """axe-core (WCAG A, AA) finds nothing on the console at 1280 x 720, light and dark, in round 1, round 2, after
    the reveal and with Manage the class open; nor on a student's phone (390 px), light and dark, waiting and
    revealed, whose page nothing widens.  The teacher opens round 2 and reveals by Tab and Enter; the student
    answers by Tab and Space."""
    teacher_tab = driver.new_page(browser)
    student = driver.new_page(browser, viewport=driver.PHONE)
    teacher = None
    try:
        code, key = start_in_browser(teacher_tab, server.base_url)
        teacher = presenter(browser, server.base_url, code, key)
        driver.open_app(student, f"{server.base_url}/?class={code}", show=False)
        found = {}

        def check(name: str, page) -> None:
            for scheme in ("light", "dark"):
                driver.set_scheme(page, scheme)
                found[f"{name}, {scheme}"] = summary_of(axe(page))
            driver.set_scheme(page, "light")

        for _ in range(60):  # the student's answer by keyboard: Tab to the question, Space on its first choice
            student.keyboard.press("Tab")
            if student.evaluate("() => !!document.activeElement.closest('.st-key-lesson_question')"):
                break
        driver.act(student, lambda: student.keyboard.press("Space"))
        student.get_by_text(IN_FIRST).wait_for()
        assert driver.look(student)["overflow"] <= 0
        check("student waiting", student)
        wait_for_count(teacher, 0, 1)
        check("console, round 1", teacher)
        focus_and_press(teacher, "Open round 2")
        teacher.locator(".gelu-poll thead th", has_text="Round 2").wait_for()
        check("console, round 2", teacher)
        focus_and_press(teacher, "Reveal the answer")
        teacher.get_by_text("The answer:", exact=False).wait_for()
        check("console, revealed", teacher)
        driver.act(teacher, lambda: teacher.locator(".st-key-poll_manage summary").click())
        teacher.get_by_role("button", name="Download the answers (CSV)").wait_for()
        check("console, Manage the class", teacher)
        student.get_by_text("Your class's answers").wait_for(timeout=LEARNS_MS)
        driver.wait_drawn(student)
        assert driver.look(student)["overflow"] <= 0
        check("student revealed", student)
        assert not any(found.values()), found
        clean(teacher, student)
    finally:
        for page in (teacher_tab, student, *([teacher] if teacher else [])):
            page.context.close()
