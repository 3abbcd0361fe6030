"""The class poll: the tally against the votes cast, one vote per session, the limits, and the pages around it.

References: the votes each test casts, kept in the test as {voter: last choice} and counted with
collections.Counter (the tally must equal it exactly); a fake clock for expiry; tracemalloc for the memory a
flood of forged votes leaves held.  The store is checked twice, in memory and in a real Debian redis-server
started on a free port by the test (skipped where it is missing, unless GELU_E2E_REQUIRED=1).  The pages are
run with AppTest, each AppTest its own session with its own session id, all in this one process.
"""

from __future__ import annotations

import csv
import io
import random
import time
import tracemalloc
from collections import Counter

import pytest

from hosting import classpoll
from hosting.classpoll import ClassesFull, MemoryStore, SeatsTaken, StoreUnavailable, VoteLimiter
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
    """The classes a store holds, read from its own state: the memory store's table, Redis's table of seats taken
    (what each counts against the cap)."""
    if isinstance(store, MemoryStore):
        return len(store._classes)
    return store._redis.hlen(store._k("seats"))


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
        try:
            store.vote(code, "home", f"s{i}", i % 3, 3)
        except SeatsTaken:
            assert i >= classpoll.MAX_VOTERS
    assert store.tally(code, "home", 3).total == classpoll.MAX_VOTERS
    assert store.vote(code, "home", "s0", 2, 3) == 0  # a counted session still moves its vote
    with pytest.raises(SeatsTaken):
        store.vote(code, "home", "new", 2, 3)


def test_a_class_counts_at_most_max_questions(store):
    code, _ = store.open_class()
    took = [store.vote(code, f"q{i}", "s", 0, 3) for i in range(classpoll.MAX_QUESTIONS + 5)]
    assert took.count(0) == classpoll.MAX_QUESTIONS and took[-1] is None


def test_classes_are_capped_and_expire():
    now = [1000.0]
    store = MemoryStore(ttl_s=3600, idle_s=3600, seats=3 * classpoll.seats_of(30), clock=lambda: now[0])
    codes = [store.open_class(30)[0] for _ in range(3)]
    with pytest.raises(ClassesFull):
        store.open_class(30)
    for _ in range(4):  # used every 15 minutes: never idle, closed when its hour is up
        now[0] += 900
        store.tally(codes[0], "home", 3)
    assert not any(store.exists(c) for c in codes) and classes_held(store) == 0
    store.open_class(30)
    assert classes_held(store) == 1


def test_redis_classes_expire_with_the_class(redis_server):
    import redis

    client = redis.Redis.from_url(redis_server.url, decode_responses=True)
    client.flushall()
    store = classpoll.RedisStore(redis_server.url, seats=2 * classpoll.seats_of(30))
    code, _ = store.open_class(30)
    store.vote(code, "home", "s", 0, 3)
    data = [k for k in client.keys("gelu:poll:*") if k not in ("gelu:poll:store", "gelu:poll:seats")]
    assert data and all(0 < client.ttl(k) <= classpoll.IDLE_S for k in data)
    store.open_class(30)
    with pytest.raises(ClassesFull):
        store.open_class(30)


def fill(store, code: str, size: int) -> None:
    """The most a class of ``size`` can hold: twice as many voters as the class has students joining, and
    answering every question (and two made-up ones) in both its rounds (ROUNDS_KEPT), after a reset (whose
    rounds are deleted); votes for made-up codes."""
    for v in range(2 * size + 5):
        store.join(code, f"f{v:015x}")
    for q in range(classpoll.MAX_QUESTIONS + 2):
        for rnd in range(classpoll.ROUNDS_KEPT + 2):
            if rnd == classpoll.ROUNDS_KEPT:
                store.reset(code, f"q{q}")
            elif rnd:
                store.next_round(code, f"q{q}")
            for v in range(2 * size + 5):
                try:
                    store.vote(code, f"q{q}", f"{rnd:x}{v:015x}", v % 3, 3)  # 16 hex digits, as voter_id's
                except SeatsTaken:
                    pass
    for fake in range(200):
        store.vote(f"{fake:08d}".replace("0", "a").replace("1", "b"), "home", "v", 0, 3)


