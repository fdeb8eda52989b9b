package io.wheelbeat.ratelimit.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.wheelbeat.core.WheelTimer;
import io.wheelbeat.core.ratelimit.KeyedRateLimiter;
import io.wheelbeat.core.ratelimit.KeyedRateLimiterMetrics;
import io.wheelbeat.core.ratelimit.RateLimit;
import java.net.InetAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Keys Redis cannot hold, and Redis URIs that are malformed or lead nowhere. */
class BadInputTest {

    /** Where a single Redis keeps the keys' states. */
    private static final String KEYS = "wheelbeat:rl:keys";

    @Test
    void keysThatCannotBeEncodedAreDecidedLocallyAndCountedNeverSentToRedis() throws Exception {
        WheelTimer wheel = WheelTimer.builder().build();
        try (RedisProcess redis = new RedisProcess();
                RedisLeaseStore store = RedisLeaseStore.builder(redis.uri()).build()) {
            KeyedRateLimiter<Object> limiter = KeyedRateLimiter.builder(
                            RateLimit.slidingWindow(20, Duration.ofHours(1)), wheel)
                    .name("bad-keys")
                    .sharedThrough(store)
                    .processes(4)
                    .build();
            MeterRegistry meters = new SimpleMeterRegistry();
            new KeyedRateLimiterMetrics(limiter).bindTo(meters);
            List<Object> unencodable = List.of(new Object(), "lone \uD800 surrogate", "k".repeat(2000), 3.5);
            for (Object key : unencodable) {
                // Fail-local: this process's share, 20 / 4 = 5 an hour, then refused.
                for (int i = 0; i < 5; i++) {
                    assertEquals(KeyedRateLimiter.ADMITTED, limiter.tryAcquire(key), String.valueOf(key));
                }
                assertTrue(limiter.tryAcquire(key) > 0, String.valueOf(key));
            }
            assertEquals(
                    4 * 6,
                    meters.get("wheelbeat.ratelimit.store.fallbacks")
                            .tag("cause", "key")
                            .functionCounter()
                            .count());
            assertEquals(
                    0,
                    meters.get("wheelbeat.ratelimit.store.round.trips")
                            .functionCounter()
                            .count());
            // Encodable keys of each standard type do reach Redis.
            for (Object key : List.of("alice", 42L, InetAddress.getByName("10.1.2.3"), java.util.UUID.randomUUID())) {
                limiter.tryAcquire(key);
            }
            RedisClient client = RedisClient.create(redis.uri());
            try (StatefulRedisConnection<String, String> connection = client.connect()) {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (connection.sync().hlen(KEYS) < 4) {
                    assertTrue(
                            System.nanoTime() - deadline < 0,
                            "keys " + connection.sync().keys("*"));
                    Thread.sleep(5);
                }
                assertTrue(
                        connection.sync().hexists(KEYS, "8:bad-keys:ip:10.1.2.3"),
                        "keys " + connection.sync().keys("*"));
                assertTrue(
                        connection.sync().hexists(KEYS, "8:bad-keys:s:alice"),
                        "keys " + connection.sync().keys("*"));
                assertTrue(connection.sync().pttl(KEYS) > 0, "keys expire on their own");
            } finally {
                client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            }
            limiter.close();
        } finally {
            wheel.stop();
        }
    }

    @Test
    void limitersWhoseNameAndKeyJoinAlikeKeepTheirOwnCounts() throws Exception {
        WheelTimer wheel = WheelTimer.builder().build();
        try (RedisProcess redis = new RedisProcess();
                RedisLeaseStore store = RedisLeaseStore.builder(redis.uri()).build()) {
            RateLimit limit = RateLimit.slidingWindow(5, Duration.ofHours(1));
            // Joined with ':' and the standard "s:" of a string, both would be "conn:s:s:x".
            KeyedRateLimiter<String> first = KeyedRateLimiter.builder(limit, wheel)
                    .name("conn:s")
                    .sharedThrough(store)
                    .maxUnconfirmed(0)
                    .build();
            KeyedRateLimiter<String> second = KeyedRateLimiter.builder(limit, wheel)
                    .name("conn")
                    .sharedThrough(store)
                    .maxUnconfirmed(0)
                    .build();
            for (int i = 0; i < 4; i++) {
                assertEquals(KeyedRateLimiter.ADMITTED, decided(first, "x"));
            }
            int admitted = 0;
            for (int i = 0; i < 5; i++) {
                admitted += decided(second, "s:x") == KeyedRateLimiter.ADMITTED ? 1 : 0;
            }
            assertEquals(5, admitted, "the second limiter's own key, never used before");
            assertTrue(decided(second, "s:x") > 0, "its sixth is over its limit");
            first.close();
            second.close();
        } finally {
            wheel.stop();
        }
    }

    /**
     * The limiter's decision once Redis has answered: without credit, a request no lease covers is
     * refused for one round trip (under a second) while its lease is drawn; "full" is an hour.
     */
    private static long decided(KeyedRateLimiter<String> limiter, String key) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        long result;
        while ((result = limiter.tryAcquire(key)) > 0 && result < TimeUnit.SECONDS.toNanos(1)) {
            assertTrue(System.nanoTime() - deadline < 0, "no answer from Redis");
            Thread.sleep(1);
        }
        return result;
    }

    @Test
    void malformedUriIsAClearErrorAtBuild() {
        for (String uri : List.of("not a uri", "http://127.0.0.1:6379", "redis://127.0.0.1:99999")) {
            IllegalArgumentException e = assertThrows(
                    IllegalArgumentException.class,
                    () -> RedisLeaseStore.builder(uri).build(),
                    uri);
            assertTrue(e.getMessage().contains(uri), e.getMessage());
        }
    }

    @Test
    void unreachableRedisFailsTheBuildWhenAskedToFailFast() {
        String uri = "redis://127.0.0.1:" + RedisProcess.freePort();
        IllegalStateException e = assertTimeoutPreemptively(
                Duration.ofSeconds(20),
                () -> assertThrows(
                        IllegalStateException.class,
                        () -> RedisLeaseStore.builder(uri)
                                .connectTimeout(Duration.ofSeconds(1))
                                .failIfUnreachable(true)
                                .build()));
        assertTrue(e.getMessage().contains(uri), e.getMessage());
    }

    @Test
    void sharedLimitsBeyondALeasesLargestCountAreRefusedAtBuild() throws Exception {
        WheelTimer wheel = WheelTimer.builder().build();
        try (RedisProcess redis = new RedisProcess();
                RedisLeaseStore store = RedisLeaseStore.builder(redis.uri()).build()) {
            KeyedRateLimiter.Builder builder =
                    KeyedRateLimiter.builder(RateLimit.tokenBucket(1L << 30, Duration.ofSeconds(10)), wheel);
            assertThrows(IllegalArgumentException.class, () -> builder.sharedThrough(store));
        } finally {
            wheel.stop();
        }
    }
}
