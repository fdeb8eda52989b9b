package io.wheelbeat.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.wheelbeat.core.internal.NodeDeadlines;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class TimerWheelTest {

    private static final long TICK = 1L << 20; // WheelSettings' default tick, in nanoseconds
    /** WheelSettings' default number of slots and initial room. */
    private static final int SLOTS = 4096;

    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);
    private static final long START = 123_456_789L;

    private final TimerWheel wheel = new TimerWheel(START, TICK, 64);
    private final List<TimerNode> fired = new ArrayList<>();
    private long now = START;

    @RegisterExtension
    final WheelStateOnFailure printsWheel = new WheelStateOnFailure(() -> wheel);

    /** A node that runs {@code action} and records itself as fired. */
    private final class Recorded extends TimerNode {
        private final Runnable action;

        Recorded(Runnable action) {
            this.action = action;
        }

        @Override
        protected void expire() {
            action.run();
            fired.add(this);
        }
    }

    private TimerNode at(TimerWheel in, long deadline) {
        return at(in, () -> {}, deadline);
    }

    private TimerNode at(TimerWheel in, Runnable action, long deadline) {
        TimerNode node = new Recorded(action);
        in.scheduleAt(node, deadline);
        return node;
    }

    /** Re-arms {@code node}; returns whether it was pending. */
    private boolean rearm(TimerNode node, long deadline) {
        boolean was = node.isPending();
        wheel.scheduleAt(node, deadline);
        return was;
    }

    private long in(long nanos) {
        return now + nanos;
    }

    private int pollAfter(long nanos) {
        now += nanos;
        return wheel.poll(now);
    }

    @Test
    void timerFiresWhenPolledAtItsExactDeadlineNotAtATickBoundary() {
        TimerNode id = at(wheel, in(10_300_000)); // 10.3 ms, inside a tick
        assertEquals(0, pollAfter(10_200_000));
        assertEquals(0, pollAfter(99_999));
        assertEquals(1, pollAfter(1));
        assertEquals(List.of(id), fired);
    }

    @Test
    void timerPolledAfterItsDeadlineInTheSameTickFires() {
        at(wheel, in(10_300_000));
        assertEquals(1, pollAfter(10_400_000));
    }

    @Test
    void deadlineAlreadyPassedFiresAtTheNextPoll() {
        at(wheel, in(-5 * MS));
        at(wheel, now);
        assertEquals(2, wheel.poll(now));
    }

    @Test
    void deadlineBeforeTheWheelStartedIsDueAtOnce() {
        at(wheel, START - Long.MAX_VALUE / 2);
        assertEquals(1, wheel.poll(now));
    }

    @Test
    void saturatedDelayStaysPendingForCenturies() {
        TimerNode id = at(wheel, TimerWheel.deadlineAfter(now, Long.MAX_VALUE));
        assertEquals(now + (1L << 62), wheel.deadlineNanos(id));
        assertEquals(0, pollAfter(TimeUnit.DAYS.toNanos(365 * 100)));
        assertTrue(id.isPending());
    }

    /** Delays that land on every level, including exactly on level boundaries. */
    @ParameterizedTest(name = "delay 2^{0} ns")
    @ValueSource(ints = {0, 19, 20, 21, 25, 26, 27, 31, 32, 33, 37, 38, 44, 50, 56, 61, 62})
    void timerOnAnyLevelFiresExactlyAtItsDeadline(int bits) {
        long delay = (1L << bits) + 12_345;
        TimerNode id = at(wheel, in(delay));
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

    /**
     * Orders are ints compared by difference: before the count would pass Integer.MAX_VALUE the
     * wheel renumbers its pending nodes, keeping equal deadlines in scheduling order across it.
     */
    @Test
    void equalDeadlinesKeepSchedulingOrderAcrossTheRenumbering() {
        long deadline = in(3 * TICK);
        List<TimerNode> scheduled = new ArrayList<>();
        scheduled.add(at(wheel, deadline)); // order 0: far older than the rest
        at(wheel, in(500 * TICK)); // a pending node on an upper level, renumbered too
        wheel.startOrdersAt(Integer.MAX_VALUE - 3);
        for (int i = 0; i < 6; i++) {
            scheduled.add(at(wheel, deadline));
        }
        for (int i = 1; i < scheduled.size(); i++) {
            assertTrue(scheduled.get(i - 1).order() - scheduled.get(i).order() < 0, "orders ascend at " + i);
        }
        assertTrue(scheduled.get(scheduled.size() - 1).order() < 16, "renumbered from 0");
        assertEquals(scheduled.size(), pollAfter(3 * TICK));
        assertEquals(scheduled, fired);
    }

    @Test
    void aNodeReportsItsDeadlineBeforeArmingAndAsArmed() {
        TimerNode node = new Recorded(() -> {});
        NodeDeadlines.set(node, in(7));
        assertEquals(in(7), NodeDeadlines.get(node));
        wheel.scheduleAt(node, in(TICK));
        assertEquals(in(TICK), NodeDeadlines.get(node));
        assertThrows(IllegalStateException.class, () -> NodeDeadlines.set(node, in(9)));
        pollAfter(TICK);
        assertEquals(in(0), NodeDeadlines.get(node), "kept after firing");
    }

    @Test
    void cancelledTimerNeverFires() {
        TimerNode id = at(wheel, in(TICK));
        assertTrue(wheel.cancel(id));
        pollAfter(10 * TICK);
        assertTrue(fired.isEmpty());
        assertEquals(0, wheel.pendingTimers());
    }

    @Test
    void cancelTwiceReturnsFalseTheSecondTime() {
        TimerNode id = at(wheel, in(TICK));
        assertTrue(wheel.cancel(id));
        assertFalse(wheel.cancel(id));
    }

    @Test
    void cancelAfterFireReturnsFalse() {
        TimerNode id = at(wheel, in(TICK));
        pollAfter(TICK);
        assertFalse(wheel.cancel(id));
    }

    @Test
    void rescheduleLaterWaitsForTheNewDeadline() {
        TimerNode id = at(wheel, in(2 * MS));
        assertTrue(rearm(id, in(50 * MS)));
        assertEquals(0, pollAfter(50 * MS - 1));
        assertEquals(1, pollAfter(1));
        assertEquals(List.of(id), fired);
    }

    @Test
    void rescheduleLaterAgainAndAgainFiresOnceAtTheLastDeadline() {
        TimerNode id = at(wheel, in(30 * MS));
        for (int i = 0; i < 100; i++) {
            pollAfter(MS);
            assertTrue(rearm(id, in(30 * MS)));
        }
        assertEquals(0, pollAfter(30 * MS - 1));
        assertEquals(1, pollAfter(1));
    }

    @Test
    void rescheduleEarlierFiresAtTheNewDeadline() {
        TimerNode id = at(wheel, in(TimeUnit.HOURS.toNanos(5)));
        assertTrue(rearm(id, in(3 * MS + 7)));
        assertEquals(0, pollAfter(3 * MS + 6));
        assertEquals(1, pollAfter(1));
    }

    @Test
    void rescheduleWithinTheCurrentTickKeepsDeadlineOrder() {
        List<String> order = new ArrayList<>();
        TimerNode a = at(wheel, () -> order.add("a"), in(TICK / 2));
        TimerNode b = at(wheel, () -> order.add("b"), in(TICK / 2 + 10));
        pollAfter(TICK / 4); // inside the tick: its slot is now kept in order
        assertTrue(rearm(a, in(TICK / 4 + 20)));
        assertTrue(rearm(b, in(TICK / 4 + 5)));
        assertEquals(2, pollAfter(TICK / 2));
        assertEquals(List.of("b", "a"), order);
    }

    @Test
    void rescheduleLaterWithinAFutureTickFiresInDeadlineOrder() {
        List<String> order = new ArrayList<>();
        TimerNode a = at(wheel, () -> order.add("a"), in(3 * TICK + 10));
        at(wheel, () -> order.add("b"), in(3 * TICK + 20));
        assertTrue(rearm(a, in(3 * TICK + 30))); // same tick, later: must not stay ahead of b
        assertEquals(2, pollAfter(4 * TICK));
        assertEquals(List.of("b", "a"), order);
    }

    @Test
    void anEarlierDeadlineAppendedToAFutureTickFiresFirst() {
        List<String> order = new ArrayList<>();
        at(wheel, () -> order.add("b"), in(3 * TICK + 20));
        at(wheel, () -> order.add("c"), in(3 * TICK + 30));
        at(wheel, () -> order.add("a"), in(3 * TICK + 5)); // breaks the slot's order: sorted at its tick
        at(wheel, () -> order.add("d"), in(3 * TICK + 30)); // equal to c, scheduled later
        assertEquals(4, pollAfter(4 * TICK));
        assertEquals(List.of("a", "b", "c", "d"), order);
    }

    @Test
    void throwingCallbackIsCountedAndOthersStillFire() {
        at(
                wheel,
                () -> {
                    throw new IllegalStateException("boom");
                },
                in(TICK));
        at(wheel, in(TICK));
        assertEquals(2, pollAfter(TICK));
        assertEquals(1, fired.size());
        assertEquals(1, wheel.failedCount());
    }

    @Test
    void latenessIsThePollReadingMinusTheDeadline() {
        at(wheel, in(5 * MS));
        List<Long> lateness = new ArrayList<>();
        now += 8 * MS;
        wheel.poll(now, lateness::add, Integer.MAX_VALUE);
        assertEquals(List.of(3 * MS), lateness);
    }

    @Test
    void catchUpAfterALongPauseFiresEveryOverdueTimerOnceInDeadlineOrder() {
        List<Long> order = new ArrayList<>();
        long[] delays = {
            700 * TICK,
            3 * TICK,
            65 * TICK,
            64 * TICK,
            129 * TICK,
            TICK,
            5000 * TICK,
            TimeUnit.SECONDS.toNanos(40),
            TimeUnit.MINUTES.toNanos(30) + 7
        };
        for (long delay : delays) {
            at(wheel, () -> order.add(delay), in(delay));
        }
        assertEquals(delays.length, pollAfter(TimeUnit.HOURS.toNanos(1)));
        assertEquals(
                List.of(
                        TICK,
                        3 * TICK,
                        64 * TICK,
                        65 * TICK,
                        129 * TICK,
                        700 * TICK,
                        5000 * TICK,
                        TimeUnit.SECONDS.toNanos(40),
                        TimeUnit.MINUTES.toNanos(30) + 7),
                order);
        assertEquals(0, pollAfter(TimeUnit.HOURS.toNanos(1)));
    }

    @Test
    void driverWakingAtEachNextDeadlineSeesTimersOfOneTickInDeadlineOrder() {
        List<Long> order = new ArrayList<>();
        long[] offsets = {900_000, 100, 500_000, 100_000, 100, 700_000};
        for (long offset : offsets) {
            at(wheel, () -> order.add(offset), in(3 * TICK + offset));
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
        TimerNode[] victim = new TimerNode[1];
        TimerNode canceller = at(wheel, () -> assertTrue(wheel.cancel(victim[0])), in(TICK));
        victim[0] = at(wheel, in(TICK + 1));
        assertEquals(1, pollAfter(2 * TICK));
        assertEquals(List.of(canceller), fired);
    }

    @Test
    void callbackMayRescheduleATimerOfTheSlotBeingWalked() {
        TimerNode[] other = new TimerNode[1];
        at(wheel, () -> assertTrue(rearm(other[0], now + 10 * TICK)), in(TICK));
        other[0] = at(wheel, in(TICK + 5));
        assertEquals(1, pollAfter(2 * TICK));
        assertEquals(0, pollAfter(10 * TICK - 1));
        assertEquals(1, pollAfter(1));
    }

    @Test
    void timerACallbackSchedulesDueLaterInThisPollFiresInThisPoll() {
        List<Long> order = new ArrayList<>();
        long first = now + TICK;
        at(
                wheel,
                () -> {
                    order.add(1L);
                    at(wheel, () -> order.add(2L), first + 3 * TICK);
                },
                first);
        assertEquals(2, pollAfter(5 * TICK));
        assertEquals(List.of(1L, 2L), order);
    }

    @Test
    void timerACallbackMakesDueAtOrBeforeTheFiredDeadlineWaitsForTheNextPoll() {
        List<TimerNode> expiries = new ArrayList<>();
        long deadline = now + TICK;
        wheel.scheduleAt(
                new TimerNode() {
                    @Override
                    protected void expire() {
                        expiries.add(this);
                        TimerWheelTest.this.wheel.scheduleAt(
                                this, deadline); // due again at once: must not keep the poll busy
                    }
                },
                deadline);
        assertEquals(1, pollAfter(TICK));
        assertEquals(1, wheel.pendingTimers());
        assertTrue(wheel.nextDeadlineNanos() - now <= 0, "due: the driver polls again at once");
        assertEquals(1, wheel.poll(now));
        assertEquals(2, expiries.size());
    }

    @Test
    void pollFromACallbackIsRejected() {
        List<Throwable> errors = new ArrayList<>();
        at(
                wheel,
                () -> {
                    try {
                        wheel.poll(now);
                    } catch (IllegalStateException e) {
                        errors.add(e);
                    }
                },
                in(TICK));
        pollAfter(TICK);
        assertEquals(1, errors.size());
    }

    @Test
    void pollWithAnEarlierReadingCountsAsTheLastOne() {
        at(wheel, in(TICK));
        pollAfter(TICK / 2);
        assertEquals(0, wheel.poll(now - TICK));
        assertEquals(1, wheel.pendingTimers());
    }

    @Test
    void nextDeadlineIsTheExactEarliestDeadlineEvenBeyondOneTurn() {
        at(wheel, in(1000 * TICK + 17));
        at(wheel, in(300 * TICK + 5));
        assertEquals(in(300 * TICK + 5), wheel.nextDeadlineNanos());
    }

    @Test
    void nextDeadlineIsNeverLateAfterACancel() {
        // Both beyond level 0 (64 ticks), in the same slot of level 1 (ticks 256 to 319).
        TimerNode early = at(wheel, in(300 * TICK));
        TimerNode late = at(wheel, in(310 * TICK));
        wheel.cancel(early);
        long wake = wheel.nextDeadlineNanos();
        assertTrue(wake - in(310 * TICK) <= 0, "not after the pending timer");
        long deadline = in(310 * TICK);
        now = wake;
        assertEquals(0, wheel.poll(now));
        assertEquals(deadline, wheel.nextDeadlineNanos(), "exact once the driver looked");
        assertTrue(late.isPending());
    }

    /** The engine takes plain numbers from any caller, so it checks them itself. */
    @Test
    void constructorRejectsWhatTheWheelCannotBeMadeOf() {
        assertThrows(IllegalArgumentException.class, () -> new TimerWheel(START, 0, SLOTS));
        assertThrows(IllegalArgumentException.class, () -> new TimerWheel(START, -TICK, SLOTS));
        assertThrows(IllegalArgumentException.class, () -> new TimerWheel(START, TICK + 1, SLOTS));
        assertThrows(IllegalArgumentException.class, () -> new TimerWheel(START, TICK, 32));
        assertThrows(IllegalArgumentException.class, () -> new TimerWheel(START, TICK, 8192));
        assertThrows(IllegalArgumentException.class, () -> new TimerWheel(START, TICK, 100));
        TimerWheel smallest = new TimerWheel(START, 1, 64);
        assertEquals(1, smallest.tickNanos());
        assertEquals(64, smallest.slots());
        at(smallest, START + 1000);
        at(smallest, START + (1L << 40));
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
        TimerWheel wrapping = new TimerWheel(Long.MAX_VALUE - 2 * MS, TICK, SLOTS);
        long at = Long.MAX_VALUE - 2 * MS;
        at(wrapping, at + 5 * MS); // past the wrap
        at(wrapping, at + MS); // before it
        assertEquals(1, wrapping.poll(at + MS));
        assertEquals(0, wrapping.poll(at + 5 * MS - 1));
        assertEquals(1, wrapping.poll(at + 5 * MS));
        assertTrue(at + 5 * MS < 0, "the reading did wrap");
        at(wrapping, at + 10 * MS);
        assertEquals(at + 10 * MS, wrapping.nextDeadlineNanos());
        assertEquals(1, wrapping.poll(at + 11 * MS));
    }

    @Test
    void clockStartingBelowZeroWorks() {
        long start = -TimeUnit.DAYS.toNanos(3);
        TimerWheel negative = new TimerWheel(start, TICK, SLOTS);
        at(negative, start + 7 * MS);
        assertEquals(0, negative.poll(start + 7 * MS - 1));
        assertEquals(1, negative.poll(start + 7 * MS));
    }

    @Test
    void countersTrackScheduledCancelledAndExpired() {
        TimerNode a = at(wheel, in(TICK));
        at(wheel, in(TICK));
        wheel.cancel(a);
        pollAfter(TICK);
        assertEquals(2, wheel.scheduledCount());
        assertEquals(1, wheel.cancelledCount());
        assertEquals(1, wheel.expiredCount());
        assertEquals(0, wheel.pendingTimers());
    }

    // ---------------------------------------------------------------- Netty's order: deadline, then scheduling

    /** Issue 21 item 8: 5.4 ms scheduled first, 5.3 ms second, a 7 ms stall: Netty fires 5.3 ms first. */
    @Test
    void timersOfOneTickReachedByAStallFireByDeadlineNotInTheOrderTheyWereScheduled() {
        List<String> order = new ArrayList<>();
        at(wheel, () -> order.add("A"), in(5_400_000));
        at(wheel, () -> order.add("B"), in(5_300_000));
        assertEquals(2, pollAfter(7 * MS));
        assertEquals(List.of("B", "A"), order);
    }

    /**
     * 300 timers in one slot, scheduled in random order, some sharing a deadline, fire by deadline
     * then scheduling: spread over the tick, crowded at its start, and overdue over 2^40 ns with
     * orders 2^31 apart (each sorted another way).
     */
    @ParameterizedTest
    @ValueSource(strings = {"spread", "crowded", "overdue"})
    void aCrowdedSlotFiresByDeadlineThenScheduling(String deadlines) {
        SplittableRandom random = new SplittableRandom(7);
        boolean overdue = deadlines.equals("overdue");
        if (overdue) {
            pollAfter(1L << 41);
        }
        long[] at = new long[300];
        for (int i = 0; i < at.length; i++) {
            at[i] = switch (deadlines) {
                case "spread" -> in(3 * TICK + random.nextLong(TICK));
                case "crowded" -> in(3 * TICK + (i < 290 ? random.nextLong(1000) : TICK - 1 - i));
                default -> in(-random.nextLong(1L << 40));
            };
            if (i % 7 == 6) {
                at[i] = at[i - 3];
            }
        }
        Map<TimerNode, Integer> scheduled = new HashMap<>();
        List<Integer> byDeadline = new ArrayList<>();
        for (int i = 0; i < at.length; i++) {
            if (overdue && i == at.length / 2) {
                wheel.startOrdersAt(Integer.MAX_VALUE - 400);
            }
            scheduled.put(at(wheel, at[i]), i);
            byDeadline.add(i);
        }
        byDeadline.sort(Comparator.<Integer>comparingLong(i -> at[i] - START).thenComparing(i -> i));
        pollAfter(4 * TICK);
        assertEquals(byDeadline, fired.stream().map(scheduled::get).toList());
    }

    /** A callback's schedulings renumber the wheel while the rest of its tick waits to fire. */
    @Test
    void aRenumberingFromACallbackKeepsTheTickBeingFiredInOrder() {
        long deadline = in(3 * TICK);
        List<TimerNode> added = new ArrayList<>();
        int[] pendingSeen = {-1};
        TimerNode first = at(
                wheel,
                () -> {
                    wheel.startOrdersAt(Integer.MAX_VALUE - 1);
                    added.add(at(wheel, deadline + 1));
                    added.add(at(wheel, deadline + 1)); // renumbers first
                    pendingSeen[0] = 0;
                    wheel.forEachPending(node -> pendingSeen[0]++);
                },
                deadline);
        List<TimerNode> expected = new ArrayList<>(List.of(first));
        for (int i = 0; i < 5; i++) {
            expected.add(at(wheel, deadline + 1)); // due with the two added, and older
        }
        assertEquals(8, pollAfter(4 * TICK));
        expected.addAll(added);
        assertEquals(expected, fired);
        assertEquals(7, pendingSeen[0], "the tick's five unfired nodes and the two added");
        assertEquals(0, wheel.pendingTimers());
    }

    @Test
    void equalDeadlinesFireInSchedulingOrder() {
        List<Integer> order = new ArrayList<>();
        long deadline = in(3 * TICK + 77);
        TimerNode[] spacers = new TimerNode[8];
        for (int i = 0; i < spacers.length; i++) {
            spacers[i] = at(wheel, in(50 * TICK));
        }
        // Cancel in between, so later timers may reuse what earlier ones left.
        for (int i = 0; i < 8; i++) {
            int n = i;
            at(wheel, () -> order.add(n), deadline);
            wheel.cancel(spacers[spacers.length - 1 - i]);
        }
        assertEquals(8, pollAfter(4 * TICK));
        assertEquals(List.of(0, 1, 2, 3, 4, 5, 6, 7), order);
    }

    @Test
    void rescheduleCountsAsANewSchedulingAmongEqualDeadlines() {
        List<String> order = new ArrayList<>();
        long deadline = in(2 * TICK + 5);
        TimerNode a = at(wheel, () -> order.add("A"), in(TICK));
        at(wheel, () -> order.add("B"), deadline);
        TimerNode c = at(wheel, () -> order.add("C"), in(9 * TICK));
        assertTrue(rearm(a, deadline)); // later: the lazy path
        assertTrue(rearm(c, deadline)); // earlier: relinked
        assertEquals(3, pollAfter(3 * TICK));
        assertEquals(List.of("B", "A", "C"), order);
    }

    @Test
    void timersOfOneTickStillOnAnUpperLevelFireInOrderWithTheTickSlot() {
        List<String> order = new ArrayList<>();
        long tickStart = START + 100 * TICK - (START & (TICK - 1)); // 100 ticks on, 64 level-0 slots
        at(wheel, () -> order.add("far, first"), tickStart + 500); // level 1 for now
        at(wheel, () -> order.add("far, late"), tickStart + 900);
        assertEquals(0, pollAfter(90 * TICK));
        at(wheel, () -> order.add("near, early"), tickStart + 100); // level 0
        at(wheel, () -> order.add("near, tie"), tickStart + 500);
        assertEquals(4, pollAfter(20 * TICK));
        assertEquals(List.of("near, early", "far, first", "near, tie", "far, late"), order);
    }

    @Test
    void aTimerACallbackSchedulesInTheTickBeingFiredFiresInOrderInTheSamePoll() {
        List<String> order = new ArrayList<>();
        long tickStart = START + 3 * TICK - (START & (TICK - 1));
        at(
                wheel,
                () -> {
                    order.add("first");
                    at(wheel, () -> order.add("added at 300"), tickStart + 300);
                    at(wheel, () -> order.add("added at 200"), tickStart + 200);
                },
                tickStart + 100);
        at(wheel, () -> order.add("at 200"), tickStart + 200);
        at(wheel, () -> order.add("at 400"), tickStart + 400);
        assertEquals(5, pollAfter(5 * TICK));
        assertEquals(List.of("first", "at 200", "added at 200", "added at 300", "at 400"), order);
    }

    @Test
    void anAppendToATickSortedWhilePartlyFiredFiresInDeadlineOrder() {
        List<String> order = new ArrayList<>();
        long tickStart = START + 3 * TICK - (START & (TICK - 1));
        at(wheel, () -> order.add("at 500"), tickStart + 500);
        at(wheel, () -> order.add("at 100"), tickStart + 100); // out of order: the tick is sorted
        now = tickStart + 200;
        assertEquals(1, wheel.poll(now)); // fires 100; 500 is the slot's last node now
        at(wheel, () -> order.add("at 300"), tickStart + 300); // before that last node
        assertEquals(2, pollAfter(TICK));
        assertEquals(List.of("at 100", "at 300", "at 500"), order);
    }

    /** A tick in order fires from the chain of its nodes' links, which a callback may change. */
    @Test
    void aCallbackThatCancelsAndRearmsLaterNodesOfATickInOrderLeavesTheRestInOrder() {
        List<String> order = new ArrayList<>();
        long tickStart = START + 3 * TICK - (START & (TICK - 1));
        TimerNode[] later = new TimerNode[3];
        at(
                wheel,
                () -> {
                    order.add("first");
                    assertTrue(wheel.cancel(later[1]));
                    assertTrue(rearm(later[0], tickStart + 10 * TICK));
                    assertTrue(rearm(later[2], tickStart + 700)); // this tick, after "at 500"
                },
                tickStart + 100);
        later[0] = at(wheel, () -> order.add("re-armed to a later tick"), tickStart + 200);
        later[1] = at(wheel, () -> order.add("cancelled"), tickStart + 300);
        later[2] = at(wheel, () -> order.add("re-armed to 700"), tickStart + 400);
        at(wheel, () -> order.add("at 500"), tickStart + 500);
        at(wheel, () -> order.add("at 600"), tickStart + 600);
        assertEquals(4, pollAfter(5 * TICK));
        assertEquals(List.of("first", "at 500", "at 600", "re-armed to 700"), order);
        assertEquals(1, wheel.pendingTimers());
        assertEquals(1, pollAfter(10 * TICK));
        assertEquals("re-armed to a later tick", order.get(4));
    }

    // ---------------------------------------------------------------- bounded polls

    @Test
    void pollWithALimitFiresAtMostThatManyAndTheNextPollsContinueInOrder() {
        int timers = 100_000;
        TimerNode[] ids = new TimerNode[timers];
        java.util.SplittableRandom random = new java.util.SplittableRandom(7);
        for (int i = 0; i < timers; i++) {
            // Many equal deadlines over a few ticks and levels.
            ids[i] = at(wheel, in(random.nextInt(2000) * (TICK / 4)));
        }
        List<TimerNode> order = fired;
        List<TimerNode> expected = new ArrayList<>();
        Integer[] byOrder = new Integer[timers];
        for (int i = 0; i < timers; i++) {
            byOrder[i] = i;
        }
        java.util.Arrays.sort(
                byOrder,
                java.util.Comparator.comparingLong((Integer i) -> wheel.deadlineNanos(ids[i]) - START)
                        .thenComparingInt(i -> i));
        for (Integer i : byOrder) {
            expected.add(ids[i]);
        }
        now += 600 * TICK; // a stall: everything is due, most of it still on level 1
        int limit = 1000;
        int polls = 0;
        while (wheel.pendingTimers() > 0) {
            long movedBefore = wheel.movedCount();
            int fired = wheel.poll(now, lateness -> {}, limit);
            assertTrue(fired + wheel.movedCount() - movedBefore <= limit, "fired plus moved in one poll");
            polls++;
            if (wheel.pendingTimers() > 0) {
                assertTrue(wheel.nextDeadlineNanos() - now <= 0, "the rest is still due");
            }
        }
        assertTrue(wheel.largestPoll() <= limit, "largest poll " + wheel.largestPoll());
        assertTrue(polls >= timers / limit, polls + " polls");
        assertEquals(expected, order, "each once, by deadline then scheduling order");
        assertEquals(0, wheel.pendingTimers());
    }

    @Test
    void rearmOfAFiredNodeArmsItAgain() {
        TimerNode node = at(wheel, in(TICK));
        assertEquals(1, pollAfter(TICK));
        assertFalse(rearm(node, in(TICK)));
        assertTrue(node.isPending());
        assertEquals(1, pollAfter(TICK));
        assertEquals(List.of(node, node), fired);
    }

    @Test
    void theDeadlineOfANodeIsKnownWhilePending() {
        TimerNode node = at(wheel, in(TICK));
        assertEquals(in(TICK), wheel.deadlineNanos(node));
        assertTrue(wheel.cancel(node));
        assertThrows(IllegalStateException.class, () -> wheel.deadlineNanos(node));
        assertFalse(wheel.cancel(node));
    }

    @Test
    void limitBelowOneIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> wheel.poll(now, lateness -> {}, 0));
    }
}
