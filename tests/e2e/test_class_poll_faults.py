"""The class poll on a bad day: a replica killed mid-class, Redis killed and restarted, a script that floods a class
with answers, a script that starts classes by the dozen.  Two replicas behind `haproxy -f deploy/haproxy.cfg`
(harness/balancer.py), one Debian redis-server run with the options deploy/docker-compose.yml gives its Redis
(harness/redis_server.py, ``deployed=True``: an append-only file fsynced before each answer), students and
teachers simulated through Streamlit's websocket protocol (harness/streamlit_client.py), each with its own
cookies, as a browser tab.

References: the answers each test casts, kept as {student: last choice} and counted with collections.Counter;
what each student's page said of its answer ("Your answer is in." only once the store holds the answer: a page
that shows it has told the student the answer is counted); the tally read from Redis through
hosting.classpoll.RedisStore, and the teacher console's own words ("N of M answered"); the HTTP status of every
page load.  Skipped where redis-server or haproxy is missing, unless GELU_E2E_REQUIRED=1 (CI).
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import time
from collections import Counter

import pytest
from streamlit.proto.WidgetStates_pb2 import WidgetState

from draw.class_poll import IN_FIRST, answered_count
from harness import balancer
from harness.streamlit_client import MAIN, Session, run_sync, words
from hosting import classpoll
from tests.conftest import needs_haproxy, required_or_skip

pytestmark = pytest.mark.e2e

SCHOOL = "127.0.0.62"  # a school's one NAT address: its teacher and its students
PRANKSTER = "127.0.0.61"  # a script's address (another network)


@pytest.fixture(scope="module")
def store_server():
    from harness.redis_server import RedisServer, redis_missing

    missing = redis_missing()
    if missing:
        required_or_skip("redis-server is", missing)
    with RedisServer(deployed=True) as server:
        yield server


@pytest.fixture(scope="module")
def replicas(store_server):
    needs_haproxy()
    mp = pytest.MonkeyPatch()
    mp.setenv(classpoll.ENV, store_server.url)  # the replicas inherit both (harness.browser.Server: os.environ)
    mp.setenv(classpoll.BEHIND_PROXY_ENV, "1")  # as deploy/docker-compose.yml sets it
    try:
        with balancer.Balancer(replicas=2) as lb:
            yield lb
    finally:
        mp.undo()


def told_counted(s: Session) -> bool:
    """Whether the student's page says their answer is in (drawn only once the store holds it)."""
    return IN_FIRST in words(s.elements)


def shown_count(teacher: Session) -> int | None:
    """The number of answers the teacher's console shows ("N of M answered"), None if it shows none."""
    return answered_count(" ".join(words(teacher.elements)))


def notes(s: Session) -> list[str]:
    """Every alert, markdown and HTML text the page shows now."""
    return [e.text for e in s.elements.values() if e.kind in ("alert", "markdown", "html")]


async def close_all(sessions) -> None:
    await asyncio.gather(*(s.close() for s in sessions), return_exceptions=True)


async def start_a_class(base_url: str, size: int, address: str) -> tuple[Session, str, str]:
    """A teacher's tab that starts a class of ``size`` from the sidebar, then opens its presenter view."""
    teacher = Session(base_url, "", timeout_s=120, local_address=address)
    await teacher.open()
    await teacher.run()
    teacher.enter("Students in your class", size)
    await teacher.click("Start a class")
    query = dict(p.split("=", 1) for p in teacher.query_string.split("&") if "=" in p)
    assert "class" in query, f"the teacher could not start a class: {notes(teacher)}"
    code, key = query["class"], query["teacher"]
    teacher.query_string = f"present=true&class={code}&teacher={key}"
    await teacher.run()
    return teacher, code, key


# --------------------------------------------------------------------------------------------- Redis


