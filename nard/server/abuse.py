"""Limits on what one client may do: rate limits, the sign-in throttle, and
password checks that take as long for unknown users as for known ones.

- :class:`RateLimits`: named policies (``"register"``, ``"guest"``, ``"table"``,
  ``"hint"``, ``"action"``, ``"login"``), each a list of rates such as
  ``"10/minute;60/hour"`` (the `limits <https://limits.readthedocs.io>`_
  library's notation), counted per key (a client address, a player) with a
  sliding window counter. ``await limits.hit(policy, *keys)`` counts one request
  for every key or raises :class:`RateLimited` with the seconds to wait.
- :class:`LoginThrottle`: wrong passwords counted per (username, address) and
  per address, each with an exponential back-off; a sign-in never waits for
  failures made from another address.
- :func:`verify_password`: argon2 verification, against a dummy hash when the
  user does not exist, so that the time taken does not tell.

Storage: with a Redis URL, counts live in Redis and every server process shares
them (keys under ``nard:limits`` and ``nard:login``); without one, in this
process's memory, bounded in size. If Redis stops answering, each object logs a
warning, counts in memory for :data:`REDIS_RETRY` seconds and then tries Redis
again: a request never fails because Redis is down.

Everything here is async and must be used from one event loop (the server's);
``await close()`` when the server stops.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import ipaddress
import logging
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

import redis.asyncio
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from limits import RateLimitItem, parse_many
from limits.aio.storage import RedisStorage
from limits.aio.strategies import SlidingWindowCounterRateLimiter
from limits.errors import StorageError
from redis.commands.core import AsyncScript
from redis.exceptions import RedisError

from nard.core import NardError
from nard.server.usernames import canonical_username

__all__ = [
    "DEFAULT_POLICIES",
    "REDIS_RETRY",
    "LoginBlocked",
    "LoginThrottle",
    "RateLimited",
    "RateLimits",
    "address_key",
    "dummy_password_hash",
    "policies_from_text",
    "verify_password",
    "verify_password_async",
]

_log = logging.getLogger(__name__)

DEFAULT_POLICIES: Final[Mapping[str, str]] = MappingProxyType(
    {
        # Per client address; one address may be many people (a campus, a
        # carrier's NAT), so these allow a crowd, not a script.
        "register": "5/minute;20/hour;50/day",
        "guest": "10/minute;60/hour;300/day",
        "login": "20/minute;100/hour",
        # Per player and per address.
        "table": "10/minute;100/hour;500/day",
        # Per player: the engine's time, and table actions (a person makes a
        # few a minute; the computer's replies are not counted).
        "hint": "30/minute;600/hour",
        # Per player: analyses queued (each takes a worker for seconds to minutes).
        "analysis": "10/minute;60/hour;200/day",
        "action": "120/minute;3000/hour",
        # Per address: the engine's answers to programs (/api/engine/...).
        "engine": "60/minute;1200/hour",
        # Per player: chat messages and reports.
        "chat": "20/minute;300/hour",
    }
)
"""Each policy's rates, overridable per policy (``RateLimits(policies=...)``)."""

REDIS_RETRY = 30.0
"""Seconds to count in memory after Redis failed, before trying it again."""

_REDIS_TIMEOUT = 1.0
"""Seconds to wait for Redis (connecting, then each command) before giving up on it."""

_STORAGE_ERRORS = (StorageError, RedisError, OSError)


class RateLimited(NardError):
    """Too many requests under ``policy``; try again in ``retry_after`` seconds.

    >>> str(RateLimited("guest", 41.2))
    "too many requests ('guest'): try again in 42 seconds"
    """

    def __init__(self, policy: str, retry_after: float, what: str = "requests") -> None:
        self.policy = policy
        self.retry_after = max(0.0, retry_after)
        seconds = self.retry_after_seconds
        super().__init__(
            f"too many {what} ({policy!r}): try again in {seconds} second{'s' * (seconds != 1)}"
        )

    @property
    def retry_after_seconds(self) -> int:
        """Whole seconds to wait, at least 1 (for a ``Retry-After`` header)."""
        return max(1, math.ceil(self.retry_after))


class LoginBlocked(RateLimited):
    """Too many wrong passwords from this address (for this username, or for any)."""

    def __init__(self, retry_after: float) -> None:
        super().__init__("login", retry_after, "wrong passwords")