@pytest.mark.parametrize("size", [1, 5, 40])
def test_a_flood_of_sessions_and_forged_votes_stays_within_a_budget(size):
    """The worst a client can do to one server's memory: every seat taken, every question of every class full of
    voters and of refused voters, in every round kept.  Reference: tracemalloc's count of what the store holds
    afterwards, per seat, against SEAT_BYTES, the bytes the cap is sized by (a small class is the most per seat:
    what a class holds besides its answers is spread over fewer); the cap at SEAT_BYTES a seat is within 2 % of
    the app's budget."""
    from gelu_core.budget import BUDGET

    classes = 160 // size
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    store = MemoryStore(seats=classes * classpoll.seats_of(size))
    codes = [store.open_class(size)[0] for _ in range(classes)]
    with pytest.raises(ClassesFull):
        store.open_class(1)
    for code in codes:
        fill(store, code, size)
    held = sum(s.size_diff for s in tracemalloc.take_snapshot().compare_to(before, "filename") if s.size_diff > 0)
    tracemalloc.stop()
    per_seat = held / store.seats
    assert per_seat <= classpoll.SEAT_BYTES, f"{per_seat:.0f} bytes per seat"
    full = classpoll.SEATS * classpoll.SEAT_BYTES
    assert full <= 0.02 * BUDGET, f"{full / 2**20:.0f} MiB at the cap"


@pytest.mark.parametrize("size", [1, 60])
def test_the_deployed_redis_holds_every_seat(redis_server, size):
    """Reference: Redis's own used_memory before and after two more classes filled as the flood above fills them
    (after a first, which loads the scripts), per seat; at SEATS seats that is within half the maxmemory
    deploy/docker-compose.yml gives Redis (the other half: room for the append-only file's rewrite and Redis's own
    buffers)."""
    import redis
    import yaml

    redis.Redis.from_url(redis_server.url).flushall()
    store = classpoll.RedisStore(redis_server.url)
    fill(store, store.open_class(size)[0], size)
    before = redis_server.used_memory()
    for _ in range(2):
        fill(store, store.open_class(size)[0], size)
    per_seat = (redis_server.used_memory() - before) / (2 * classpoll.seats_of(size))
    compose = yaml.safe_load((ROOT / "deploy" / "docker-compose.yml").read_text())
    args = compose["services"]["redis"]["command"]
    maxmemory = args[args.index("--maxmemory") + 1]
    assert maxmemory.endswith("mb")
    assert per_seat <= classpoll.SEAT_BYTES, f"{per_seat:.0f} bytes a seat"
    assert classpoll.SEATS * classpoll.SEAT_BYTES <= int(maxmemory[:-2]) * 2**20 / 2


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


def test_redis_back_answers_at_once():
    """No back-off outlasts the store: Redis stopped, asked (and failing) every 50 ms for 4 s, started again on its
    port.  Reference: the time from Redis answering PING to the store's first answer, with the same 50 ms asking;
    tolerance: PROBE_S (one call in that long asks a failing Redis) plus two 50 ms steps."""
    from harness.redis_server import RedisServer, redis_missing

    missing = redis_missing()
    if missing:
        required_or_skip("redis-server is", missing)
    with RedisServer() as server:
        store = classpoll.RedisStore(server.url)
        code, _ = store.open_class(30)
        server.stop()
        failing_until = time.monotonic() + 4.0
        while time.monotonic() < failing_until:
            with pytest.raises(StoreUnavailable):
                store.tally(code, "home", 3)
            time.sleep(0.05)
        server.start()
        back = time.monotonic()
        while True:
            try:
                store.exists(code)
                break
            except StoreUnavailable:
                time.sleep(0.05)
        waited = time.monotonic() - back
    assert waited <= classpoll.PROBE_S + 0.1, f"the store answered {waited:.2f} s after Redis was back"


