package io.wheelbeat.ratelimit.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import io.wheelbeat.core.ExecutorDrivenWheel;
import io.wheelbeat.core.VirtualExecutor;
import io.wheelbeat.core.internal.Drivers;
import io.wheelbeat.core.internal.ManualTicker;
import io.wheelbeat.core.internal.WheelSettings;
import io.wheelbeat.core.ratelimit.KeyedRateLimiter;
import io.wheelbeat.core.ratelimit.RateLimit;
import io.wheelbeat.core.ratelimit.StoreFailurePolicy;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A process that starts while Redis is slow, down, or has lost its state. Limiters in virtual
 * time; Redis, its stalls and its absence are real, and no verdict depends on how long they take.
 */
class StoreStartTest {

    private static final long SECOND = TimeUnit.SECONDS.toNanos(1);
    private static final long MILLI = TimeUnit.MILLISECONDS.toNanos(1);

    private final ManualTicker clock = new ManualTicker(1000 * SECOND);
    private final long origin = clock.nanoTime();

    private KeyedRateLimiter<String> limiter(
            RedisLeaseStore store, RateLimit limit, StoreFailurePolicy policy, VirtualExecutor executor) {
        ExecutorDrivenWheel wheel = Drivers.executorDriven(executor, new WheelSettings().ticker(clock));
        return KeyedRateLimiter.builder(limit, wheel)
                .name("start")
                .sharedThrough(store)
                .processes(2)
                .onStoreFailure(policy)
                .build();
    }

    private static void await(String what, java.util.function.BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!condition.getAsBoolean()) {
            assertTrue(System.nanoTime() - deadline < 0, "never: " + what);
            Thread.sleep(5);
        }
    }

    /** The handshake is bounded by the connect timeout, not by the (shorter) command timeout. */
    @Test
    void aSlowRedisAtStartIsWaitedForUpToTheConnectTimeout() throws Exception {
        try (RedisProcess redis = new RedisProcess()) {
            RedisClient client = RedisClient.create(redis.uri());
            try (StatefulRedisConnection<String, String> admin = client.connect()) {
                CompletableFuture<String> stall = admin.async()
                        .dispatch(
                                CommandType.DEBUG,
                                new StatusOutput<>(StringCodec.UTF8),
                                new CommandArgs<>(StringCodec.UTF8).add("SLEEP").add("0.6"))
                        .toCompletableFuture();
                try (RedisLeaseStore store = RedisLeaseStore.builder(redis.uri())
                        .timeout(Duration.ofMillis(100))
                        .connectTimeout(Duration.ofSeconds(30))
                        .failIfUnreachable(true)
                        .build()) {
                    assertTrue(stall.isDone(), "built only once Redis answered");
                    assertFalse(store.failing());
                }
            } finally {
                client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            }
        }
    }

    /**
     * Redis down at start: the store is built, failing, the limiter decides by its policy; once
     * Redis listens, the store connects on its own and shared decisions begin.
     */
    @Test
    void aProcessStartsWithRedisDownDecidesByItsPolicyAndSharesOnceRedisAnswers() throws Exception {
        int port = RedisProcess.freePort();
        VirtualExecutor executor = new VirtualExecutor(clock);
        try (RedisLeaseStore store = RedisLeaseStore.builder("redis://127.0.0.1:" + port)
                .connectTimeout(Duration.ofMillis(500))
                .sharedClock(clock, origin)
                .build()) {
            assertTrue(store.failing(), "not connected");
            KeyedRateLimiter<String> limiter = limiter(
                    store,
                    RateLimit.slidingWindow(10, Duration.ofSeconds(100)),
                    StoreFailurePolicy.FAIL_LOCAL,
                    executor);
            Meters meters = Meters.of(limiter);
            // Fail-local: this process's share, 10 / 2 = 5 a window (and the first on credit).
            int admitted = 0;
            for (int i = 0; i < 10; i++) {
                admitted += limiter.tryAcquire("down") == KeyedRateLimiter.ADMITTED ? 1 : 0;
            }
            assertTrue(admitted >= 5 && admitted <= 6, "admitted " + admitted);
            assertTrue(meters.fallbacks("unavailable") >= 9, "decided by the policy");
            try (RedisProcess redis = RedisProcess.on(port)) {
                await("connected", () -> !store.failing());
                // The limiter's probe (500 ms of virtual time) finds Redis answering.
                await("shared again", () -> {
                    clock.advance(100, TimeUnit.MILLISECONDS);
                    executor.runDue();
                    long before = (long) meters.allFallbacks();
                    limiter.tryAcquire("fresh-" + System.nanoTime());
                    return meters.allFallbacks() == before;
                });
                limiter.close();
            }
        }
    }

    /**
     * Redis loses its state, then a new process is the first to use a key: it finds no epoch and
     * marks the loss, so the key is taken as full for the rest of the window instead of counting
     * afresh (the old process has not noticed yet).
     */
    @Test
    void aProcessStartingAfterALossMarksIt() throws Exception {
        try (RedisProcess redis = new RedisProcess()) {
            RateLimit limit = RateLimit.slidingWindow(100, Duration.ofSeconds(4));
            VirtualExecutor first = new VirtualExecutor(clock);
            VirtualExecutor second = new VirtualExecutor(clock);
            clock.advance(SECOND, TimeUnit.NANOSECONDS);
            try (RedisLeaseStore old = RedisLeaseStore.builder(redis.uri())
                    .sharedClock(clock, origin)
                    .build()) {
                KeyedRateLimiter<String> before = limiter(old, limit, StoreFailurePolicy.REFUSE_ALL, first);
                Meters meters = Meters.of(before);
                int admitted = 0;
                for (int i = 0; i < 100; i++) {
                    admitted += before.tryAcquire("k") == KeyedRateLimiter.ADMITTED ? 1 : 0;
                    meters.awaitAnswered();
                    clock.advance(10, TimeUnit.MILLISECONDS);
                }
                assertTrue(admitted >= 50, "the old process used the key: " + admitted);
                redis.flushAll();
                try (RedisLeaseStore fresh = RedisLeaseStore.builder(redis.uri())
                        .sharedClock(clock, origin)
                        .build()) {
                    KeyedRateLimiter<String> after = limiter(fresh, limit, StoreFailurePolicy.REFUSE_ALL, second);
                    Meters afterMeters = Meters.of(after);
                    int newlyAdmitted = 0;
                    for (int i = 0; i < 50; i++) {
                        newlyAdmitted += after.tryAcquire("k") == KeyedRateLimiter.ADMITTED ? 1 : 0;
                        afterMeters.awaitAnswered();
                        clock.advance(10, TimeUnit.MILLISECONDS);
                    }
                    assertEquals(0, afterMeters.allFallbacks());
                    assertTrue(
                            newlyAdmitted <= 1,
                            "admitted " + newlyAdmitted + " beyond its credit in the window" + " of the loss");
                    after.close();
                }
                before.close();
            }
        }
    }
}
