"""The class poll: the tally against the votes cast, one vote per session, the limits, and the pages around it.

References: the votes each test casts, kept in the test as {voter: last choice} and counted with
collections.Counter (the tally must equal it exactly); a fake clock for expiry; tracemalloc for the memory a
flood of forged votes leaves held.  The store is checked twice, in memory and in a real Debian redis-server
started on a free port by the test (skipped where it is missing, unless GELU_E2E_REQUIRED=1).  The pages are
run with AppTest, each AppTest its own session with its own session id, all in this one process.
"""

from __future__ import annotations

import random
import time
import tracemalloc
from collections import Counter

import pytest

from hosting import classpoll
from hosting.classpoll import ClassesFull, MemoryStore, StoreUnavailable, VoteLimiter
from tests.conftest import ROOT, required_or_skip


@pytest.fixture(params=["memory", "redis"])
def store(request):
    if request.param == "memory":
        return MemoryStore()
    server = request.getfixturevalue("redis_server")
    import redis

    redis.Redis.from_url(server.url).flushall()
    return classpoll.RedisStore(server.url)


def classes_held(store) -> int:
    """The classes a store holds, read from its own state: the memory store's table, Redis's set of open classes
    (what each counts against the cap)."""
    if isinstance(store, MemoryStore):
        return len(store._classes)
    return store._redis.zcard(store._k("open"))


# ------------------------------------------------------------------ the store

def test_the_tally_is_the_votes_cast(store):
    """300 votes from 40 sessions, changing their minds at random, on two questions of two classes."""
    rng = random.Random(7)
    (a, _), (b, _) = store.open_class(), store.open_class()
    cast: dict[tuple[str, str], dict[str, int]] = {}
    for _ in range(300):
        code, question = rng.choice([a, b]), rng.choice(["home", "gate"])
        voter, choice = f"v{rng.randrange(40)}", rng.randrange(3)
        assert store.vote(code, question, voter, choice, 3) == 0
        cast.setdefault((code, question), {})[voter] = choice
    for (code, question), votes in cast.items():
        counted = Counter(votes.values())
        tally = store.tally(code, question, 3)
        assert tally.counts == tuple(counted[i] for i in range(3)), (code, question)
        assert tally.total == len(votes) and abs(sum(tally.shares()) - 1) < 1e-12


def test_one_vote_per_session_and_a_change_moves_it(store):
    code, _ = store.open_class()
    for _ in range(5):
        store.vote(code, "home", "s1", 0, 3)
    assert store.tally(code, "home", 3).counts == (1, 0, 0)
    store.vote(code, "home", "s1", 2, 3)
    assert store.tally(code, "home", 3).counts == (0, 0, 1)
    store.vote(code, "home", "s2", 2, 3)
    assert store.tally(code, "home", 3).counts == (0, 0, 2)


def test_reset_reveal_and_rounds(store):
    code, _ = store.open_class()
    store.vote(code, "gate", "s1", 1, 3)
    store.reveal(code, "gate")
    assert store.tally(code, "gate", 3) == classpoll.Tally((0, 1, 0), 0, True)
    store.reset(code, "gate")
    assert store.tally(code, "gate", 3) == classpoll.Tally((0, 0, 0), 1, False)
    assert store.vote(code, "gate", "s1", 0, 3) == 1


def test_the_teacher_key_opens_its_class_only(store):
    (a, key_a), (b, key_b) = store.open_class(), store.open_class()
    assert store.is_teacher(a, key_a) and store.is_teacher(b, key_b)
    assert not store.is_teacher(a, key_b) and not store.is_teacher(b, key_a) and not store.is_teacher(a, "")
    assert classpoll.valid_code(a) and a != b and key_a != key_b and len(key_a) == 22
    assert classpoll.KEY_RE.fullmatch(key_a) and a not in key_a


def test_made_up_codes_and_forged_votes_store_nothing(store):
    code, _ = store.open_class()
    for fake in ["abcdefgh", "zzzzzzzz", "", "x" * 5000, "../../etc", "ABCDEFGH"]:
        assert store.vote(fake, "home", "s1", 0, 3) is None
        assert store.tally(fake, "home", 3) is None and not store.exists(fake)
        store.reveal(fake, "home")
        store.reset(fake, "home")
    for bad in [(-1, 3), (3, 3), (0, 0), (0, 99)]:
        with pytest.raises(ValueError):
            store.vote(code, "home", "s1", *bad)
    with pytest.raises(ValueError):
        store.vote(code, "<script>", "s1", 0, 3)
    assert classes_held(store) == 1 and store.tally(code, "home", 3).total == 0


