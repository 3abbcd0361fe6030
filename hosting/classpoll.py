"""The class poll's store: which classes are open, and how their students answered each page's question.

Streamlit-free.  One interface, two backends, named by one setting:

* ``GELU_CLASS_STORE`` unset (or ``memory``): ``MemoryStore``, this process's memory; the default of
  ``streamlit run app.py``, nothing to install.  Every replica would hold its own tallies.
* ``GELU_CLASS_STORE=redis://host:6379/0``: ``RedisStore``, one tally for a class whose students land on
  different replicas (deploy/: a Redis service beside the app).  Redis unreachable: every call raises
  ``StoreUnavailable`` within about half a second, and for the next few seconds at once (no student's run
  waits on a dead server); the page says the tally is unavailable and the questions still work.

What is stored, and nothing else: per class, the hash of its teacher key and its opening time; per question
(a page's url path), the index of each session's current choice under a random voter id the session holds (no
names, no text, no addresses), the round (bumped by "reset") and whether the teacher revealed the answer.

Limits (memory stays bounded whatever a client sends; a forged client is one session, one vote):
a class lives ``CLASS_TTL_S`` (12 h) from its opening; at most ``MAX_CLASSES`` open per server (memory) or per
Redis; at most ``MAX_QUESTIONS`` questions and ``MAX_VOTERS`` sessions per question (a vote past that is
refused, a changed vote always moves); a session casts at most ``VOTE_BURST`` votes, refilled at
``VOTES_PER_MINUTE`` (``VoteLimiter``), and opens at most ``CLASSES_PER_SESSION`` classes.  A class code is
``CODE_LENGTH`` characters of a 31-letter alphabet from ``secrets`` (31**8, about 8.5e11 codes); a teacher
key is 128 random bits, stored only as its SHA-256: nothing about it follows from the code.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field

ENV = "GELU_CLASS_STORE"
CLASS_TTL_S = 12 * 3600
MAX_CLASSES = 50
MAX_QUESTIONS = 10  # the lesson has 8
MAX_VOTERS = 500
MAX_CHOICES = 8
VOTES_PER_MINUTE = 20
VOTE_BURST = 10
CLASSES_PER_SESSION = 3
CODE_ALPHABET = "23456789abcdefghjkmnpqrstuvwxyz"  # no 0/o, 1/l/i: read aloud and typed by a class
CODE_LENGTH = 8
CODE_RE = re.compile(rf"[{CODE_ALPHABET}]{{{CODE_LENGTH}}}")
KEY_RE = re.compile(r"[A-Za-z0-9_-]{22}")
QUESTION_RE = re.compile(r"[a-z0-9_]{1,32}")
RETRY_AFTER_S = 3.0  # after Redis failed, this long without asking it again


class StoreUnavailable(RuntimeError):
    """The store cannot be reached (Redis down, misconfigured): the tally is unavailable for now."""


class ClassesFull(RuntimeError):
    """The server already holds its maximum number of open classes."""


@dataclass(frozen=True)
class Tally:
    """One question's answers in one class: counts per choice index, the round, whether it is revealed."""

    counts: tuple[int, ...]
    round: int = 0
    revealed: bool = False

    @property
    def total(self) -> int:
        return sum(self.counts)

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


def _check_vote(question: str, choice: int, n_choices: int) -> None:
    if not QUESTION_RE.fullmatch(question):
        raise ValueError(f"not a question name: {question[:40]!r}")
    if not (0 < n_choices <= MAX_CHOICES) or not (0 <= choice < n_choices):
        raise ValueError(f"choice {choice} of {n_choices}")


class ClassStore:
    """The interface both backends keep.  Every method may raise ``StoreUnavailable``."""

    name = "store"

    def open_class(self) -> tuple[str, str]:
        """A new class: (code, teacher key).  Raises ClassesFull at the cap."""
        raise NotImplementedError

    def exists(self, code: str) -> bool:
        raise NotImplementedError

    def is_teacher(self, code: str, key: str) -> bool:
        raise NotImplementedError

    def vote(self, code: str, question: str, voter: str, choice: int, n_choices: int) -> int | None:
        """Record ``voter``'s choice (replacing theirs); the round it counts in, None if refused (no such class,
        question or voter cap reached)."""
        raise NotImplementedError

    def tally(self, code: str, question: str, n_choices: int) -> Tally | None:
        """The question's tally, None for a class that is not open."""
        raise NotImplementedError

    def reveal(self, code: str, question: str) -> None:
        raise NotImplementedError

    def reset(self, code: str, question: str) -> None:
        """Clear the question's votes and reveal; a new round begins."""
        raise NotImplementedError


