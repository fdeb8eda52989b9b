package io.wheelbeat.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class ExecutorDrivenWheelTest {

    private static final long TICK = 1L << 20;

    private final VirtualExecutor executor = new VirtualExecutor();
    private final ExecutorDrivenWheel driven =
            new ExecutorDrivenWheel(executor, TimerWheel.builder().ticker(executor.ticker));
    private final List<Long> fired = new ArrayList<>();

    @Test
    void callbackRunsWhenTheExecutorReachesItsTick() {
        long id = driven.schedule(fired::add, 10, TimeUnit.MILLISECONDS);
        executor.advance(9, TimeUnit.MILLISECONDS);
        assertTrue(fired.isEmpty());
        executor.advance(2, TimeUnit.MILLISECONDS);
        assertEquals(List.of(id), fired);
    }

    @Test
    void thousandsOfTimersCostTheExecutorOneScheduledTask() {
        for (int i = 1; i <= 5_000; i++) {
            driven.schedule(fired::add, i, TimeUnit.MILLISECONDS);
        }
        assertEquals(1, executor.pendingScheduled());
    }

    @Test
    void emptyWheelSchedulesNothing() {
        long id = driven.schedule(fired::add, 10, TimeUnit.MILLISECONDS);
        driven.cancel(id);
        executor.advance(1, TimeUnit.SECONDS);
        assertEquals(0, executor.pendingScheduled());
    }

    @Test
    void sparseWheelSleepsUntilTheNextOccupiedSlotInsteadOfTicking() {
        driven.schedule(fired::add, 30, TimeUnit.SECONDS);
        executor.scheduledDelays.clear();
        driven.schedule(fired::add, 10, TimeUnit.SECONDS);
        assertEquals(1, executor.scheduledDelays.size(), "moved earlier once");
        long firstWait = executor.scheduledDelays.get(0);
        assertTrue(firstWait >= TimeUnit.SECONDS.toNanos(10) && firstWait < TimeUnit.SECONDS.toNanos(10) + TICK);

        executor.advance(TimeUnit.SECONDS.toNanos(10) + TICK, TimeUnit.NANOSECONDS);
        assertEquals(1, fired.size());
        long secondWait = executor.scheduledDelays.get(executor.scheduledDelays.size() - 1);
        assertTrue(secondWait > TimeUnit.SECONDS.toNanos(19), "slept across 20 s in one wait: " + secondWait);
        executor.advance(20, TimeUnit.SECONDS);
        assertEquals(2, fired.size());
        assertEquals(2, executor.scheduledDelays.size(), "one wait per occupied slot, none once empty");
    }

    @Test
    void laterTimerDoesNotMoveTheDrivingTask() {
        driven.schedule(fired::add, 10, TimeUnit.SECONDS);
        executor.scheduledDelays.clear();
        driven.schedule(fired::add, 20, TimeUnit.SECONDS);
        assertTrue(executor.scheduledDelays.isEmpty());
    }

    @Test
    void rescheduleOnTheOwnerThreadMovesTheTimer() {
        long id = driven.schedule(fired::add, 10, TimeUnit.MILLISECONDS);
        assertTrue(driven.reschedule(id, 50, TimeUnit.MILLISECONDS));
        executor.advance(20, TimeUnit.MILLISECONDS);
        assertTrue(fired.isEmpty());
        executor.advance(40, TimeUnit.MILLISECONDS);
        assertEquals(List.of(id), fired);
    }

    @Test
    void longIdApiFromAnotherThreadIsRejected() throws InterruptedException {
        AtomicReference<Throwable> error = new AtomicReference<>();
        Thread other = new Thread(() -> {
            try {
                driven.schedule(fired::add, 1, TimeUnit.SECONDS);
            } catch (Throwable t) {
                error.set(t);
            }
        });
        other.start();
        other.join();
        assertTrue(error.get() instanceof IllegalStateException, String.valueOf(error.get()));
        assertEquals(0, driven.wheel().pendingTimers());
    }

    @Test
    void timeoutFromAnotherThreadIsHandedOverAndRunsOnTheOwner() throws InterruptedException {
        AtomicReference<WheelTimeout> handle = new AtomicReference<>();
        List<Thread> ranOn = new ArrayList<>();
        Thread other = new Thread(() -> handle.set(driven.newTimeout(t -> ranOn.add(Thread.currentThread()),
                10, TimeUnit.MILLISECONDS)));
        other.start();
        other.join();
        assertEquals(1, driven.pendingTimers(), "reserved before it is placed");
        assertEquals(0, driven.wheel().pendingTimers());
        executor.runDue();
        assertEquals(1, driven.wheel().pendingTimers(), "placed by the owner");
        executor.advance(11, TimeUnit.MILLISECONDS);
        assertEquals(List.of(Thread.currentThread()), ranOn);
        assertTrue(handle.get().isExpired());
        assertEquals(0, driven.pendingTimers());
    }

    @Test
    void timeoutCancelledFromAnotherThreadBeforeItIsPlacedNeverRuns() throws InterruptedException {
        List<WheelTimeout> ran = new ArrayList<>();
        Thread other = new Thread(() -> {
            WheelTimeout timeout = driven.newTimeout(ran::add, 10, TimeUnit.MILLISECONDS);
            assertTrue(timeout.cancel());
        });
        other.start();
        other.join();
        executor.advance(20, TimeUnit.MILLISECONDS);
        assertTrue(ran.isEmpty());
        assertEquals(0, driven.pendingTimers());
    }

    @Test
    void timeoutCancelledFromAnotherThreadAfterItIsPlacedLeavesTheWheel() throws InterruptedException {
        List<WheelTimeout> ran = new ArrayList<>();
        WheelTimeout timeout = driven.newTimeout(ran::add, 10, TimeUnit.MILLISECONDS);
        assertEquals(1, driven.wheel().pendingTimers());
        Thread other = new Thread(() -> assertTrue(timeout.cancel()));
        other.start();
        other.join();
        executor.runDue();
        assertEquals(0, driven.wheel().pendingTimers());
        executor.advance(20, TimeUnit.MILLISECONDS);
        assertTrue(ran.isEmpty());
    }

    @Test
    void throwingTaskDoesNotStopTheWheel() {
        driven.newTimeout(t -> {
            throw new IllegalStateException("boom");
        }, 1, TimeUnit.MILLISECONDS);
        driven.schedule(fired::add, 2, TimeUnit.MILLISECONDS);
        executor.advance(5, TimeUnit.MILLISECONDS);
        assertEquals(1, fired.size());
    }

    @Test
    void handedOverTimeoutsBeyondTheMaximumAreRejected() throws InterruptedException {
        ExecutorDrivenWheel bounded = new ExecutorDrivenWheel(executor,
                TimerWheel.builder().ticker(executor.ticker).maxPendingTimers(1));
        bounded.schedule(fired::add, 1, TimeUnit.SECONDS);
        AtomicReference<Throwable> error = new AtomicReference<>();
        Thread other = new Thread(() -> {
            try {
                bounded.newTimeout(t -> { }, 1, TimeUnit.SECONDS);
            } catch (Throwable t) {
                error.set(t);
            }
        });
        other.start();
        other.join();
        assertTrue(error.get() instanceof java.util.concurrent.RejectedExecutionException, String.valueOf(error.get()));
        assertEquals(1, bounded.pendingTimers());
        assertFalse(bounded.wheel().pendingTimers() > 1);
    }
}
