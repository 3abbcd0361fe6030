"""The class poll's store: which classes are open, and how their students answered each page's question.

Streamlit-free.  One interface, two backends, named by one setting:

* ``GELU_CLASS_STORE`` unset (or ``memory``): ``MemoryStore``, this process's memory; the default of
  ``streamlit run app.py``, nothing to install.  Every replica would hold its own tallies.
* ``GELU_CLASS_STORE=redis://host:6379/0``: ``RedisStore``, one tally for a class whose students land on
  different replicas (deploy/: a Redis service beside the app, with an append-only file fsynced before each
  reply, so a vote it has answered survives a crash).  Redis unreachable: every call raises
  ``StoreUnavailable`` at once or within ``timeout_s``; while it stays down, one call in ``PROBE_S`` asks it
  again and the others answer at once, so the first call after its return is answered (no back-off outlasts it).

What is stored, and nothing else: per class, the hash of its teacher key, its opening time, its last activity,
its size (the students its teacher says it has), the id of the store it was opened in and the voters who joined
it (at most its size); per question, its round, the round its first round was (a reset starts again at a new
one) and whether its answer is revealed; per question and round, each voter's current choice (an index) and the
voters refused because the class was full.  A class its teacher ends is deleted at once, leaving only its code
and when it ended (``ended``; the ``ENDED_KEPT`` most recent, for ``IDLE_S``), so that its students are told.

Peer instruction: a question's first round takes each student's answer alone; its teacher may open a second round
(``next_round``: the first is kept, side by side); ``reveal`` closes the question's answers (a vote after it is
refused: ``AnswerClosed``); ``reset`` starts the question again from a new first round, deleting its answers;
``reset_all`` does so for every question of the class.  A voter is a
random id: ``voter_id(code, cookie)``, a hash of the class code and the browser's random ``VOTER_COOKIE``
(``VoterCookie``, below), so a reloaded or reconnected tab, or one that lands on another replica, is the same
voter, and the ids of one browser in two classes cannot be linked.  No names, no text, no addresses.

Limits (memory stays bounded whatever a client sends):

* a class closes ``CLASS_TTL_S`` (12 h) after it opened, or ``IDLE_S`` (1 h) after its last vote or read;
* a class of size S counts at most S voters per question and round; a voter past that is refused (and counted
  as refused, at most S of them); a counted voter's changed answer always moves;
* the store holds at most ``SEATS`` seats, a class taking its size plus ``CLASS_SEATS`` (its own questions and
  rounds): ``POLL_SHARE`` of the memory budget (gelu_core.budget) over ``SEAT_BYTES``, the most a seat can hold
  (``MAX_QUESTIONS`` questions, ``ROUNDS_KEPT`` rounds, a vote and a refusal in each: tests/test_class_poll.py
  measures it, in memory and in Redis);
* ``Starts``: from one network address, through one server, classes holding at most ``ADDRESS_SEATS`` seats
  at once, started at most ``START_BURST`` in a row and then ``STARTS_PER_MINUTE``; ``CLASSES_PER_SESSION``
  per browser tab;
* ``VoteLimiter``: a voter casts at most ``VOTE_BURST`` votes in a row, refilled at ``VOTES_PER_MINUTE``.

A class code is ``CODE_LENGTH`` characters of a 31-letter alphabet from ``secrets`` (31**8, about 8.5e11
codes); a teacher key is 128 random bits, stored only as its SHA-256: nothing about it follows from the code.

``VoterCookie`` is the ASGI middleware (hosting.MIDDLEWARE) that gives each browser its voter cookie.  What a
student, a teacher and a host see in each fault, and why: docs/class-poll.md.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import os
import re
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field

from gelu_core.budget import BUDGET

ENV = "GELU_CLASS_STORE"
BEHIND_PROXY_ENV = "GELU_BEHIND_PROXY"  # "1": clients reach the app only through a proxy that appends X-Forwarded-For
CLASS_TTL_S = 12 * 3600
IDLE_S = 3600  # no vote and no read of its tally for this long: the class closes
TOUCH_S = 60  # a class's last activity is written at most this often (each write is an fsync in Redis)
MAX_QUESTIONS = 10  # the lesson has 8
MAX_VOTERS = 500  # the largest class a teacher may state
DEFAULT_SIZE = 30
MAX_CHOICES = 8
ROUNDS_KEPT = 2  # a question's two rounds of peer instruction: alone, then after discussion
SEAT_BYTES = 5 * 1024  # the most one seat holds: a vote and a refusal per question and round kept
CLASS_SEATS = 4  # what a class holds besides its students' answers (its questions and rounds), in seats
POLL_SHARE = 0.02  # of the memory budget
SEATS = int(BUDGET * POLL_SHARE) // SEAT_BYTES
ADDRESS_SEATS = SEATS // 8  # one network address, through one server
START_BURST = 10
STARTS_PER_MINUTE = 1.0
CLASSES_PER_SESSION = 3
VOTES_PER_MINUTE = 20
VOTE_BURST = 10
VOTER_COOKIE = "gelu_voter"
CODE_ALPHABET = "23456789abcdefghjkmnpqrstuvwxyz"  # no 0/o, 1/l/i: read aloud and typed by a class
CODE_LENGTH = 8
CODE_RE = re.compile(rf"[{CODE_ALPHABET}]{{{CODE_LENGTH}}}")
KEY_RE = re.compile(r"[A-Za-z0-9_-]{22}")  # a teacher key, and a voter cookie: secrets.token_urlsafe(16)
QUESTION_RE = re.compile(r"[a-z0-9_]{1,32}")
PROBE_S = 0.25  # while Redis is down, one call in this long asks it again
ENDED_KEPT = 1000  # classes remembered as ended by their teacher (for IDLE_S at most), so their students are told


class StoreUnavailable(RuntimeError):
    """The store cannot be reached (Redis down, misconfigured): the tally is unavailable for now."""


class ClassesFull(RuntimeError):
    """The store already holds its maximum number of seats in open classes."""


class SeatsTaken(RuntimeError):
    """The class already counts as many voters on this question as its teacher said it has students."""


class AnswerClosed(RuntimeError):
    """The question's answer is revealed: its round takes no more answers (they would follow the answer)."""