def test_a_full_class_refuses_new_voters_and_counts_them(store):
    """A class of 3: 8 voters, the first 3 counted, the next 5 refused and counted as refused (at most 3, the
    class's size); a counted voter still moves; a new round takes new voters again."""
    code, _ = store.open_class(3)
    took = []
    for i in range(8):
        try:
            took.append(store.vote(code, "home", f"v{i}", i % 3, 3))
        except SeatsTaken:
            took.append("refused")
    assert took == [0, 0, 0] + ["refused"] * 5
    tally = store.tally(code, "home", 3)
    assert tally.counts == (1, 1, 1) and tally.refused == 3 and tally.size == 3
    assert store.vote(code, "home", "v0", 2, 3) == 0 and store.tally(code, "home", 3).counts == (0, 1, 2)
    store.reset(code, "home")
    assert store.vote(code, "home", "v7", 0, 3) == 1 and store.tally(code, "home", 3).refused == 0


def kept_rounds(store, code: str, question: str) -> list[int]:
    """The rounds of ``question`` whose votes the store holds: its own keys (Redis) and table (memory)."""
    if isinstance(store, MemoryStore):
        return sorted(r for q, r in store._classes[code].votes if q == question)
    return sorted(int(k.rsplit(":", 1)[1]) for k in store._redis.keys(store._k("votes", code, question, "*")))


def test_peer_instruction_a_second_round_keeps_the_first_and_a_reveal_closes_both(store):
    """Round 1 alone, round 2 after discussion (round 1 kept beside it, opened once however often asked), the reveal
    (no answer counted after it, no third round), then a reset: a new first round, every answer deleted.
    Reference: the votes cast, counted with Counter; the store's own keys."""
    code, _ = store.open_class(10)
    first = {"v0": 0, "v1": 0, "v2": 1, "v3": 2}
    for voter, choice in first.items():
        assert store.vote(code, "gate", voter, choice, 3) == 0
    assert store.tally(code, "gate", 3).stage == 1 and store.tally(code, "gate", 3).before is None
    assert store.next_round(code, "gate") and not store.next_round(code, "gate")  # a second click opens nothing
    second = {"v0": 1, "v1": 1, "v2": 1}
    for voter, choice in second.items():
        assert store.vote(code, "gate", voter, choice, 3) == 1
    tally = store.tally(code, "gate", 3)
    counted = Counter(first.values()), Counter(second.values())
    assert tally.stage == 2 and tally.first == 0 and tally.round == 1
    assert tally.before == tuple(counted[0][i] for i in range(3))
    assert tally.counts == tuple(counted[1][i] for i in range(3))
    assert kept_rounds(store, code, "gate") == [0, 1]
    store.reveal(code, "gate")
    with pytest.raises(classpoll.AnswerClosed):
        store.vote(code, "gate", "v3", 1, 3)
    assert store.tally(code, "gate", 3).counts == tally.counts and not store.next_round(code, "gate")
    assert store.phase(code, "gate") == (1, True)
    store.reset(code, "gate")
    again = store.tally(code, "gate", 3)
    assert again == classpoll.Tally((0, 0, 0), 2, False) and again.stage == 1 and again.before is None
    assert kept_rounds(store, code, "gate") == [] and store.phase(code, "gate") == (2, False)
    assert store.vote(code, "gate", "v3", 1, 3) == 2


def test_reset_all_starts_every_question_again(store):
    code, _ = store.open_class(10)
    for question in ("home", "gate", "curves"):
        store.vote(code, question, "v", 1, 3)
    store.next_round(code, "gate")
    store.reveal(code, "curves")
    store.reset_all(code)
    for question, rnd in (("home", 1), ("gate", 2), ("curves", 1)):
        tally = store.tally(code, question, 3)
        assert tally == classpoll.Tally((0, 0, 0), rnd, False) and tally.stage == 1, question
        assert kept_rounds(store, code, question) == []


def test_joined_is_counted_once_per_voter_and_at_most_the_class_size(store):
    """Reference: the distinct voters that joined, capped at the class's size (4)."""
    code, _ = store.open_class(4)
    for voter in ["a", "b", "a", "c", "b", "a"]:  # reconnects and reloads: the same voters again
        assert store.join(code, voter)
    assert store.tally(code, "home", 3).joined == 3
    assert store.join(code, "d") and not store.join(code, "e") and store.join(code, "a")
    assert store.tally(code, "home", 3).joined == 4
    assert store.join("abcdefgh", "a") is None
    store.vote(code, "home", "x", 0, 3)
    assert store.tally(code, "home", 3).present == 4