def address_key(host: str | None) -> str:
    """The client a request is counted against: its IPv4 address, or the /64
    network of an IPv6 address (one subscriber's, who may use any address in it).

    >>> address_key("203.0.113.7"), address_key("::ffff:203.0.113.7")
    ('203.0.113.7', '203.0.113.7')
    >>> address_key("2001:db8:1:2:3:4:5:6")
    '2001:db8:1:2::/64'
    >>> address_key(None)
    'unknown'
    """
    if not host:
        return "unknown"
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return host[:64]
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


def _digest(*parts: str) -> str:
    """A short fixed-size key for arbitrary text (usernames, addresses)."""
    return hashlib.blake2b("\0".join(parts).encode(), digest_size=12).hexdigest()


def _redis_url(url: str) -> str:
    """The ``limits`` storage URI of a Redis URL (``redis://`` -> ``async+redis://``)."""
    scheme, _, rest = url.partition("://")
    if scheme == "unix":
        scheme = "redis+unix"
    return f"async+{scheme}://{rest}"


class _Outage:
    """Whether Redis may be used now: after an error, not for :data:`REDIS_RETRY` seconds."""

    def __init__(self, what: str, retry: float) -> None:
        self.what = what
        self.retry = retry
        self._until = 0.0

    def up(self) -> bool:
        return time.monotonic() >= self._until

    def failed(self, exc: BaseException) -> None:
        _log.warning(
            "%s: Redis failed (%s); counting in this process's memory for %.0f s",
            self.what,
            exc,
            self.retry,
        )
        self._until = time.monotonic() + self.retry


# -- rate limits --------------------------------------------------------------


def policies_from_text(text: str) -> dict[str, str]:
    """Policies from one line of settings: ``name=rates`` separated by spaces.

    >>> policies_from_text("guest=5/minute;50/day  hint=10/minute")
    {'guest': '5/minute;50/day', 'hint': '10/minute'}
    """
    policies: dict[str, str] = {}
    for part in text.split():
        name, sep, rates = part.partition("=")
        if not sep or not name:
            raise ValueError(f"a rate limit policy is name=rates, not {part!r}")
        policies[name] = rates
    return policies


_Window = tuple[int, float, int, float]
"""A sliding window's state: previous count, the seconds it still counts, current
count, and the seconds until the current window ends plus one window length."""


class _MemoryWindows:
    """Sliding window counters in a dict, with the arithmetic of ``limits``'s
    memory storage (windows aligned on multiples of their length), for at most
    ``max_keys`` (policy, key) pairs.

    ``limits``'s own ``MemoryStorage`` (5.8) scans all its counters after each
    hit: 10 ms a hit with 50,000 clients. Here stale counters are dropped only
    when the table is full, at most once a second.
    """

    def __init__(self, clock: Callable[[], float], max_keys: int) -> None:
        self.clock = clock
        self.max_keys = max_keys
        # (policy, key) -> per rate: [window number, previous count, current count]
        self._rows: dict[tuple[str, str], list[list[int]]] = {}
        self._expires: dict[tuple[str, str], float] = {}
        self._swept = -math.inf

    def __len__(self) -> int:
        return len(self._rows)

    def _current(
        self, pair: tuple[str, str], items: Sequence[RateLimitItem], now: float
    ) -> list[list[int]]:
        """The pair's counters, moved on to the current windows."""
        rows = self._rows.get(pair)
        if rows is None or self._expires[pair] <= now:
            return [[math.floor(now / item.get_expiry()), 0, 0] for item in items]
        for row, item in zip(rows, items, strict=True):
            number = math.floor(now / item.get_expiry())
            if number == row[0] + 1:
                row[:] = [number, row[2], 0]
            elif number != row[0]:
                row[:] = [number, 0, 0]
        return rows

    def state(self, pair: tuple[str, str], items: Sequence[RateLimitItem]) -> list[_Window]:
        """For each rate, what ``limits``'s ``get_sliding_window`` gives."""
        now = self.clock()
        out = []
        for row, item in zip(self._current(pair, items, now), items, strict=True):
            expiry = item.get_expiry()
            left = (1 - (now / expiry) % 1) * expiry
            out.append((row[1], left if row[1] else 0.0, row[2], left + expiry))
        return out

    def full_for(self, pairs: Sequence[tuple[str, str]]) -> bool:
        """Whether some of ``pairs`` is new and there is no room for it."""
        new = sum(pair not in self._rows for pair in pairs)
        if len(self._rows) + new <= self.max_keys:
            return False
        now = self.clock()
        if now - self._swept >= 1.0:
            self._swept = now
            for pair in [p for p, expires in self._expires.items() if expires <= now]:
                del self._rows[pair], self._expires[pair]
        new = sum(pair not in self._rows for pair in pairs)
        return len(self._rows) + new > self.max_keys

    def hit(self, pair: tuple[str, str], items: Sequence[RateLimitItem]) -> None:
        """Count one hit under every rate (the caller checked that they allow it)."""
        now = self.clock()
        rows = self._current(pair, items, now)
        for row in rows:
            row[2] += 1
        self._rows[pair] = rows
        self._expires[pair] = now + 2 * max(item.get_expiry() for item in items)