def test_a_question_counts_at_most_max_voters(store):
    code, _ = store.open_class()
    for i in range(classpoll.MAX_VOTERS + 20):
        store.vote(code, "home", f"s{i}", i % 3, 3)
    assert store.tally(code, "home", 3).total == classpoll.MAX_VOTERS
    assert store.vote(code, "home", "s0", 2, 3) == 0  # a counted session still moves its vote
    assert store.vote(code, "home", "new", 2, 3) is None


def test_a_class_counts_at_most_max_questions(store):
    code, _ = store.open_class()
    took = [store.vote(code, f"q{i}", "s", 0, 3) for i in range(classpoll.MAX_QUESTIONS + 5)]
    assert took.count(0) == classpoll.MAX_QUESTIONS and took[-1] is None


def test_classes_are_capped_and_expire():
    now = [1000.0]
    store = MemoryStore(ttl_s=3600, max_classes=3, clock=lambda: now[0])
    codes = [store.open_class()[0] for _ in range(3)]
    with pytest.raises(ClassesFull):
        store.open_class()
    now[0] += 3600
    assert not any(store.exists(c) for c in codes) and classes_held(store) == 0
    store.open_class()
    assert classes_held(store) == 1


def test_redis_classes_expire_with_the_class(redis_server):
    import redis

    client = redis.Redis.from_url(redis_server.url, decode_responses=True)
    client.flushall()
    store = classpoll.RedisStore(redis_server.url, max_classes=2)
    code, _ = store.open_class()
    store.vote(code, "home", "s", 0, 3)
    assert all(0 < client.ttl(k) <= classpoll.CLASS_TTL_S for k in client.keys("gelu:poll:*"))
    store.open_class()
    with pytest.raises(ClassesFull):
        store.open_class()


def test_a_flood_of_sessions_and_forged_votes_stays_within_a_budget():
    """The worst a client can do to one server's memory: every class open, every question full of voters.
    Reference: tracemalloc's count of what the store holds afterwards; the budget is 2 % of the app's."""
    from gelu_core.budget import BUDGET

    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    store = MemoryStore(max_classes=10)
    codes = [store.open_class()[0] for _ in range(10)]
    for code in codes:
        for q in range(classpoll.MAX_QUESTIONS + 2):
            for v in range(classpoll.MAX_VOTERS + 5):
                store.vote(code, f"q{q}", f"{v:016x}", v % 3, 3)  # 16 hex digits, as ui.class_poll's ids
        for fake in range(200):
            store.vote(f"{fake:08d}".replace("0", "a").replace("1", "b"), "home", "v", 0, 3)
    held = sum(s.size_diff for s in tracemalloc.take_snapshot().compare_to(before, "filename") if s.size_diff > 0)
    tracemalloc.stop()
    per_class = held / 10
    full = per_class * classpoll.MAX_CLASSES
    assert full < 0.02 * BUDGET, f"{per_class / 2**20:.2f} MiB per full class, {full / 2**20:.0f} MiB at the cap"


def test_a_session_is_rate_limited():
    now = [0.0]
    limiter = VoteLimiter(per_minute=60, burst=5, max_sessions=3, clock=lambda: now[0])
    assert [limiter.allow("a") for _ in range(7)] == [True] * 5 + [False] * 2
    now[0] += 1.0
    assert limiter.allow("a") and not limiter.allow("a")
    for s in "bcdef":
        limiter.allow(s)
    assert len(limiter._buckets) == 3


def test_redis_down_answers_unavailable_at_once():
    from harness.browser import free_port

    store = classpoll.RedisStore(f"redis://127.0.0.1:{free_port()}/0")
    started = time.perf_counter()
    for _ in range(20):
        with pytest.raises(StoreUnavailable):
            store.tally("abcdefgh", "home", 3)
    assert time.perf_counter() - started < 2.0


def test_the_setting_names_the_store():
    assert isinstance(classpoll.make_store(None), MemoryStore)
    assert isinstance(classpoll.make_store("memory"), MemoryStore)
    assert isinstance(classpoll.make_store("redis://127.0.0.1:1/0"), classpoll.RedisStore)
    broken = classpoll.make_store("mysql://x")
    with pytest.raises(StoreUnavailable):
        broken.tally("abcdefgh", "home", 3)


# ------------------------------------------------------------------ the pages (AppTest: one process)

@pytest.fixture
def fresh_store(monkeypatch):
    store = MemoryStore()
    monkeypatch.setattr(classpoll, "_STORE", store)
    monkeypatch.setattr(classpoll, "LIMITER", VoteLimiter())
    return store


def tab(query: dict[str, str] | None = None, page: str | None = None):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    if page:
        at.run()
        at.switch_page(f"pages/{page}.py")
    for k, v in (query or {}).items():
        at.query_params[k] = [v]
    return at.run()


def clean(at):
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    return at


def answer(at, page: str, choice: str):
    at.radio(key=f"quiz_{page}").set_value(choice)
    return clean(at.run())


def teacher_text(at) -> str:
    return " ".join(c.value for c in at.caption)