class TooManyStarts(RuntimeError):
    """This network has started as many classes as it may for now, through this server."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason  # "pace": too many starts in a row; "seats": its open classes hold its share


@dataclass(frozen=True)
class Tally:
    """One question's answers in one class: counts per choice index in its current round, the round (a number that
    only grows, so a student can tell a new round from the one they answered), whether it is revealed, how many
    voters were refused (class full), the class's size, when it opened, the id of the store holding it, the round
    its first round was, the first round's counts while the second is open, and how many students joined."""

    counts: tuple[int, ...]
    round: int = 0
    revealed: bool = False
    refused: int = field(default=0, compare=False)
    size: int = field(default=0, compare=False)
    opened: float = field(default=0.0, compare=False)
    store: str = field(default="", compare=False)
    first: int = field(default=0, compare=False)
    before: tuple[int, ...] | None = field(default=None, compare=False)
    joined: int = field(default=0, compare=False)

    @property
    def stage(self) -> int:
        """1 in the question's first round (each student alone), 2 once its teacher opened the second."""
        return self.round - self.first + 1

    @property
    def total(self) -> int:
        return sum(self.counts)

    @property
    def present(self) -> int:
        """The students in the class as far as the store knows: those who joined, and at least those who answered."""
        return max(self.joined, self.total, sum(self.before or ()))

    def shares(self) -> tuple[float, ...]:
        """Each choice's share of the answers (0 for all when nobody answered)."""
        n = self.total
        return tuple(c / n if n else 0.0 for c in self.counts)


def new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def new_key() -> str:
    return secrets.token_urlsafe(16)  # 22 characters, 128 bits


def key_hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def valid_code(code: str | None) -> bool:
    return bool(code) and CODE_RE.fullmatch(code) is not None


def voter_id(code: str, cookie: str) -> str:
    """The voter a browser is in one class: 16 hex digits of SHA-256(code, cookie), the same on every replica and
    after every reconnect, different in each class."""
    return hashlib.sha256(f"{code}:{cookie}".encode()).hexdigest()[:16]


def seats_of(size: int) -> int:
    """The seats a class of ``size`` students takes: one per student, and CLASS_SEATS for the class itself."""
    return size + CLASS_SEATS


def _check_size(size: int) -> int:
    if isinstance(size, bool) or not isinstance(size, int) or not 1 <= size <= MAX_VOTERS:
        raise ValueError(f"a class has 1 to {MAX_VOTERS} students, not {size!r}")
    return size


def _check_vote(question: str, choice: int, n_choices: int) -> None:
    if not QUESTION_RE.fullmatch(question):
        raise ValueError(f"not a question name: {question[:40]!r}")
    if not (0 < n_choices <= MAX_CHOICES) or not (0 <= choice < n_choices):
        raise ValueError(f"choice {choice} of {n_choices}")