def _wait(item: RateLimitItem, state: _Window) -> float:
    """Seconds until one more hit fits under ``item``: 0 if it fits now.

    A sliding window counter weighs the previous window by the share of it still
    inside the sliding window: ``previous * left / expiry + current`` must stay
    under ``amount``. If the current window alone is full, the wait runs past
    its end, while the weight of what becomes the previous window decays.
    """
    previous, left, current, current_left = state
    expiry, amount = item.get_expiry(), item.amount
    if current < amount:
        if not previous or previous * left / expiry + current < amount:
            return 0.0
        return left - (amount - current) * expiry / previous + 0.001
    window_end = max(0.0, current_left - expiry)
    return window_end + expiry * (1 - amount / current) + 0.001


class RateLimits:
    """Named rate limits per client, in Redis at ``redis_url`` or in memory.

    ``policies`` overrides :data:`DEFAULT_POLICIES` by name (an empty string
    turns a policy off); rates use ``limits``'s notation, ``;`` between them
    (``"10/minute;60/hour"``). ``clock`` (seconds) times the memory storage;
    Redis keeps its own time. ``max_keys`` bounds the memory storage: when it
    holds that many (policy, key) pairs still counting, a new key is refused
    (:class:`RateLimited`) rather than anyone's counts dropped.

    >>> async def demo() -> str:
    ...     limits = RateLimits(policies={"guest": "2/minute"})
    ...     await limits.hit("guest", "203.0.113.7")
    ...     await limits.hit("guest", "203.0.113.7")
    ...     try:
    ...         await limits.hit("guest", "203.0.113.7")
    ...     except RateLimited as exc:
    ...         return exc.policy
    ...     return "allowed"
    >>> asyncio.run(demo())
    'guest'
    """

    def __init__(
        self,
        redis_url: str | None = None,
        policies: Mapping[str, str] | None = None,
        *,
        key_prefix: str = "nard:limits",
        clock: Callable[[], float] = time.time,
        max_keys: int = 100_000,
        redis_retry: float = REDIS_RETRY,
    ) -> None:
        merged = {**DEFAULT_POLICIES, **(policies or {})}
        self.policies: dict[str, tuple[RateLimitItem, ...]] = {}
        for name, rates in merged.items():
            try:
                self.policies[name] = tuple(parse_many(rates)) if rates.strip() else ()
            except ValueError:
                raise ValueError(
                    f"the rate limit policy {name!r} has rates {rates!r}: write them "
                    "like '10/minute;60/hour'"
                ) from None
        self._memory = _MemoryWindows(clock, max_keys)
        self._outage = _Outage("rate limits", redis_retry)
        self._pool: redis.asyncio.ConnectionPool | None = None
        self._redis: RedisStorage | None = None
        self._limiter: SlidingWindowCounterRateLimiter | None = None
        if redis_url:
            self._pool = redis.asyncio.ConnectionPool.from_url(
                redis_url,
                socket_connect_timeout=_REDIS_TIMEOUT,
                socket_timeout=_REDIS_TIMEOUT,
            )
            self._redis = RedisStorage(
                _redis_url(redis_url),
                wrap_exceptions=True,
                implementation="redispy",
                key_prefix=key_prefix,
                connection_pool=self._pool,  # type: ignore[arg-type]
            )
            self._limiter = SlidingWindowCounterRateLimiter(self._redis)

    @property
    def uses_redis(self) -> bool:
        """Whether counts go to Redis now (configured, and not in an outage)."""
        return self._redis is not None and self._outage.up()

    def _items(self, policy: str, keys: Sequence[str]) -> tuple[RateLimitItem, ...]:
        if policy not in self.policies:
            raise ValueError(f"no rate limit policy {policy!r}: one of {sorted(self.policies)}")
        if not keys:
            raise ValueError(f"the rate limit {policy!r} needs a key (a client, a player)")
        return self.policies[policy]

    async def hit(self, policy: str, *keys: str) -> None:
        """Count one request under ``policy`` for each key (e.g. the player and
        the address), or raise :class:`RateLimited` (counting nothing) if one of
        them is over a rate."""
        items = self._items(policy, keys)
        if not items:
            return
        ids = [_digest(key) for key in keys]
        if self.uses_redis:
            try:
                await self._redis_hit(policy, items, ids)
                return
            except _STORAGE_ERRORS as exc:
                self._outage.failed(exc)
        pairs = [(policy, i) for i in ids]
        wait = self._memory_wait(pairs, items)
        if wait > 0:
            raise RateLimited(policy, wait)
        if self._memory.full_for(pairs):
            _log.warning("rate limits: %d clients counted, refusing new ones", len(self._memory))
            raise RateLimited(policy, min(item.get_expiry() for item in items))
        for pair in pairs:
            self._memory.hit(pair, items)

    def _memory_wait(
        self, pairs: Sequence[tuple[str, str]], items: Sequence[RateLimitItem]
    ) -> float:
        waits = (
            _wait(item, state)
            for pair in pairs
            for item, state in zip(items, self._memory.state(pair, items), strict=True)
        )
        return max(waits, default=0.0)

    async def _redis_hit(self, policy: str, items: Sequence[RateLimitItem], ids: list[str]) -> None:
        wait = await self._redis_wait(policy, items, ids)
        if wait > 0:
            raise RateLimited(policy, wait)
        assert self._limiter is not None
        for ident in ids:
            for item in items:
                if not await self._limiter.hit(item, policy, ident):  # lost a race
                    raise RateLimited(policy, max(1.0, await self._redis_wait(policy, items, ids)))

    async def _redis_wait(
        self, policy: str, items: Sequence[RateLimitItem], ids: list[str]
    ) -> float:
        assert self._redis is not None
        wait = 0.0
        for ident in ids:
            for item in items:
                state = await self._redis.get_sliding_window(
                    item.key_for(policy, ident), item.get_expiry()
                )
                wait = max(wait, _wait(item, state))
        return wait

    async def retry_after(self, policy: str, *keys: str) -> float:
        """Seconds until a request under ``policy`` for all ``keys`` fits: 0 if now."""
        items = self._items(policy, keys)
        ids = [_digest(key) for key in keys]
        if items and self.uses_redis:
            try:
                return await self._redis_wait(policy, items, ids)
            except _STORAGE_ERRORS as exc:
                self._outage.failed(exc)
        return self._memory_wait([(policy, i) for i in ids], items)

    async def test(self, policy: str, *keys: str) -> bool:
        """Whether a request under ``policy`` for ``keys`` would be allowed now."""
        return await self.retry_after(policy, *keys) == 0

    async def close(self) -> None:
        """Close the connections to Redis."""
        if self._pool is not None:
            await self._pool.aclose()


