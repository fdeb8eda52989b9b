package io.wheelbeat.ratelimit.redis;

import static io.wheelbeat.core.Allocations.steadyBytesAllocatedBy;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.wheelbeat.core.ExecutorDrivenWheel;
import io.wheelbeat.core.VirtualExecutor;
import io.wheelbeat.core.internal.Drivers;
import io.wheelbeat.core.internal.ManualTicker;
import io.wheelbeat.core.internal.WheelSettings;
import io.wheelbeat.core.ratelimit.KeyedRateLimiter;
import io.wheelbeat.core.ratelimit.KeyedRateLimiterMetrics;
import io.wheelbeat.core.ratelimit.RateLimit;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** A known key in cluster mode is decided locally: no round trip and no allocation per request. */
class HotPathTest {

    @Test
    void aKnownKeySpendsItsLeaseWithoutAllocatingOrTalkingToRedis() throws Exception {
        ManualTicker clock = new ManualTicker(-7_000_000_000L);
        VirtualExecutor executor = new VirtualExecutor(clock);
        ExecutorDrivenWheel wheel = Drivers.executorDriven(executor, new WheelSettings().ticker(clock));
        try (RedisProcess redis = new RedisProcess();
                RedisLeaseStore store = RedisLeaseStore.builder(redis.uri())
                        .sharedClock(clock, clock.nanoTime())
                        .build()) {
            KeyedRateLimiter<String> limiter = KeyedRateLimiter.builder(
                            RateLimit.slidingWindow(1_000_000, Duration.ofHours(1)), wheel)
                    .name("hot")
                    .sharedThrough(store)
                    .build();
            MeterRegistry meters = new SimpleMeterRegistry();
            new KeyedRateLimiterMetrics(limiter).bindTo(meters);
            String key = "10.0.0.1";
            // A thousand a virtual millisecond: the lease grows to the rate's 100 ms, about 100,000.
            for (int round = 0; round < 200; round++) {
                for (int i = 0; i < 1000; i++) {
                    limiter.tryAcquire(key);
                }
                clock.advance(1, java.util.concurrent.TimeUnit.MILLISECONDS);
                executor.runDue();
                Thread.sleep(1);
            }
            // A refill still in flight when the measuring starts would be drawn again inside it: on a busy
            // machine the last rounds' answers can lag, so let every answer land first (virtual time stands).
            long settleUntil = System.nanoTime() + 10_000_000_000L;
            while (meters.get("wheelbeat.ratelimit.store.exchanges").gauge().value() > 0
                    && System.nanoTime() - settleUntil < 0) {
                executor.runDue();
                Thread.sleep(1);
            }
            executor.runDue();
            double trips = meters.get("wheelbeat.ratelimit.store.round.trips")
                    .functionCounter()
                    .count();
            Runnable thousand = () -> {
                for (int i = 0; i < 1000; i++) {
                    if (limiter.tryAcquire(key) != KeyedRateLimiter.ADMITTED) {
                        throw new AssertionError("refused");
                    }
                }
            };
            assertEquals(0, steadyBytesAllocatedBy(thousand));
            double tripsAfter = meters.get("wheelbeat.ratelimit.store.round.trips")
                    .functionCounter()
                    .count();
            // 5,000 admitted on at most a couple of refills drawn ahead of need.
            assertTrue(tripsAfter - trips <= 2, "round trips " + (tripsAfter - trips));
            limiter.close();
        }
    }
}
