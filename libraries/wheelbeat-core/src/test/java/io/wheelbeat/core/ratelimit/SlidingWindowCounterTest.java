package io.wheelbeat.core.ratelimit;

import static io.wheelbeat.core.ratelimit.VirtualWheel.SECOND;
import static io.wheelbeat.core.ratelimit.VirtualWheel.takeAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The sliding-window counter at and around window edges: 10 permits per 1 s window. */
class SlidingWindowCounterTest {

    private static final long W = SECOND;

    private final VirtualWheel time = new VirtualWheel();
    private final KeyedRateLimiter<String> limiter = time.limiter(RateLimit.slidingWindow(10, Duration.ofSeconds(1)));

    @Test
    void admitsExactlyThePermitsOfOneWindow() {
        assertEquals(10, takeAll(limiter, "k"));
    }

    @Test
    void lastNanosecondOfAWindowCountsInThatWindow() {
        time.at(W - 1);
        assertEquals(10, takeAll(limiter, "k"));
        time.at(W);
        // The previous window weighs fully at the first instant of the next one.
        assertEquals(0, takeAll(limiter, "k"));
    }

    @Test
    void previousWindowWeighsByItsUnexpiredFraction() {
        assertEquals(10, takeAll(limiter, "k"));
        time.at(W + 3 * W / 10);
        // 10 x 0.7 = 7 still count: 3 more fit.
        assertEquals(3, takeAll(limiter, "k"));
    }

    @Test
    void oneNanosecondBeforeTheWeightDropsOneFewerIsAdmitted() {
        assertEquals(10, takeAll(limiter, "k"));
        time.at(W + 3 * W / 10 - 1);
        assertEquals(2, takeAll(limiter, "k"));
    }

    @Test
    void fullWindowThenNothingUntilTheWeightAllowsOne() {
        assertEquals(10, takeAll(limiter, "k"));
        // One permit needs the previous window's weight down to 9: 0.1 s into the next window.
        assertEquals(W + W / 10, limiter.tryAcquire("k"));
        time.at(W + W / 10 - 1);
        assertEquals(1, limiter.tryAcquire("k"));
        time.at(W + W / 10);
        assertEquals(KeyedRateLimiter.ADMITTED, limiter.tryAcquire("k"));
    }

    @Test
    void refusalInsideAWindowTellsWhenThePreviousWeightHasShrunkEnough() {
        assertEquals(10, takeAll(limiter, "k"));
        time.at(W + 3 * W / 10);
        assertEquals(3, takeAll(limiter, "k"));
        // 3 taken now, 1 asked: the previous 10 must weigh 6 at most, so 0.4 s into the window.
        long wait = limiter.tryAcquire("k");
        assertEquals(W / 10, wait);
        time.at(W + 4 * W / 10);
        assertEquals(KeyedRateLimiter.ADMITTED, limiter.tryAcquire("k"));
    }

    @Test
    void requestLargerThanTheRoomLeftWaitsForTheNextWindow() {
        assertEquals(KeyedRateLimiter.ADMITTED, limiter.tryAcquire("k", 8));
        // 8 + 5 > 10 in this window; in the next, 8 x (1 - e) + 5 <= 10 from e = 3/8 of it.
        assertEquals(W + 3 * W / 8, limiter.tryAcquire("k", 5));
        time.at(W + 3 * W / 8);
        assertEquals(KeyedRateLimiter.ADMITTED, limiter.tryAcquire("k", 5));
    }

    @Test
    void aFullWindowBeforeTheLastOneWeighsNothing() {
        assertEquals(10, takeAll(limiter, "k"));
        time.at(2 * W);
        assertEquals(10, takeAll(limiter, "k"));
    }

    @Test
    void noFixedWindowEverHoldsMoreThanThePermits() {
        List<Integer> perWindow = new ArrayList<>();
        for (int window = 0; window < 6; window++) {
            int admitted = 0;
            for (int step = 0; step < 20; step++) {
                time.at(window * W + step * W / 20);
                admitted += takeAll(limiter, "k");
            }
            perWindow.add(admitted);
        }
        // Greedy takers every 1/20 window: the first window fills up; after it, the previous
        // window still weighs 9 x 1/20 at the last step, so each window settles at 9.
        assertEquals(List.of(10, 9, 9, 9, 9, 9), perWindow);
    }

