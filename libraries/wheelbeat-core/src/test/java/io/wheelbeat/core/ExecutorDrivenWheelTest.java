package io.wheelbeat.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.wheelbeat.core.internal.WheelSettings;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class ExecutorDrivenWheelTest {

    private final VirtualExecutor executor = new VirtualExecutor();
    private final ExecutorDrivenWheel driven =
            new ExecutorDrivenWheel(executor, new WheelSettings().ticker(executor.ticker));
    private final List<TimerNode> fired = new ArrayList<>();

    /** A node that records its expiry in {@link #fired}. */
    private TimerNode recorded() {
        return new TimerNode() {
            @Override
            protected void expire() {
                fired.add(this);
            }
        };
    }

    private TimerNode schedule(long delayNanos) {
        TimerNode node = recorded();
        driven.schedule(node, delayNanos);
        return node;
    }

    @Test
    void callbackRunsWhenTheExecutorReachesItsTick() {
        TimerNode id = schedule(TimeUnit.MILLISECONDS.toNanos(10));
        executor.advance(9, TimeUnit.MILLISECONDS);
        assertTrue(fired.isEmpty());
        executor.advance(2, TimeUnit.MILLISECONDS);
        assertEquals(List.of(id), fired);
    }

    @Test
    void thousandsOfTimersCostTheExecutorOneScheduledTask() {
        for (int i = 1; i <= 5_000; i++) {
            schedule(TimeUnit.MILLISECONDS.toNanos(i));
        }
        assertEquals(1, executor.pendingScheduled());
    }

    @Test
    void emptyWheelSchedulesNothing() {
        TimerNode id = schedule(TimeUnit.MILLISECONDS.toNanos(10));
        driven.cancel(id);
        executor.advance(1, TimeUnit.SECONDS);
        assertEquals(0, executor.pendingScheduled());
    }

    @Test
    void drivingTaskIsAimedAtTheExactEarliestDeadline() {
        schedule(TimeUnit.SECONDS.toNanos(30));
        executor.scheduledDelays.clear();
        schedule(TimeUnit.MICROSECONDS.toNanos(10_000_123));
        assertEquals(List.of(10_000_123_000L), executor.scheduledDelays, "moved earlier once, to the deadline");

        executor.advance(10_000_123_000L, TimeUnit.NANOSECONDS);
        assertEquals(1, fired.size());
        assertEquals(
                List.of(10_000_123_000L, 30_000_000_000L - 10_000_123_000L),
                executor.scheduledDelays,
                "slept across 20 s in one wait, to the next deadline");
        executor.advance(TimeUnit.SECONDS.toNanos(20) - 123_001, TimeUnit.NANOSECONDS);
        assertEquals(1, fired.size(), "not a nanosecond early");
        executor.advance(1, TimeUnit.NANOSECONDS);
        assertEquals(2, fired.size());
        assertEquals(2, executor.scheduledDelays.size(), "one wait per deadline, none once empty");
    }

    @Test
    void rescheduleEarlierMovesTheDrivingTaskAndLaterDoesNot() {
        TimerNode id = schedule(TimeUnit.SECONDS.toNanos(10));
        executor.scheduledDelays.clear();
        driven.schedule(id, TimeUnit.SECONDS.toNanos(20));
        assertTrue(executor.scheduledDelays.isEmpty(), "a later deadline is one write");
        driven.scheduleAt(id, executor.ticker.nanoTime() + TimeUnit.SECONDS.toNanos(2));
        assertEquals(List.of(TimeUnit.SECONDS.toNanos(2)), executor.scheduledDelays);
        executor.advance(2, TimeUnit.SECONDS);
        assertEquals(List.of(id), fired);
    }

    @Test
    void timerScheduledFromACallbackForNowRunsInALaterTaskNotInALoop() {
        int[] runs = {0};
        driven.schedule(
                new TimerNode() {
                    @Override
                    protected void expire() {
                        if (++runs[0] < 3) {
                            driven.schedule(this, 0);
                        }
                    }
                },
                TimeUnit.MILLISECONDS.toNanos(1));
        executor.advance(1, TimeUnit.MILLISECONDS);
        assertEquals(3, runs[0]);
        assertEquals(0, driven.pendingTimers());
    }

    @Test
    void schedulingBeyondTheMaximumIsRejectedAndKeepsEveryPendingTimer() {
        ExecutorDrivenWheel bounded = new ExecutorDrivenWheel(
                executor, new WheelSettings().ticker(executor.ticker).maxPendingTimers(3));
        for (int i = 0; i < 3; i++) {
            bounded.schedule(recorded(), TimeUnit.MILLISECONDS.toNanos(1));
        }
        java.util.concurrent.RejectedExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(
                java.util.concurrent.RejectedExecutionException.class,
                () -> bounded.schedule(recorded(), TimeUnit.MILLISECONDS.toNanos(1)));
        assertTrue(e.getMessage().contains("maximum is 3"), e.getMessage());
        assertEquals(3, bounded.pendingTimers());
        executor.advance(1, TimeUnit.MILLISECONDS);
        assertEquals(3, fired.size());
    }

    @Test
    void everyOwnerThreadMethodFromAnotherThreadIsRejected() throws InterruptedException {
        TimerNode id = schedule(TimeUnit.SECONDS.toNanos(1));
        List<Runnable> calls = List.of(
                () -> driven.scheduleAt(recorded(), 0),
                () -> driven.cancel(id),
                () -> driven.schedule(id, TimeUnit.SECONDS.toNanos(1)),
                () -> driven.scheduleAt(id, 0),
                () -> driven.forEachPending(node -> {}));
        List<Throwable> errors = new java.util.concurrent.CopyOnWriteArrayList<>();
        Thread other = new Thread(() -> calls.forEach(call -> {
            try {
                call.run();
            } catch (Throwable t) {
                errors.add(t);
            }
        }));
        other.start();
        other.join();
        assertEquals(calls.size(), errors.size());
        assertTrue(errors.stream().allMatch(e -> e instanceof IllegalStateException), errors.toString());
        assertTrue(id.isPending());
    }

    @Test
    void nodeApiFromAnotherThreadIsRejected() throws InterruptedException {
        AtomicReference<Throwable> error = new AtomicReference<>();
        Thread other = new Thread(() -> {
            try {
                schedule(TimeUnit.SECONDS.toNanos(1));
            } catch (Throwable t) {
                error.set(t);
            }
        });
        other.start();
        other.join();
        assertTrue(error.get() instanceof IllegalStateException, String.valueOf(error.get()));
        assertEquals(0, driven.pendingTimers());
    }

    @Test
    void timeoutFromAnotherThreadIsHandedOverAndRunsOnTheOwner() throws InterruptedException {
        AtomicReference<WheelTimeout> handle = new AtomicReference<>();
        List<Thread> ranOn = new ArrayList<>();
        Thread other = new Thread(() -> handle.set(
                driven.newTimeout(t -> ranOn.add(Thread.currentThread()), TimeUnit.MILLISECONDS.toNanos(10))));
        other.start();
        other.join();
        assertEquals(1, driven.pendingTimers(), "reserved before it is placed");
        assertEquals(0, driven.scheduledCount(), "not in the wheel yet");
        executor.runDue();
        assertEquals(1, driven.scheduledCount(), "placed by the owner");
        assertEquals(1, driven.pendingTimers());
        executor.advance(11, TimeUnit.MILLISECONDS);
        assertEquals(List.of(Thread.currentThread()), ranOn);
        assertTrue(handle.get().isExpired());
        assertEquals(0, driven.pendingTimers());
    }

    @Test
    void timeoutCancelledFromAnotherThreadBeforeItIsPlacedNeverRuns() throws InterruptedException {
        List<WheelTimeout> ran = new ArrayList<>();
        Thread other = new Thread(() -> {
            WheelTimeout timeout = driven.newTimeout(ran::add, TimeUnit.MILLISECONDS.toNanos(10));
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
        WheelTimeout timeout = driven.newTimeout(ran::add, TimeUnit.MILLISECONDS.toNanos(10));
        assertEquals(1, driven.pendingTimers());
        Thread other = new Thread(() -> assertTrue(timeout.cancel()));
        other.start();
        other.join();
        executor.runDue();
        assertEquals(0, driven.pendingTimers());
        executor.advance(20, TimeUnit.MILLISECONDS);
        assertTrue(ran.isEmpty());
    }

    @Test
    void throwingTaskDoesNotStopTheWheel() {
        driven.newTimeout(
                t -> {
                    throw new IllegalStateException("boom");
                },
                TimeUnit.MILLISECONDS.toNanos(1));
        schedule(TimeUnit.MILLISECONDS.toNanos(2));
        executor.advance(5, TimeUnit.MILLISECONDS);
        assertEquals(1, fired.size());
    }

    @Test
    void handedOverTimeoutsBeyondTheMaximumAreRejected() throws InterruptedException {
        ExecutorDrivenWheel bounded = new ExecutorDrivenWheel(
                executor, new WheelSettings().ticker(executor.ticker).maxPendingTimers(1));
        bounded.schedule(recorded(), TimeUnit.SECONDS.toNanos(1));
        AtomicReference<Throwable> error = new AtomicReference<>();
        Thread other = new Thread(() -> {
            try {
                bounded.newTimeout(t -> {}, TimeUnit.SECONDS.toNanos(1));
            } catch (Throwable t) {
                error.set(t);
            }
        });
        other.start();
        other.join();
        assertTrue(error.get() instanceof java.util.concurrent.RejectedExecutionException, String.valueOf(error.get()));
        assertEquals(1, bounded.pendingTimers());
        assertEquals(1, bounded.scheduledCount(), "the refused timeout never reached the wheel");
    }
    /**
     * A loop that stalled wakes to 100,000 due timers: the driving task fires them in runs of at
     * most {@link ExecutorDrivenWheel#TIMERS_PER_RUN}, each next run scheduled with no delay, so
     * the executor's other work (here a task the first callback submits, as I/O would be) runs
     * between runs; every timer fires once, by deadline then scheduling order; the largest run
     * reports the bound.
     */
    @Test
    void aBacklogOfDueTimersFiresInBoundedRunsWithTheExecutorsOtherWorkBetween() {
        int timers = 100_000;
        List<TimerNode> expected = new ArrayList<>();
        List<Object> firings = new ArrayList<>();
        List<Integer> runOfEach = new ArrayList<>();
        TimerNode[] ids = new TimerNode[timers];
        for (int i = 0; i < timers; i++) {
            // 1,000 distinct deadlines over 100 ms: a hundred timers share each one.
            ids[i] = new TimerNode() {
                @Override
                protected void expire() {
                    firings.add(this);
                    runOfEach.add(executor.scheduledDelays.size());
                    if (firings.size() == 1) {
                        executor.execute(() -> firings.add("other work"));
                    }
                }
            };
            driven.schedule(ids[i], TimeUnit.MICROSECONDS.toNanos(100 * (i % 1000)));
        }
        for (int deadline = 0; deadline < 1000; deadline++) {
            for (int i = deadline; i < timers; i += 1000) {
                expected.add(ids[i]);
            }
        }
        executor.scheduledDelays.clear();
        executor.ticker.advance(1, TimeUnit.SECONDS); // the stall: no task ran meanwhile
        executor.runDue();

        int runs = (timers + ExecutorDrivenWheel.TIMERS_PER_RUN - 1) / ExecutorDrivenWheel.TIMERS_PER_RUN;
        assertEquals(timers + 1, firings.size());
        assertEquals("other work", firings.get(ExecutorDrivenWheel.TIMERS_PER_RUN), "ran right after the first run");
        firings.remove("other work");
        assertEquals(expected, firings, "each timer once, in firings");
        assertEquals(
                java.util.Collections.nCopies(runs - 1, 0L),
                executor.scheduledDelays,
                "each run but the last scheduled the next with no delay");
        for (int run = 0; run < runs; run++) {
            int inRun = java.util.Collections.frequency(runOfEach, run);
            assertEquals(
                    Math.min(ExecutorDrivenWheel.TIMERS_PER_RUN, timers - run * ExecutorDrivenWheel.TIMERS_PER_RUN),
                    inRun,
                    "timers fired in run " + run);
        }
        assertEquals(ExecutorDrivenWheel.TIMERS_PER_RUN, driven.largestRun(), "the largest run did the bound's work");
        assertEquals(0, driven.pendingTimers());
        assertEquals(0, executor.pendingScheduled());
    }
}
