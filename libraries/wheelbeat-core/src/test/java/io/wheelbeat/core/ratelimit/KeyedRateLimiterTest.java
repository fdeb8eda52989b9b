package io.wheelbeat.core.ratelimit;

import static io.wheelbeat.core.Allocations.steadyBytesAllocatedBy;
import static io.wheelbeat.core.ratelimit.VirtualWheel.MILLI;
import static io.wheelbeat.core.ratelimit.VirtualWheel.SECOND;
import static io.wheelbeat.core.ratelimit.VirtualWheel.TICK_SLACK;
import static io.wheelbeat.core.ratelimit.VirtualWheel.takeAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.wheelbeat.core.VirtualTimers;
import io.wheelbeat.core.WheelTimer;
import io.wheelbeat.core.internal.ManualTicker;
import io.wheelbeat.core.internal.WheelSettings;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Key tracking, eviction on the wheel, the key limit, metrics and bad input. */
class KeyedRateLimiterTest {

    private static final RateLimit TEN_PER_SECOND_WINDOW = RateLimit.slidingWindow(10, Duration.ofSeconds(1));
    private static final RateLimit TEN_PER_SECOND_BUCKET = RateLimit.tokenBucket(10, Duration.ofSeconds(1));

    private final VirtualWheel time = new VirtualWheel();

    // ---------------------------------------------------------------- eviction

    @Test
    void idleSlidingWindowKeysAreForgottenWithTheirTimers() {
        KeyedRateLimiter<Integer> limiter = time.limiter(TEN_PER_SECOND_WINDOW);
        for (int key = 0; key < 1000; key++) {
            limiter.tryAcquire(key);
        }
        assertEquals(1000, limiter.activeKeys());
        assertEquals(1000, time.pendingTimers());

        // Two windows after the window of the last use, the counts weigh nothing.
        assertAllForgottenAt(2 * SECOND, limiter, 1000);
    }

    @Test
    void refilledBucketKeysAreForgottenWithTheirTimers() {
        KeyedRateLimiter<Integer> limiter = time.limiter(TEN_PER_SECOND_BUCKET);
        for (int key = 0; key < 1000; key++) {
            assertEquals(10, takeAll(limiter, key));
        }
        assertAllForgottenAt(SECOND, limiter, 1000);
    }

    @Test
    void keyUsedSinceItsCheckWasArmedIsReArmedNotForgotten() {
        KeyedRateLimiter<String> limiter = time.limiter(TEN_PER_SECOND_WINDOW);
        limiter.tryAcquire("k");
        time.at(SECOND + SECOND / 2);
        limiter.tryAcquire("k");
        time.at(2 * SECOND + TICK_SLACK);
        assertEquals(1, limiter.activeKeys());
        assertEquals(1, time.pendingTimers());
        time.at(3 * SECOND + TICK_SLACK);
        assertEquals(0, limiter.activeKeys());
        assertEquals(0, time.pendingTimers());
    }

    @Test
    void acquiringAKnownKeySchedulesNoTimer() {
        KeyedRateLimiter<String> limiter = time.limiter(RateLimit.tokenBucket(1000, Duration.ofSeconds(1)));
        limiter.tryAcquire("k");
        long scheduled = time.wheel.scheduledCount();
        for (int i = 0; i < 5000; i++) {
            limiter.tryAcquire("k");
        }
        assertEquals(scheduled, time.wheel.scheduledCount());
    }

    @Test
    void acquiringAKnownKeyAllocatesNothingWhetherAdmittedOrRefused() {
        for (RateLimit limit : List.of(
                RateLimit.slidingWindow(100_000, Duration.ofSeconds(1)),
                RateLimit.tokenBucket(100_000, Duration.ofSeconds(1)))) {
            KeyedRateLimiter<String> limiter = time.limiter(limit);
            String key = "10.0.0.1";
            Runnable tenThousand = () -> {
                for (int i = 0; i < 10_000; i++) {
                    limiter.tryAcquire(key);
                }
            };
            assertEquals(0, steadyBytesAllocatedBy(tenThousand), limit + ", admitted");
            takeAll(limiter, key);
            assertEquals(0, steadyBytesAllocatedBy(tenThousand), limit + ", refused");
        }
    }

