package io.wheelbeat.ratelimit.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import io.wheelbeat.core.WheelTimer;
import io.wheelbeat.core.ratelimit.KeyedRateLimiter;
import io.wheelbeat.core.ratelimit.RateLimit;
import io.wheelbeat.core.ratelimit.StoreFailurePolicy;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * One thread sending new keys as fast as it can, against one limiter on a real Redis: the
 * exchanges out stay bounded, the keys that find no room are decided by the process's share and
 * counted, and a key already served keeps its room, so the limiter never falls into its failure
 * policy.
 */
class StoreFloodTest {

    /** Where a single Redis keeps the keys' states. */
    private static final String KEYS = "wheelbeat:rl:keys";

    private RedisProcess redis;
    private WheelTimer wheel;
    private RedisClient admin;
    private StatefulRedisConnection<String, String> adminConnection;

    @BeforeEach
    void start() {
        redis = new RedisProcess();
        wheel = WheelTimer.builder().build();
        admin = RedisClient.create(redis.uri());
        adminConnection = admin.connect();
    }

    @AfterEach
    void stop() {
        adminConnection.close();
        admin.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        wheel.stop();
        redis.close();
    }

    /**
     * Redis paused (CLIENT PAUSE) so that nothing is answered: of 2,000 new keys, each under its
     * limit, 64 get an exchange (the new keys' room) and one permit on credit each, the other
     * 1,936 are decided locally with the process's share (admitted, counted as saturated) and
     * charged by the keys' timers once Redis answers; a key already served still gets its refill out.
     */
    @Test
    void newKeysWithoutRoomForAnExchangeAreDecidedByTheShareAndChargedLater() throws Exception {
        RedisCommands<String, String> sync = adminConnection.sync();
        try (RedisLeaseStore store = RedisLeaseStore.builder(redis.uri())
                .timeout(Duration.ofSeconds(60))
                .build()) {
            // An hour's window: the served key's lease outlives however long the machine takes here.
            KeyedRateLimiter<String> limiter = KeyedRateLimiter.builder(
                            RateLimit.slidingWindow(1000, Duration.ofHours(1)), wheel)
                    .name("flood")
                    .sharedThrough(store)
                    .onStoreFailure(StoreFailurePolicy.REFUSE_ALL)
                    .build();
            Meters meters = Meters.of(limiter);
            for (int i = 0; i < 5; i++) {
                limiter.tryAcquire("served");
                meters.awaitAnswered();
            }
            // WRITE: the scripts wait, the admin's UNPAUSE does not.
            client(sync, "PAUSE", "60000", "WRITE");
            int admitted = 0;
            for (int i = 0; i < 2000; i++) {
                admitted += limiter.tryAcquire("new-" + i) == KeyedRateLimiter.ADMITTED ? 1 : 0;
            }
            assertEquals(2000, admitted, "demand under the limit is never refused for want of room");
            assertEquals(64, meters.exchangesOut());
            assertEquals(2000 - 64, meters.saturated());
            // The share still binds a key that has no room: 1,000 per hour, one taken above.
            int more = 0;
            while (limiter.tryAcquire("new-1999") == KeyedRateLimiter.ADMITTED) {
                more++;
            }
            assertEquals(999, more, "the rest of the share of a key decided locally");
            // The served key spends its lease, and its refill goes out beyond the new keys' room.
            for (int i = 0; i < 1000 && meters.exchangesOut() == 64; i++) {
                assertEquals(KeyedRateLimiter.ADMITTED, limiter.tryAcquire("served"), "request " + i);
            }
            assertEquals(65, meters.exchangesOut());
            client(sync, "UNPAUSE");
            // Every key's local admissions reach Redis: 2,000 keys, "served" and the epoch.
            long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
            while (sync.hlen(KEYS) < 2000 + 1 || !countIs(sync.hget(KEYS, "5:flood:s:new-1999"), 1000)) {
                assertTrue(System.nanoTime() - deadline < 0, "keys in Redis: " + sync.hlen(KEYS));
                Thread.sleep(10);
            }
            meters.awaitAnswered();
            assertEquals(0, meters.allFallbacks(), "never decided by the failure policy");
            assertEquals(KeyedRateLimiter.ADMITTED, limiter.tryAcquire("after-the-pause"));
            limiter.close();
        }
    }

