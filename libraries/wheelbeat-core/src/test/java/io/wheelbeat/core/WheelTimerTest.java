package io.wheelbeat.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.wheelbeat.core.internal.ManualTicker;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The timer thread is real; time is virtual. A wait on a latch only ever waits for the thread to
 * catch up with virtual time already advanced, with a generous bound that is never the verdict.
 */
class WheelTimerTest {

    private static final long WAIT_SECONDS = 30;

    private final ManualTicker ticker = new ManualTicker();
    private WheelTimer timer = VirtualTimers.wheelTimer(ticker, WheelTimer.builder());

    @AfterEach
    void stopTimer() {
        timer.stop();
    }

    private static void await(CountDownLatch latch) throws InterruptedException {
        assertTrue(latch.await(WAIT_SECONDS, TimeUnit.SECONDS), "the timer thread did not catch up");
    }

    /**
     * Each timer is a thread: past {@link WheelTimer#MANY_TIMERS} running at once, the one that
     * crosses the number warns through SLF4J (slf4j-simple in the tests, which writes to
     * {@code System.err}), once per crossing rather than once per timer.
     */
    @Test
    void tooManyRunningTimersWarnOnceWhenTheLimitIsCrossed() {
        PrintStream stderr = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        List<WheelTimer> timers = new ArrayList<>();
        try {
            System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
            // Twice the limit: crosses it whatever else runs in this JVM (at most the limit).
            for (int i = 0; i < 2 * WheelTimer.MANY_TIMERS; i++) {
                timers.add(WheelTimer.builder().build());
            }
        } finally {
            System.setErr(stderr);
            timers.forEach(WheelTimer::stop);
        }
        String log = captured.toString(StandardCharsets.UTF_8);
        long warnings = log.lines()
                .filter(line -> line.contains("WARN") && line.contains("WheelTimers (or NettyWheelTimers) are running"))
                .count();
        assertEquals(1, warnings, log);
        assertTrue(log.contains((WheelTimer.MANY_TIMERS + 1) + " WheelTimers"), log);
    }

    @Test
    void taskRunsOnceAfterItsDelayInVirtualTime() throws InterruptedException {
        CountDownLatch ran = new CountDownLatch(1);
        WheelTimeout timeout = timer.newTimeout(t -> ran.countDown(), TimeUnit.SECONDS.toNanos(10));
        ticker.advance(11, TimeUnit.SECONDS);
        await(ran);
        assertTrue(timeout.isExpired());
        assertFalse(timeout.isCancelled());
    }

    @Test
    void taskDoesNotRunBeforeItsDeadline() throws InterruptedException {
        AtomicInteger runs = new AtomicInteger();
        timer.newTimeout(t -> runs.incrementAndGet(), TimeUnit.SECONDS.toNanos(10));
        CountDownLatch marker = new CountDownLatch(1);
        timer.newTimeout(t -> marker.countDown(), TimeUnit.SECONDS.toNanos(5));
        ticker.advance(6, TimeUnit.SECONDS);
        await(marker);
        assertEquals(0, runs.get());
    }

    @Test
    void taskReceivesItsOwnTimeout() throws InterruptedException {
        AtomicReference<WheelTimeout> seen = new AtomicReference<>();
        CountDownLatch ran = new CountDownLatch(1);
        WheelTimeout timeout = timer.newTimeout(
                t -> {
                    seen.set(t);
                    ran.countDown();
                },
                TimeUnit.MILLISECONDS.toNanos(1));
        ticker.advance(1, TimeUnit.SECONDS);
        await(ran);
        assertSame(timeout, seen.get());
    }

    @Test
    void cancelledTimeoutNeverRuns() throws InterruptedException {
        AtomicInteger runs = new AtomicInteger();
        WheelTimeout timeout = timer.newTimeout(t -> runs.incrementAndGet(), TimeUnit.SECONDS.toNanos(1));
        assertTrue(timeout.cancel());
        CountDownLatch marker = new CountDownLatch(1);
        timer.newTimeout(t -> marker.countDown(), TimeUnit.SECONDS.toNanos(2));
        ticker.advance(3, TimeUnit.SECONDS);
        await(marker);
        assertEquals(0, runs.get());
        assertTrue(timeout.isCancelled());
        assertFalse(timeout.isExpired());
    }

    @Test
    void cancelTwiceReturnsFalseTheSecondTime() {
        WheelTimeout timeout = timer.newTimeout(t -> {}, TimeUnit.SECONDS.toNanos(1));
        assertTrue(timeout.cancel());
        assertFalse(timeout.cancel());
    }

    @Test
    void cancelAfterExpiryReturnsFalse() throws InterruptedException {
        CountDownLatch ran = new CountDownLatch(1);
        WheelTimeout timeout = timer.newTimeout(t -> ran.countDown(), TimeUnit.SECONDS.toNanos(1));
        ticker.advance(2, TimeUnit.SECONDS);
        await(ran);
        assertFalse(timeout.cancel());
        assertTrue(timeout.isExpired());
    }

