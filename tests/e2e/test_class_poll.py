"""The class poll as a class meets it: students on two replicas behind HAProxy, one tally in Redis; the teacher's
view in a real browser, redrawn within 2 s of a vote cast in another browser context.

References: the votes each test casts (kept as {student: last choice}, counted with collections.Counter); the
replica each student reached, read from HAProxy's sticky cookie (deploy/haproxy.cfg); the tally read from
Redis through hosting.classpoll.RedisStore, and the teacher console's own words ("N of M answered", read back by
draw.class_poll.answered_count).  Debian's
redis-server is started by the test on a free port; skipped where it or haproxy is missing, unless
GELU_E2E_REQUIRED=1 (CI).
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter

import pytest

from draw.class_poll import IN_FIRST, answered_count
from harness import balancer
from harness import browser as driver
from harness.streamlit_client import Session, run_sync, words
from hosting import classpoll
from tests.conftest import needs_haproxy

pytestmark = pytest.mark.e2e

HOME_CHOICES = ("0, like ReLU", "a small negative number", "-1, unchanged")


@pytest.fixture(scope="module")
def redis_url(redis_server):
    return redis_server.url


@pytest.fixture(scope="module")
def replicas(redis_url):
    needs_haproxy()
    mp = pytest.MonkeyPatch()
    mp.setenv(classpoll.ENV, redis_url)  # the replicas inherit it (harness.browser.Server: os.environ)
    try:
        with balancer.Balancer(replicas=2) as lb:
            yield lb
    finally:
        mp.undo()


async def a_class(base_url: str, code: str, key: str, picks: list[int], changes: dict[int, int]):
    students = [Session(base_url, "", f"class={code}", timeout_s=120) for _ in picks]
    teacher = Session(base_url, "", f"present=true&class={code}&teacher={key}", timeout_s=120)
    try:
        await asyncio.gather(*(s.open() for s in students), teacher.open())
        await asyncio.gather(*(s.run() for s in students))
        await asyncio.gather(*(s.answer(pick) for s, pick in zip(students, picks, strict=True)))
        await asyncio.gather(*(students[i].answer(pick) for i, pick in changes.items()))
        await teacher.run()
        return students, teacher
    finally:
        await asyncio.gather(*(s.close() for s in [*students, teacher]), return_exceptions=True)


def shown_count(teacher: Session) -> int | None:
    """The number of answers the teacher's console shows, None if it shows none."""
    return answered_count(" ".join(words(teacher.elements)))


def test_students_on_two_replicas_see_one_tally(replicas, redis_url):
    """12 students on two replicas answer round 1, three change their minds within it (their votes move); the
    tally in Redis and on the teacher's console is each student's last answer, once; 12 of 12 joined."""
    store = classpoll.RedisStore(redis_url)
    code, key = store.open_class()
    picks = [i % 3 for i in range(12)]
    changes = {0: 1, 5: 0, 7: 1}
    students, teacher = run_sync(a_class(replicas.base_url, code, key, picks, changes))
    reached = Counter(s.cookies.get(balancer.COOKIE) for s in students)
    assert len(reached) == 2 and None not in reached, f"students were not spread over both replicas: {reached}"
    troubled = [s.troubles for s in [*students, teacher] if s.troubles]
    assert not troubled, troubled
    counted = Counter({**dict(enumerate(picks)), **changes}.values())  # round 1 is open: a changed mind moves
    tally = store.tally(code, "home", 3)
    assert tally.counts == tuple(counted[i] for i in range(3)) and tally.joined == len(picks)
    assert shown_count(teacher) == len(picks), words(teacher.elements)
    assert f"{len(picks)} of {len(picks)} answered" in " ".join(words(teacher.elements))


def start_in_browser(teacher, base_url: str) -> tuple[str, str]:
    """Start a class from the sidebar of ``teacher`` (a Chromium page): its (code, teacher key)."""
    driver.open_app(teacher, base_url)
    sidebar = teacher.locator("[data-testid='stSidebar']")
    sidebar.get_by_text("Start a class").first.click()
    start = sidebar.get_by_role("button", name="Start a class")
    start.wait_for(state="visible")
    # the expander has finished opening (two CI runs today clicked its button mid-slide, and no rerun came)
    teacher.wait_for_function("() => !document.querySelector(\"[data-testid='stSidebar']\")"
                              ".getAnimations({subtree: true}).some((a) => a.playState === 'running')")
    driver.act(teacher, start.click)
    # the URL takes the class's code and key from the run the click caused (under load a moment after it is drawn)
    teacher.wait_for_function("() => new URLSearchParams(location.search).has('teacher')", timeout=driver.TIMEOUT_MS)
    query = driver.query(teacher.url)
    return query["class"][0], query["teacher"][0]