    /**
     * A store at its maxPending (10 here), Redis paused: the 11th to 20th new keys' exchanges are
     * not sent (BUSY) and counted as saturated, the limiter stays on Redis, and once Redis answers
     * the keys' timers send what those exchanges carried: every key's charge reaches Redis.
     */
    @Test
    void aStoreAtItsMostExchangesOutDefersTheRestWithoutFailing() throws Exception {
        RedisCommands<String, String> sync = adminConnection.sync();
        try (RedisLeaseStore store = RedisLeaseStore.builder(redis.uri())
                .timeout(Duration.ofSeconds(60))
                .maxPending(10)
                .build()) {
            KeyedRateLimiter<String> limiter = KeyedRateLimiter.builder(
                            RateLimit.slidingWindow(1000, Duration.ofHours(1)), wheel)
                    .name("busy")
                    .sharedThrough(store)
                    .onStoreFailure(StoreFailurePolicy.REFUSE_ALL)
                    .build();
            Meters meters = Meters.of(limiter);
            client(sync, "PAUSE", "60000", "WRITE");
            for (int i = 0; i < 20; i++) {
                // Each admitted on its credit: the first ten sent, the other ten waiting to be.
                assertEquals(KeyedRateLimiter.ADMITTED, limiter.tryAcquire("key-" + i), "key " + i);
            }
            assertEquals(10, meters.exchangesOut());
            assertEquals(10, meters.saturated());
            client(sync, "UNPAUSE");
            long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(20);
            while (sync.hlen(KEYS) < 20) {
                assertTrue(System.nanoTime() - deadline < 0, "keys in Redis: " + sync.hkeys(KEYS));
                Thread.sleep(10);
            }
            meters.awaitAnswered();
            assertEquals(0, meters.allFallbacks(), "never decided by the failure policy");
            limiter.close();
        }
    }

    /** Whether a sliding window's state ('<end> <window> <count> ...') holds {@code count}. */
    private static boolean countIs(String state, long count) {
        return state != null && Long.parseLong(state.split(" ")[2]) == count;
    }

    private static void client(RedisCommands<String, String> sync, String... args) {
        sync.dispatch(
                CommandType.CLIENT,
                new StatusOutput<>(StringCodec.UTF8),
                new CommandArgs<>(StringCodec.UTF8).addValues(args));
    }

    /**
     * A flood of new keys from one thread while a well-behaved key, served before the flood,
     * uses 5% of its limit, under REFUSE_ALL: the well-behaved key is served, no exchange fails,
     * and the keys tracked stay within maxKeys however many arrive.
     */
    @Test
    void aFloodOfNewKeysLeavesAWellBehavedKeyServedAndTheLimiterOnRedis() throws Exception {
        // The backlog's bound is asserted on the exchanges out; the timeout only has to outlast a busy machine's
        // stalls (at load 8, an exchange outlasted 5 s once).
        try (RedisLeaseStore store = RedisLeaseStore.builder(redis.uri())
                .timeout(Duration.ofSeconds(60))
                .build()) {
            KeyedRateLimiter<String> limiter = KeyedRateLimiter.builder(
                            RateLimit.slidingWindow(10_000, Duration.ofSeconds(10)), wheel)
                    .name("flood")
                    .sharedThrough(store)
                    .maxKeys(20_000)
                    .onStoreFailure(StoreFailurePolicy.REFUSE_ALL)
                    .build();
            Meters meters = Meters.of(limiter);
            AtomicReference<Throwable> thrown = new AtomicReference<>();
            AtomicInteger goodRequests = new AtomicInteger();
            AtomicInteger goodRefused = new AtomicInteger();
            AtomicLong floodKeys = new AtomicLong();
            AtomicLong mostOut = new AtomicLong();
            for (int i = 0; i < 5; i++) {
                limiter.tryAcquire("well-behaved");
                meters.awaitAnswered();
            }
            Thread good = new Thread(
                    () -> {
                        try {
                            for (int i = 0; i < 100; i++) { // 50 a second: 5% of the limit
                                goodRequests.incrementAndGet();
                                if (limiter.tryAcquire("well-behaved") != KeyedRateLimiter.ADMITTED) {
                                    goodRefused.incrementAndGet();
                                }
                                Thread.sleep(20);
                            }
                        } catch (Throwable t) {
                            thrown.compareAndSet(null, t);
                        }
                    },
                    "well-behaved");
            Thread flood = new Thread(
                    () -> {
                        try {
                            while (good.isAlive()) {
                                for (int i = 0; i < 1000; i++) {
                                    limiter.tryAcquire("flood-" + floodKeys.getAndIncrement());
                                }
                                mostOut.accumulateAndGet((long) meters.exchangesOut(), Math::max);
                            }
                        } catch (Throwable t) {
                            thrown.compareAndSet(null, t);
                        }
                    },
                    "flood");
            good.start();
            flood.start();
            good.join();
            flood.join();
            meters.awaitAnswered();
            assertEquals(null, thrown.get());
            assertEquals(
                    0,
                    meters.allFallbacks(),
                    "the flood pushed the limiter into its failure policy (" + floodKeys.get() + " flood keys)");
            // Its refusals only wait for its refill, at most 64 new keys' exchanges ahead of it in
            // Redis's queue: a generous bound for a loaded machine (18 of 100 with load average 23).
            assertTrue(
                    goodRefused.get() <= goodRequests.get() / 2,
                    "the well-behaved key was refused " + goodRefused.get() + " of " + goodRequests.get() + " ("
                            + floodKeys.get() + " flood keys)");
            assertTrue(mostOut.get() <= 1024, "exchanges out: " + mostOut.get());
            assertTrue(limiter.activeKeys() <= 20_000, "keys tracked: " + limiter.activeKeys());
            System.out.printf(
                    "flood: %d new keys, %.0f decided locally as saturated, at most %d exchanges out,"
                            + " well-behaved key refused %d of %d%n",
                    floodKeys.get(), meters.saturated(), mostOut.get(), goodRefused.get(), goodRequests.get());
            limiter.close();
        }
    }
}