# ------------------------------------------------------------------ one process

@dataclass
class _Class:
    key_hash: str
    opened: float
    votes: dict[str, dict[str, int]] = field(default_factory=dict)  # question -> voter -> choice
    rounds: dict[str, int] = field(default_factory=dict)
    revealed: set[str] = field(default_factory=set)


class MemoryStore(ClassStore):
    """Tallies in this process's memory: one server, nothing to install."""

    name = "memory"

    def __init__(self, *, ttl_s: float = CLASS_TTL_S, max_classes: int = MAX_CLASSES, clock=time.time):
        self.ttl_s, self.max_classes, self.clock = ttl_s, max_classes, clock
        self._classes: dict[str, _Class] = {}
        self._lock = threading.Lock()

    def _sweep(self) -> None:
        cutoff = self.clock() - self.ttl_s
        for code in [c for c, k in self._classes.items() if k.opened <= cutoff]:
            del self._classes[code]

    def _get(self, code: str) -> _Class | None:
        klass = self._classes.get(code) if valid_code(code) else None
        if klass is not None and klass.opened <= self.clock() - self.ttl_s:
            del self._classes[code]
            return None
        return klass

    def open_class(self) -> tuple[str, str]:
        with self._lock:
            self._sweep()
            if len(self._classes) >= self.max_classes:
                raise ClassesFull(f"{self.max_classes} classes are open on this server")
            code = new_code()
            while code in self._classes:
                code = new_code()
            key = new_key()
            self._classes[code] = _Class(key_hash(key), self.clock())
            return code, key

    def exists(self, code: str) -> bool:
        with self._lock:
            return self._get(code) is not None

    def is_teacher(self, code: str, key: str) -> bool:
        with self._lock:
            klass = self._get(code)
            return klass is not None and bool(key) and hmac.compare_digest(klass.key_hash, key_hash(key))

    def vote(self, code, question, voter, choice, n_choices):
        _check_vote(question, choice, n_choices)
        with self._lock:
            klass = self._get(code)
            if klass is None:
                return None
            votes = klass.votes.get(question)
            if votes is None:
                if len(klass.votes) >= MAX_QUESTIONS:
                    return None
                votes = klass.votes[question] = {}
            if voter not in votes and len(votes) >= MAX_VOTERS:
                return None
            votes[voter] = choice
            return klass.rounds.get(question, 0)

    def tally(self, code, question, n_choices):
        with self._lock:
            klass = self._get(code)
            if klass is None:
                return None
            counts = [0] * n_choices
            for choice in klass.votes.get(question, {}).values():
                if 0 <= choice < n_choices:
                    counts[choice] += 1
            return Tally(tuple(counts), klass.rounds.get(question, 0), question in klass.revealed)

    def reveal(self, code, question):
        with self._lock:
            klass = self._get(code)
            if klass is not None and QUESTION_RE.fullmatch(question):
                klass.revealed.add(question)

    def reset(self, code, question):
        with self._lock:
            klass = self._get(code)
            if klass is not None and QUESTION_RE.fullmatch(question):
                klass.votes.pop(question, None)
                klass.revealed.discard(question)
                if question in klass.rounds or len(klass.rounds) < MAX_QUESTIONS:
                    klass.rounds[question] = klass.rounds.get(question, 0) + 1


# ------------------------------------------------------------------ several replicas: Redis

# KEYS: class hash, votes hash; ARGV: voter, choice, max voters, max questions, question, questions set key
_VOTE_LUA = """
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 0 then
  if redis.call('HLEN', KEYS[2]) >= tonumber(ARGV[3]) then return -1 end
  if redis.call('SISMEMBER', KEYS[3], ARGV[5]) == 0 then
    if redis.call('SCARD', KEYS[3]) >= tonumber(ARGV[4]) then return -1 end
    redis.call('SADD', KEYS[3], ARGV[5])
    redis.call('EXPIRE', KEYS[3], redis.call('TTL', KEYS[1]))
  end
end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('EXPIRE', KEYS[2], redis.call('TTL', KEYS[1]))
return tonumber(redis.call('HGET', KEYS[1], 'round:' .. ARGV[5]) or '0')
"""