def test_an_ended_class_is_deleted_at_once_and_its_students_are_told(store):
    """Reference: the store's own state after end(): no class, no key of it left in Redis (only its code among the
    ended), its seats free; ended() true for it alone."""
    code, _ = store.open_class(5)
    other, _ = store.open_class(5)
    store.join(code, "a")
    store.vote(code, "home", "a", 1, 3)
    store.next_round(code, "home")
    store.vote(code, "home", "a", 2, 3)
    store.end(code)
    assert not store.exists(code) and store.tally(code, "home", 3) is None and store.phase(code, "home") is None
    assert store.ended(code) and not store.ended(other) and store.exists(other)
    assert store.vote(code, "home", "a", 0, 3) is None and store.join(code, "b") is None
    assert classes_held(store) == 1
    if not isinstance(store, MemoryStore):
        left = [k for k in store._redis.keys(store._k("*")) if code in k]
        assert left == [], left
        assert store._redis.zscore(store._k("ended"), code) is not None


def test_idle_classes_close(store):
    """A class nobody votes in or reads closes after IDLE_S (memory: a fake clock; Redis: idle 2 s, its keys gone
    by their own expiry); one in use stays open."""
    if isinstance(store, MemoryStore):
        now = [1000.0]
        store = MemoryStore(idle_s=60, clock=lambda: now[0])
        idle, used = store.open_class(5)[0], store.open_class(5)[0]
        for _ in range(3):
            now[0] += 30
            store.vote(used, "home", "v", 0, 3)
        assert not store.exists(idle) and store.exists(used) and classes_held(store) == 1
        return
    store = classpoll.RedisStore(store.url, idle_s=2, touch_s=0)
    idle, used = store.open_class(5)[0], store.open_class(5)[0]
    store.vote(idle, "home", "v", 0, 3)
    for _ in range(6):
        time.sleep(0.5)
        store.vote(used, "home", "v", 0, 3)
    assert not store.exists(idle) and store.exists(used)
    assert not store._redis.keys(store._k("*", idle + "*")), "an idle class's keys outlive it"


def test_a_store_restarted_empty_is_recognised(redis_server):
    """A Redis that comes back without its data (here FLUSHALL, as a restart without persistence leaves it): a
    class there before is "lost", not closed, for any session; once another class opens in it, for the session
    that saw the class (its store id), still.  Memory store: never lost (a restarted process holds no class)."""
    import redis

    client = redis.Redis.from_url(redis_server.url)
    client.flushall()
    store = classpoll.RedisStore(redis_server.url)
    code, _ = store.open_class(30)
    seen = store.tally(code, "home", 3).store
    assert seen and not store.lost(code, seen)
    client.flushall()
    assert store.tally(code, "home", 3) is None and store.lost(code) and store.lost(code, seen)
    store.open_class(30)
    assert store.lost(code, seen) and not store.lost(code)
    assert not MemoryStore().lost(code)


def test_a_voter_is_the_same_browser_in_one_class_and_another_in_each():
    """Reference: voter_id's own definition, SHA-256 of the code and the cookie: the same pair the same id (every
    replica, every reconnect), another code or another cookie another id."""
    cookie = "A" * 22
    assert classpoll.voter_id("abcdefgh", cookie) == classpoll.voter_id("abcdefgh", cookie)
    assert classpoll.voter_id("abcdefgh", cookie) != classpoll.voter_id("abcdefgz", cookie)
    assert classpoll.voter_id("abcdefgh", cookie) != classpoll.voter_id("abcdefgh", "B" * 22)
    assert len(classpoll.voter_id("abcdefgh", cookie)) == 16