    @Test
    void steadyBucketKeyIsCheckedAtMostOncePerPeriod() {
        KeyedRateLimiter<String> limiter = time.limiter(RateLimit.tokenBucket(1000, Duration.ofSeconds(1), 1));
        long scheduled = time.wheel.scheduledCount();
        // One permit per refill interval for ten seconds: the bucket is never full at a check.
        for (long t = 0; t < 10 * SECOND; t += MILLI) {
            time.at(t);
            assertEquals(KeyedRateLimiter.ADMITTED, limiter.tryAcquire("k"));
        }
        long checks = time.wheel.scheduledCount() - scheduled;
        assertTrue(checks <= 11, "eviction checks armed: " + checks);
        assertEquals(1, limiter.activeKeys());
    }

    @Test
    void evictionNeverChangesADecision() {
        for (RateLimit limit : List.of(TEN_PER_SECOND_WINDOW, RateLimit.tokenBucket(10, Duration.ofSeconds(1), 4))) {
            VirtualWheel evicting = new VirtualWheel();
            VirtualWheel neverEvicting = new VirtualWheel();
            KeyedRateLimiter<Integer> forgetful = evicting.limiter(limit);
            KeyedRateLimiter<Integer> reference = neverEvicting.limiter(limit);
            Random random = new Random(42);
            long now = 0;
            for (int step = 0; step < 20_000; step++) {
                now += random.nextInt(4) == 0 ? random.nextLong(3 * SECOND) : random.nextLong(50 * MILLI);
                evicting.at(now);
                neverEvicting.moveClock(now);
                int key = random.nextInt(5);
                int permits = 1 + random.nextInt(3);
                assertEquals(
                        reference.tryAcquire(key, permits),
                        forgetful.tryAcquire(key, permits),
                        limit + ", step " + step + " at " + now);
            }
            assertTrue(forgetful.evictedIdleCount() > 100, "evictions happened: " + limit);
            assertEquals(0, neverEvicting.wheel.expiredCount());
        }
    }

    // ---------------------------------------------------------------- the key limit

    @Test
    void rejectNewKeysRefusesNewcomersAndServesKnownKeys() {
        KeyedRateLimiter<String> limiter = KeyedRateLimiter.builder(TEN_PER_SECOND_WINDOW, time.wheel)
                .maxKeys(2)
                .whenFull(KeyLimitPolicy.REJECT_NEW_KEYS)
                .<String>build();
        assertEquals(KeyedRateLimiter.ADMITTED, limiter.tryAcquire("a"));
        assertEquals(KeyedRateLimiter.ADMITTED, limiter.tryAcquire("b"));
        assertEquals(KeyedRateLimiter.KEY_LIMIT_REACHED, limiter.tryAcquire("c"));
        assertEquals(9, takeAll(limiter, "a"));
        assertEquals(2, limiter.activeKeys());
        assertEquals(1, limiter.keyLimitRejectedCount());
    }

    @Test
    void rejectNewKeysAdmitsNewcomersOnceKnownKeysAreForgotten() {
        KeyedRateLimiter<String> limiter = KeyedRateLimiter.builder(TEN_PER_SECOND_WINDOW, time.wheel)
                .maxKeys(1)
                .whenFull(KeyLimitPolicy.REJECT_NEW_KEYS)
                .<String>build();
        limiter.tryAcquire("a");
        assertEquals(KeyedRateLimiter.KEY_LIMIT_REACHED, limiter.tryAcquire("b"));
        time.at(2 * SECOND + TICK_SLACK);
        assertEquals(KeyedRateLimiter.ADMITTED, limiter.tryAcquire("b"));
    }