def start_class(at):
    at.button(key="poll_start").click()
    clean(at.run())
    one = lambda v: v if isinstance(v, str) else v[0]  # noqa: E731
    return one(at.query_params["class"]), one(at.query_params["teacher"])


def test_no_class_code_no_tally_and_nothing_stored(fresh_store):
    at = answer(tab(), "home", "a small negative number")
    assert "poll_voted" not in at.session_state and "poll_class" not in at.session_state
    assert "Your class so far" not in " ".join(m.value for m in at.markdown)
    assert fresh_store._classes == {}


def test_a_class_in_one_process_tallies_every_student(fresh_store):
    """A teacher and five students (each an AppTest session); two change their minds."""
    teacher = clean(tab())
    code, key = start_class(teacher)
    students = [clean(tab({"class": code})) for _ in range(5)]
    picks = ["a small negative number", "0, like ReLU", "a small negative number", "-1, unchanged",
             "a small negative number"]
    choices = ("0, like ReLU", "a small negative number", "-1, unchanged")
    for s, pick in zip(students, picks, strict=True):
        assert "Your class so far" not in " ".join(m.value for m in s.markdown)  # not before answering
        answer(s, "home", pick)
        assert any("Your class so far" in m.value for m in s.markdown)
    answer(students[1], "home", "a small negative number")
    answer(students[3], "home", "0, like ReLU")
    picks[1], picks[3] = "a small negative number", "0, like ReLU"
    counted = Counter(choices.index(p) for p in picks)
    assert fresh_store.tally(code, "home", 3).counts == tuple(counted[i] for i in range(3))
    clean(teacher.run())
    assert "5 answers" in teacher_text(teacher)
    # the teacher's controls: only on the teacher's link
    assert teacher.button(key="poll_reset_home") and not [b for b in students[0].button if b.key == "poll_reset_home"]
    teacher.button(key="poll_reveal_home").click()
    clean(teacher.run())
    assert fresh_store.tally(code, "home", 3).revealed
    teacher.button(key="poll_reset_home").click()
    clean(teacher.run())
    assert fresh_store.tally(code, "home", 3).total == 0 and "0 answers" in teacher_text(teacher)
    s = clean(students[0].run())
    assert any(b.key == "poll_again_home" for b in s.button)
    s.button(key="poll_again_home").click()
    answer(clean(s.run()), "home", "-1, unchanged")
    assert fresh_store.tally(code, "home", 3).counts == (0, 0, 1)


def test_a_student_link_with_a_teacher_key_of_another_class_is_a_students_view(fresh_store):
    code_a, _ = fresh_store.open_class()
    _, key_b = fresh_store.open_class()
    at = clean(tab({"class": code_a, "teacher": key_b}))
    assert any("teacher key does not open" in i.value for i in at.info)
    assert not [b for b in at.button if (b.key or "").startswith("poll_reset")]
    answer(at, "home", "0, like ReLU")
    assert fresh_store.tally(code_a, "home", 3).counts == (1, 0, 0)


@pytest.mark.parametrize("code", ["abcdefgh", "nope", "", "<b>x</b>", "9" * 500])
def test_a_bad_class_code_gets_a_note_and_counts_nothing(fresh_store, code):
    at = clean(tab({"class": code}))
    assert [i.value for i in at.info if "class" in i.value], [i.value for i in at.info]
    assert "class" not in at.query_params
    answer(at, "home", "0, like ReLU")
    assert classes_held(fresh_store) == 0


def test_the_class_follows_a_student_to_another_page(fresh_store):
    code, _ = fresh_store.open_class()
    at = clean(tab({"class": code}))
    at.switch_page("pages/gate.py")
    at.query_params.clear()
    clean(at.run())
    answer(at, "gate", "half open (50%)")
    assert fresh_store.tally(code, "gate", 3).counts == (0, 1, 0)


def test_redis_stopped_mid_class_shows_no_error_box(monkeypatch):
    from harness.redis_server import RedisServer, redis_missing

    missing = redis_missing()
    if missing:
        required_or_skip("redis-server is", missing)
    monkeypatch.setattr(classpoll, "LIMITER", VoteLimiter())
    with RedisServer() as server:
        monkeypatch.setattr(classpoll, "_STORE", classpoll.RedisStore(server.url))
        teacher = clean(tab())
        code, _ = start_class(teacher)
        student = clean(tab({"class": code}))
        answer(student, "home", "0, like ReLU")
        server.stop()
        answer(student, "home", "a small negative number")
        assert any("cannot be reached" in c.value for c in student.caption)
        assert any("Right." in s.value for s in student.success)  # the question still works
        clean(teacher.run())
        assert any("tally is unavailable" in w.value for w in teacher.warning)
        clean(tab({"class": code}))  # a new student, the store down: a note, no error
