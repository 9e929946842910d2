"""Rate limits, the sign-in throttle and password checks (nard.server.abuse).

Each storage test runs in memory and on Redis (``NARD_TEST_REDIS``, default
``redis://127.0.0.1:6379/0``; skipped without one unless ``NARD_REQUIRE_REDIS=1``),
with a key prefix of its own. Time is a clock the test moves: nothing sleeps.
"""

from __future__ import annotations

import asyncio
import logging
import os
import uuid
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from typing import Any, Literal

import pytest
import redis
from argon2 import PasswordHasher
from hypothesis import given, settings
from hypothesis import strategies as st

from nard.core import NardError
from nard.server.abuse import (
    DEFAULT_POLICIES,
    LoginBlocked,
    LoginThrottle,
    RateLimited,
    RateLimits,
    address_key,
    dummy_password_hash,
    policies_from_text,
    verify_password,
    verify_password_async,
)

REDIS = os.environ.get("NARD_TEST_REDIS", "redis://127.0.0.1:6379/0")
NO_REDIS = "redis://127.0.0.1:1/0"  # nothing listens there
DAY = 86_400.0
START = 20_000 * DAY  # on every window's boundary


def run(scenario: Callable[[], Coroutine[Any, Any, None]]) -> None:
    asyncio.run(scenario())


class Clock:
    """The time the test says it is."""

    def __init__(self, now: float = START) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def redis_url() -> str:
    try:
        redis.Redis.from_url(REDIS, socket_connect_timeout=2).ping()
    except redis.RedisError as exc:
        if os.environ.get("NARD_REQUIRE_REDIS") == "1":
            pytest.fail(f"Redis at {REDIS} is required here: {exc}")
        pytest.skip(f"no Redis at {REDIS}")
    return REDIS


@pytest.fixture
def prefix() -> Iterator[str]:
    """A key prefix of this test's own; its keys are deleted after it."""
    name = f"nard:test:{uuid.uuid4().hex}"
    yield name
    try:
        client = redis.Redis.from_url(REDIS, socket_connect_timeout=2)
        for key in client.scan_iter(match=f"{name}*"):
            client.delete(key)
    except redis.RedisError:
        pass


@pytest.fixture(params=["memory", "redis"])
def url(request: pytest.FixtureRequest) -> str | None:
    """No URL (memory storage), then Redis's."""
    if request.param == "memory":
        return None
    found: str = request.getfixturevalue("redis_url")
    return found


async def refused(call: Awaitable[Any]) -> RateLimited:
    try:
        await call
    except RateLimited as exc:
        return exc
    raise AssertionError("not refused")


# -- rate limits ------------------------------------------------------------------


@pytest.mark.parametrize("policy", sorted(DEFAULT_POLICIES))
def test_each_policy_refuses_the_hit_past_its_rate(
    policy: str, url: str | None, prefix: str
) -> None:
    async def scenario() -> None:
        limits = RateLimits(url, key_prefix=prefix, clock=Clock())
        allowed = min(item.amount for item in limits.policies[policy])
        for _ in range(allowed):
            await limits.hit(policy, "203.0.113.7")
        exc = await refused(limits.hit(policy, "203.0.113.7"))
        assert exc.policy == policy
        assert 0 < exc.retry_after <= 60.01  # each policy's shortest window is a minute
        assert policy in str(exc) and "try again in" in str(exc)
        assert isinstance(exc, NardError)
        # Another client is not affected.
        await limits.hit(policy, "198.51.100.1")
        assert await limits.test(policy, "198.51.100.1")
        assert not await limits.test(policy, "203.0.113.7")
        await limits.close()

    run(scenario)


def test_retry_after_is_exact() -> None:
    async def scenario() -> None:
        clock = Clock()
        limits = RateLimits(policies={"hint": "5/minute"}, clock=clock)
        for _ in range(5):
            await limits.hit("hint", "player:1")
        wait = (await refused(limits.hit("hint", "player:1"))).retry_after
        assert wait == pytest.approx(60, abs=0.01)
        clock.advance(wait - 0.01)
        await refused(limits.hit("hint", "player:1"))
        clock.advance(0.01)
        await limits.hit("hint", "player:1")  # the previous minute's 5 weigh 4.99
        # The previous window's hits still weigh by the share of it left.
        wait = (await refused(limits.hit("hint", "player:1"))).retry_after
        assert wait == pytest.approx(60 - 4 * 60 / 5, abs=0.01)
        clock.advance(wait)
        await limits.hit("hint", "player:1")

    run(scenario)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(min_value=0, max_value=90), min_size=1, max_size=40))
