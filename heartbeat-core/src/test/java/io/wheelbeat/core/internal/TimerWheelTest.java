package io.wheelbeat.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.wheelbeat.core.ExecutorDrivenWheel;
import io.wheelbeat.core.TimerCallback;
import io.wheelbeat.core.WheelSettings;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class TimerWheelTest {

    private static final long TICK = 1L << 20; // the default tick, in nanoseconds
    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);
    private static final long START = 123_456_789L;

    private final TimerWheel wheel = TimerWheel.of(new WheelSettings().ticker(() -> START).slots(64));
    private final List<Long> fired = new ArrayList<>();
    private final TimerCallback record = fired::add;
    private long now = START;

    @RegisterExtension
    final WheelStateOnFailure printsWheel = new WheelStateOnFailure(() -> wheel);

    private long in(long nanos) {
        return now + nanos;
    }

    private int pollAfter(long nanos) {
        now += nanos;
        return wheel.poll(now);
    }

    @Test
    void timerFiresWhenPolledAtItsExactDeadlineNotAtATickBoundary() {
        long id = wheel.scheduleAt(record, in(10_300_000)); // 10.3 ms, inside a tick
        assertEquals(0, pollAfter(10_200_000));
        assertEquals(0, pollAfter(99_999));
        assertEquals(1, pollAfter(1));
        assertEquals(List.of(id), fired);
    }

    @Test
    void timerPolledAfterItsDeadlineInTheSameTickFires() {
        wheel.scheduleAt(record, in(10_300_000));
        assertEquals(1, pollAfter(10_400_000));
    }

    @Test
    void deadlineAlreadyPassedFiresAtTheNextPoll() {
        wheel.scheduleAt(record, in(-5 * MS));
        wheel.scheduleAt(record, now);
        assertEquals(2, wheel.poll(now));
    }

    @Test
    void deadlineBeforeTheWheelStartedIsDueAtOnce() {
        wheel.scheduleAt(record, START - Long.MAX_VALUE / 2);
        assertEquals(1, wheel.poll(now));
    }

    @Test
    void saturatedDelayStaysPendingForCenturies() {
        long id = wheel.scheduleAt(record, TimerWheel.deadlineAfter(now, Long.MAX_VALUE));
        assertEquals(now + (1L << 62), wheel.deadlineNanos(id));
        assertEquals(0, pollAfter(TimeUnit.DAYS.toNanos(365 * 100)));
        assertTrue(wheel.isPending(id));
    }

    /** Delays that land on every level, including exactly on level boundaries. */
    @ParameterizedTest(name = "delay 2^{0} ns")
    @ValueSource(ints = {0, 19, 20, 21, 25, 26, 27, 31, 32, 33, 37, 38, 44, 50, 56, 61, 62})
    void timerOnAnyLevelFiresExactlyAtItsDeadline(int bits) {
        long delay = (1L << bits) + 12_345;
        long id = wheel.scheduleAt(record, in(delay));
        // Approach the deadline in shrinking steps, as a pause then a driver would.
        long left = delay;
        while (left > 1) {
            long step = left / 2;
            assertEquals(0, pollAfter(step), "fired " + (left - step) + " ns early");
            left -= step;
        }
        assertEquals(0, pollAfter(left - 1));
        assertEquals(1, pollAfter(1));
        assertEquals(List.of(id), fired);
    }

    @Test
    void cancelledTimerNeverFires() {
        long id = wheel.scheduleAt(record, in(TICK));
        assertTrue(wheel.cancel(id));
        pollAfter(10 * TICK);
        assertTrue(fired.isEmpty());
        assertEquals(0, wheel.pendingTimers());
    }

    @Test
    void cancelTwiceReturnsFalseTheSecondTime() {
        long id = wheel.scheduleAt(record, in(TICK));
        assertTrue(wheel.cancel(id));
        assertFalse(wheel.cancel(id));
    }

    @Test
    void cancelAfterFireReturnsFalse() {
        long id = wheel.scheduleAt(record, in(TICK));
        pollAfter(TICK);
        assertFalse(wheel.cancel(id));
    }

    @Test
    void staleIdDoesNotCancelTheTimerThatReusedItsCell() {
        long first = wheel.scheduleAt(record, in(TICK));
        wheel.cancel(first);
        long second = wheel.scheduleAt(record, in(TICK));
        assertEquals((int) first, (int) second, "the cell is reused");
        assertNotEquals(first, second);
        assertFalse(wheel.cancel(first));
        assertFalse(wheel.rescheduleAt(first, in(5 * TICK)));
        assertTrue(wheel.isPending(second));
        assertEquals(in(TICK), wheel.deadlineNanos(second));
    }

    @Test
    void idsNeverIssuedAreNotPending() {
        assertFalse(wheel.cancel(ExecutorDrivenWheel.NO_TIMER));
        assertFalse(wheel.cancel(-1L));
        assertFalse(wheel.cancel(Long.MAX_VALUE));
        assertFalse(wheel.rescheduleAt(42L, in(TICK)));
        assertThrows(IllegalArgumentException.class, () -> wheel.deadlineNanos(42L));
    }

    @Test
    void rescheduleLaterWaitsForTheNewDeadline() {
        long id = wheel.scheduleAt(record, in(2 * MS));
        assertTrue(wheel.rescheduleAt(id, in(50 * MS)));
        assertEquals(0, pollAfter(50 * MS - 1));
        assertEquals(1, pollAfter(1));
        assertEquals(List.of(id), fired);
    }

    @Test
    void rescheduleLaterAgainAndAgainFiresOnceAtTheLastDeadline() {
        long id = wheel.scheduleAt(record, in(30 * MS));
        for (int i = 0; i < 100; i++) {
            pollAfter(MS);
            assertTrue(wheel.rescheduleAt(id, in(30 * MS)));
        }
        assertEquals(0, pollAfter(30 * MS - 1));
        assertEquals(1, pollAfter(1));
    }

    @Test
    void rescheduleEarlierFiresAtTheNewDeadline() {
        long id = wheel.scheduleAt(record, in(TimeUnit.HOURS.toNanos(5)));
        assertTrue(wheel.rescheduleAt(id, in(3 * MS + 7)));
        assertEquals(0, pollAfter(3 * MS + 6));
        assertEquals(1, pollAfter(1));
    }

    @Test
    void rescheduleWithinTheCurrentTickKeepsDeadlineOrder() {
        List<String> order = new ArrayList<>();
        long a = wheel.scheduleAt(id -> order.add("a"), in(TICK / 2));
        long b = wheel.scheduleAt(id -> order.add("b"), in(TICK / 2 + 10));
        pollAfter(TICK / 4); // inside the tick: its slot is now kept in order
        assertTrue(wheel.rescheduleAt(a, in(TICK / 4 + 20)));
        assertTrue(wheel.rescheduleAt(b, in(TICK / 4 + 5)));
        assertEquals(2, pollAfter(TICK / 2));
        assertEquals(List.of("b", "a"), order);
    }

    @Test
    void rescheduleOfFiredTimerReturnsFalseAndSchedulesNothing() {
        long id = wheel.scheduleAt(record, in(TICK));
        pollAfter(TICK);
        assertFalse(wheel.rescheduleAt(id, in(TICK)));
        assertEquals(0, wheel.pendingTimers());
    }

    @Test
    void nullCallbackIsRejected() {
        assertThrows(NullPointerException.class, () -> wheel.scheduleAt(null, in(TICK)));
        assertEquals(0, wheel.pendingTimers());
    }

    @Test
    void throwingCallbackIsCountedAndOthersStillFire() {
        wheel.scheduleAt(id -> {
            throw new IllegalStateException("boom");
        }, in(TICK));
        wheel.scheduleAt(record, in(TICK));
        assertEquals(2, pollAfter(TICK));
        assertEquals(1, fired.size());
        assertEquals(1, wheel.failedCount());
    }

    @Test
    void latenessIsThePollReadingMinusTheDeadline() {
        wheel.scheduleAt(record, in(5 * MS));
        List<Long> lateness = new ArrayList<>();
        now += 8 * MS;
        wheel.poll(now, lateness::add);
        assertEquals(List.of(3 * MS), lateness);
    }

    @Test
    void catchUpAfterALongPauseFiresEveryOverdueTimerOnceInDeadlineOrder() {
        List<Long> order = new ArrayList<>();
        long[] delays = {700 * TICK, 3 * TICK, 65 * TICK, 64 * TICK, 129 * TICK, TICK, 5000 * TICK,
            TimeUnit.SECONDS.toNanos(40), TimeUnit.MINUTES.toNanos(30) + 7};
        for (long delay : delays) {
            wheel.scheduleAt(id -> order.add(delay), in(delay));
        }
        assertEquals(delays.length, pollAfter(TimeUnit.HOURS.toNanos(1)));
        assertEquals(List.of(TICK, 3 * TICK, 64 * TICK, 65 * TICK, 129 * TICK, 700 * TICK, 5000 * TICK,
                TimeUnit.SECONDS.toNanos(40), TimeUnit.MINUTES.toNanos(30) + 7), order);
        assertEquals(0, pollAfter(TimeUnit.HOURS.toNanos(1)));
    }

    @Test
    void driverWakingAtEachNextDeadlineSeesTimersOfOneTickInDeadlineOrder() {
        List<Long> order = new ArrayList<>();
        long[] offsets = {900_000, 100, 500_000, 100_000, 100, 700_000};
        for (long offset : offsets) {
            wheel.scheduleAt(id -> order.add(offset), in(3 * TICK + offset));
        }
        int polls = 0;
        while (wheel.pendingTimers() > 0) {
            now = wheel.nextDeadlineNanos();
            wheel.poll(now);
            polls++;
        }
        assertEquals(List.of(100L, 100L, 100_000L, 500_000L, 700_000L, 900_000L), order);
        assertEquals(5, polls, "one poll per distinct deadline");
    }

    @Test
    void callbackMayCancelATimerDueInTheSamePoll() {
        long[] victim = new long[1];
        wheel.scheduleAt(id -> assertTrue(wheel.cancel(victim[0])), in(TICK));
        victim[0] = wheel.scheduleAt(record, in(TICK + 1));
        assertEquals(1, pollAfter(2 * TICK));
        assertTrue(fired.isEmpty());
    }

    @Test
    void callbackMayRescheduleATimerOfTheSlotBeingWalked() {
        long[] other = new long[1];
        wheel.scheduleAt(id -> assertTrue(wheel.rescheduleAt(other[0], now + 10 * TICK)), in(TICK));
        other[0] = wheel.scheduleAt(record, in(TICK + 5));
        assertEquals(1, pollAfter(2 * TICK));
        assertEquals(0, pollAfter(10 * TICK - 1));
        assertEquals(1, pollAfter(1));
    }

    @Test
    void timerACallbackSchedulesDueLaterInThisPollFiresInThisPoll() {
        List<Long> order = new ArrayList<>();
        long first = now + TICK;
        wheel.scheduleAt(id -> {
            order.add(1L);
            wheel.scheduleAt(second -> order.add(2L), first + 3 * TICK);
        }, first);
        assertEquals(2, pollAfter(5 * TICK));
        assertEquals(List.of(1L, 2L), order);
    }

    @Test
    void timerACallbackMakesDueAtOrBeforeTheFiredDeadlineWaitsForTheNextPoll() {
        List<Long> order = new ArrayList<>();
        long deadline = now + TICK;
        wheel.scheduleAt(new TimerCallback() {
            @Override
            public void onTimeout(long id) {
                order.add(id);
                wheel.scheduleAt(this, deadline); // due again at once: must not keep the poll busy
            }
        }, deadline);
        assertEquals(1, pollAfter(TICK));
        assertEquals(1, wheel.pendingTimers());
        assertTrue(wheel.nextDeadlineNanos() - now <= 0, "due: the driver polls again at once");
        assertEquals(1, wheel.poll(now));
        assertEquals(2, order.size());
    }

    @Test
    void pollFromACallbackIsRejected() {
        List<Throwable> errors = new ArrayList<>();
        wheel.scheduleAt(id -> {
            try {
                wheel.poll(now);
            } catch (IllegalStateException e) {
                errors.add(e);
            }
        }, in(TICK));
        pollAfter(TICK);
        assertEquals(1, errors.size());
    }

    @Test
    void pollWithAnEarlierReadingCountsAsTheLastOne() {
        wheel.scheduleAt(record, in(TICK));
        pollAfter(TICK / 2);
        assertEquals(0, wheel.poll(now - TICK));
        assertEquals(1, wheel.pendingTimers());
    }

    @Test
    void nextDeadlineIsTheExactEarliestDeadlineEvenBeyondOneTurn() {
        wheel.scheduleAt(record, in(1000 * TICK + 17));
        wheel.scheduleAt(record, in(300 * TICK + 5));
        assertEquals(in(300 * TICK + 5), wheel.nextDeadlineNanos());
    }

    @Test
    void nextDeadlineIsNeverLateAfterACancel() {
        // Both beyond level 0 (64 ticks), in the same slot of level 1 (ticks 256 to 319).
        long early = wheel.scheduleAt(record, in(300 * TICK));
        long late = wheel.scheduleAt(record, in(310 * TICK));
        wheel.cancel(early);
        long wake = wheel.nextDeadlineNanos();
        assertTrue(wake - in(310 * TICK) <= 0, "not after the pending timer");
        long deadline = in(310 * TICK);
        now = wake;
        assertEquals(0, wheel.poll(now));
        assertEquals(deadline, wheel.nextDeadlineNanos(), "exact once the driver looked");
        assertTrue(wheel.isPending(late));
    }

    @Test
    void nextDeadlineWithNothingPendingIsRejected() {
        assertThrows(IllegalStateException.class, wheel::nextDeadlineNanos);
    }

    /** A clock whose readings pass Long.MAX_VALUE and wrap (it stopped the wheel before v2). */
    @Test
    void clockThatWrapsPastLongMaxValueKeepsFiring() {
        TimerWheel wrapping = TimerWheel.of(new WheelSettings().ticker(() -> Long.MAX_VALUE - 2 * MS));
        long at = Long.MAX_VALUE - 2 * MS;
        List<Long> ids = new ArrayList<>();
        wrapping.scheduleAt(ids::add, at + 5 * MS); // past the wrap
        wrapping.scheduleAt(ids::add, at + MS);     // before it
        assertEquals(1, wrapping.poll(at + MS));
        assertEquals(0, wrapping.poll(at + 5 * MS - 1));
        assertEquals(1, wrapping.poll(at + 5 * MS));
        assertTrue(at + 5 * MS < 0, "the reading did wrap");
        wrapping.scheduleAt(ids::add, at + 10 * MS);
        assertEquals(at + 10 * MS, wrapping.nextDeadlineNanos());
        assertEquals(1, wrapping.poll(at + 11 * MS));
    }

    @Test
    void clockStartingBelowZeroWorks() {
        long start = -TimeUnit.DAYS.toNanos(3);
        TimerWheel negative = TimerWheel.of(new WheelSettings().ticker(() -> start));
        negative.scheduleAt(record, start + 7 * MS);
        assertEquals(0, negative.poll(start + 7 * MS - 1));
        assertEquals(1, negative.poll(start + 7 * MS));
    }

    @Test
    void countersTrackScheduledCancelledAndExpired() {
        long a = wheel.scheduleAt(record, in(TICK));
        wheel.scheduleAt(record, in(TICK));
        wheel.cancel(a);
        pollAfter(TICK);
        assertEquals(2, wheel.scheduledCount());
        assertEquals(1, wheel.cancelledCount());
        assertEquals(1, wheel.expiredCount());
        assertEquals(0, wheel.pendingTimers());
    }

    @Test
    void wheelGrowsPageByPageBeyondItsInitialCapacity() {
        TimerWheel small = TimerWheel.of(new WheelSettings().ticker(() -> START).initialCapacity(0));
        for (int i = 0; i < 10_000; i++) {
            small.scheduleAt(record, START + (i % 300) * TICK);
        }
        assertEquals(10_000, small.poll(START + 300 * TICK));
    }
}