def wait_for_count(teacher, choice: int, count: int) -> None:
    """Until the teacher's console shows ``count`` answers for choice index ``choice`` in the question's current
    round (the last column of its row)."""
    teacher.wait_for_function(
        """([want, count]) => {
             const rows = [...document.querySelectorAll('.st-key-class_poll_teacher .gelu-poll tbody tr')];
             const cells = rows.length === 3 ? rows[want].querySelectorAll('.gelu-poll-count') : [];
             return cells.length > 0 && cells[cells.length - 1].textContent.startsWith(`${count} ·`);
           }""",
        arg=[choice, count], timeout=10_000)


def test_the_teacher_view_redraws_within_2_s_of_a_vote_in_another_browser(browser, server):
    teacher = driver.new_page(browser)
    student = driver.new_page(browser)
    try:
        code, key = start_in_browser(teacher, server.base_url)
        # the sidebar's share box offers this view to students: with the class code, never the teacher key
        teacher.wait_for_function("() => document.querySelector('.gelu-share-url').value.includes('class=')")
        shared = teacher.locator(".gelu-share-url").input_value()
        assert f"class={code}" in shared and "teacher" not in shared and key not in shared, shared
        driver.open_app(teacher, f"{server.base_url}/?present=true&class={code}&teacher={key}", show=False)
        panel = teacher.locator(".st-key-class_poll_teacher")
        panel.get_by_text("No student has joined yet.").wait_for()

        driver.open_app(student, f"{server.base_url}/?class={code}", show=False)  # the student predicts
        latencies = []
        before = driver.runs(student)
        student.locator("[data-testid='stRadio']").get_by_text("a small negative number", exact=True).click()
        clicked = time.perf_counter()
        wait_for_count(teacher, HOME_CHOICES.index("a small negative number"), 1)
        latencies.append(time.perf_counter() - clicked)
        driver.wait_idle(student, after=before)
        # round 1 is the student's own: a changed mind moves the vote, and they never see the class's count
        before = driver.runs(student)
        student.locator("[data-testid='stRadio']").get_by_text("0, like ReLU", exact=True).click()
        clicked = time.perf_counter()
        wait_for_count(teacher, HOME_CHOICES.index("0, like ReLU"), 1)
        latencies.append(time.perf_counter() - clicked)
        driver.wait_idle(student, after=before)
        wait_for_count(teacher, HOME_CHOICES.index("a small negative number"), 0)
        assert panel.get_by_text("The 1 student who joined has answered.").count() == 1
        print(f"vote -> teacher's view in Chromium: {', '.join(f'{t:.2f} s' for t in latencies)}")
        assert max(latencies) < 2.0, f"vote -> teacher's view: {[f'{t:.2f} s' for t in latencies]}"
        assert student.get_by_text(IN_FIRST).count() == 1 and student.locator(".gelu-poll").count() == 0
        assert student.locator(".st-key-class_poll_teacher").count() == 0
        assert student.get_by_role("button", name="Reset this question").count() == 0
        for page in (teacher, student):
            assert page.locator(driver.EXCEPTION).count() == 0 and page.locator(driver.ERROR_BOX).count() == 0
    finally:
        teacher.context.close()
        student.context.close()


def test_a_reloaded_tab_answers_as_the_same_student(browser, server):
    """A student answers in Chromium, reloads the page (a new Streamlit session: what a reconnect to another
    replica also gives) and answers otherwise: the teacher's view counts one answer, moved.  Reference: the
    teacher's bars and count; the browser's own cookie jar (the voter cookie, set by the server, HttpOnly)."""
    teacher = driver.new_page(browser)
    student = driver.new_page(browser)
    try:
        code, key = start_in_browser(teacher, server.base_url)
        driver.open_app(teacher, f"{server.base_url}/?present=true&class={code}&teacher={key}", show=False)
        panel = teacher.locator(".st-key-class_poll_teacher")
        panel.get_by_text("No student has joined yet.").wait_for()
        for choice in ["a small negative number", "0, like ReLU"]:
            driver.open_app(student, f"{server.base_url}/?class={code}", show=False)  # the second time: a reload
            before = driver.runs(student)
            student.locator("[data-testid='stRadio']").get_by_text(choice, exact=True).click()
            driver.wait_idle(student, after=before)
            wait_for_count(teacher, HOME_CHOICES.index(choice), 1)
            assert student.get_by_text(IN_FIRST).count() == 1
        panel.get_by_text("The 1 student who joined has answered.").wait_for()  # one voter joined, and answered
        voter = {c["name"]: c for c in student.context.cookies()}[classpoll.VOTER_COOKIE]
        assert voter["httpOnly"] and classpoll.KEY_RE.fullmatch(voter["value"])
        for page in (teacher, student):
            assert page.locator(driver.EXCEPTION).count() == 0 and page.locator(driver.ERROR_BOX).count() == 0
    finally:
        teacher.context.close()
        student.context.close()