    @Test
    void evictLeastRecentForgetsTheOldestUnusedKey() {
        KeyedRateLimiter<String> limiter = evictingLimiter(3);
        admitEach(limiter, "a", "b", "c");
        assertEquals(KeyedRateLimiter.ADMITTED, limiter.tryAcquire("d"));
        assertEquals(3, limiter.activeKeys());
        // b and c are still limited; a was forgotten and starts afresh.
        assertTrue(limiter.tryAcquire("b") > 0);
        assertTrue(limiter.tryAcquire("c") > 0);
        assertEquals(KeyedRateLimiter.ADMITTED, limiter.tryAcquire("a"));
    }

    @Test
    void evictLeastRecentGivesAKeyUsedSinceASecondChance() {
        KeyedRateLimiter<String> limiter = evictingLimiter(3);
        admitEach(limiter, "a", "b", "c");
        limiter.tryAcquire("a"); // refused, but used: a is now more recent than b
        assertEquals(KeyedRateLimiter.ADMITTED, limiter.tryAcquire("d"));
        assertTrue(limiter.tryAcquire("a") > 0);
        assertTrue(limiter.tryAcquire("c") > 0);
        assertEquals(KeyedRateLimiter.ADMITTED, limiter.tryAcquire("b"));
    }

    @Test
    void evictLeastRecentCancelsTheForgottenKeysTimer() {
        KeyedRateLimiter<Integer> limiter = evictingLimiter(100);
        for (int key = 0; key < 10_000; key++) {
            assertEquals(KeyedRateLimiter.ADMITTED, limiter.tryAcquire(key));
        }
        assertEquals(100, limiter.activeKeys());
        assertEquals(100, time.pendingTimers());
        assertEquals(9_900, limiter.evictedForRoomCount());
    }

    @Test
    void keysBeyondTheWheelsTimerLimitAreRefused() {
        VirtualWheel small = new VirtualWheel(new WheelSettings().maxPendingTimers(2));
        KeyedRateLimiter<String> limiter = small.limiter(TEN_PER_SECOND_WINDOW);
        assertEquals(KeyedRateLimiter.ADMITTED, limiter.tryAcquire("a"));
        assertEquals(KeyedRateLimiter.ADMITTED, limiter.tryAcquire("b"));
        assertEquals(KeyedRateLimiter.KEY_LIMIT_REACHED, limiter.tryAcquire("c"));
        assertEquals(2, limiter.activeKeys());
    }

    // ---------------------------------------------------------------- bad input, lifecycle

    @Test
    void nullKeyIsAnError() {
        KeyedRateLimiter<String> limiter = time.limiter(TEN_PER_SECOND_WINDOW);
        assertThrows(NullPointerException.class, () -> limiter.tryAcquire(null));
        assertEquals(0, limiter.activeKeys());
    }

    @Test
    void invalidSettingsAreRefused() {
        KeyedRateLimiter.Builder builder = KeyedRateLimiter.builder(TEN_PER_SECOND_WINDOW, time.wheel);
        assertThrows(IllegalArgumentException.class, () -> builder.maxKeys(0));
        assertThrows(IllegalArgumentException.class, () -> builder.name(" "));
        assertThrows(NullPointerException.class, () -> builder.whenFull(null));
        assertThrows(NullPointerException.class, () -> KeyedRateLimiter.builder(null, time.wheel));
        assertThrows(NullPointerException.class, () -> KeyedRateLimiter.builder(TEN_PER_SECOND_WINDOW, null));
    }

    @Test
    void closeForgetsEveryKeyCancelsItsTimersAndRefusesFurtherUse() {
        KeyedRateLimiter<Integer> limiter = time.limiter(TEN_PER_SECOND_WINDOW);
        for (int key = 0; key < 50; key++) {
            limiter.tryAcquire(key);
        }
        limiter.close();
        assertEquals(0, limiter.activeKeys());
        assertEquals(0, time.pendingTimers());
        assertThrows(IllegalStateException.class, () -> limiter.tryAcquire(1));
        limiter.close();
    }