    @Test
    void severalPermitsAreTakenAllOrNothing() {
        assertEquals(KeyedRateLimiter.ADMITTED, limiter.tryAcquire("k", 7));
        // 7 x (1 - e) + 5 <= 10 from e = 2/7 of the next window, rounded up to a nanosecond.
        assertEquals(W + (2 * W + 6) / 7, limiter.tryAcquire("k", 5));
        assertEquals(3, takeAll(limiter, "k"));
    }

    @Test
    void requestReadingAnEarlierClockThanTheStateCountsInTheStatesWindow() {
        // Threads read the clock before their compare-and-set: one may meet a state written by a
        // thread that read a later clock, in the next window. It must not take it for an old one.
        RateLimit limit = RateLimit.slidingWindow(10, Duration.ofSeconds(1));
        long full = limit.next(0, 10, W + 5);
        assertTrue(limit.next(full, 1, W - 5) < 0, "refused: the later window is full");
        assertTrue(limit.idleAt(full, W - 5) > W - 5, "not idle");
        long oneTaken = limit.next(0, 1, W + 5);
        long twoTaken = limit.next(oneTaken, 1, W - 5);
        assertEquals(8, takeAllAt(limit, twoTaken, W + 5));
    }

    @Test
    void keysAreLimitedIndependently() {
        assertEquals(10, takeAll(limiter, "a"));
        assertEquals(10, takeAll(limiter, "b"));
    }

    @Test
    void asksForMoreThanTheWindowHoldsAreAnError() {
        assertThrows(IllegalArgumentException.class, () -> limiter.tryAcquire("k", 11));
        assertThrows(IllegalArgumentException.class, () -> limiter.tryAcquire("k", 0));
        assertThrows(IllegalArgumentException.class, () -> limiter.tryAcquire("k", -1));
        assertEquals(0, limiter.activeKeys());
        assertEquals(10, takeAll(limiter, "k"));
    }

    @Test
    void largestWindowPermitsAreAccepted() {
        KeyedRateLimiter<String> big =
                time.limiter(RateLimit.slidingWindow(RateLimit.MAX_WINDOW_PERMITS, Duration.ofHours(1)));
        assertEquals(KeyedRateLimiter.ADMITTED, big.tryAcquire("k", RateLimit.MAX_WINDOW_PERMITS));
        long hour = 3600 * W;
        long permits = RateLimit.MAX_WINDOW_PERMITS;
        // One more fits once the full hour before weighs permits - 1: 1/permits into the next hour.
        assertEquals(hour + (hour + permits - 1) / permits, big.tryAcquire("k"));
    }

    /** Takes single permits from {@code state} at {@code now} until refused; returns the count. */
    private static int takeAllAt(RateLimit limit, long state, long now) {
        int admitted = 0;
        for (long next; (next = limit.next(state, 1, now)) >= 0; state = next) {
            admitted++;
        }
        return admitted;
    }

    @Test
    void invalidWindowsAreRefusedWithAClearError() {
        assertThrows(IllegalArgumentException.class, () -> RateLimit.slidingWindow(0, Duration.ofSeconds(1)));
        assertThrows(
                IllegalArgumentException.class,
                () -> RateLimit.slidingWindow(RateLimit.MAX_WINDOW_PERMITS + 1, Duration.ofSeconds(1)));
        assertThrows(IllegalArgumentException.class, () -> RateLimit.slidingWindow(10, Duration.ZERO));
        assertThrows(IllegalArgumentException.class, () -> RateLimit.slidingWindow(10, Duration.ofSeconds(-1)));
        assertThrows(IllegalArgumentException.class, () -> RateLimit.slidingWindow(1000, Duration.ofDays(365 * 300)));
        assertThrows(IllegalArgumentException.class, () -> RateLimit.slidingWindow(1_000_000, Duration.ofDays(200)));
        assertThrows(NullPointerException.class, () -> RateLimit.slidingWindow(10, null));
    }
}