def test_waiting_the_retry_after_is_enough(gaps: list[float]) -> None:
    async def scenario() -> None:
        clock = Clock(START + 17.3)
        limits = RateLimits(policies={"action": "4/minute;7/hour"}, clock=clock)
        for gap in gaps:
            clock.advance(gap)
            try:
                await limits.hit("action", "player:1")
            except RateLimited as exc:
                assert exc.retry_after > 0
                assert await limits.retry_after("action", "player:1") == exc.retry_after
                clock.advance(exc.retry_after)
                await limits.hit("action", "player:1")

    run(scenario)


def test_several_keys_count_together(url: str | None, prefix: str) -> None:
    async def scenario() -> None:
        limits = RateLimits(url, {"table": "2/minute"}, key_prefix=prefix, clock=Clock())
        await limits.hit("table", "player:1", "address:A")
        await limits.hit("table", "player:2", "address:A")
        await refused(limits.hit("table", "player:1", "address:A"))  # A is full
        # A refused hit counts nothing: player 1 still has a second table.
        await limits.hit("table", "player:1", "address:B")
        await refused(limits.hit("table", "player:1", "address:C"))  # player 1 is full
        await limits.hit("table", "player:3", "address:C")
        await limits.hit("table", "player:4", "address:C")
        await limits.close()

    run(scenario)


def test_two_processes_share_counts(redis_url: str, prefix: str) -> None:
    async def scenario() -> None:
        first = RateLimits(redis_url, {"guest": "4/minute"}, key_prefix=prefix)
        second = RateLimits(redis_url, {"guest": "4/minute"}, key_prefix=prefix)
        for limits in (first, second, first, second):
            await limits.hit("guest", "203.0.113.7")
        await refused(first.hit("guest", "203.0.113.7"))
        await refused(second.hit("guest", "203.0.113.7"))
        assert first.uses_redis and second.uses_redis
        await first.close()
        await second.close()

    run(scenario)


def test_redis_keys_carry_the_prefix(redis_url: str, prefix: str) -> None:
    async def scenario() -> None:
        limits = RateLimits(redis_url, key_prefix=prefix)
        await limits.hit("hint", "player:1")
        await limits.close()

    run(scenario)
    keys = redis.Redis.from_url(redis_url).keys(f"{prefix}:*")
    assert keys and all(b"player:1" not in key for key in keys)  # hashed, not the raw key


def test_redis_down_falls_back_to_memory(caplog: pytest.LogCaptureFixture) -> None:
    async def scenario() -> None:
        limits = RateLimits(NO_REDIS, {"guest": "2/minute"}, clock=Clock())
        with caplog.at_level(logging.WARNING, logger="nard.server.abuse"):
            await limits.hit("guest", "203.0.113.7")
        assert "Redis failed" in caplog.text
        assert not limits.uses_redis
        await limits.hit("guest", "203.0.113.7")
        await refused(limits.hit("guest", "203.0.113.7"))  # still counted, in memory
        await limits.close()

    run(scenario)


def test_memory_is_bounded_without_dropping_counts() -> None:
    async def scenario() -> None:
        clock = Clock()
        limits = RateLimits(policies={"guest": "2/minute"}, clock=clock, max_keys=3)
        for client in ("a", "b", "c"):
            await limits.hit("guest", client)
        await limits.hit("guest", "a")
        exc = await refused(limits.hit("guest", "d"))  # no room for a new client
        assert exc.retry_after == 60
        await refused(limits.hit("guest", "a"))  # a's count was kept
        await limits.hit("guest", "b")
        clock.advance(121)  # every count has expired
        await limits.hit("guest", "d")

    run(scenario)