def test_starts_are_bounded_per_network():
    """One network starts START_BURST classes in a row, then one a minute, and holds at most its seats; another
    network is not held back; an IPv6 /64 is one network; seats come free as classes close."""
    now = [0.0]
    store = MemoryStore(seats=10_000)
    starts = classpoll.Starts(seats=100, burst=5, per_minute=1, clock=lambda: now[0])
    took = []
    for _ in range(8):
        try:
            took.append(starts.start(store, "6.6.6.6", 10))
        except classpoll.TooManyStarts as refused:
            took.append(refused.reason)
    assert [t if isinstance(t, str) else "ok" for t in took] == ["ok"] * 5 + ["pace"] * 3
    now[0] += 60
    starts.start(store, "6.6.6.6", 10)
    now[0] += 600  # the pace refilled: now the seats bind
    starts.start(store, "6.6.6.6", 10)  # 7 classes of 14 seats: 98 of 100
    with pytest.raises(classpoll.TooManyStarts, match="seats"):
        starts.start(store, "6.6.6.6", 10)
    starts.start(store, "7.7.7.7", 10)
    starts.start(store, "2001:db8::1", 50)
    with pytest.raises(classpoll.TooManyStarts, match="seats"):
        starts.start(store, "2001:db8::2", 50)
    for code, _ in took[:3]:
        store._classes.pop(code)  # three classes closed
    starts.start(store, "6.6.6.6", 30)
    assert classpoll.network("::ffff:6.6.6.6") == "6.6.6.6" and classpoll.network(None) == "local"


def test_the_voter_cookie_is_set_on_page_documents_and_kept():
    """hosting.classpoll.VoterCookie over a two-route ASGI app: a page document without the cookie gets a new one
    (HttpOnly, SameSite=Lax, path /); with a well-formed one, the same value again; other answers none."""
    from harness.streamlit_client import run_sync

    async def app(scope, receive, send):
        kind = b"text/html" if scope["path"] == "/" else b"application/json"
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", kind)]})
        await send({"type": "http.response.body", "body": b"x"})

    def cookies(path: str, sent: str = "") -> list[str]:
        got = []

        async def send(message):
            if message["type"] == "http.response.start":
                got.extend(v.decode() for k, v in message["headers"] if k == b"set-cookie")

        scope = {"type": "http", "method": "GET", "path": path,
                 "headers": [(b"cookie", sent.encode())] if sent else []}  # fmt: skip
        run_sync(classpoll.VoterCookie(app)(scope, None, send))  # not asyncio.run: Playwright's loop may run here
        return got

    first = cookies("/")
    assert len(first) == 1 and "HttpOnly" in first[0] and "SameSite=Lax" in first[0] and "Path=/" in first[0]
    value = first[0].split(";")[0].split("=", 1)[1]
    assert classpoll.KEY_RE.fullmatch(value)
    assert cookies("/", f"a=1; {classpoll.VOTER_COOKIE}={value}")[0].startswith(f"{classpoll.VOTER_COOKIE}={value};")
    assert cookies("/", f"{classpoll.VOTER_COOKIE}=forged<>")[0].split(";")[0] != f"{classpoll.VOTER_COOKIE}=forged<>"
    assert cookies("/data.json") == [] and cookies("/_stcore/health") == []


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
    """What the teacher's console and captions say: its HTML (the answers, "N of M answered") and captions."""
    return " ".join([h.proto.body for h in at.get("html") if "gelu-console" in h.proto.body]
                    + [c.value for c in at.caption])


def start_class(at):
    at.button(key="poll_start").click()
    clean(at.run())
    one = lambda v: v if isinstance(v, str) else v[0]  # noqa: E731
    return one(at.query_params["class"]), one(at.query_params["teacher"])


HOME_CHOICES = ("0, like ReLU", "a small negative number", "-1, unchanged")
UNFOLDED = "Five numbers through both"  # Home's subheader after its question: drawn once the page unfolds


def unfolded(at) -> bool:
    return any(h.value == UNFOLDED for h in at.subheader)


def told(at) -> list[str]:
    """Every note the page shows: alerts and captions."""
    return [e.value for kind in ("success", "warning", "info", "caption") for e in getattr(at, kind)]


def test_no_class_code_no_tally_and_nothing_stored(fresh_store):
    at = answer(tab(), "home", "a small negative number")
    assert "poll_voted" not in at.session_state and "poll_class" not in at.session_state
    assert unfolded(at) and any(s.value.startswith("Right.") for s in at.success)  # predict, then reveal, alone
    assert fresh_store._classes == {}


