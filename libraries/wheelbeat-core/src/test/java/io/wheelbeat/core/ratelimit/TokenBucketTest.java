package io.wheelbeat.core.ratelimit;

import static io.wheelbeat.core.ratelimit.VirtualWheel.MILLI;
import static io.wheelbeat.core.ratelimit.VirtualWheel.SECOND;
import static io.wheelbeat.core.ratelimit.VirtualWheel.takeAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The token bucket (GCRA): 10 permits per second, one every 100 ms, unless told otherwise. */
class TokenBucketTest {

    private static final long INTERVAL = 100 * MILLI;

    private final VirtualWheel time = new VirtualWheel();
    private final KeyedRateLimiter<String> limiter = time.limiter(RateLimit.tokenBucket(10, Duration.ofSeconds(1)));

    @Test
    void fullBucketAdmitsItsBurstAtOnce() {
        assertEquals(10, takeAll(limiter, "k"));
    }

    @Test
    void emptyBucketTellsWhenTheNextTokenArrives() {
        assertEquals(10, takeAll(limiter, "k"));
        assertEquals(INTERVAL, limiter.tryAcquire("k"));
    }

    @Test
    void refillsExactlyOneTokenPerInterval() {
        assertEquals(10, takeAll(limiter, "k"));
        time.at(INTERVAL - 1);
        assertEquals(1, limiter.tryAcquire("k"));
        time.at(INTERVAL);
        assertEquals(1, takeAll(limiter, "k"));
        time.at(INTERVAL + 3 * INTERVAL);
        assertEquals(3, takeAll(limiter, "k"));
    }

    @Test
    void longIdleNeverFillsTheBucketBeyondItsBurst() {
        assertEquals(10, takeAll(limiter, "k"));
        time.at(3600 * SECOND);
        assertEquals(10, takeAll(limiter, "k"));
    }

    @Test
    void burstLargerThanTheRateIsAdmittedAtOnce() {
        KeyedRateLimiter<String> bursty = time.limiter(RateLimit.tokenBucket(10, Duration.ofSeconds(1), 25));
        assertEquals(25, takeAll(bursty, "k"));
        time.at(SECOND);
        assertEquals(10, takeAll(bursty, "k"));
    }

    @Test
    void burstOfOneSpacesEveryPermitByTheInterval() {
        KeyedRateLimiter<String> smooth = time.limiter(RateLimit.tokenBucket(10, Duration.ofSeconds(1), 1));
        assertEquals(1, takeAll(smooth, "k"));
        time.at(INTERVAL - 1);
        assertEquals(0, takeAll(smooth, "k"));
        time.at(INTERVAL);
        assertEquals(1, takeAll(smooth, "k"));
    }

    @Test
    void oddIntervalIsRoundedUpSoTheRateIsNeverExceeded() {
        KeyedRateLimiter<String> thirds = time.limiter(RateLimit.tokenBucket(3, Duration.ofSeconds(1), 1));
        assertEquals(1, takeAll(thirds, "k"));
        time.at(333_333_333);
        assertEquals(1, thirds.tryAcquire("k"));
        time.at(333_333_334);
        assertEquals(1, takeAll(thirds, "k"));
    }

    @Test
    void severalPermitsAreTakenAllOrNothing() {
        assertEquals(KeyedRateLimiter.ADMITTED, limiter.tryAcquire("k", 7));
        assertEquals(2 * INTERVAL, limiter.tryAcquire("k", 5));
        assertEquals(3, takeAll(limiter, "k"));
    }

    @Test
    void asksForMoreThanTheBurstAreAnError() {
        assertThrows(IllegalArgumentException.class, () -> limiter.tryAcquire("k", 11));
        assertThrows(IllegalArgumentException.class, () -> limiter.tryAcquire("k", 0));
        assertEquals(10, takeAll(limiter, "k"));
    }

    @Test
    void invalidBucketsAreRefusedWithAClearError() {
        assertThrows(IllegalArgumentException.class, () -> RateLimit.tokenBucket(0, Duration.ofSeconds(1)));
        assertThrows(IllegalArgumentException.class, () -> RateLimit.tokenBucket(10, Duration.ofSeconds(1), 0));
        assertThrows(IllegalArgumentException.class, () -> RateLimit.tokenBucket(10, Duration.ZERO));
        assertThrows(IllegalArgumentException.class, () -> RateLimit.tokenBucket(10, Duration.ofNanos(9)));
        assertThrows(
                IllegalArgumentException.class,
                () -> RateLimit.tokenBucket(1, Duration.ofDays(365), Long.MAX_VALUE / 2));
        assertThrows(NullPointerException.class, () -> RateLimit.tokenBucket(10, null));
    }
}
