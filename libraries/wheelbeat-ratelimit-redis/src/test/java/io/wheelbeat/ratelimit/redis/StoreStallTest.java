package io.wheelbeat.ratelimit.redis;

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
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A Redis stall ({@code DEBUG SLEEP}) under one process whose demand stays under its share: with
 * {@code FAIL_LOCAL}, {@code tryAcquire} never waits for Redis, so nothing is refused, neither
 * while the stall lasts nor after Redis wakes. The limiter runs in virtual time shared with the
 * scripts; only the stall is real, and the verdict does not depend on how long anything takes.
 */
class StoreStallTest {

    private static final long SECOND = TimeUnit.SECONDS.toNanos(1);
    private static final long MILLI = TimeUnit.MILLISECONDS.toNanos(1);
    private static final long WINDOW = 4 * SECOND;
    private static final long STEP = 12 * MILLI;

    private final ManualTicker clock = new ManualTicker(1000 * SECOND);
    private final long origin = clock.nanoTime();
    private final VirtualExecutor executor = new VirtualExecutor(clock);
    private final List<String> refusals = new ArrayList<>();

    @Test
    void demandUnderTheShareIsNeverRefusedThroughAStall() throws Exception {
        try (RedisProcess redis = new RedisProcess();
                RedisLeaseStore store = RedisLeaseStore.builder(redis.uri())
                        .timeout(Duration.ofMillis(250))
                        .sharedClock(clock, origin)
                        .build()) {
            ExecutorDrivenWheel wheel = Drivers.executorDriven(executor, new WheelSettings().ticker(clock));
            // 400 per 4 s, asked every 12 ms: 333 a window, 83% of the limit and of the share.
            KeyedRateLimiter<String> limiter = KeyedRateLimiter.builder(
                            RateLimit.slidingWindow(400, Duration.ofNanos(WINDOW)), wheel)
                    .name("stall")
                    .sharedThrough(store)
                    .processes(1)
                    .build();
            Meters meters = Meters.of(limiter);
            // Healthy: every exchange answered before time moves on.
            while (clock.nanoTime() - origin < WINDOW + SECOND) {
                ask(limiter);
                meters.awaitAnswered();
            }
            RedisClient client = RedisClient.create(redis.uri());
            try (StatefulRedisConnection<String, String> admin = client.connect()) {
                CompletableFuture<String> stall = admin.async()
                        .dispatch(
                                CommandType.DEBUG,
                                new StatusOutput<>(StringCodec.UTF8),
                                new CommandArgs<>(StringCodec.UTF8).add("SLEEP").add("0.6"))
                        .toCompletableFuture();
                // Stalled: time moves on about as fast as real time, and nothing waits for Redis.
                while (!stall.isDone()) {
                    ask(limiter);
                    Thread.sleep(STEP / MILLI);
                }
                stall.get();
            } finally {
                client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            }
            // Awake again: through the rest of this window and all of the next one.
            while (clock.nanoTime() - origin < 3 * WINDOW) {
                ask(limiter);
                meters.awaitAnswered();
            }
            assertTrue(refusals.isEmpty(), refusals.size() + " refused under the share: " + refusals);
            assertTrue(meters.fallbacks("timeout") > 0, "the stall was decided by the failure policy");
            limiter.close();
        }
    }

    private void ask(KeyedRateLimiter<String> limiter) {
        clock.advance(STEP, TimeUnit.NANOSECONDS);
        executor.runDue();
        long result = limiter.tryAcquire("k");
        if (result != KeyedRateLimiter.ADMITTED) {
            long at = clock.nanoTime() - origin;
            refusals.add("at " + at / MILLI + " ms (window " + at / WINDOW + ") retry " + result / 1000 + " us");
        }
    }
}