def test_peer_instruction_in_one_process(fresh_store):
    """A teacher and five students (each an AppTest session).  Round 1: each student reads that their answer is in,
    never right or wrong nor the class's count, and their page stays folded, without Show me; the teacher's console
    counts them.  Round 2: the students' choices are cleared, they answer again, and the console shows both rounds.
    The reveal: every student's page unfolds with right or wrong and the reason, and the class's answers.  A reset
    folds it again.  Reference: the votes cast (Counter), the store's tally, the CSV the console offers."""
    from draw import class_poll

    teacher = clean(tab())
    code, key = start_class(teacher)
    teacher = clean(tab({"present": "true", "class": code, "teacher": key}))
    assert not unfolded(teacher) and "No student has joined yet." in teacher_text(teacher)
    students = [clean(tab({"class": code})) for _ in range(5)]
    first = ["a small negative number", "0, like ReLU", "a small negative number", "-1, unchanged", "0, like ReLU"]
    for s, pick in zip(students, first, strict=True):
        assert not [b for b in s.button if (b.key or "").startswith("show_")]  # the room decides, not "Show me"
        answer(s, "home", pick)
        assert class_poll.IN_FIRST in told(s) and not unfolded(s)
        assert not [n for n in told(s) if n.startswith(("Right.", "Not quite."))]
        assert not [h for h in s.get("html") if "gelu-poll" in h.proto.body]  # no count of the class
    answer(students[4], "home", "a small negative number")  # a changed mind within the round moves the vote
    first[4] = "a small negative number"
    counted = Counter(HOME_CHOICES.index(p) for p in first)
    assert fresh_store.tally(code, "home", 3).counts == tuple(counted[i] for i in range(3))
    clean(teacher.run())
    assert "5 of 5 answered" in teacher_text(teacher) and not unfolded(teacher)

    teacher.button(key="poll_round2_home").click()
    clean(teacher.run())
    second = ["a small negative number"] * 4
    for s, pick in zip(students, second, strict=False):
        clean(s.run())
        assert s.radio(key="quiz_home").value is None and any(i.value.startswith("Round 2") for i in s.info)
        answer(s, "home", pick)
        assert class_poll.IN_SECOND in told(s) and not unfolded(s)
    clean(teacher.run())
    tally = fresh_store.tally(code, "home", 3)
    again = Counter(HOME_CHOICES.index(p) for p in second)
    assert tally.before == tuple(counted[i] for i in range(3)) and tally.counts == tuple(again[i] for i in range(3))
    assert "Round 1: alone" in teacher_text(teacher) and "Round 2: after discussion" in teacher_text(teacher)
    assert "4 of 5 answered" in teacher_text(teacher)

    teacher.button(key="poll_reveal_home").click()
    clean(teacher.run())
    assert unfolded(teacher)
    assert any(s.value.startswith("The answer: a small negative number.") for s in teacher.success)
    for s, pick in zip(students, second + [first[4]], strict=True):
        clean(s.run())
        assert unfolded(s) and any(n.startswith("Right." if pick == HOME_CHOICES[1] else "Not quite.") for n in told(s))
        assert [h for h in s.get("html") if "Your class&#x27;s answers" in h.proto.body]
    assert any("in round 1 and 100% in round 2" in h.proto.body for h in teacher.get("html"))

    from ui.pages import PAGES

    questions = {p: (row.title, row.question) for p, row in PAGES.items() if row.question is not None}
    rows = list(csv.DictReader(io.StringIO(class_poll.answers_csv(
        fresh_store.overview(code, {p: len(q.choices) for p, (_, q) in questions.items()}), questions, "tanh"))))
    home = PAGES["home"].question.ask("tanh")
    assert {(r["round"], r["choice"]): int(r["count"]) for r in rows if r["question"] == home} == {
        **{("1", c): counted[i] for i, c in enumerate(HOME_CHOICES)},
        **{("2", c): again[i] for i, c in enumerate(HOME_CHOICES)}}

    teacher.button(key="poll_reset_home").click()
    clean(teacher.run())
    assert fresh_store.tally(code, "home", 3).total == 0 and not unfolded(teacher)
    s = clean(students[0].run())
    assert not unfolded(s) and s.radio(key="quiz_home").value is None