# -- the sign-in throttle -----------------------------------------------------

_FAILED_LUA = """
-- One failure for each key: KEYS[i] with ARGV[5 + i] free failures.
local now, base, cap, forget = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]),
    tonumber(ARGV[4])
for i, key in ipairs(KEYS) do
    local free = tonumber(ARGV[4 + i])
    local count = 0
    if tonumber(redis.call('HGET', key, 'expires_at') or '0') > now then
        count = tonumber(redis.call('HGET', key, 'count') or '0')
    end
    count = count + 1
    local next_at = 0
    if count > free then
        next_at = now + math.min(base * 2 ^ math.min(count - free - 1, 64), cap)
    end
    local expires_at = math.max(now + forget, next_at)
    redis.call('HSET', key, 'count', count, 'next_at', string.format('%.6f', next_at),
        'expires_at', string.format('%.6f', expires_at))
    redis.call('PEXPIRE', key, math.ceil((expires_at - now) * 1000))
end
return 1
"""


@dataclass
class _Failures:
    count: int
    next_at: float
    expires_at: float


_FULL_RETRY = 60.0
"""Seconds a sign-in waits when the memory throttle is full of other clients' failures."""


class LoginThrottle:
    """Wrong passwords, counted per (username, address) and per address, each key
    with an exponential back-off.

    A key's first ``free`` failures cost nothing (``free_per_user`` for one
    username from one address, ``free_per_address`` for all usernames from one
    address); after failure ``free + k + 1`` the key waits ``base_delay * 2**k``
    seconds, at most ``max_delay``, before the next attempt. A key is forgotten
    ``forget_after`` seconds after its last failure (or when its wait ends, if
    later). A successful sign-in clears its (username, address) key only: the
    address's count stays, so signing in to one's own account buys no more
    guesses at others.

    Usernames are compared by :func:`~nard.server.usernames.canonical_username`,
    addresses by :func:`address_key`. Failures made from one address never
    block a sign-in from another: there is no per-account lock-out.

    Storage: Redis at ``redis_url`` (hashes under ``key_prefix`` that expire on
    their own) or memory, holding at most ``max_entries`` keys: when that many
    are still counting, an attempt that would need a new key is refused (for
    :data:`_FULL_RETRY` seconds) rather than anyone's back-off dropped.
    ``clock`` gives the time in seconds; it is stored in Redis, so it must be
    the wall clock all processes share (tests pass their own).

    >>> async def demo() -> float:
    ...     now = [0.0]
    ...     throttle = LoginThrottle(free_per_user=1, clock=lambda: now[0])
    ...     await throttle.failed("ann", "203.0.113.7")
    ...     await throttle.failed("Ann", "203.0.113.7")
    ...     return await throttle.wait_seconds("ann", "203.0.113.7")
    >>> asyncio.run(demo())
    1.0
    """

    def __init__(
        self,
        redis_url: str | None = None,
        *,
        free_per_user: int = 5,
        free_per_address: int = 20,
        base_delay: float = 1.0,
        max_delay: float = 900.0,
        forget_after: float = 3600.0,
        max_entries: int = 100_000,
        clock: Callable[[], float] = time.time,
        key_prefix: str = "nard:login",
        redis_retry: float = REDIS_RETRY,
    ) -> None:
        self.free_per_user = free_per_user
        self.free_per_address = free_per_address
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.forget_after = forget_after
        self.max_entries = max_entries
        self.clock = clock
        self.key_prefix = key_prefix
        self._memory: dict[str, _Failures] = {}
        self._swept = -math.inf
        self._outage = _Outage("login throttle", redis_retry)
        self._redis: redis.asyncio.Redis | None = None
        self._failed_script: AsyncScript | None = None
        if redis_url:
            self._redis = redis.asyncio.Redis.from_url(
                redis_url,
                socket_connect_timeout=_REDIS_TIMEOUT,
                socket_timeout=_REDIS_TIMEOUT,
            )
            self._failed_script = self._redis.register_script(_FAILED_LUA)

    @property
    def uses_redis(self) -> bool:
        """Whether failures go to Redis now (configured, and not in an outage)."""
        return self._redis is not None and self._outage.up()

    def _keys(self, username: str, address: str) -> tuple[str, str]:
        """The storage keys of an attempt: (username, address), then address."""
        where = address_key(address)
        return (
            f"{self.key_prefix}:user:{_digest(canonical_username(username), where)}",
            f"{self.key_prefix}:address:{_digest(where)}",
        )

    async def wait_seconds(self, username: str, address: str) -> float:
        """Seconds before ``username`` may try a password from ``address``: 0 if now."""
        now = self.clock()
        keys = self._keys(username, address)
        if self.uses_redis:
            assert self._redis is not None
            try:
                async with self._redis.pipeline(transaction=False) as pipe:
                    for key in keys:
                        pipe.hmget(key, ["next_at", "expires_at"])
                    rows = await pipe.execute()
                return max(
                    [float(n) - now for n, e in rows if n is not None and float(e) > now] + [0.0]
                )
            except _STORAGE_ERRORS as exc:
                self._outage.failed(exc)
        new = sum(key not in self._memory for key in keys)
        if new and self._memory_full(now, new):
            return _FULL_RETRY
        entries = [self._memory.get(key) for key in keys]
        return max([e.next_at - now for e in entries if e and e.expires_at > now] + [0.0])

    async def check(self, username: str, address: str) -> None:
        """Raise :class:`LoginBlocked` if ``username`` must wait before trying a
        password from ``address`` (call it before checking the password)."""
        wait = await self.wait_seconds(username, address)
        if wait > 0:
            raise LoginBlocked(wait)

    async def failed(self, username: str, address: str) -> None:
        """Count a wrong password, or an unknown username, from ``address``."""
        now = self.clock()
        keys = self._keys(username, address)
        frees = (self.free_per_user, self.free_per_address)
        if self.uses_redis:
            assert self._failed_script is not None
            try:
                args = [now, self.base_delay, self.max_delay, self.forget_after, *frees]
                await self._failed_script(keys=list(keys), args=args)
                return
            except _STORAGE_ERRORS as exc:
                self._outage.failed(exc)
        for key, free in zip(keys, frees, strict=True):
            entry = self._memory.get(key)
            if entry is None:
                if self._memory_full(now, 1):
                    continue  # wait_seconds refuses this key until there is room
                entry = self._memory[key] = _Failures(0, 0.0, 0.0)
            elif entry.expires_at <= now:
                entry.count, entry.next_at = 0, 0.0
            entry.count += 1
            if entry.count > free:
                delay = self.base_delay * 2.0 ** min(entry.count - free - 1, 64)
                entry.next_at = now + min(delay, self.max_delay)
            entry.expires_at = max(now + self.forget_after, entry.next_at)

    async def succeeded(self, username: str, address: str) -> None:
        """A correct password: forget that username's failures from ``address``."""
        key = self._keys(username, address)[0]
        if self.uses_redis:
            assert self._redis is not None
            try:
                await self._redis.delete(key)
                return
            except _STORAGE_ERRORS as exc:
                self._outage.failed(exc)
        self._memory.pop(key, None)

    def _memory_full(self, now: float, new: int) -> bool:
        """Whether ``new`` more keys would pass ``max_entries`` (after dropping the
        expired ones, at most once a second)."""
        if len(self._memory) + new <= self.max_entries:
            return False
        if now - self._swept >= 1.0:
            self._swept = now
            for key in [k for k, e in self._memory.items() if e.expires_at <= now]:
                del self._memory[key]
        return len(self._memory) + new > self.max_entries

    async def close(self) -> None:
        """Close the connections to Redis."""
        if self._redis is not None:
            await self._redis.aclose()