def test_policies_are_overridable_and_checked() -> None:
    limits = RateLimits(policies={"hint": "", "guest": "1/second;5/minute"})
    assert limits.policies["hint"] == ()
    assert [item.amount for item in limits.policies["guest"]] == [1, 5]
    assert [item.amount for item in limits.policies["register"]] == [5, 20, 50]
    with pytest.raises(ValueError, match="'guest' has rates 'lots'"):
        RateLimits(policies={"guest": "lots"})
    assert policies_from_text("guest=1/second;5/minute hint=") == {
        "guest": "1/second;5/minute",
        "hint": "",
    }
    with pytest.raises(ValueError, match="name=rates"):
        policies_from_text("guest")

    async def scenario() -> None:
        for _ in range(100):
            await limits.hit("hint", "player:1")  # turned off
        with pytest.raises(ValueError, match="no rate limit policy 'hints'"):
            await limits.hit("hints", "player:1")
        with pytest.raises(ValueError, match="needs a key"):
            await limits.hit("guest")

    run(scenario)


# -- the sign-in throttle ------------------------------------------------------------

A, B = "203.0.113.7", "198.51.100.1"


def throttle(url: str | None, prefix: str, clock: Clock, **options: Any) -> LoginThrottle:
    return LoginThrottle(url, key_prefix=prefix, clock=clock, **options)


def test_back_off_grows_and_ends(url: str | None, prefix: str) -> None:
    async def scenario() -> None:
        clock = Clock()
        t = throttle(url, prefix, clock, free_per_user=3, base_delay=2.0, max_delay=30.0)
        for _ in range(3):
            await t.check("ann", A)
            await t.failed("ann", A)
        await t.check("ann", A)  # three free failures
        waits = []
        for _ in range(6):
            await t.failed("ann", A)
            waits.append(await t.wait_seconds("ann", A))
            with pytest.raises(LoginBlocked):
                await t.check("ann", A)
            clock.advance(waits[-1])
            await t.check("ann", A)  # the wait is over
        assert waits == pytest.approx([2, 4, 8, 16, 30, 30])
        await t.succeeded("ann", A)
        for _ in range(3):
            await t.failed("ann", A)
        await t.check("ann", A)  # a success starts the count again
        await t.close()

    run(scenario)


def test_failures_are_forgotten(url: str | None, prefix: str) -> None:
    async def scenario() -> None:
        clock = Clock()
        t = throttle(url, prefix, clock, free_per_user=1, forget_after=600.0)
        await t.failed("ann", A)
        clock.advance(599)
        await t.failed("ann", A)
        assert await t.wait_seconds("ann", A) == pytest.approx(1)
        clock.advance(601)
        await t.failed("ann", A)  # the first one of a new count
        assert await t.wait_seconds("ann", A) == 0
        await t.close()

    run(scenario)


def test_one_name_however_written(url: str | None, prefix: str) -> None:
    async def scenario() -> None:
        t = throttle(url, prefix, Clock(), free_per_user=2)
        for name in ("ann", "ANN", "\u0430nn"):  # the last with a Cyrillic a (U+0430)
            await t.failed(name, A)
        with pytest.raises(LoginBlocked):
            await t.check("Ann", A)
        await t.close()

    run(scenario)


def test_the_victim_elsewhere_is_never_blocked(url: str | None, prefix: str) -> None:
    async def scenario() -> None:
        clock = Clock()
        t = throttle(url, prefix, clock)
        for _ in range(200):  # the attacker at A, ignoring the waits
            await t.failed("ann", A)
        exc = await refused(t.check("ann", A))
        assert exc.retry_after == pytest.approx(900)  # capped at 15 minutes
        assert "wrong passwords" in str(exc)
        await t.check("ann", B)  # ann at home
        await t.check("bob", B)
        await refused(t.check("bob", A))  # past its 20 free failures, A waits for any name
        await t.close()

    run(scenario)


def test_a_flood_of_names_backs_off_its_address(url: str | None, prefix: str) -> None:
    async def scenario() -> None:
        clock = Clock()
        t = throttle(url, prefix, clock)
        for i in range(20):
            await t.check(f"made-up-{i}", A)
            await t.failed(f"made-up-{i}", A)
        await t.check("made-up-20", A)  # twenty are free
        await t.failed("made-up-20", A)
        exc = await refused(t.check("someone-else", A))
        assert exc.retry_after == pytest.approx(1)
        await t.check("someone-else", B)
        # One address: its whole IPv6 /64.
        await t.failed("x", "2001:db8::1")
        assert address_key("2001:db8::1") == address_key("2001:db8::ffff:2")
        await t.close()

    run(scenario)