class ClassStore:
    """The interface both backends keep.  Every method may raise ``StoreUnavailable``."""

    name = "store"

    def open_class(self, size: int = MAX_VOTERS) -> tuple[str, str]:
        """A new class of ``size`` students: (code, teacher key).  Raises ClassesFull when its seats do not fit."""
        raise NotImplementedError

    def exists(self, code: str) -> bool:
        raise NotImplementedError

    def open_among(self, codes: Iterable[str]) -> set[str]:
        """Which of ``codes`` are open classes (RedisStore asks for all of them in one round trip)."""
        return {c for c in codes if self.exists(c)}

    def is_teacher(self, code: str, key: str) -> bool:
        raise NotImplementedError

    def vote(self, code: str, question: str, voter: str, choice: int, n_choices: int) -> int | None:
        """Record ``voter``'s choice (replacing theirs); the round it counts in, None if the class is not open (or
        already has MAX_QUESTIONS other questions).  Raises SeatsTaken if the class is full and the voter new, and
        AnswerClosed once the question's answer is revealed."""
        raise NotImplementedError

    def join(self, code: str, voter: str) -> bool | None:
        """Count ``voter`` as joined (once, however often asked; at most the class's size): whether they are, None
        if the class is not open."""
        raise NotImplementedError

    def tally(self, code: str, question: str, n_choices: int) -> Tally | None:
        """The question's tally in its current round, None for a class that is not open."""
        raise NotImplementedError

    def phase(self, code: str, question: str) -> tuple[int, bool] | None:
        """(the question's round, whether it is revealed), None for a class that is not open: what a waiting
        student's page asks every few seconds, cheaper than a tally."""
        raise NotImplementedError

    def overview(self, code: str, questions: dict[str, int]) -> dict[str, Tally] | None:
        """The tally of each of ``questions`` (name -> its number of choices), None for a class that is not open."""
        tallies = {q: self.tally(code, q, n) for q, n in questions.items()}
        return None if any(t is None for t in tallies.values()) else tallies

    def ended(self, code: str) -> bool:
        """Whether class ``code`` was ended by its teacher (within IDLE_S of the end)."""
        return False

    def lost(self, code: str, seen_store: str = "") -> bool:
        """Whether a class that is not open was lost with the store's data (a store restarted empty, or another
        than ``seen_store``, the id of the store a session saw the class in), rather than closed."""
        return False

    def reveal(self, code: str, question: str) -> None:
        """Reveal the question's answer: its students see it, and its round takes no more answers."""
        raise NotImplementedError

    def next_round(self, code: str, question: str) -> bool:
        """Open the question's second round (its first kept beside it): only from its first round, unrevealed, so a
        second click, or a second teacher's tab, opens nothing more.  Whether it opened."""
        raise NotImplementedError

    def reset(self, code: str, question: str) -> None:
        """Start the question again: a new first round, not revealed; its answers are deleted."""
        raise NotImplementedError

    def reset_all(self, code: str) -> None:
        """``reset`` every question the class holds."""
        raise NotImplementedError

    def end(self, code: str) -> None:
        """End the class: everything it holds is deleted now; ``ended(code)`` says so for IDLE_S."""
        raise NotImplementedError


# ------------------------------------------------------------------ one process

@dataclass
class _Class:
    key_hash: str
    opened: float
    size: int
    active: float
    votes: dict[tuple[str, int], dict[str, int]] = field(default_factory=dict)  # (question, round) -> voter -> choice
    refused: dict[tuple[str, int], set[str]] = field(default_factory=dict)  # (question, round) -> voters refused
    questions: set[str] = field(default_factory=set)
    rounds: dict[str, int] = field(default_factory=dict)
    firsts: dict[str, int] = field(default_factory=dict)  # question -> the round its first round is
    revealed: set[str] = field(default_factory=set)
    joined: set[str] = field(default_factory=set)