# -- passwords ------------------------------------------------------------------

_HASHER = PasswordHasher()


@functools.cache
def _dummy_hash(time_cost: int, memory_cost: int, parallelism: int, hash_len: int) -> str:
    hasher = PasswordHasher(
        time_cost=time_cost, memory_cost=memory_cost, parallelism=parallelism, hash_len=hash_len
    )
    return hasher.hash("nard: no such user")


def dummy_password_hash(hasher: PasswordHasher | None = None) -> str:
    """An argon2 hash made once with ``hasher``'s parameters, to verify against
    when there is no user: the same work as for a real one."""
    hasher = hasher or _HASHER
    return _dummy_hash(hasher.time_cost, hasher.memory_cost, hasher.parallelism, hasher.hash_len)


def verify_password(
    stored_hash: str | None, password: str, *, hasher: PasswordHasher | None = None
) -> bool:
    """Whether ``password`` matches ``stored_hash``. With no hash (an unknown
    user, a guest) the password is verified against :func:`dummy_password_hash`
    and refused, so the answer takes as long either way.

    CPU-bound (about 0.1 s): call it from a thread (:func:`verify_password_async`).

    >>> verify_password(None, "hunter22")
    False
    """
    hasher = hasher or _HASHER
    try:
        matches = hasher.verify(stored_hash or dummy_password_hash(hasher), password)
    except (VerificationError, InvalidHashError):
        return False
    return bool(matches and stored_hash)


async def verify_password_async(
    stored_hash: str | None, password: str, *, hasher: PasswordHasher | None = None
) -> bool:
    """:func:`verify_password` in a worker thread, off the event loop."""
    return await asyncio.to_thread(verify_password, stored_hash, password, hasher=hasher)