    @Test
    void metricsCountDecisionsAndKeysTaggedByLimiterNameOnly() {
        KeyedRateLimiter<String> limiter = KeyedRateLimiter.builder(
                        RateLimit.slidingWindow(2, Duration.ofSeconds(1)), time.wheel)
                .name("logins")
                .maxKeys(2)
                .whenFull(KeyLimitPolicy.REJECT_NEW_KEYS)
                .<String>build();
        MeterRegistry registry = new SimpleMeterRegistry();
        new KeyedRateLimiterMetrics(limiter).bindTo(registry);
        takeAll(limiter, "a");
        takeAll(limiter, "b");
        limiter.tryAcquire("c");

        assertEquals(
                4,
                registry.get("wheelbeat.ratelimit.admitted")
                        .tag("limiter", "logins")
                        .functionCounter()
                        .count());
        assertEquals(
                2,
                registry.get("wheelbeat.ratelimit.rejected")
                        .tag("reason", "rate")
                        .functionCounter()
                        .count());
        assertEquals(
                1,
                registry.get("wheelbeat.ratelimit.rejected")
                        .tag("reason", "key_limit")
                        .functionCounter()
                        .count());
        assertEquals(2, registry.get("wheelbeat.ratelimit.keys").gauge().value());
        time.at(2 * SECOND + TICK_SLACK);
        assertEquals(
                2,
                registry.get("wheelbeat.ratelimit.evicted")
                        .tag("cause", "idle")
                        .functionCounter()
                        .count());
        assertEquals(0, registry.get("wheelbeat.ratelimit.keys").gauge().value());
        registry.getMeters()
                .forEach(meter -> meter.getId()
                        .getTags()
                        .forEach(tag -> assertTrue(
                                List.of("limiter", "reason", "cause").contains(tag.getKey()),
                                meter.getId().toString())));
    }

    @Test
    void limiterOnAWheelTimerForgetsKeysWhenVirtualTimeAdvances() throws InterruptedException {
        ManualTicker ticker = new ManualTicker();
        WheelTimer timer = VirtualTimers.wheelTimer(ticker, WheelTimer.builder());
        try {
            KeyedRateLimiter<Integer> limiter =
                    KeyedRateLimiter.builder(TEN_PER_SECOND_BUCKET, timer).<Integer>build();
            for (int key = 0; key < 100; key++) {
                assertEquals(KeyedRateLimiter.ADMITTED, limiter.tryAcquire(key));
            }
            ticker.advance(2, TimeUnit.SECONDS);
            // The timer thread runs the checks; wait for it with a generous bound, never timing it.
            long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while ((limiter.activeKeys() > 0 || timer.pendingTimers() > 0) && System.nanoTime() < giveUp) {
                Thread.sleep(1);
            }
            assertEquals(0, limiter.activeKeys());
            assertEquals(0, timer.pendingTimers());
        } finally {
            timer.stop();
        }
    }

    /** All {@code keys} are still tracked just before {@code idleAt}; then none, nor their timers. */
    private void assertAllForgottenAt(long idleAt, KeyedRateLimiter<?> limiter, int keys) {
        time.at(idleAt - MILLI);
        assertEquals(keys, limiter.activeKeys());
        assertEquals(keys, time.pendingTimers());
        time.at(idleAt + TICK_SLACK);
        assertEquals(0, limiter.activeKeys());
        assertEquals(0, time.pendingTimers());
    }

    private static void admitEach(KeyedRateLimiter<String> limiter, String... keys) {
        for (String key : keys) {
            assertEquals(KeyedRateLimiter.ADMITTED, limiter.tryAcquire(key), key);
        }
    }

    private <K> KeyedRateLimiter<K> evictingLimiter(int maxKeys) {
        return KeyedRateLimiter.builder(RateLimit.slidingWindow(1, Duration.ofSeconds(1)), time.wheel)
                .maxKeys(maxKeys)
                .whenFull(KeyLimitPolicy.EVICT_LEAST_RECENT)
                .build();
    }
}
