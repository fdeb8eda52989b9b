package io.wheelbeat.core;

import io.wheelbeat.core.internal.HandoverScheduler;
import io.wheelbeat.core.internal.TimeoutHandle;
import io.wheelbeat.core.internal.WheelSettings;
import java.time.Duration;
import java.util.Collections;
import java.util.HashSet;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A timer on a timing wheel with a thread of its own, in the role of Netty's {@code HashedWheelTimer}.
 * The thread sleeps until the earliest deadline (not every tick); after a pause it fires every
 * overdue timeout once, in deadline order. Tasks run on the timer's thread unless a task executor
 * is given; a task that throws is logged. One timer serves an application: more than
 * {@value #MANY_TIMERS} running log a warning. Thread-safe; the thread runs from
 * {@link Builder#build()} to {@link #stop()}.
 */
public final class WheelTimer implements WheelScheduler, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(WheelTimer.class);
    private static final AtomicInteger THREAD_NUMBER = new AtomicInteger();
    /** Running timers past which the next one warns. */
    static final int MANY_TIMERS = 64;
    /** Timers whose thread is running (built and not yet stopped). */
    private static final AtomicInteger RUNNING = new AtomicInteger();

    private final Executor taskExecutor;
    final HandoverScheduler timers;
    private final Thread worker;
    private volatile boolean stopping;
    /** Written by the worker as it exits; read after joining it. */
    private Set<WheelTimeout> unfired = Collections.emptySet();

    private WheelTimer(Builder builder) {
        this.timers = new HandoverScheduler(builder.wheel, new Driving());
        this.taskExecutor = builder.taskExecutor;
        this.worker = builder.threadFactory.newThread(this::work);
        worker.start();
        if (RUNNING.incrementAndGet() == MANY_TIMERS + 1) {
            log.warn(
                    "{} WheelTimers (or NettyWheelTimers) are running, each with a thread of its own: more "
                            + "than {}. Share one timer, put per-connection timers on the event loops' wheels "
                            + "(EventLoopWheels), and stop() the timers no longer needed.",
                    MANY_TIMERS + 1,
                    MANY_TIMERS);
        }
    }

    /** {@return a builder: the wheel's defaults, tasks run on the timer's thread} */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Stops the timer thread; the timeouts that never fired will not run.
     *
     * @return the timeouts that never fired, an unmodifiable set (empty on later calls)
     * @throws IllegalStateException if called from a task this timer runs on its own thread
     */
    public Set<WheelTimeout> stop() {
        if (Thread.currentThread() == worker) {
            throw new IllegalStateException("stop() cannot be called from a task run by " + this);
        }
        if (stopping) {
            joinWorker();
            return Collections.emptySet();
        }
        stopping = true;
        LockSupport.unpark(worker);
        joinWorker();
        return unfired;
    }

    /**
     * {@link #stop()}, dropping the timeouts that never fired: none of their tasks will run.
     *
     * @throws IllegalStateException if called from a task this timer runs on its own thread
     */
    @Override
    public void close() {
        stop();
    }

    @Override
    public WheelTimeout newTimeout(Consumer<WheelTimeout> task, long delayNanos) {
        return timers.newTimeout(task, delayNanos);
    }

    @Override
    public int pendingTimers() {
        return timers.pendingTimers();
    }

    @Override
    public LongSupplier ticker() {
        return timers.ticker;
    }

    /** {@return the timers scheduled so far; a racy snapshot from any thread} */
    public long scheduledCount() {
        return timers.scheduledCount();
    }

    /** {@return the pending timers cancelled so far; a racy snapshot} */
    public long cancelledCount() {
        return timers.cancelledCount();
    }

    /** {@return the timers fired so far; a racy snapshot} */
    public long expiredCount() {
        return timers.expiredCount();
    }

    /**
     * {@return the tasks that threw so far (each logged), on the timer's thread or the task executor; a racy snapshot}
     */
    public long failedCount() {
        return timers.failedCount();
    }

    @Override
    public String toString() {
        return "WheelTimer(" + worker.getName() + ")";
    }

    /**
     * Wakes the timer's thread to read its ticker again: for a ticker that jumps (virtual time).
     */
    void wakeToReadTheClock() {
        LockSupport.unpark(worker);
    }

    private final class Driving implements HandoverScheduler.Driver {

        @Override
        public boolean inOwnerThread() {
            return Thread.currentThread() == worker;
        }

        @Override
        public void wakeOwnerToDrain() {
            LockSupport.unpark(worker);
        }

        @Override
        public boolean accepting() {
            return !stopping;
        }

        @Override
        public void runExpired(TimeoutHandle timeout) {
            if (taskExecutor == null) {
                timers.runTask(timeout);
                return;
            }
            try {
                taskExecutor.execute(() -> timers.runTask(timeout));
            } catch (RejectedExecutionException e) {
                log.warn("task executor rejected the task of {}; it will not run", timeout, e);
            }
        }

        @Override
        public void wakeBy(long deadlineNanos) {}

        @Override
        public String toString() {
            return WheelTimer.this.toString();
        }
    }

    private void work() {
        try {
            runUntilStopped();
        } finally {
            RUNNING.decrementAndGet();
        }
    }

    private void runUntilStopped() {
        TimerWheel wheel = timers.wheel;
        while (!stopping) {
            timers.drainHandover();
            timers.pollWheel(ExecutorDrivenWheel.TIMERS_PER_RUN);
            if (stopping) {
                break;
            }
            if (timers.placed() == 0) {
                LockSupport.park(this);
            } else {
                long wait = timers.nextDeadlineNanos() - timers.ticker.getAsLong();
                if (wait > 0) {
                    LockSupport.parkNanos(this, wait);
                }
            }
        }
        Set<WheelTimeout> left = new HashSet<>();
        timers.drainHandover();
        wheel.forEachPending(node -> {
            WheelTimeout timeout = (TimeoutHandle) node;
            if (!timeout.isCancelled()) {
                left.add(timeout);
            }
        });
        timers.drainUnplaced(left);
        unfired = Collections.unmodifiableSet(left);
    }

    private void joinWorker() {
        boolean interrupted = false;
        while (worker.isAlive()) {
            try {
                worker.join();
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** Settings of a {@link WheelTimer}. Not thread-safe. */
    public static final class Builder {
        private final WheelSettings wheel = new WheelSettings();
        private Executor taskExecutor;
        private ThreadFactory threadFactory = task -> {
            Thread thread = new Thread(task, "wheelbeat-timer-" + THREAD_NUMBER.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };

        private Builder() {}

        /**
         * The tick, rounded up to a power of two nanoseconds; by default 2^20 ns. Timers fire at their
         * exact deadline whatever the tick.
         *
         * @param tick from 1 microsecond to 2^36 ns (68.7 s), before rounding
         * @return this builder
         * @throws IllegalArgumentException if out of that range
         */
        public Builder tick(Duration tick) {
            wheel.tick(tick);
            return this;
        }

        /**
         * The number of level-0 slots (one per tick), rounded up to a power of two; by default 4096.
         *
         * @param slots from 64 to 4096, before rounding
         * @return this builder
         * @throws IllegalArgumentException if out of that range
         */
        public Builder slots(int slots) {
            wheel.slots(slots);
            return this;
        }

        /**
         * The most timers pending at once; by default no limit. {@link WheelTimer#newTimeout} beyond
         * it throws {@link java.util.concurrent.RejectedExecutionException}.
         *
         * @param max at least 1
         * @return this builder
         * @throws IllegalArgumentException if {@code max} is below 1
         */
        public Builder maxPendingTimers(int max) {
            wheel.maxPendingTimers(max);
            return this;
        }

        /**
         * The clock deadlines are read against, in nanoseconds; by default {@code System::nanoTime}.
         * It must be safe to read from any thread; only differences between readings count.
         *
         * @param ticker the clock
         * @return this builder
         * @throws NullPointerException if {@code ticker} is null
         */
        public Builder ticker(LongSupplier ticker) {
            wheel.ticker(ticker);
            return this;
        }

        /**
         * Where tasks run; by default on the timer's own thread.
         *
         * @param taskExecutor the executor that runs every task
         * @return this builder
         */
        public Builder taskExecutor(Executor taskExecutor) {
            this.taskExecutor = Objects.requireNonNull(taskExecutor, "taskExecutor");
            return this;
        }

        /**
         * Makes the timer's thread; by default a daemon thread named {@code wheelbeat-timer-N}.
         *
         * @param threadFactory makes the one thread of the timer
         * @return this builder
         */
        public Builder threadFactory(ThreadFactory threadFactory) {
            this.threadFactory = Objects.requireNonNull(threadFactory, "threadFactory");
            return this;
        }

        /**
         * Builds the timer and starts its thread.
         *
         * @return the running timer; {@link WheelTimer#stop()} it when done
         */
        public WheelTimer build() {
            return new WheelTimer(this);
        }
    }
}