def test_redis_killed_mid_class_loses_no_answer_a_student_was_told_is_counted(replicas, store_server):
    """16 students on two replicas: 8 answer, then 8 more while Redis is killed (SIGKILL: nothing flushed on the
    way out) and restarted 3 s later with the deployed options, on its directory.  Every answer a student's page
    showed as counted is in Redis after the restart, with its choice; the teacher's view says the tally is
    unavailable meanwhile (never that the class ended) and shows it again at its first redraw that begins PROBE_S
    or more after Redis answers (its tab asks for a run every REFRESH_S, as the fragment's timer makes a browser
    do: so the redraw that shows it begins within REFRESH_S + PROBE_S); the students still waiting are counted by
    their retry fragment's runs (every RETRY_S; at most three), once each.  No error box or exception anywhere."""
    from draw.class_poll import REFRESH_S, RETRY_S

    picks = [i % 3 for i in range(16)]

    async def scene():
        teacher, code, _ = await start_a_class(replicas.base_url, 30, SCHOOL)
        students = [Session(replicas.base_url, "", f"class={code}", timeout_s=120, local_address=SCHOOL)
                    for _ in picks]  # fmt: skip
        try:
            await asyncio.gather(*(s.open() for s in students))
            await asyncio.gather(*(s.run() for s in students))
            await asyncio.gather(*(s.answer(p) for s, p in zip(students[:8], picks[:8], strict=True)))

            async def late(s: Session, pick: int, delay: float):
                await asyncio.sleep(delay)
                await s.answer(pick)

            async def crash():
                await asyncio.sleep(0.3)
                store_server.kill()

            await asyncio.gather(crash(), *(late(s, p, 0.08 * i) for i, (s, p) in
                                            enumerate(zip(students[8:], picks[8:], strict=True))))  # fmt: skip
            told = {i: picks[i] for i, s in enumerate(students) if told_counted(s)}
            await asyncio.sleep(1.0)
            await teacher.run()
            during = notes(teacher)
            await asyncio.sleep(2.0)
            store_server.start()  # returns once Redis answers PING
            back = time.monotonic()
            seen_after, redraws = [], []  # redraws: (began, seconds after Redis answered; tally shown)
            while time.monotonic() - back < 15:
                started = time.monotonic()
                await teacher.run()
                seen_after += notes(teacher)
                redraws.append((started - back, shown_count(teacher) is not None))
                if redraws[-1][1]:
                    break
                await asyncio.sleep(max(0.0, REFRESH_S - (time.monotonic() - started)))
            teacher_back = time.monotonic() - back
            kept = classpoll.RedisStore(store_server.url).tally(code, "home", 3)
            voters = {i: classpoll.voter_id(code, s.cookies.get(classpoll.VOTER_COOKIE, "")) for i, s in
                      enumerate(students)}  # fmt: skip
            stored = classpoll.RedisStore(store_server.url)._redis.hgetall(f"gelu:poll:votes:{code}:home:0")
            waiting = [s for s in students if not told_counted(s)]
            for _ in range(3):  # the retry fragment's runs, every RETRY_S, until the answer is counted
                await asyncio.gather(*(s.run(list(s.moved.values())) for s in students if not told_counted(s)))
                if all(told_counted(s) for s in students):
                    break
                await asyncio.sleep(RETRY_S)
            await teacher.run()
            return (code, students, teacher, told, during, seen_after, redraws, teacher_back, kept, voters, stored,
                    len(waiting))
        finally:
            await close_all([teacher, *students])

    code, students, teacher, told, during, seen_after, redraws, teacher_back, kept, voters, stored, waited = \
        run_sync(scene())
    print(f"told counted before the crash: {len(told)} of 16; teacher's view back {teacher_back:.2f} s after Redis "
          f"answered (redraws began at {', '.join(f'{t:.2f} s' for t, _ in redraws)})")
    assert 8 <= len(told) < 16, f"{len(told)} students were told their answer is counted"
    assert kept is not None, "the class is gone after Redis restarted"
    counted = Counter(told.values())
    assert all(kept.counts[c] >= n for c, n in counted.items()), (kept.counts, counted)
    missing = [i for i, pick in told.items() if stored.get(voters[i]) != str(pick)]
    assert not missing, f"students told their answer is counted, not in Redis: {missing}"
    assert any("unavailable just now" in n for n in during), during
    assert not [n for n in during + seen_after + [n for s in students for n in notes(s)] if "ended" in n]
    late = [t for t, shown in redraws if t >= classpoll.PROBE_S and not shown]
    assert not late, f"redraws that began {late} s after Redis answered still said the tally is unavailable"
    assert redraws[-1][1] and redraws[-1][0] <= REFRESH_S + classpoll.PROBE_S, redraws
    assert waited == 16 - len(told) and all(told_counted(s) for s in students), [notes(s) for s in students]
    final = classpoll.RedisStore(store_server.url).tally(code, "home", 3)
    assert final.counts == tuple(Counter(picks)[i] for i in range(3)) and shown_count(teacher) == len(picks)
    troubled = [s.troubles for s in [*students, teacher] if s.troubles]
    assert not troubled, troubled


