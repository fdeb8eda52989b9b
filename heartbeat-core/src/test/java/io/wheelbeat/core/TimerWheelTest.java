package io.wheelbeat.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class TimerWheelTest {

    private static final long TICK = 1L << 20; // the default tick, in nanoseconds

    private final ManualTicker ticker = new ManualTicker(123_456_789L);
    private final TimerWheel wheel = TimerWheel.builder().ticker(ticker).slots(64).build();
    private final List<Long> fired = new ArrayList<>();
    private final TimerCallback record = fired::add;

    private int advanceBy(long nanos) {
        ticker.advance(nanos, TimeUnit.NANOSECONDS);
        return wheel.advance(ticker.nanoTime());
    }

    @Test
    void timerFiresAtFirstTickBoundaryAtOrAfterItsDeadline() {
        long id = wheel.schedule(record, 3 * TICK + 1, TimeUnit.NANOSECONDS);
        assertEquals(0, advanceBy(4 * TICK - 1));
        assertEquals(1, advanceBy(1));
        assertEquals(List.of(id), fired);
    }

    @Test
    void timerNeverFiresBeforeItsDeadline() {
        wheel.schedule(record, 5 * TICK, TimeUnit.NANOSECONDS);
        assertEquals(0, advanceBy(5 * TICK - 1));
        assertEquals(1, advanceBy(1));
    }

    @Test
    void zeroDelayFiresOnTheNextTick() {
        wheel.schedule(record, 0, TimeUnit.NANOSECONDS);
        assertEquals(0, wheel.advance(ticker.nanoTime()));
        assertEquals(1, advanceBy(TICK));
    }

    @Test
    void negativeDelayFiresOnTheNextTick() {
        wheel.schedule(record, -5, TimeUnit.SECONDS);
        assertEquals(1, advanceBy(TICK));
    }

    @Test
    void maxDelayDoesNotOverflow() {
        long id = wheel.schedule(record, Long.MAX_VALUE, TimeUnit.NANOSECONDS);
        assertEquals(0, advanceBy(TimeUnit.DAYS.toNanos(365)));
        assertTrue(wheel.isPending(id));
        assertEquals(Long.MAX_VALUE, wheel.deadlineNanos(id));
    }

    @Test
    void maxDelayInDaysSaturates() {
        long id = wheel.schedule(record, Long.MAX_VALUE, TimeUnit.DAYS);
        assertTrue(wheel.isPending(id));
        assertEquals(0, advanceBy(TimeUnit.DAYS.toNanos(10_000)));
    }

    @Test
    void delayOfManyTurnsFiresOnItsTickNotOnEarlierTurns() {
        long delay = 10 * 64 * TICK + 7 * TICK; // ten turns of a 64-slot wheel, and 7 ticks
        wheel.schedule(record, delay, TimeUnit.NANOSECONDS);
        for (int turn = 0; turn < 10; turn++) {
            assertEquals(0, advanceBy(64 * TICK));
        }
        assertEquals(0, advanceBy(6 * TICK));
        assertEquals(1, advanceBy(TICK));
    }

    @Test
    void cancelledTimerNeverFires() {
        long id = wheel.schedule(record, TICK, TimeUnit.NANOSECONDS);
        assertTrue(wheel.cancel(id));
        advanceBy(10 * TICK);
        assertTrue(fired.isEmpty());
        assertEquals(0, wheel.pendingTimers());
    }

    @Test
    void cancelTwiceReturnsFalseTheSecondTime() {
        long id = wheel.schedule(record, TICK, TimeUnit.NANOSECONDS);
        assertTrue(wheel.cancel(id));
        assertFalse(wheel.cancel(id));
    }

    @Test
    void cancelAfterFireReturnsFalse() {
        long id = wheel.schedule(record, TICK, TimeUnit.NANOSECONDS);
        advanceBy(TICK);
        assertFalse(wheel.cancel(id));
    }

    @Test
    void staleIdDoesNotCancelTheTimerThatReusedItsCell() {
        long first = wheel.schedule(record, TICK, TimeUnit.NANOSECONDS);
        wheel.cancel(first);
        long second = wheel.schedule(record, TICK, TimeUnit.NANOSECONDS);
        assertEquals((int) first, (int) second, "the cell is reused");
        assertNotEquals(first, second);
        assertFalse(wheel.cancel(first));
        assertTrue(wheel.isPending(second));
    }

    @Test
    void idsNeverIssuedAreNotPending() {
        assertFalse(wheel.cancel(TimerWheel.NO_TIMER));
        assertFalse(wheel.cancel(-1L));
        assertFalse(wheel.cancel(Long.MAX_VALUE));
        assertFalse(wheel.reschedule(42L, 1, TimeUnit.SECONDS));
    }

    @Test
    void rescheduleMovesTheDeadlineLater() {
        long id = wheel.schedule(record, 2 * TICK, TimeUnit.NANOSECONDS);
        assertTrue(wheel.reschedule(id, 5 * TICK, TimeUnit.NANOSECONDS));
        assertEquals(0, advanceBy(4 * TICK));
        assertEquals(1, advanceBy(TICK));
        assertEquals(List.of(id), fired);
    }

    @Test
    void rescheduleMovesTheDeadlineEarlier() {
        long id = wheel.schedule(record, 50 * TICK, TimeUnit.NANOSECONDS);
        assertTrue(wheel.reschedule(id, TICK, TimeUnit.NANOSECONDS));
        assertEquals(1, advanceBy(TICK));
    }

    @Test
    void rescheduleToTheSameSlotALaterTurnWaitsForThatTurn() {
        long id = wheel.schedule(record, 3 * TICK, TimeUnit.NANOSECONDS);
        assertTrue(wheel.reschedule(id, 3 * TICK + 64 * TICK, TimeUnit.NANOSECONDS));
        assertEquals(0, advanceBy(3 * TICK));
        assertEquals(0, advanceBy(63 * TICK));
        assertEquals(1, advanceBy(TICK));
    }

    @Test
    void rescheduleToAnEarlierTurnOfTheSameSlotFiresInThatTurn() {
        long id = wheel.schedule(record, 3 * TICK + 128 * TICK, TimeUnit.NANOSECONDS);
        assertTrue(wheel.reschedule(id, 3 * TICK, TimeUnit.NANOSECONDS));
        assertEquals(1, advanceBy(3 * TICK));
    }

    @Test
    void rescheduleOfFiredTimerReturnsFalseAndSchedulesNothing() {
        long id = wheel.schedule(record, TICK, TimeUnit.NANOSECONDS);
        advanceBy(TICK);
        assertFalse(wheel.reschedule(id, TICK, TimeUnit.NANOSECONDS));
        assertEquals(0, wheel.pendingTimers());
    }

    @Test
    void rescheduleOfCancelledTimerReturnsFalse() {
        long id = wheel.schedule(record, TICK, TimeUnit.NANOSECONDS);
        wheel.cancel(id);
        assertFalse(wheel.rescheduleAt(id, ticker.nanoTime() + TICK));
        assertEquals(0, wheel.pendingTimers());
    }

    @Test
    void nullCallbackIsRejected() {
        assertThrows(NullPointerException.class, () -> wheel.schedule(null, 1, TimeUnit.SECONDS));
        assertEquals(0, wheel.pendingTimers());
    }

    @Test
    void nullUnitIsRejected() {
        assertThrows(NullPointerException.class, () -> wheel.schedule(record, 1, null));
        long id = wheel.schedule(record, 1, TimeUnit.SECONDS);
        assertThrows(NullPointerException.class, () -> wheel.reschedule(id, 1, null));
        assertTrue(wheel.isPending(id));
    }

    @Test
    void schedulingBeyondTheMaximumIsRejectedAndKeepsEveryPendingTimer() {
        TimerWheel bounded = TimerWheel.builder().ticker(ticker).maxPendingTimers(3).build();
        for (int i = 0; i < 3; i++) {
            bounded.schedule(record, TICK, TimeUnit.NANOSECONDS);
        }
        RejectedExecutionException e = assertThrows(RejectedExecutionException.class,
                () -> bounded.schedule(record, TICK, TimeUnit.NANOSECONDS));
        assertTrue(e.getMessage().contains("maximum is 3"), e.getMessage());
        assertEquals(3, bounded.pendingTimers());
        ticker.advance(TICK, TimeUnit.NANOSECONDS);
        assertEquals(3, bounded.advance(ticker.nanoTime()));
    }

    @Test
    void throwingCallbackIsCountedAndOthersStillFire() {
        wheel.schedule(id -> {
            throw new IllegalStateException("boom");
        }, TICK, TimeUnit.NANOSECONDS);
        wheel.schedule(record, TICK, TimeUnit.NANOSECONDS);
        assertEquals(2, advanceBy(TICK));
        assertEquals(1, fired.size());
        assertEquals(1, wheel.failedCount());
    }

    @Test
    void catchUpAfterALongPauseFiresEveryOverdueTimerOnceInTickOrder() {
        List<Long> order = new ArrayList<>();
        long[] delays = {700 * TICK, 3 * TICK, 65 * TICK, 64 * TICK, 129 * TICK, 1 * TICK};
        for (long delay : delays) {
            wheel.schedule(id -> order.add(delay), delay, TimeUnit.NANOSECONDS);
        }
        assertEquals(6, advanceBy(1000 * TICK));
        assertEquals(List.of(TICK, 3 * TICK, 64 * TICK, 65 * TICK, 129 * TICK, 700 * TICK), order);
        assertEquals(0, advanceBy(1000 * TICK));
    }

    @Test
    void timersOfOneTickFireInTheOrderTheyWereScheduled() {
        long a = wheel.schedule(record, TICK, TimeUnit.NANOSECONDS);
        long b = wheel.schedule(record, TICK, TimeUnit.NANOSECONDS);
        long c = wheel.schedule(record, TICK, TimeUnit.NANOSECONDS);
        advanceBy(TICK);
        assertEquals(List.of(a, b, c), fired);
    }

    @Test
    void callbackMayCancelATimerDueInTheSameTick() {
        long[] victim = new long[1];
        wheel.schedule(id -> assertTrue(wheel.cancel(victim[0])), TICK, TimeUnit.NANOSECONDS);
        victim[0] = wheel.schedule(record, TICK, TimeUnit.NANOSECONDS);
        assertEquals(1, advanceBy(TICK));
        assertTrue(fired.isEmpty());
    }

    @Test
    void callbackSchedulingZeroDelayFiresOnTheNextTickWithinTheSameAdvance() {
        List<Long> ticks = new ArrayList<>();
        wheel.schedule(id -> {
            ticks.add(1L);
            wheel.schedule(second -> ticks.add(2L), 0, TimeUnit.NANOSECONDS);
        }, TICK, TimeUnit.NANOSECONDS);
        assertEquals(2, advanceBy(5 * TICK));
        assertEquals(List.of(1L, 2L), ticks);
    }

    @Test
    void advanceFromACallbackIsRejected() {
        List<Throwable> errors = new ArrayList<>();
        wheel.schedule(id -> {
            try {
                wheel.advance(ticker.nanoTime());
            } catch (IllegalStateException e) {
                errors.add(e);
            }
        }, TICK, TimeUnit.NANOSECONDS);
        advanceBy(TICK);
        assertEquals(1, errors.size());
    }

    @Test
    void advanceToAnEarlierReadingDoesNothing() {
        wheel.schedule(record, TICK, TimeUnit.NANOSECONDS);
        assertEquals(0, wheel.advance(ticker.nanoTime() - TICK));
        assertEquals(1, wheel.pendingTimers());
    }

    @Test
    void nextExpiryIsNoneWhenEmpty() {
        assertEquals(Long.MAX_VALUE, wheel.nextExpiryNanos());
    }

    @Test
    void nextExpiryIsTheTickOfTheEarliestTimerEvenBeyondOneTurn() {
        long start = ticker.nanoTime();
        wheel.schedule(record, 1000 * TICK, TimeUnit.NANOSECONDS);
        wheel.schedule(record, 300 * TICK, TimeUnit.NANOSECONDS);
        long next = wheel.nextExpiryNanos();
        assertTrue(next >= start + 300 * TICK, "never late: " + (next - start));
        assertTrue(next < start + 301 * TICK, "the tick of the deadline: " + (next - start));
    }

    @Test
    void countersTrackScheduledCancelledAndExpired() {
        long a = wheel.schedule(record, TICK, TimeUnit.NANOSECONDS);
        wheel.schedule(record, TICK, TimeUnit.NANOSECONDS);
        wheel.cancel(a);
        advanceBy(TICK);
        assertEquals(2, wheel.scheduledCount());
        assertEquals(1, wheel.cancelledCount());
        assertEquals(1, wheel.expiredCount());
        assertEquals(0, wheel.pendingTimers());
    }

    @Test
    void tickIsRoundedUpToAPowerOfTwo() {
        assertEquals(1L << 20, TimerWheel.builder().tickDuration(1, TimeUnit.MILLISECONDS).build().tickNanos());
        assertEquals(1L << 10, TimerWheel.builder().tickDuration(1024, TimeUnit.NANOSECONDS).build().tickNanos());
    }

    @Test
    void badSettingsAreRejected() {
        assertThrows(IllegalArgumentException.class, () -> TimerWheel.builder().tickDuration(0, TimeUnit.SECONDS));
        assertThrows(IllegalArgumentException.class, () -> TimerWheel.builder().slots(3));
        assertThrows(IllegalArgumentException.class, () -> TimerWheel.builder().maxPendingTimers(0));
        assertThrows(IllegalArgumentException.class, () -> TimerWheel.builder().initialCapacity(-1));
    }

    @Test
    void arraysGrowBeyondTheInitialCapacity() {
        TimerWheel small = TimerWheel.builder().ticker(ticker).initialCapacity(0).build();
        for (int i = 0; i < 10_000; i++) {
            small.schedule(record, (i % 300) * TICK, TimeUnit.NANOSECONDS);
        }
        ticker.advance(300 * TICK, TimeUnit.NANOSECONDS);
        assertEquals(10_000, small.advance(ticker.nanoTime()));
    }
}