def test_signing_in_keeps_the_address_count(url: str | None, prefix: str) -> None:
    async def scenario() -> None:
        t = throttle(url, prefix, Clock(), free_per_address=5)
        for i in range(5):
            await t.failed(f"victim-{i}", A)
            await t.succeeded("attacker", A)  # their own account, between guesses
        await t.failed("victim-5", A)
        await refused(t.check("victim-6", A))
        await t.close()

    run(scenario)


def test_a_flood_cannot_reset_a_back_off(url: str | None, prefix: str) -> None:
    async def scenario() -> None:
        clock = Clock()
        t = throttle(url, prefix, clock, free_per_user=2, max_entries=50, forget_after=600.0)
        for _ in range(6):
            await t.failed("ann", A)  # waits 8 s
        before = await t.wait_seconds("ann", A)
        for i in range(300):  # made-up names from many addresses
            await t.failed(f"made-up-{i}", f"192.0.2.{i % 250}")
        assert await t.wait_seconds("ann", A) == before == pytest.approx(8)
        clock.advance(8)
        await t.failed("ann", A)
        assert await t.wait_seconds("ann", A) == pytest.approx(16)  # the count went on
        if url is None:  # memory is full: new keys wait, nobody's are dropped
            assert await t.wait_seconds("bob", B) == 60
            clock.advance(601)  # the flood's keys expire; ann's is newer
            assert await t.wait_seconds("bob", B) == 0
        await t.close()

    run(scenario)


def test_two_processes_share_failures(redis_url: str, prefix: str) -> None:
    async def scenario() -> None:
        clock = Clock()
        first = throttle(redis_url, prefix, clock, free_per_user=2)
        second = throttle(redis_url, prefix, clock, free_per_user=2)
        await first.failed("ann", A)
        await second.failed("ann", A)
        await first.failed("ann", A)
        await refused(second.check("ann", A))
        await second.succeeded("ann", A)
        await first.check("ann", A)
        assert first.uses_redis
        await first.close()
        await second.close()

    run(scenario)


def test_throttle_without_redis_counts_in_memory(caplog: pytest.LogCaptureFixture) -> None:
    async def scenario() -> None:
        t = LoginThrottle(NO_REDIS, free_per_user=1, clock=Clock())
        with caplog.at_level(logging.WARNING, logger="nard.server.abuse"):
            await t.failed("ann", A)
        assert "login throttle: Redis failed" in caplog.text
        await t.failed("ann", A)
        await refused(t.check("ann", A))
        await t.close()

    run(scenario)


# -- passwords -------------------------------------------------------------------------

CHEAP = PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)


class CountingHasher(PasswordHasher):
    """Records the hashes it verifies against."""

    def __init__(self) -> None:
        super().__init__(time_cost=1, memory_cost=8, parallelism=1)
        self.verified: list[str] = []

    def verify(self, hash: str | bytes, password: str | bytes) -> Literal[True]:
        self.verified.append(str(hash))
        return super().verify(hash, password)


def test_an_unknown_user_costs_a_verification() -> None:
    hasher = CountingHasher()
    real = hasher.hash("correct horse")
    assert verify_password(real, "correct horse", hasher=hasher)
    assert not verify_password(real, "wrong", hasher=hasher)
    assert not verify_password(None, "correct horse", hasher=hasher)
    assert not verify_password("", "nard: no such user", hasher=hasher)
    assert hasher.verified == [real, real, dummy_password_hash(hasher), dummy_password_hash(hasher)]
    # The dummy hash costs what a real one does: the hasher's own parameters.
    assert not hasher.check_needs_rehash(dummy_password_hash(hasher))
    assert dummy_password_hash(hasher) == dummy_password_hash(hasher)  # made once
    assert PasswordHasher().check_needs_rehash(dummy_password_hash(hasher))
    assert not PasswordHasher().check_needs_rehash(dummy_password_hash())


def test_verify_in_a_thread() -> None:
    async def scenario() -> None:
        stored = CHEAP.hash("correct horse")
        assert await verify_password_async(stored, "correct horse", hasher=CHEAP)
        assert not await verify_password_async(None, "correct horse", hasher=CHEAP)
        assert not await verify_password_async("not a hash", "x", hasher=CHEAP)

    run(scenario)


def test_refusals_say_when() -> None:
    exc = RateLimited("register", 0.2)
    assert exc.retry_after_seconds == 1
    assert str(exc) == "too many requests ('register'): try again in 1 second"
    assert str(LoginBlocked(61)) == "too many wrong passwords ('login'): try again in 61 seconds"