# --------------------------------------------------------------------------------------------- scripts


def test_200_scripted_sessions_cannot_outvote_a_class(replicas, store_server):
    """A teacher states a class of 20; the 20 students answer; then a script opens 200 websocket sessions from the
    school's own address (a student's laptop behind the school's NAT) and answers in each.  The tally is the 20
    students' answers exactly; every scripted answer is refused, and the teacher's view says answers were refused;
    no error box anywhere.  Reference: Counter of the students' picks, the tally in Redis, the teacher's captions."""
    picks = [i % 3 for i in range(20)]

    async def scene():
        teacher, code, _ = await start_a_class(replicas.base_url, len(picks), SCHOOL)
        students = [Session(replicas.base_url, "", f"class={code}", timeout_s=120, local_address=SCHOOL)
                    for _ in picks]  # fmt: skip
        scripted = []
        try:
            await asyncio.gather(*(s.open() for s in students))
            await asyncio.gather(*(s.run() for s in students))
            await asyncio.gather(*(s.answer(p) for s, p in zip(students, picks, strict=True)))
            radio = [e for p, e in sorted(students[0].elements.items()) if p[0] == MAIN and e.kind == "radio"][-1]
            gate = asyncio.Semaphore(25)

            async def prank(n: int):
                """The cheapest session a script makes: a websocket (no page, no cookie), one run with an answer (the
                question's radio, as a click sends it)."""
                s = Session(replicas.base_url, "", f"class={code}", timeout_s=120, local_address=SCHOOL)
                scripted.append(s)
                async with gate:
                    await s._connect()
                    state = WidgetState(id=radio.widget_id)
                    state.string_value = radio.options[n % 3]
                    await s.run([state])
                    await s.close()

            await asyncio.gather(*(prank(n) for n in range(200)))
            await teacher.run()
            return code, students, teacher, scripted
        finally:
            await close_all([teacher, *students, *scripted])

    code, students, teacher, scripted = run_sync(scene())
    tally = classpoll.RedisStore(store_server.url).tally(code, "home", 3)
    assert tally.counts == tuple(Counter(picks)[i] for i in range(3)), tally
    assert shown_count(teacher) == len(picks)
    refused = [n for n in notes(teacher) if "more students answered than the 20" in n]
    assert refused and tally.refused == len(picks), (notes(teacher), tally.refused)  # capped at the class's size
    assert all(told_counted(s) for s in students)
    troubled = [s.troubles for s in [*students, teacher, *scripted] if s.troubles]
    assert not troubled, troubled[:3]