class MemoryStore(ClassStore):
    """Tallies in this process's memory: one server, nothing to install."""

    name = "memory"

    def __init__(self, *, ttl_s: float = CLASS_TTL_S, idle_s: float = IDLE_S, seats: int = SEATS, clock=time.time):
        self.ttl_s, self.idle_s, self.seats, self.clock = ttl_s, idle_s, seats, clock
        self.id = secrets.token_hex(8)  # this store; a restarted process is another, and holds no class
        self._classes: dict[str, _Class] = {}
        self._ended: OrderedDict[str, float] = OrderedDict()  # code -> when its teacher ended it: ENDED_KEPT, idle_s
        self._lock = threading.Lock()

    def _closed(self, klass: _Class, now: float) -> bool:
        return klass.opened <= now - self.ttl_s or klass.active <= now - self.idle_s

    def _sweep(self) -> None:
        now = self.clock()
        for code in [c for c, k in self._classes.items() if self._closed(k, now)]:
            del self._classes[code]
        for code in [c for c, t in self._ended.items() if t <= now - self.idle_s]:
            del self._ended[code]

    def _get(self, code: str, touch: bool = True) -> _Class | None:
        klass = self._classes.get(code) if valid_code(code) else None
        if klass is None:
            return None
        now = self.clock()
        if self._closed(klass, now):
            del self._classes[code]
            return None
        if touch:
            klass.active = now
        return klass

    def open_class(self, size: int = MAX_VOTERS) -> tuple[str, str]:
        _check_size(size)
        with self._lock:
            self._sweep()
            used = sum(seats_of(k.size) for k in self._classes.values())
            if used + seats_of(size) > self.seats:
                raise ClassesFull(f"{used} of {self.seats} seats are taken")
            code = new_code()
            while code in self._classes or code in self._ended:
                code = new_code()
            key, now = new_key(), self.clock()
            self._classes[code] = _Class(key_hash(key), now, size, now)
            return code, key

    def exists(self, code: str) -> bool:
        with self._lock:
            return self._get(code, touch=False) is not None

    def is_teacher(self, code: str, key: str) -> bool:
        with self._lock:
            klass = self._get(code, touch=False)
            return klass is not None and bool(key) and hmac.compare_digest(klass.key_hash, key_hash(key))

    def _question(self, klass: _Class, question: str) -> bool:
        """Whether the class may hold this question (known, or room for one more)."""
        if question not in klass.questions:
            if len(klass.questions) >= MAX_QUESTIONS:
                return False
            klass.questions.add(question)
        return True

    def vote(self, code, question, voter, choice, n_choices):
        _check_vote(question, choice, n_choices)
        with self._lock:
            klass = self._get(code)
            if klass is None:
                return None
            at = (question, klass.rounds.get(question, 0))
            if question in klass.revealed:
                raise AnswerClosed("the answer is revealed")
            votes = klass.votes.get(at)
            if votes is None or voter not in votes:
                if not self._question(klass, question):
                    return None
                votes = klass.votes.setdefault(at, {})
                if len(votes) >= klass.size:
                    refused = klass.refused.setdefault(at, set())
                    if len(refused) < klass.size:
                        refused.add(voter)
                    raise SeatsTaken(f"the class counts {klass.size} students")
            votes[voter] = choice
            return at[1]

    def join(self, code, voter):
        with self._lock:
            klass = self._get(code)
            if klass is None:
                return None
            if voter not in klass.joined and len(klass.joined) < klass.size:
                klass.joined.add(voter)
            return voter in klass.joined

    @staticmethod
    def _counts(votes: dict[str, int] | None, n_choices: int) -> tuple[int, ...]:
        counts = [0] * n_choices
        for choice in (votes or {}).values():
            if 0 <= choice < n_choices:
                counts[choice] += 1
        return tuple(counts)

    def tally(self, code, question, n_choices):
        with self._lock:
            klass = self._get(code)
            if klass is None:
                return None
            rnd = klass.rounds.get(question, 0)
            first = klass.firsts.get(question, 0)
            before = self._counts(klass.votes.get((question, first)), n_choices) if rnd > first else None
            return Tally(self._counts(klass.votes.get((question, rnd)), n_choices), rnd, question in klass.revealed,
                         len(klass.refused.get((question, rnd), ())), klass.size, klass.opened, self.id, first,
                         before, len(klass.joined))

    def phase(self, code, question):
        with self._lock:
            klass = self._get(code, touch=False)
            return None if klass is None else (klass.rounds.get(question, 0), question in klass.revealed)

    def ended(self, code):
        with self._lock:
            self._sweep()
            return code in self._ended

    def reveal(self, code, question):
        with self._lock:
            klass = self._get(code)
            if klass is not None and QUESTION_RE.fullmatch(question) and self._question(klass, question):
                klass.revealed.add(question)

    def next_round(self, code, question):
        with self._lock:
            klass = self._get(code)
            if klass is None or not QUESTION_RE.fullmatch(question) or not self._question(klass, question):
                return False
            rnd = klass.rounds.get(question, 0)
            if rnd != klass.firsts.get(question, 0) or question in klass.revealed:
                return False
            klass.rounds[question] = rnd + 1
            return True

    def _reset(self, klass: _Class, question: str) -> None:
        klass.revealed.discard(question)
        old = klass.rounds.get(question, 0)
        klass.rounds[question] = klass.firsts[question] = old + 1
        for rnd in range(old - ROUNDS_KEPT + 1, old + 1):
            klass.votes.pop((question, rnd), None)
            klass.refused.pop((question, rnd), None)

    def reset(self, code, question):
        with self._lock:
            klass = self._get(code)
            if klass is not None and QUESTION_RE.fullmatch(question) and self._question(klass, question):
                self._reset(klass, question)

    def reset_all(self, code):
        with self._lock:
            klass = self._get(code)
            for question in sorted(klass.questions) if klass is not None else ():
                self._reset(klass, question)

    def end(self, code):
        with self._lock:
            if self._classes.pop(code, None) is not None:
                self._ended[code] = self.clock()
                while len(self._ended) > ENDED_KEPT:
                    self._ended.popitem(last=False)


# ------------------------------------------------------------------ several replicas: Redis

# Every script: ARGV[1] the key prefix, ARGV[2] the class code, ARGV[3..5] idle, ttl and touch seconds.  Keys are
# named inside the scripts from the prefix and the code (one Redis, never a cluster); the class's time is Redis's
# own clock, so replicas whose clocks differ agree.  Each class lists its data keys in keys:<code>, and every one of
# them expires with the class hash: a class idle for IDLE_S, or CLASS_TTL_S old, is gone from memory by itself.
_PRELUDE = """
local P, code = ARGV[1], ARGV[2]
local idle, ttl, touch_s = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local class, keys = P .. 'class:' .. code, P .. 'keys:' .. code
local now = tonumber(redis.call('TIME')[1])
local function touch()
  local h = redis.call('HMGET', class, 'opened', 'active')
  if now - tonumber(h[2] or '0') < touch_s then return end
  local left = math.max(1, math.min(idle, tonumber(h[1]) + ttl - now))
  redis.call('HSET', class, 'active', now)
  redis.call('EXPIRE', class, left)
  if redis.call('EXISTS', keys) == 1 then
    redis.call('EXPIRE', keys, left)
    for _, k in ipairs(redis.call('SMEMBERS', keys)) do redis.call('EXPIRE', k, left) end
  end
end
local function own(k)
  redis.call('SADD', keys, k)
  local left = redis.call('PTTL', class)
  redis.call('PEXPIRE', keys, left)
  redis.call('PEXPIRE', k, left)
end
local function question_fits(q, most)
  local questions = P .. 'questions:' .. code
  if redis.call('SISMEMBER', questions, q) == 1 then return true end
  if redis.call('SCARD', questions) >= most then return false end
  redis.call('SADD', questions, q)
  own(questions)
  return true
end
"""