# KEYS: the open-classes sorted set, the new class hash; ARGV: now, ttl, max, key hash
_OPEN_LUA = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', tonumber(ARGV[1]) - tonumber(ARGV[2]))
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
if redis.call('EXISTS', KEYS[2]) == 1 then return -1 end
redis.call('HSET', KEYS[2], 'key', ARGV[4], 'opened', ARGV[1])
redis.call('EXPIRE', KEYS[2], tonumber(ARGV[2]))
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[5])
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[2]))
return 1
"""


class RedisStore(ClassStore):
    """Tallies in Redis (``redis://...``): every replica sees one tally per class."""

    name = "redis"
    PREFIX = "gelu:poll:"

    def __init__(self, url: str, *, ttl_s: int = CLASS_TTL_S, max_classes: int = MAX_CLASSES,
                 timeout_s: float = 0.5):
        import redis

        self.url, self.ttl_s, self.max_classes = url, int(ttl_s), max_classes
        self._errors = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError)
        self._redis = redis.Redis.from_url(url, socket_timeout=timeout_s, socket_connect_timeout=timeout_s,
                                           decode_responses=True, health_check_interval=10)
        self._vote = self._redis.register_script(_VOTE_LUA)
        self._open = self._redis.register_script(_OPEN_LUA)
        self._down_until = 0.0

    def _k(self, *parts: str) -> str:
        return self.PREFIX + ":".join(parts)

    def _call(self, fn, *args, **kwargs):
        if time.monotonic() < self._down_until:
            raise StoreUnavailable("the class store did not answer a moment ago")
        try:
            return fn(*args, **kwargs)
        except self._errors as err:
            self._down_until = time.monotonic() + RETRY_AFTER_S
            raise StoreUnavailable(f"the class store cannot be reached ({type(err).__name__})") from None
        except Exception as err:  # a Redis that answers with an error (full, read-only, misconfigured)
            import redis

            if isinstance(err, redis.exceptions.RedisError):
                self._down_until = time.monotonic() + RETRY_AFTER_S
                raise StoreUnavailable(f"the class store answered with an error ({type(err).__name__})") from None
            raise

    def open_class(self) -> tuple[str, str]:
        for _ in range(5):
            code, key = new_code(), new_key()
            got = self._call(self._open, keys=[self._k("open"), self._k("class", code)],
                             args=[int(time.time()), self.ttl_s, self.max_classes, key_hash(key), code])
            if got == 1:
                return code, key
            if got == 0:
                raise ClassesFull(f"{self.max_classes} classes are open")
        raise StoreUnavailable("no free class code")  # five collisions in 8.5e11: not in this universe

    def exists(self, code: str) -> bool:
        return valid_code(code) and bool(self._call(self._redis.exists, self._k("class", code)))

    def is_teacher(self, code: str, key: str) -> bool:
        if not valid_code(code) or not key:
            return False
        stored = self._call(self._redis.hget, self._k("class", code), "key")
        return stored is not None and hmac.compare_digest(stored, key_hash(key))

    def vote(self, code, question, voter, choice, n_choices):
        _check_vote(question, choice, n_choices)
        if not valid_code(code):
            return None
        got = self._call(self._vote, keys=[self._k("class", code), self._k("votes", code, question),
                                           self._k("questions", code)],
                         args=[voter, choice, MAX_VOTERS, MAX_QUESTIONS, question])
        return None if got is None or int(got) < 0 else int(got)

    def tally(self, code, question, n_choices):
        if not valid_code(code):
            return None
        pipe = self._redis.pipeline(transaction=False)
        pipe.hmget(self._k("class", code), ["opened", f"round:{question}", f"revealed:{question}"])
        pipe.hvals(self._k("votes", code, question))
        (opened, rnd, revealed), values = self._call(pipe.execute)
        if opened is None:
            return None
        counts = [0] * n_choices
        for v in values:
            if v.isdigit() and int(v) < n_choices:
                counts[int(v)] += 1
        return Tally(tuple(counts), int(rnd or 0), revealed == "1")

    def reveal(self, code, question):
        if valid_code(code) and QUESTION_RE.fullmatch(question) and self.exists(code):
            self._call(self._redis.hset, self._k("class", code), f"revealed:{question}", "1")

    def reset(self, code, question):
        if not (valid_code(code) and QUESTION_RE.fullmatch(question) and self.exists(code)):
            return
        pipe = self._redis.pipeline(transaction=True)
        pipe.delete(self._k("votes", code, question))
        pipe.hdel(self._k("class", code), f"revealed:{question}")
        pipe.hincrby(self._k("class", code), f"round:{question}", 1)
        self._call(pipe.execute)


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


# ------------------------------------------------------------------ one session's pace

class VoteLimiter:
    """A token bucket per session (``burst`` votes, refilled at ``per_minute``), for at most ``max_sessions``
    sessions at once: the least recently seen is forgotten first (it can only gain a fresh bucket)."""

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
