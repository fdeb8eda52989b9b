package io.wheelbeat.netty;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.util.HashedWheelTimer;
import io.netty.util.Timeout;
import io.netty.util.Timer;
import io.netty.util.TimerTask;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Netty's {@link Timer} contract, checked on Netty's own {@link HashedWheelTimer} and on
 * {@link NettyWheelTimer} alike: whatever one does here, the other does too. Real time with
 * millisecond delays and generous waits; nothing decides on speed.
 */
class NettyWheelTimerTest {

    private static final long WAIT_SECONDS = 10;
    private static final long NEVER_HOURS = 1;

    static Stream<Named<Supplier<Timer>>> timers() {
        return Stream.of(
                Named.of("HashedWheelTimer", () -> new HashedWheelTimer(10, TimeUnit.MILLISECONDS)),
                Named.of("NettyWheelTimer", NettyWheelTimer::new));
    }

    @ParameterizedTest
    @MethodSource("timers")
    void aTaskRunsOnceWithTheTimeoutThatNewTimeoutReturned(Supplier<Timer> make) throws Exception {
        Timer timer = make.get();
        try {
            BlockingQueue<Timeout> ran = new ArrayBlockingQueue<>(4);
            AtomicInteger runs = new AtomicInteger();
            CompletableFuture<Boolean> expiredInsideTheTask = new CompletableFuture<>();
            TimerTask task = timeout -> {
                runs.incrementAndGet();
                expiredInsideTheTask.complete(timeout.isExpired());
                ran.add(timeout);
            };
            Timeout timeout = timer.newTimeout(task, 1, TimeUnit.MILLISECONDS);

            assertSame(timeout, ran.poll(WAIT_SECONDS, TimeUnit.SECONDS));
            assertTrue(expiredInsideTheTask.get(), "expired before the task runs");
            assertTrue(timeout.isExpired());
            assertFalse(timeout.isCancelled());
            assertFalse(timeout.cancel(), "an expired timeout cannot be cancelled");
            assertSame(timer, timeout.timer());
            assertSame(task, timeout.task());
            Thread.sleep(50);
            assertEquals(1, runs.get(), "ran once");
        } finally {
            timer.stop();
        }
    }

    @ParameterizedTest
    @MethodSource("timers")
    void aCancelledTimeoutNeverRunsAndItsTaskIsToldOnce(Supplier<Timer> make) throws Exception {
        NettyLine.assume42("TimerTask.cancelled(Timeout) is new in Netty 4.2");
        Timer timer = make.get();
        try {
            AtomicInteger runs = new AtomicInteger();
            BlockingQueue<Timeout> toldCancelled = new ArrayBlockingQueue<>(4);
            Timeout timeout = timer.newTimeout(
                    new TimerTask() {
                        @Override
                        public void run(Timeout t) {
                            runs.incrementAndGet();
                        }

                        @Override
                        public void cancelled(Timeout t) {
                            toldCancelled.add(t);
                        }
                    },
                    20,
                    TimeUnit.MILLISECONDS);

            assertTrue(timeout.cancel());
            assertFalse(timeout.cancel(), "only the first cancel wins");
            assertTrue(timeout.isCancelled());
            assertFalse(timeout.isExpired());
            assertSame(timeout, toldCancelled.poll(WAIT_SECONDS, TimeUnit.SECONDS));
            Thread.sleep(100);
            assertEquals(0, runs.get());
            assertTrue(toldCancelled.isEmpty(), "told once");
        } finally {
            timer.stop();
        }
    }

    @ParameterizedTest
    @MethodSource("timers")
    void stopCancelsAndReturnsExactlyTheTimeoutsStillPending(Supplier<Timer> make) throws Exception {
        Timer timer = make.get();
        CountDownLatch fired = new CountDownLatch(1);
        AtomicInteger pendingRuns = new AtomicInteger();
        TimerTask never = t -> pendingRuns.incrementAndGet();
        Timeout first = timer.newTimeout(never, NEVER_HOURS, TimeUnit.HOURS);
        Timeout second = timer.newTimeout(never, NEVER_HOURS, TimeUnit.HOURS);
        Timeout cancelled = timer.newTimeout(never, NEVER_HOURS, TimeUnit.HOURS);
        cancelled.cancel();
        timer.newTimeout(t -> fired.countDown(), 1, TimeUnit.MILLISECONDS);
        assertTrue(fired.await(WAIT_SECONDS, TimeUnit.SECONDS));

        Set<Timeout> unexpired = timer.stop();

        assertEquals(Set.of(first, second), unexpired);
        for (Timeout timeout : List.of(first, second)) {
            assertTrue(timeout.isCancelled(), "stop cancels what it returns");
            assertFalse(timeout.isExpired());
        }
        assertEquals(0, pendingRuns.get());
        assertThrows(IllegalStateException.class, () -> timer.newTimeout(never, 1, TimeUnit.MILLISECONDS));
        assertEquals(Set.of(), timer.stop(), "a second stop returns nothing");
    }

    @ParameterizedTest
    @MethodSource("timers")
    void stopFromATaskOfTheTimerIsRefused(Supplier<Timer> make) throws Exception {
        Timer timer = make.get();
        try {
            CompletableFuture<Throwable> thrown = new CompletableFuture<>();
            timer.newTimeout(
                    t -> {
                        try {
                            t.timer().stop();
                            thrown.complete(null);
                        } catch (Throwable e) {
                            thrown.complete(e);
                        }
                    },
                    1,
                    TimeUnit.MILLISECONDS);
            assertTrue(thrown.get(WAIT_SECONDS, TimeUnit.SECONDS) instanceof IllegalStateException);
        } finally {
            timer.stop();
        }
    }

    @ParameterizedTest
    @MethodSource("timers")
    void aTaskThatThrowsLeavesTheTimerRunning(Supplier<Timer> make) throws Exception {
        Timer timer = make.get();
        try {
            CountDownLatch later = new CountDownLatch(1);
            timer.newTimeout(
                    t -> {
                        throw new IllegalStateException("thrown on purpose by the test");
                    },
                    1,
                    TimeUnit.MILLISECONDS);
            timer.newTimeout(t -> later.countDown(), 30, TimeUnit.MILLISECONDS);
            assertTrue(later.await(WAIT_SECONDS, TimeUnit.SECONDS));
        } finally {
            timer.stop();
        }
    }

    @ParameterizedTest
    @MethodSource("timers")
    void aNullTaskOrUnitIsRefused(Supplier<Timer> make) {
        Timer timer = make.get();
        try {
            assertThrows(NullPointerException.class, () -> timer.newTimeout(null, 1, TimeUnit.SECONDS));
            assertThrows(NullPointerException.class, () -> timer.newTimeout(t -> {}, 1, null));
        } finally {
            timer.stop();
        }
    }
}