# ARGV[6..10]: key hash, size, seats in all, a new store id (kept if the store has none yet), the seats it takes
_OPEN_LUA = _PRELUDE + """
local store, seats = P .. 'store', P .. 'seats'
if redis.call('EXISTS', store) == 0 then redis.call('HSET', store, 'id', ARGV[9], 'since', now) end
for _, c in ipairs(redis.call('HKEYS', seats)) do
  if redis.call('EXISTS', P .. 'class:' .. c) == 0 then redis.call('HDEL', seats, c) end
end
local used = 0
for _, n in ipairs(redis.call('HVALS', seats)) do used = used + tonumber(n) end
local size, taking = tonumber(ARGV[7]), tonumber(ARGV[10])
if used + taking > tonumber(ARGV[8]) then return 0 end
if redis.call('EXISTS', class) == 1 or redis.call('HEXISTS', seats, code) == 1
   or redis.call('ZSCORE', P .. 'ended', code) then return -1 end
redis.call('HSET', class, 'key', ARGV[6], 'opened', now, 'active', now, 'size', size,
           'store', redis.call('HGET', store, 'id'))
redis.call('EXPIRE', class, math.min(idle, ttl))
redis.call('HSET', seats, code, taking)
return 1
"""

# ARGV[6..9]: question, voter, choice, most questions.  {0, round}: counted; {-2, round}: refused (class full);
# {-3, round}: refused (the answer is revealed); {-1}: not open (or one question too many)
_VOTE_LUA = _PRELUDE + """
if redis.call('EXISTS', class) == 0 then return {-1} end
touch()
local q, voter = ARGV[6], ARGV[7]
local h = redis.call('HMGET', class, 'size', 'round:' .. q, 'revealed:' .. q)
local size, round = tonumber(h[1]), tonumber(h[2] or '0')
if h[3] == '1' then return {-3, round} end
local at = code .. ':' .. q .. ':' .. round
local votes = P .. 'votes:' .. at
if redis.call('HEXISTS', votes, voter) == 0 then
  if not question_fits(q, tonumber(ARGV[9])) then return {-1} end
  if redis.call('HLEN', votes) >= size then
    local refused = P .. 'refused:' .. at
    if redis.call('SCARD', refused) < size then
      redis.call('SADD', refused, voter)
      own(refused)
    end
    return {-2, round}
  end
end
redis.call('HSET', votes, voter, ARGV[8])
own(votes)
return {0, round}
"""

# ARGV[6]: voter.  1: joined; 0: not counted (as many joined as the class's size); -1: not open
_JOIN_LUA = _PRELUDE + """
if redis.call('EXISTS', class) == 0 then return -1 end
touch()
local joined = P .. 'joined:' .. code
if redis.call('SISMEMBER', joined, ARGV[6]) == 1 then return 1 end
if redis.call('SCARD', joined) >= tonumber(redis.call('HGET', class, 'size')) then return 0 end
redis.call('SADD', joined, ARGV[6])
own(joined)
return 1
"""

# ARGV[6]: question.  {0, store id or ''} if the class is not open; else {1, opened, size, store, round, revealed,
# refused, first round, joined, [choices], [the first round's choices, while the second is open]}
_TALLY_LUA = _PRELUDE + """
if redis.call('EXISTS', class) == 0 then return {0, redis.call('HGET', P .. 'store', 'id') or ''} end
touch()
local q = ARGV[6]
local h = redis.call('HMGET', class, 'opened', 'size', 'store', 'round:' .. q, 'revealed:' .. q, 'first:' .. q)
local round, first = tonumber(h[4] or '0'), tonumber(h[6] or '0')
local at = code .. ':' .. q .. ':'
local before = {}
if round > first then before = redis.call('HVALS', P .. 'votes:' .. at .. first) end
return {1, h[1], h[2], h[3] or '', round, h[5] or '', redis.call('SCARD', P .. 'refused:' .. at .. round), first,
        redis.call('SCARD', P .. 'joined:' .. code), redis.call('HVALS', P .. 'votes:' .. at .. round), before}
"""

# ARGV[6]: question.  {0} if the class is not open, else {1, round, revealed}; touches nothing
_PHASE_LUA = _PRELUDE + """
local h = redis.call('HMGET', class, 'opened', 'round:' .. ARGV[6], 'revealed:' .. ARGV[6])
if not h[1] then return {0} end
return {1, tonumber(h[2] or '0'), h[3] or ''}
"""