    @Test
    void throwingTaskDoesNotStopTheTimer() throws InterruptedException {
        timer.newTimeout(
                t -> {
                    throw new IllegalStateException("boom");
                },
                TimeUnit.SECONDS.toNanos(1));
        CountDownLatch ran = new CountDownLatch(1);
        timer.newTimeout(t -> ran.countDown(), TimeUnit.SECONDS.toNanos(2));
        ticker.advance(3, TimeUnit.SECONDS);
        await(ran);
    }

    @Test
    void tasksRunOnTheTaskExecutorWhenOneIsGiven() throws InterruptedException {
        timer.stop();
        ExecutorService executor = Executors.newSingleThreadExecutor(r -> new Thread(r, "task-executor"));
        try {
            timer = VirtualTimers.wheelTimer(ticker, WheelTimer.builder().taskExecutor(executor));
            AtomicReference<String> thread = new AtomicReference<>();
            CountDownLatch ran = new CountDownLatch(1);
            timer.newTimeout(
                    t -> {
                        thread.set(Thread.currentThread().getName());
                        ran.countDown();
                    },
                    TimeUnit.SECONDS.toNanos(1));
            ticker.advance(2, TimeUnit.SECONDS);
            await(ran);
            assertEquals("task-executor", thread.get());
        } finally {
            executor.shutdownNow();
        }
    }

    @Test
    void stopReturnsTheTimeoutsThatNeverFired() {
        WheelTimeout pending = timer.newTimeout(t -> {}, TimeUnit.HOURS.toNanos(1));
        WheelTimeout cancelled = timer.newTimeout(t -> {}, TimeUnit.HOURS.toNanos(1));
        cancelled.cancel();
        Set<WheelTimeout> unfired = timer.stop();
        assertEquals(Set.of(pending), unfired);
        assertFalse(pending.isExpired());
    }

    @Test
    void secondStopReturnsNothing() {
        timer.newTimeout(t -> {}, TimeUnit.HOURS.toNanos(1));
        timer.stop();
        assertTrue(timer.stop().isEmpty());
    }

    @Test
    void scheduleAfterStopIsRejected() {
        timer.stop();
        assertThrows(IllegalStateException.class, () -> timer.newTimeout(t -> {}, TimeUnit.SECONDS.toNanos(1)));
    }

    @Test
    void stopFromATaskIsRejected() throws InterruptedException {
        AtomicReference<Throwable> error = new AtomicReference<>();
        CountDownLatch ran = new CountDownLatch(1);
        timer.newTimeout(
                t -> {
                    try {
                        timer.stop();
                    } catch (IllegalStateException e) {
                        error.set(e);
                    }
                    ran.countDown();
                },
                TimeUnit.SECONDS.toNanos(1));
        ticker.advance(2, TimeUnit.SECONDS);
        await(ran);
        assertTrue(error.get() instanceof IllegalStateException);
    }

    @Test
    void nullTaskIsRejected() {
        assertThrows(NullPointerException.class, () -> timer.newTimeout(null, TimeUnit.SECONDS.toNanos(1)));
        assertEquals(0, timer.pendingTimers());
    }

    @Test
    void schedulingBeyondTheMaximumIsRejectedAndKeepsThePendingOnes() {
        timer.stop();
        timer = VirtualTimers.wheelTimer(ticker, WheelTimer.builder().maxPendingTimers(2));
        WheelTimeout a = timer.newTimeout(t -> {}, TimeUnit.HOURS.toNanos(1));
        WheelTimeout b = timer.newTimeout(t -> {}, TimeUnit.HOURS.toNanos(1));
        RejectedExecutionException e = assertThrows(
                RejectedExecutionException.class, () -> timer.newTimeout(t -> {}, TimeUnit.HOURS.toNanos(1)));
        assertTrue(e.getMessage().contains("maximum is 2"), e.getMessage());
        assertEquals(Set.of(a, b), timer.stop());
    }

    @Test
    void overdueTimeoutsAfterALongPauseRunOnceInDeadlineOrder() throws InterruptedException {
        StringBuffer order = new StringBuffer();
        CountDownLatch ran = new CountDownLatch(3);
        timer.newTimeout(
                t -> {
                    order.append('c');
                    ran.countDown();
                },
                TimeUnit.HOURS.toNanos(3));
        timer.newTimeout(
                t -> {
                    order.append('a');
                    ran.countDown();
                },
                TimeUnit.SECONDS.toNanos(1));
        timer.newTimeout(
                t -> {
                    order.append('b');
                    ran.countDown();
                },
                TimeUnit.MINUTES.toNanos(2));
        ticker.advance(1, TimeUnit.DAYS);
        await(ran);
        assertEquals("abc", order.toString());
    }
}