def test_a_student_sees_no_teachers_tool_and_a_visitor_may_start_a_class(fresh_store):
    code, _ = fresh_store.open_class()
    student = clean(tab({"class": code}, page="curves"))
    keys = [b.key for b in student.button]
    assert "poll_start" not in keys and "poll_join" not in keys and "poll_leave" in keys
    assert not [m for m in student.multiselect if m.label == "Hide in the presenter view"]
    share = [h.proto.body for h in student.get("html") if "gelu-share" in h.proto.body]
    assert share and "Copy presenter link" not in share[0]
    visitor = clean(tab(page="curves"))
    assert visitor.button(key="poll_start") and visitor.button(key="poll_join")
    assert [m for m in visitor.multiselect if m.label == "Hide in the presenter view"]


def test_a_class_code_typed_in_joins_the_class(fresh_store):
    """Reference: the store's joined count; typed as a room reads it (upper case, a space) it is the same code."""
    from draw import class_poll

    code, _ = fresh_store.open_class()
    at = clean(tab())
    for typed, note in (("nope", "That is not a class code"), ("abcd efgh", "No class is open")):
        at.text_input(key="poll_join_code").set_value(typed)
        at.button(key="poll_join").click()
        clean(at.run())
        assert any(w.value.startswith(note) for w in at.warning), [w.value for w in at.warning]
    at.text_input(key="poll_join_code").set_value(class_poll.shown_code(code))
    at.button(key="poll_join").click()
    clean(at.run())
    clean(at.run())
    assert at.query_params["class"] in (code, [code]) and at.session_state["poll_class"] == (code, "")
    assert fresh_store.tally(code, "home", 3).joined == 1


def test_an_ended_class_is_gone_and_its_students_are_told(fresh_store):
    """Manage the class (its overview: every question of the lesson, round by round), End the class, confirmed: the
    store holds nothing of it; the teacher and the student are told, and the student's page works alone again."""
    from draw import class_poll
    from ui.pages import PAGES

    teacher = clean(tab())
    code, key = start_class(teacher)
    teacher = clean(tab({"present": "true", "class": code, "teacher": key}))
    student = clean(tab({"class": code}))
    answer(student, "home", "0, like ReLU")
    teacher.session_state["poll_manage"] = True  # the expander, opened: read from the store only then
    clean(teacher.run())
    overview = teacher.table[0].value
    assert list(overview["Page"]) == [row.title for row in PAGES.values() if row.question is not None]
    assert overview["Round 1: answers"][0] == "1" and overview["Round 2: answers"][0] == "–"
    teacher.button(key="poll_end").click()
    clean(teacher.run())
    teacher.button(key="poll_end_yes").click()
    clean(teacher.run())
    assert not fresh_store.exists(code) and fresh_store.ended(code) and fresh_store._classes == {}
    assert class_poll.ENDED_FOR_TEACHER in [i.value for i in teacher.info]
    assert "class" not in teacher.query_params and "teacher" not in teacher.query_params
    clean(student.run())
    assert class_poll.ENDED_FOR_STUDENT in [i.value for i in student.info]
    assert [b for b in student.button if (b.key or "").startswith("show_")] or unfolded(student)


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
    from draw import class_poll
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
        student.switch_page("pages/gate.py")
        clean(student.run())
        answer(student, "gate", "half open (50%)")
        assert any("cannot be reached" in c.value for c in student.caption)
        # peer instruction: the answer is kept and waits with the page for the store (never right or wrong before
        # the teacher's reveal, which the store carries)
        assert class_poll.PENDING in captions(student) and not unfolded(student)
        clean(teacher.run())
        assert any("unavailable just now" in w.value for w in teacher.warning)
        clean(tab({"class": code}))  # a new student, the store down: a note, no error


def captions(at) -> list[str]:
    return [c.value for c in at.caption]