# ARGV[6..9]: "reveal", "next", "reset", "reset_all" or "end", question, most questions, most classes remembered as
# ended (gelu:poll:ended, code -> when).  1: done; 0: nothing done
_TEACHER_LUA = _PRELUDE + """
if redis.call('EXISTS', class) == 0 then return 0 end
local what, q = ARGV[6], ARGV[7]
if what == 'end' then
  for _, k in ipairs(redis.call('SMEMBERS', keys)) do redis.call('DEL', k) end
  redis.call('DEL', keys, class)
  redis.call('HDEL', P .. 'seats', code)
  local ended = P .. 'ended'
  redis.call('ZADD', ended, now, code)
  redis.call('ZREMRANGEBYSCORE', ended, '-inf', now - idle)
  redis.call('ZREMRANGEBYRANK', ended, 0, -1 - tonumber(ARGV[9]))
  redis.call('EXPIRE', ended, idle)
  return 1
end
touch()
local function reset(question)
  local old = tonumber(redis.call('HGET', class, 'round:' .. question) or '0')
  redis.call('HSET', class, 'round:' .. question, old + 1, 'first:' .. question, old + 1)
  redis.call('HDEL', class, 'revealed:' .. question)
  for r = math.max(0, old - """ + str(ROUNDS_KEPT - 1) + """), old do
    for _, kind in ipairs({'votes:', 'refused:'}) do
      local k = P .. kind .. code .. ':' .. question .. ':' .. r
      redis.call('DEL', k)
      redis.call('SREM', keys, k)
    end
  end
end
if what == 'reset_all' then
  for _, question in ipairs(redis.call('SMEMBERS', P .. 'questions:' .. code)) do reset(question) end
  return 1
end
if not question_fits(q, tonumber(ARGV[8])) then return 0 end
if what == 'reveal' then
  redis.call('HSET', class, 'revealed:' .. q, '1')
  return 1
end
if what == 'next' then
  local h = redis.call('HMGET', class, 'round:' .. q, 'first:' .. q, 'revealed:' .. q)
  if (h[1] or '0') ~= (h[2] or '0') or h[3] == '1' then return 0 end
  redis.call('HINCRBY', class, 'round:' .. q, 1)
  return 1
end
reset(q)
return 1
"""


class RedisStore(ClassStore):
    """Tallies in Redis (``redis://...``): every replica sees one tally per class."""

    name = "redis"
    PREFIX = "gelu:poll:"

    def __init__(self, url: str, *, ttl_s: int = CLASS_TTL_S, idle_s: int = IDLE_S, seats: int = SEATS,
                 timeout_s: float = 0.5, touch_s: int = TOUCH_S):
        import redis
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        self.url, self.seats, self.timeout_s = url, seats, timeout_s
        self._times = [str(int(idle_s)), str(int(ttl_s)), str(int(touch_s))]
        self._errors = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError)
        # one retry at once, on a fresh connection: after a restart the pooled ones are dead, and nothing is gained
        # by the client's default of ten retries with back-off while a student's run waits
        self._redis = redis.Redis.from_url(url, socket_timeout=timeout_s, socket_connect_timeout=timeout_s,
                                           decode_responses=True, health_check_interval=10,
                                           retry=Retry(NoBackoff(), 1))
        self._open = self._redis.register_script(_OPEN_LUA)
        self._vote = self._redis.register_script(_VOTE_LUA)
        self._tally = self._redis.register_script(_TALLY_LUA)
        self._phase = self._redis.register_script(_PHASE_LUA)
        self._join = self._redis.register_script(_JOIN_LUA)
        self._teacher = self._redis.register_script(_TEACHER_LUA)
        self._gate = threading.Lock()
        self._failing = False
        self._quiet_until = 0.0

    def _k(self, *parts: str) -> str:
        return self.PREFIX + ":".join(parts)

    def _argv(self, code: str, *more) -> list:
        return [self.PREFIX, code, *self._times, *more]

    def _call(self, fn, *args, **kwargs):
        """``fn(...)`` against Redis; StoreUnavailable if it fails.  While Redis fails, one call in PROBE_S asks it
        again (given timeout_s to answer) and every other call is answered at once."""
        with self._gate:
            now = time.monotonic()
            if now < self._quiet_until:
                raise StoreUnavailable("the class store did not answer a moment ago")
            if self._failing:
                self._quiet_until = now + self.timeout_s + PROBE_S  # this call asks; the others do not wait on it
        try:
            result = fn(*args, **kwargs)
        except Exception as err:
            import redis

            if not isinstance(err, (*self._errors, redis.exceptions.RedisError)):
                raise
            with self._gate:
                self._failing, self._quiet_until = True, time.monotonic() + PROBE_S
            what = "cannot be reached" if isinstance(err, self._errors) else "answered with an error"
            raise StoreUnavailable(f"the class store {what} ({type(err).__name__})") from None
        with self._gate:
            self._failing, self._quiet_until = False, 0.0
        return result

    def open_class(self, size: int = MAX_VOTERS) -> tuple[str, str]:
        _check_size(size)
        for _ in range(5):
            code, key = new_code(), new_key()
            got = self._call(self._open, args=self._argv(code, key_hash(key), size, self.seats, secrets.token_hex(8),
                                                         seats_of(size)))
            if got == 1:
                return code, key
            if got == 0:
                raise ClassesFull(f"the seats of {self.seats} are taken")
        raise StoreUnavailable("no free class code")  # five collisions in 8.5e11: not in this universe

    def exists(self, code: str) -> bool:
        return valid_code(code) and bool(self._call(self._redis.exists, self._k("class", code)))

    def open_among(self, codes: Iterable[str]) -> set[str]:
        codes = [c for c in codes if valid_code(c)]
        if not codes:
            return set()
        pipe = self._redis.pipeline(transaction=False)
        for code in codes:
            pipe.exists(self._k("class", code))
        return {c for c, there in zip(codes, self._call(pipe.execute), strict=True) if there}

    def is_teacher(self, code: str, key: str) -> bool:
        if not valid_code(code) or not key:
            return False
        stored = self._call(self._redis.hget, self._k("class", code), "key")
        return stored is not None and hmac.compare_digest(stored, key_hash(key))

    def vote(self, code, question, voter, choice, n_choices):
        _check_vote(question, choice, n_choices)
        if not valid_code(code):
            return None
        got = self._call(self._vote, args=self._argv(code, question, voter, choice, MAX_QUESTIONS))
        if got[0] == -2:
            raise SeatsTaken("the class counts as many students as its teacher said it has")
        if got[0] == -3:
            raise AnswerClosed("the answer is revealed")
        return None if got[0] < 0 else int(got[1])

    def join(self, code, voter):
        if not valid_code(code):
            return None
        got = self._call(self._join, args=self._argv(code, voter))
        return None if got < 0 else got == 1

    @staticmethod
    def _counts(values, n_choices: int) -> tuple[int, ...]:
        counts = [0] * n_choices
        for v in values:
            if v.isdigit() and int(v) < n_choices:
                counts[int(v)] += 1
        return tuple(counts)

    def tally(self, code, question, n_choices):
        if not (valid_code(code) and QUESTION_RE.fullmatch(question)):
            return None
        got = self._call(self._tally, args=self._argv(code, question))
        if got[0] == 0:
            return None
        _, opened, size, store, rnd, revealed, refused, first, joined, values, before = got
        return Tally(self._counts(values, n_choices), int(rnd), revealed == "1", int(refused), int(size),
                     float(opened), store, int(first), self._counts(before, n_choices) if int(rnd) > int(first)
                     else None, int(joined))

    def phase(self, code, question):
        if not (valid_code(code) and QUESTION_RE.fullmatch(question)):
            return None
        got = self._call(self._phase, args=self._argv(code, question))
        return None if got[0] == 0 else (int(got[1]), got[2] == "1")

    def ended(self, code):
        if not valid_code(code):
            return False
        when, now = self._call(lambda: self._redis.pipeline(transaction=False).zscore(self._k("ended"), code)
                               .time().execute())
        return when is not None and when > now[0] - int(self._times[0])

    def lost(self, code: str, seen_store: str = "") -> bool:
        now = self._call(self._redis.hget, self._k("store"), "id")
        return now is None or bool(seen_store and now != seen_store)

    def _teach(self, what: str, code: str, question: str = "") -> bool:
        if not valid_code(code) or (question and not QUESTION_RE.fullmatch(question)):
            return False
        return self._call(self._teacher, args=self._argv(code, what, question, MAX_QUESTIONS, ENDED_KEPT)) == 1

    def reveal(self, code, question):
        if question:
            self._teach("reveal", code, question)

    def next_round(self, code, question):
        return bool(question) and self._teach("next", code, question)

    def reset(self, code, question):
        if question:
            self._teach("reset", code, question)

    def reset_all(self, code):
        self._teach("reset_all", code)

    def end(self, code):
        self._teach("end", code)


