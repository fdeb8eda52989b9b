package io.wheelbeat.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.wheelbeat.core.TimerCallback;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class TimerWheelTest {

    private static final long TICK = 1L << 20; // WheelSettings' default tick, in nanoseconds
    /** WheelSettings' default number of slots and initial room. */
    private static final int SLOTS = 4096;
    private static final int ROOM = 1024;
    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);
    private static final long START = 123_456_789L;
    /** The cell's part of a timer id (its low 24 bits); the rest is the cell's generation. */
    private static final long CELL_BITS = (1L << 24) - 1;

    private final TimerWheel wheel = new TimerWheel(START, TICK, 64, ROOM);
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
        assertEquals(first & CELL_BITS, second & CELL_BITS, "the cell is reused");
        assertNotEquals(first, second);
        assertFalse(wheel.cancel(first));
        assertFalse(wheel.rescheduleAt(first, in(5 * TICK)));
        assertTrue(wheel.isPending(second));
        assertEquals(in(TICK), wheel.deadlineNanos(second));
    }

    @Test
    void idsNeverIssuedAreNotPending() {
        assertFalse(wheel.cancel(TimerWheel.NO_TIMER));
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

    /** The engine takes plain numbers from any caller, so it checks them itself. */
    @Test
    void constructorRejectsWhatTheWheelCannotBeMadeOf() {
        assertThrows(IllegalArgumentException.class, () -> new TimerWheel(START, 0, SLOTS, ROOM));
        assertThrows(IllegalArgumentException.class, () -> new TimerWheel(START, -TICK, SLOTS, ROOM));
        assertThrows(IllegalArgumentException.class, () -> new TimerWheel(START, TICK + 1, SLOTS, ROOM));
        assertThrows(IllegalArgumentException.class, () -> new TimerWheel(START, TICK, 32, ROOM));
        assertThrows(IllegalArgumentException.class, () -> new TimerWheel(START, TICK, 8192, ROOM));
        assertThrows(IllegalArgumentException.class, () -> new TimerWheel(START, TICK, 100, ROOM));
        assertThrows(IllegalArgumentException.class, () -> new TimerWheel(START, TICK, SLOTS, -1));
        TimerWheel smallest = new TimerWheel(START, 1, 64, 0);
        assertEquals(1, smallest.tickNanos());
        assertEquals(64, smallest.slots());
        smallest.scheduleAt(record, START + 1000);
        smallest.scheduleAt(record, START + (1L << 40));
        assertEquals(0, smallest.poll(START + 999));
        assertEquals(1, smallest.poll(START + 1000));
        assertEquals(0, smallest.poll(START + (1L << 40) - 1));
        assertEquals(1, smallest.poll(START + (1L << 40)));
    }

    @Test
    void nextDeadlineWithNothingPendingIsRejected() {
        assertThrows(IllegalStateException.class, wheel::nextDeadlineNanos);
    }

    /** A clock whose readings pass Long.MAX_VALUE and wrap (it stopped the wheel before v2). */
    @Test
    void clockThatWrapsPastLongMaxValueKeepsFiring() {
        TimerWheel wrapping = new TimerWheel(Long.MAX_VALUE - 2 * MS, TICK, SLOTS, ROOM);
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
        TimerWheel negative = new TimerWheel(start, TICK, SLOTS, ROOM);
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
        TimerWheel small = new TimerWheel(START, TICK, SLOTS, 0);
        for (int i = 0; i < 10_000; i++) {
            small.scheduleAt(record, START + (i % 300) * TICK);
        }
        assertEquals(10_000, small.poll(START + 300 * TICK));
    }
    // ---------------------------------------------------------------- Netty's order: deadline, then scheduling

    /** Issue 21 item 8: 5.4 ms scheduled first, 5.3 ms second, a 7 ms stall: Netty fires 5.3 ms first. */
    @Test
    void timersOfOneTickReachedByAStallFireByDeadlineNotInTheOrderTheyWereScheduled() {
        List<String> order = new ArrayList<>();
        wheel.scheduleAt(id -> order.add("A"), in(5_400_000));
        wheel.scheduleAt(id -> order.add("B"), in(5_300_000));
        assertEquals(2, pollAfter(7 * MS));
        assertEquals(List.of("B", "A"), order);
    }

    @Test
    void equalDeadlinesFireInSchedulingOrderWhateverCellsTheyGot() {
        List<Integer> order = new ArrayList<>();
        long deadline = in(3 * TICK + 77);
        long[] spacers = new long[8];
        for (int i = 0; i < spacers.length; i++) {
            spacers[i] = wheel.scheduleAt(record, in(50 * TICK));
        }
        // Free low cells in between, so later timers get lower addresses than earlier ones.
        for (int i = 0; i < 8; i++) {
            int n = i;
            wheel.scheduleAt(id -> order.add(n), deadline);
            wheel.cancel(spacers[spacers.length - 1 - i]);
        }
        assertEquals(8, pollAfter(4 * TICK));
        assertEquals(List.of(0, 1, 2, 3, 4, 5, 6, 7), order);
    }

    @Test
    void rescheduleCountsAsANewSchedulingAmongEqualDeadlines() {
        List<String> order = new ArrayList<>();
        long deadline = in(2 * TICK + 5);
        long a = wheel.scheduleAt(id -> order.add("A"), in(TICK));
        wheel.scheduleAt(id -> order.add("B"), deadline);
        long c = wheel.scheduleAt(id -> order.add("C"), in(9 * TICK));
        assertTrue(wheel.rescheduleAt(a, deadline)); // later: the lazy path
        assertTrue(wheel.rescheduleAt(c, deadline)); // earlier: relinked
        assertEquals(3, pollAfter(3 * TICK));
        assertEquals(List.of("B", "A", "C"), order);
    }

    @Test
    void timersOfOneTickStillOnAnUpperLevelFireInOrderWithTheTickSlot() {
        List<String> order = new ArrayList<>();
        long tickStart = START + 100 * TICK - (START & (TICK - 1)); // 100 ticks on, 64 level-0 slots
        wheel.scheduleAt(id -> order.add("far, first"), tickStart + 500); // level 1 for now
        wheel.scheduleAt(id -> order.add("far, late"), tickStart + 900);
        assertEquals(0, pollAfter(90 * TICK));
        wheel.scheduleAt(id -> order.add("near, early"), tickStart + 100); // level 0
        wheel.scheduleAt(id -> order.add("near, tie"), tickStart + 500);
        assertEquals(4, pollAfter(20 * TICK));
        assertEquals(List.of("near, early", "far, first", "near, tie", "far, late"), order);
    }

    @Test
    void aTimerACallbackSchedulesInTheTickBeingFiredFiresInOrderInTheSamePoll() {
        List<String> order = new ArrayList<>();
        long tickStart = START + 3 * TICK - (START & (TICK - 1));
        wheel.scheduleAt(id -> {
            order.add("first");
            wheel.scheduleAt(second -> order.add("added at 300"), tickStart + 300);
            wheel.scheduleAt(second -> order.add("added at 200"), tickStart + 200);
        }, tickStart + 100);
        wheel.scheduleAt(id -> order.add("at 200"), tickStart + 200);
        wheel.scheduleAt(id -> order.add("at 400"), tickStart + 400);
        assertEquals(5, pollAfter(5 * TICK));
        assertEquals(List.of("first", "at 200", "added at 200", "added at 300", "at 400"), order);
    }

    // ---------------------------------------------------------------- bounded polls

    @Test
    void pollWithALimitFiresAtMostThatManyAndTheNextPollsContinueInOrder() {
        int timers = 100_000;
        long[] ids = new long[timers];
        List<Long> order = new ArrayList<>();
        TimerCallback callback = order::add;
        java.util.SplittableRandom random = new java.util.SplittableRandom(7);
        for (int i = 0; i < timers; i++) {
            // Many equal deadlines over a few ticks and levels.
            ids[i] = wheel.scheduleAt(callback, in(random.nextInt(200) * (TICK / 4)));
        }
        List<Long> expected = new ArrayList<>();
        Integer[] byOrder = new Integer[timers];
        for (int i = 0; i < timers; i++) {
            byOrder[i] = i;
        }
        java.util.Arrays.sort(byOrder, java.util.Comparator.comparingLong((Integer i) -> wheel.deadlineNanos(ids[i]) - START)
                .thenComparingInt(i -> i));
        for (Integer i : byOrder) {
            expected.add(ids[i]);
        }
        now += 60 * TICK; // a stall: everything is due
        int limit = 1000;
        int polls = 0;
        int fired;
        while ((fired = wheel.poll(now, lateness -> { }, limit)) > 0) {
            assertTrue(fired <= limit, fired + " fired in one poll");
            polls++;
            if (wheel.pendingTimers() > 0) {
                assertTrue(wheel.nextDeadlineNanos() - now <= 0, "the rest is still due");
            }
        }
        assertEquals(timers / limit, polls);
        assertEquals(expected, order, "each once, by deadline then scheduling order");
        assertEquals(0, wheel.pendingTimers());
    }

    @Test
    void limitBelowOneIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> wheel.poll(now, lateness -> { }, 0));
    }

    // ---------------------------------------------------------------- generations

    /** Issue 21 item 9: after 2^31 reuses of one cell the 32-bit generation wrapped and a stale id cancelled the live timer. */
    @Test
    void staleIdsAreNeverMistakenWhenACellsGenerationRunsOut() {
        long first = wheel.scheduleAt(record, in(TICK));
        wheel.cancel(first);
        // As if the cell had held 2^39 - 3 timers: three more, then its generation would wrap.
        wheel.setGenerationOfFreeCell(first, TimerWheel.GENERATIONS - 6);
        List<Long> stale = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            long id = wheel.scheduleAt(record, in(TICK));
            assertEquals(first & CELL_BITS, id & CELL_BITS, "the same cell");
            assertNotEquals(TimerWheel.NO_TIMER, id);
            assertTrue(wheel.cancel(id));
            stale.add(id);
        }
        assertEquals(1, wheel.retiredCells(), "the cell is retired");
        List<Long> live = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            live.add(wheel.scheduleAt(record, in(TICK)));
        }
        for (long id : live) {
            assertNotEquals(first & CELL_BITS, id & CELL_BITS, "the retired cell is never handed out again");
        }
        stale.add(first);
        for (long id : stale) {
            assertFalse(wheel.isPending(id));
            assertFalse(wheel.cancel(id), "stale id " + Long.toHexString(id));
            assertFalse(wheel.rescheduleAt(id, in(9 * TICK)));
        }
        assertEquals(4, wheel.pendingTimers());
        assertEquals(4, pollAfter(TICK));
        assertEquals(live, fired);
    }

    @Test
    void idsStayDistinctPastTwoToTheThirtyOneReusesOfACell() {
        long first = wheel.scheduleAt(record, in(TICK));
        wheel.cancel(first);
        // Where a 32-bit generation wrapped: 2^31 timers in this one cell.
        wheel.setGenerationOfFreeCell(first, (1L << 32) - 2);
        long before = wheel.scheduleAt(record, in(TICK));
        wheel.cancel(before);
        long after = wheel.scheduleAt(record, in(TICK));
        assertEquals(first & CELL_BITS, after & CELL_BITS);
        assertNotEquals(before, after);
        assertNotEquals(first, after);
        assertFalse(wheel.cancel(before));
        assertFalse(wheel.cancel(first));
        assertTrue(wheel.isPending(after));
    }
}
