package io.wheelbeat.ratelimit.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.wheelbeat.core.ExecutorDrivenWheel;
import io.wheelbeat.core.VirtualExecutor;
import io.wheelbeat.core.internal.Drivers;
import io.wheelbeat.core.internal.ManualTicker;
import io.wheelbeat.core.internal.WheelSettings;
import io.wheelbeat.core.ratelimit.KeyedRateLimiter;
import io.wheelbeat.core.ratelimit.RateLimit;
import io.wheelbeat.core.ratelimit.StoreFailurePolicy;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Key states are fields of one hash: a field past its end (a sliding window two windows after its
 * window starts) is deleted by the sweep of later calls, and fields still in use are kept. In
 * virtual time shared with the script.
 */
class StoreSweepTest {

    private static final String KEYS = "wheelbeat:rl:keys";
    private static final String FIELD_PREFIX = "5:sweep:s:";

    @Test
    void fieldsPastTheirEndAreSweptAndLiveOnesKept() throws Exception {
        ManualTicker clock = new ManualTicker(1_000_000_000_000L);
        VirtualExecutor executor = new VirtualExecutor(clock);
        ExecutorDrivenWheel wheel = Drivers.executorDriven(executor, new WheelSettings().ticker(clock));
        RedisClient admin = null;
        try (RedisProcess redis = new RedisProcess();
                RedisLeaseStore store = RedisLeaseStore.builder(redis.uri())
                        .sharedClock(clock, clock.nanoTime())
                        .build()) {
            admin = RedisClient.create(redis.uri());
            StatefulRedisConnection<String, String> connection = admin.connect();
            KeyedRateLimiter<String> limiter = KeyedRateLimiter.builder(
                            RateLimit.slidingWindow(10, Duration.ofSeconds(1)), wheel)
                    .name("sweep")
                    .sharedThrough(store)
                    .build();
            Meters meters = Meters.of(limiter);
            for (int i = 0; i < 300; i++) {
                assertEquals(KeyedRateLimiter.ADMITTED, limiter.tryAcquire("old-" + i));
                meters.awaitAnswered();
            }
            assertEquals(300, fields(connection, "old-"));
            // Three windows later every old field weighs nothing; the keys' timers forget them here.
            for (int ms = 0; ms < 3000; ms += 10) {
                clock.advance(10, TimeUnit.MILLISECONDS);
                executor.runDue();
            }
            meters.awaitAnswered();
            // One call per new key, each sweeping a few fields more than it writes.
            for (int i = 0; i < 200; i++) {
                assertEquals(KeyedRateLimiter.ADMITTED, limiter.tryAcquire("new-" + i));
                meters.awaitAnswered();
            }
            assertEquals(0, fields(connection, "old-"), "stale fields left");
            assertEquals(200, fields(connection, "new-"), "live fields kept");
            assertTrue(connection.sync().pttl(KEYS) > 0, "the hash expires with its latest field");
            limiter.close();
        } finally {
            if (admin != null) {
                admin.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            }
        }
    }

    /**
     * A virtual clock stands still while Redis's runs (here 0.5 s, more than twice the state's life on
     * the clock): the key's count outlives it, so a second process asking later in the same window
     * is held to the bound. Redis expires on its own clock, which a virtual one does not follow.
     */
    @Test
    void countsOutliveRealTimeWhileTheSharedClockStandsStill() throws Exception {
        ManualTicker clock = new ManualTicker(1_000_000_000_000L);
        long origin = clock.nanoTime();
        VirtualExecutor executor = new VirtualExecutor(clock);
        ExecutorDrivenWheel wheel = Drivers.executorDriven(executor, new WheelSettings().ticker(clock));
        try (RedisProcess redis = new RedisProcess();
                RedisLeaseStore store = RedisLeaseStore.builder(redis.uri())
                        .sharedClock(clock, origin)
                        .build()) {
            RateLimit limit = RateLimit.slidingWindow(10, Duration.ofMillis(100));
            // Past the first window, which a Redis never used before takes as after a loss.
            clock.advance(1, TimeUnit.SECONDS);
            executor.runDue();
            int admitted = 0;
            for (int process = 0; process < 2; process++) {
                KeyedRateLimiter<String> limiter = KeyedRateLimiter.builder(limit, wheel)
                        .name("stall")
                        .sharedThrough(store)
                        .processes(2)
                        .onStoreFailure(StoreFailurePolicy.REFUSE_ALL)
                        .build();
                Meters meters = Meters.of(limiter);
                for (int i = 0; i < 30; i++) {
                    if (limiter.tryAcquire("k") == KeyedRateLimiter.ADMITTED) {
                        admitted++;
                    }
                    meters.awaitAnswered();
                }
                assertEquals(0, meters.allFallbacks(), "every decision shared");
                limiter.close();
                if (process == 0) {
                    Thread.sleep(500);
                }
            }
            // permits + N x D: 10 + 2 x 1.
            assertTrue(admitted <= 12, "admitted " + admitted + " in one window of 10");
            assertTrue(admitted >= 10, "admitted " + admitted);
        }
    }

    private static long fields(StatefulRedisConnection<String, String> connection, String prefix) {
        List<String> names = connection.sync().hkeys(KEYS);
        return names.stream().filter(f -> f.startsWith(FIELD_PREFIX + prefix)).count();
    }
}