class BrokenStore(ClassStore):
    """What a setting this module cannot use gives: every call says the store is unavailable, and why."""

    name = "unavailable"

    def __init__(self, why: str):
        self.why = why

    def __getattribute__(self, name):
        if name in ClassStore.__dict__ and not name.startswith("_") and name != "name":
            why = object.__getattribute__(self, "why")

            def unavailable(*args, **kwargs):
                raise StoreUnavailable(why)

            return unavailable
        return object.__getattribute__(self, name)


def make_store(setting: str | None) -> ClassStore:
    """The store ``GELU_CLASS_STORE`` names: unset/"memory" -> MemoryStore, "redis://..." -> RedisStore."""
    setting = (setting or "").strip()
    if setting in ("", "memory"):
        return MemoryStore()
    if setting.startswith(("redis://", "rediss://", "unix://")):
        try:
            return RedisStore(setting)
        except ImportError:
            return BrokenStore("the redis client is not installed (pip install -r requirements.txt)")
        except ValueError as err:
            return BrokenStore(f"{ENV} is not a Redis URL Redis accepts ({err})")
    return BrokenStore(f"{ENV} must be 'memory' or a redis:// URL")


_STORE: ClassStore | None = None
_STORE_LOCK = threading.Lock()


def store() -> ClassStore:
    """This process's store, made once from ``GELU_CLASS_STORE``."""
    global _STORE
    if _STORE is None:
        with _STORE_LOCK:
            if _STORE is None:
                _STORE = make_store(os.environ.get(ENV))
    return _STORE


# ------------------------------------------------------------------ one client's pace

class VoteLimiter:
    """A token bucket per key (``burst`` at once, refilled at ``per_minute``), for at most ``max_sessions`` keys at
    once: the least recently seen is forgotten first (it can only gain a fresh bucket)."""

    def __init__(self, per_minute: float = VOTES_PER_MINUTE, burst: int = VOTE_BURST, max_sessions: int = 10_000,
                 clock=time.monotonic):
        self.rate, self.burst, self.max_sessions, self.clock = per_minute / 60.0, burst, max_sessions, clock
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()
        self._lock = threading.Lock()

    def allow(self, session: str) -> bool:
        with self._lock:
            now = self.clock()
            tokens, then = self._buckets.pop(session, (float(self.burst), now))
            tokens = min(float(self.burst), tokens + (now - then) * self.rate)
            ok = tokens >= 1.0
            self._buckets[session] = (tokens - 1.0 if ok else tokens, now)
            while len(self._buckets) > self.max_sessions:
                self._buckets.popitem(last=False)
            return ok