def test_an_answer_kept_while_redis_is_down_is_counted_when_it_is_back(browser):
    """In Chromium, one server on a Redis of its own (the deployed options: it keeps its data over the restart):
    Redis stopped, a student answers, and the page says the answer is not counted yet and kept; Redis started
    again, the page says it is counted within RETRY_S + 2 s (one retry of the fragment's timer, one run, PROBE_S),
    the student doing nothing; then the retry fragment and its timer are gone: the runs that follow are the
    waiting page's watch alone (peer instruction: it asks whether the teacher revealed), one per WATCH_S at most.
    Reference: the store's tally, the page's text, the browser's count of finished runs."""
    from draw.class_poll import PENDING, RETRY_S, WATCH_S
    from harness.redis_server import RedisServer, redis_missing
    from tests.conftest import required_or_skip

    missing = redis_missing()
    if missing:
        required_or_skip("redis-server is", missing)
    with RedisServer(deployed=True) as store_server, driver.Server(env={classpoll.ENV: store_server.url}) as server:
        code, _ = classpoll.RedisStore(store_server.url).open_class(30)
        student = driver.new_page(browser)
        try:
            driver.open_app(student, f"{server.base_url}/?class={code}", show=False)  # the student predicts
            store_server.stop()
            before = driver.runs(student)
            student.locator("[data-testid='stRadio']").get_by_text("0, like ReLU", exact=True).click()
            driver.wait_idle(student, after=before)
            assert student.get_by_text(PENDING).count() == 1
            assert student.get_by_text(IN_FIRST).count() == 0
            store_server.start()
            back = time.perf_counter()
            student.get_by_text(IN_FIRST).wait_for(timeout=(RETRY_S + 2.0) * 1000)
            waited = time.perf_counter() - back
            driver.wait_idle(student, after=driver.runs(student) - 1)
            settled = driver.runs(student)
            time.sleep(2 * RETRY_S + 0.5)
            watched = (2 * RETRY_S + 0.5) // WATCH_S + 1
            assert driver.runs(student) - settled <= watched, "the retry fragment still runs after the answer counted"
            assert student.get_by_text(PENDING).count() == 0
            assert classpoll.RedisStore(store_server.url).tally(code, "home", 3).counts == (1, 0, 0)
            assert student.locator(driver.EXCEPTION).count() == 0 and student.locator(driver.ERROR_BOX).count() == 0
            print(f"answer counted {waited:.2f} s after Redis was back")
        finally:
            student.context.close()


def test_redis_stopped_mid_class_no_error_box(replicas, redis_server):
    """Redis goes away while a class is answering, through both replicas: every student's page says where their
    answer stands (in, or kept to be sent again; in a class, never right or wrong before the teacher's reveal), the
    teacher's view says the answers are unavailable, no one sees an exception or an error box.  Runs last in this
    file: it stops the module's redis-server."""
    from draw.class_poll import PENDING

    store = classpoll.RedisStore(redis_server.url)
    code, key = store.open_class()

    async def scene():
        students = [Session(replicas.base_url, "", f"class={code}", timeout_s=120) for _ in range(6)]
        teacher = Session(replicas.base_url, "", f"present=true&class={code}&teacher={key}", timeout_s=120)
        try:
            await asyncio.gather(*(s.open() for s in students), teacher.open())
            await asyncio.gather(*(s.run() for s in students), teacher.run())
            await asyncio.gather(*(s.answer(1) for s in students[:3]))
            redis_server.stop()
            await asyncio.gather(*(s.answer(i % 3) for i, s in enumerate(students)))
            await teacher.run()
            return students, teacher
        finally:
            await asyncio.gather(*(s.close() for s in [*students, teacher]), return_exceptions=True)

    students, teacher = run_sync(scene())
    assert len({s.cookies.get(balancer.COOKIE) for s in students}) == 2  # both replicas lost their store
    troubled = [s.troubles for s in [*students, teacher] if s.troubles]
    assert not troubled, troubled
    for s in students:
        said = words(s.elements)
        assert PENDING in said or IN_FIRST in said, said
        assert not [n for n in said if n.startswith(("Right.", "Not quite."))], said
    notes = [e.text for e in teacher.elements.values() if e.kind == "alert"]
    assert any("unavailable just now" in n for n in notes), notes