def test_50_scripted_classes_leave_room_for_a_teacher(replicas, store_server):
    """A script opens 50 tabs from one address and presses "Start a class" in each; then a teacher elsewhere
    starts one.  The script gets at most START_BURST classes through each replica (the per-network pace; its
    seats, ADDRESS_SEATS a replica, are not reached at 30 students a class), every other tab is told why in a
    whole sentence, and the teacher's class starts.  Reference: the class codes the tabs' URLs carry, the store's
    own record of them, the notes the pages show."""
    from draw.class_poll import STARTS_REFUSED

    async def scene():
        tabs = [Session(replicas.base_url, "", timeout_s=120, local_address=PRANKSTER) for _ in range(50)]
        try:
            began = time.monotonic()
            await asyncio.gather(*(s.open() for s in tabs))
            gate = asyncio.Semaphore(10)

            async def start(s: Session):
                async with gate:
                    await s.run()
                    await s.click("Start a class")

            await asyncio.gather(*(start(s) for s in tabs))
            minutes = (time.monotonic() - began) / 60
            teacher, code, _ = await start_a_class(replicas.base_url, 30, SCHOOL)
            await teacher.close()
            return tabs, code, minutes
        finally:
            await close_all(tabs)

    tabs, code, minutes = run_sync(scene())
    store = classpoll.RedisStore(store_server.url)
    started = [s for s in tabs if "class=" in s.query_string]
    assert all(store.exists(re.search(r"class=(\w+)", s.query_string).group(1)) for s in started)
    most = 2 * (classpoll.START_BURST + int(minutes * classpoll.STARTS_PER_MINUTE + 1))  # two replicas' paces
    assert 0 < len(started) <= most, (len(started), most)
    told = [s for s in tabs if s not in started and any(n in notes(s) for n in STARTS_REFUSED.values())]
    assert len(told) == 50 - len(started), [notes(s) for s in tabs if s not in started][:2]
    assert store.exists(code), "the teacher's class did not start"
    troubled = [s.troubles for s in tabs if s.troubles]
    assert not troubled, troubled[:3]


# --------------------------------------------------------------------------------------------- a replica


def test_a_replica_killed_mid_class_counts_each_student_once_and_shows_no_502(replicas, store_server):
    """12 students and their teacher on two replicas answer; one replica stops (SIGSTOP) while every student's tab
    loads the page again, and is killed (SIGKILL) with those loads in flight.  Every page load answers 200 (none
    502: HAProxy sends a request its replica never answered to the other); the tabs whose websocket closed
    reconnect as the frontend does (re-sending their answer); the tally in Redis and on the teacher's view is
    one answer per student, each student's last choice.  Runs last in this file: it restarts the killed replica
    on its way out."""
    picks = [i % 3 for i in range(12)]
    victim = replicas.servers[0]

    async def scene():
        teacher, code, _ = await start_a_class(replicas.base_url, 30, SCHOOL)
        students = [Session(replicas.base_url, "", f"class={code}", timeout_s=120, local_address=SCHOOL)
                    for _ in picks]  # fmt: skip
        try:
            await asyncio.gather(*(s.open() for s in students))
            await asyncio.gather(*(s.run() for s in students))
            await asyncio.gather(*(s.answer(p) for s, p in zip(students, picks, strict=True)))
            os.kill(victim.proc.pid, signal.SIGSTOP)
            loads = [asyncio.create_task(s.get(s.page_path())) for s in students]
            await asyncio.sleep(0.5)
            victim.proc.kill()
            statuses = [r.status for r in await asyncio.gather(*loads)]
            await asyncio.sleep(2.0)  # HAProxy closes the websockets the dead replica held
            dropped = [s for s in [*students, teacher] if s.closed_reason is not None]
            for s in dropped:
                await s.reconnect()
            await teacher.run()
            return code, students, teacher, statuses, len(dropped)
        finally:
            await close_all([teacher, *students])

    try:
        code, students, teacher, statuses, dropped = run_sync(scene())
    finally:
        victim.stop()
        victim.start()
        replicas.wait_for_replicas(90)
    print(f"page loads while a replica died: {Counter(statuses)}; tabs reconnected: {dropped}")
    assert statuses == [200] * len(picks), f"page loads while a replica died: {Counter(statuses)}"
    assert dropped > 0, "no tab was on the killed replica"
    tally = classpoll.RedisStore(store_server.url).tally(code, "home", 3)
    assert tally.counts == tuple(Counter(picks)[i] for i in range(3)), tally.counts
    assert shown_count(teacher) == len(picks), notes(teacher)
    troubled = [s.troubles for s in [*students, teacher] if s.troubles]
    assert not troubled, troubled
