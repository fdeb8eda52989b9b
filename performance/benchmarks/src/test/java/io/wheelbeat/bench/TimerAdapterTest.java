package io.wheelbeat.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Every contender, through its adapter, does the work the benchmarks claim: timers fire once,
 * re-armed and cancelled ones do not fire at their old deadline. Owner-thread contenders run on
 * virtual time; threaded ones in real time with short delays and generous waits (never timed).
 */
class TimerAdapterTest {

    private static final long TICK = TimerAdapter.TICK_NANOS;
    private static final long GENEROUS_WAIT_NANOS = TimeUnit.SECONDS.toNanos(20);

    @ParameterizedTest
    @EnumSource(Contender.class)
    void everyScheduledTimerFiresExactlyOnce(Contender contender) throws InterruptedException {
        try (TimerAdapter timers = contender.create(100, !contender.threaded)) {
            for (int i = 0; i < 100; i++) {
                timers.schedule(i, (1 + i % 10) * TICK);
            }
            fire(timers, 12 * TICK, 100);
            Thread.sleep(contender.threaded ? 50 : 0);
            assertEquals(100, timers.fired(), "a timer fired twice");
        }
    }

    @ParameterizedTest
    @EnumSource(Contender.class)
    void aCancelledTimerDoesNotFire(Contender contender) throws InterruptedException {
        // Real time for threaded contenders: long enough that the cancel surely comes first.
        long unit = contender.threaded ? TimeUnit.MILLISECONDS.toNanos(100) : TICK;
        try (TimerAdapter timers = contender.create(2, !contender.threaded)) {
            long start = System.nanoTime();
            timers.schedule(0, 3 * unit);
            timers.cancel(0);
            long cancelledAfter = System.nanoTime() - start;
            timers.schedule(1, 6 * unit);
            assumeTrue(
                    !contender.threaded || cancelledAfter < unit,
                    "the machine stalled for longer than the delay: the race cannot be judged");

            fire(timers, 8 * unit, 1);
            Thread.sleep(contender.threaded ? 50 : 0);
            assertEquals(1, timers.fired(), "the cancelled timer fired");
        }
    }

    @ParameterizedTest
    @EnumSource(
            value = Contender.class,
            names = {"OURS", "NETTY_EVENTLOOP", "AGRONA"})
    void aRearmedTimerFiresAtItsNewDeadlineNotTheOld(Contender contender) {
        try (TimerAdapter timers = contender.create(1, true)) {
            timers.schedule(0, 5 * TICK);
            timers.advanceTime(3 * TICK);
            timers.rearm(0, 5 * TICK);

            timers.advanceTime(3 * TICK);
            timers.poll();
            assertEquals(0, timers.fired(), "fired at the old deadline");
            timers.advanceTime(3 * TICK);
            timers.poll();
            assertEquals(1, timers.fired());
        }
    }

    @ParameterizedTest
    @EnumSource(
            value = Contender.class,
            names = {"OURS", "NETTY_EVENTLOOP", "AGRONA"})
    void rearmingATimerThatFiredSchedulesItAgainAndTouchesNoOtherTimer(Contender contender) {
        try (TimerAdapter timers = contender.create(2, true)) {
            timers.schedule(0, TICK);
            timers.advanceTime(2 * TICK);
            timers.poll();
            // Exactly one turn after the fired timer's tick: Agrona gives this timer the fired
            // timer's place, and so its id; re-arming the fired timer must not cancel it.
            timers.schedule(1, (TimerAdapter.WHEEL_TICKS - 1) * TICK);
            timers.rearm(0, 2 * TICK);

            timers.advanceTime((TimerAdapter.WHEEL_TICKS + 2) * TICK);
            timers.poll();
            assertEquals(3, timers.fired());
        }
    }

    @ParameterizedTest
    @EnumSource(
            value = Contender.class,
            names = {"OURS", "NETTY_EVENTLOOP", "AGRONA"})
    void pollCatchesUpOverAGapOfManyTicks(Contender contender) {
        try (TimerAdapter timers = contender.create(3, true)) {
            timers.schedule(0, 10 * TICK);
            timers.schedule(1, 5000 * TICK);
            timers.schedule(2, 20_000 * TICK);

            timers.advanceTime(20_001 * TICK);
            timers.poll();
            assertEquals(3, timers.fired());
        }
    }

    @ParameterizedTest
    @EnumSource(
            value = Contender.class,
            names = {"OURS_WHEELTIMER", "NETTY_HWT", "JDK_STPE", "KAFKA"})
    void threadedContendersRefuseVirtualTime(Contender contender) {
        assertThrows(IllegalArgumentException.class, () -> contender.create(1, true));
    }

    private static void fire(TimerAdapter timers, long virtualNanos, long expected) throws InterruptedException {
        if (!timers.threaded()) {
            timers.advanceTime(virtualNanos);
            timers.poll();
            return;
        }
        long deadline = System.nanoTime() + GENEROUS_WAIT_NANOS;
        while (timers.fired() < expected && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertTrue(timers.fired() >= expected, "only " + timers.fired() + " of " + expected + " fired");
    }
}