def test_a_full_class_refuses_an_answer_and_the_teacher_sees_it(fresh_store):
    """A class started for 2 students; a third student's answer is refused, with a sentence saying why, and the
    teacher's view counts it as refused.  Reference: the store's tally, and the captions each view shows."""
    from draw import class_poll

    teacher = clean(tab())
    teacher.number_input(key="poll_size").set_value(2)
    code, _ = start_class(teacher)
    students = [clean(tab({"class": code})) for _ in range(3)]
    for s in students:
        answer(s, "home", "0, like ReLU")
    assert all(class_poll.IN_FIRST in told(s) for s in students[:2])
    assert class_poll.REFUSED in captions(students[2]) and class_poll.IN_FIRST not in told(students[2])
    answer(students[2], "home", "-1, unchanged")  # a changed answer is refused as well, and not counted again
    assert class_poll.REFUSED in captions(students[2])
    tally = fresh_store.tally(code, "home", 3)
    assert tally.counts == (2, 0, 0) and tally.refused == 1
    clean(teacher.run())
    assert class_poll._refused(1, 2) in captions(teacher), captions(teacher)


class FlakyStore(MemoryStore):
    """A memory store that can be switched off: every call then raises StoreUnavailable, as a Redis down does."""

    down = False

    def __getattribute__(self, name):
        attr = object.__getattribute__(self, name)
        if name in ("vote", "tally", "exists", "is_teacher", "lost") and object.__getattribute__(self, "down"):
            def unavailable(*args, **kwargs):
                raise StoreUnavailable("switched off")

            return unavailable
        return attr


def test_an_answer_the_store_cannot_take_is_kept_and_counted_when_it_is_back(monkeypatch):
    """The store down when a student answers: the page says the answer is not counted yet and is kept (never
    "counted"); the store back, the next run (the retry fragment's, or any) counts it, once.  Reference: the
    store's tally and the student's captions."""
    from draw import class_poll

    store = FlakyStore()
    monkeypatch.setattr(classpoll, "_STORE", store)
    monkeypatch.setattr(classpoll, "LIMITER", VoteLimiter())
    code, _ = store.open_class(30)
    student = clean(tab({"class": code}))
    store.down = True
    answer(student, "home", "0, like ReLU")
    assert class_poll.PENDING in captions(student) and class_poll.IN_FIRST not in told(student)
    clean(student.run())
    assert class_poll.PENDING in captions(student)
    store.down = False
    clean(student.run())
    assert class_poll.IN_FIRST in told(student) and store.tally(code, "home", 3).counts == (1, 0, 0)
    store.down = True
    clean(student.run())  # counted before the store went away: the page says so, not "not counted"
    assert class_poll.UNSEEN in captions(student) and class_poll.IN_FIRST in told(student), told(student)
    store.down = False
    clean(student.run())
    assert store.tally(code, "home", 3).counts == (1, 0, 0)


def test_the_teacher_is_told_a_class_was_lost_with_the_store_not_that_it_ended(redis_server, monkeypatch):
    """Redis comes back empty (FLUSHALL: what a restart without persistence leaves): the teacher's view and a
    student's page say the class was lost with the store's data, never that it ended."""
    import redis

    from draw import class_poll

    redis.Redis.from_url(redis_server.url).flushall()
    monkeypatch.setattr(classpoll, "_STORE", classpoll.RedisStore(redis_server.url))
    monkeypatch.setattr(classpoll, "LIMITER", VoteLimiter())
    teacher = clean(tab())
    code, key = start_class(teacher)
    teacher = clean(tab({"present": "true", "class": code, "teacher": key}))
    student = clean(tab({"class": code}))
    answer(student, "home", "0, like ReLU")
    redis.Redis.from_url(redis_server.url).flushall()
    clean(teacher.run())
    notes = [i.value for i in teacher.info]
    assert class_poll.LOST_FOR_TEACHER in notes and not [n for n in notes if "ended" in n], notes
    answer(student, "home", "a small negative number")
    assert class_poll.LOST_FOR_STUDENT in told(student)


def test_the_teacher_is_told_a_class_closed_unused(monkeypatch):
    """A class nobody used for IDLE_S (here half a second) closes: the teacher's view says it closed unused, not
    that its 12 hours are over."""
    from draw import class_poll

    store = MemoryStore(idle_s=0.5)
    monkeypatch.setattr(classpoll, "_STORE", store)
    teacher = clean(tab())
    code, key = start_class(teacher)
    teacher = clean(tab({"present": "true", "class": code, "teacher": key}))
    time.sleep(0.6)
    clean(teacher.run())
    assert class_poll.IDLE_FOR_TEACHER in [i.value for i in teacher.info]