LIMITER = VoteLimiter()


def client_address(forwarded: list[str], peer: str | None, behind_proxy: bool) -> str | None:
    """A client's address: behind a proxy, the last X-Forwarded-For entry (the one the nearest proxy appended; what
    a client sent itself stands before it), else the connection's peer.

    >>> client_address(["6.6.6.6, 10.0.0.7"], "172.18.0.3", True), client_address(["6.6.6.6"], "10.0.0.7", False)
    ('10.0.0.7', '10.0.0.7')
    """
    entries = [e.strip() for line in forwarded for e in line.split(",") if e.strip()]
    return entries[-1] if behind_proxy and entries else peer


def network(address: str | None) -> str:
    """The network a client address stands for: an IPv4 address itself, an IPv6 address's /64 (one household or
    one server's whole range), "local" for none (a browser on this machine)."""
    try:
        ip = ipaddress.ip_address((address or "").strip())
    except ValueError:
        return "local"
    if ip.version == 6:
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


class Starts:
    """Classes started through this server, per network (``network``): at most ``burst`` starts in a row, then
    ``per_minute``, and at most ``seats`` seats in classes still open.  The networks are kept in this process's
    memory only (at most ``max_networks``, the least recent forgotten first), never in the store."""

    def __init__(self, *, seats: int = ADDRESS_SEATS, burst: int = START_BURST,
                 per_minute: float = STARTS_PER_MINUTE, max_networks: int = 10_000, clock=time.monotonic):
        self.seats, self.max_networks = seats, max_networks
        self.pace = VoteLimiter(per_minute=per_minute, burst=burst, max_sessions=max_networks, clock=clock)
        self._held: OrderedDict[str, list[tuple[str, int]]] = OrderedDict()
        self._lock = threading.Lock()

    def start(self, store: ClassStore, address: str | None, size: int) -> tuple[str, str]:
        """Open a class of ``size`` from ``address`` in ``store``: (code, key).  Raises TooManyStarts ("seats" or
        "pace"), or what ``store.open_class`` raises."""
        _check_size(size)
        where = network(address)
        with self._lock:
            held = self._held.pop(where, [])
            still = store.open_among(c for c, _ in held) if held else set()
            held = [(c, n) for c, n in held if c in still]
            self._held[where] = held
            if sum(n for _, n in held) + seats_of(size) > self.seats:
                raise TooManyStarts("seats")
            if not self.pace.allow(where):
                raise TooManyStarts("pace")
            code, key = store.open_class(size)
            held.append((code, seats_of(size)))
            while len(self._held) > self.max_networks:
                self._held.popitem(last=False)
            return code, key


STARTS = Starts()


# ------------------------------------------------------------------ the browser's voter cookie

VOTER_COOKIE_MAX_AGE_S = 2 * CLASS_TTL_S  # longer than any class, renewed at every page load


def _voter_cookie(headers) -> str | None:
    """The request's well-formed voter cookie, or None."""
    for key, value in headers:
        if key.lower() != b"cookie":
            continue
        for part in value.decode("latin-1").split(";"):
            name, _, got = part.strip().partition("=")
            if name == VOTER_COOKIE and KEY_RE.fullmatch(got):
                return got
    return None


def voter_set_cookie(value: str) -> bytes:
    """The Set-Cookie header's value for voter cookie ``value``."""
    return (f"{VOTER_COOKIE}={value}; Path=/; Max-Age={VOTER_COOKIE_MAX_AGE_S}; HttpOnly; "
            "SameSite=Lax").encode("latin-1")


class VoterCookie:
    """Pure ASGI middleware: the browser's voter cookie on every page document (no buffering, nothing else touched).

    A Streamlit session lives in one server process and ends with its websocket; a tab that reconnects (its
    replica died, the network blinked) or reloads gets a new one, on whichever replica the balancer picks, and
    Streamlit's frontend re-sends the page's widget states, a quiz answer among them.  Counted under an id kept in
    the session, that answer would count twice.  So the id comes from the browser: ``VOTER_COOKIE`` (128 random
    bits) is set on every page document (a ``text/html`` answer to a GET) whose request did not carry a
    well-formed one, and renewed (``VOTER_COOKIE_MAX_AGE_S``) on every later one; ``HttpOnly`` (no script on the
    page reads it), ``SameSite=Lax``, path ``/``.  The browser sends it with the websocket's upgrade request, which
    is what Streamlit's ``st.context.cookies`` holds, on every reconnect and every replica; ``draw.class_poll``
    votes as ``voter_id(code, cookie)``.  Set by the server before the first websocket opens, it needs no script
    of the app's, and a tab's first answer already carries it."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope.get("method") != "GET" or "/_stcore/" in scope.get("path", ""):
            await self.app(scope, receive, send)
            return
        value = _voter_cookie(scope.get("headers") or []) or secrets.token_urlsafe(16)

        async def send_with_cookie(message):
            if message["type"] == "http.response.start":
                headers = message.get("headers") or []
                kind = next((v for k, v in headers if k.lower() == b"content-type"), b"")
                if kind.lower().startswith(b"text/html"):
                    message = {**message, "headers": [*headers, (b"set-cookie", voter_set_cookie(value))]}
            await send(message)

        await self.app(scope, receive, send_with_cookie)
