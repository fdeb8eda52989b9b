package io.wheelbeat.core;

import java.util.Collections;
import java.util.HashSet;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A thread-safe timer on a hierarchical timing wheel, with a thread of its own: a drop-in for the role of
 * Netty's {@code HashedWheelTimer}.
 *
 * <p>Unlike {@code HashedWheelTimer}, the thread does not wake every tick: it sleeps until the
 * earliest pending deadline (or until another thread hands it a timeout), fires each timeout at
 * its exact deadline plus the thread's own wake-up lateness, and after a long pause it fires
 * every overdue timeout once, in deadline order. {@link #newTimeout} and
 * {@link WheelTimeout#cancel()} are O(1) from any thread; a cancelled timeout leaves the wheel
 * when the thread next wakes.
 *
 * <p>Tasks run on the timer's thread, one after another, unless a task executor is given; a slow
 * task then delays no other. A task that throws is logged and the timer goes on.
 *
 * <p>Each timer holds a thread until {@link #stop()}: one timer serves a whole application. When
 * more than {@value #MANY_TIMERS} timers run at once (as {@code HashedWheelTimer} past 64
 * instances), the one that crosses that number logs a warning through SLF4J.
 *
 * <p>Thread-safe. The thread starts when the timer is built and ends with {@link #stop()} or
 * {@link #close()} (try-with-resources).
 */
public final class WheelTimer implements WheelScheduler, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(WheelTimer.class);
    private static final AtomicInteger THREAD_NUMBER = new AtomicInteger();
    /** Running timers past which the next one warns: a thread each is a leak, not a design. */
    static final int MANY_TIMERS = 64;
    /** Timers whose thread is running (built and not yet stopped). */
    private static final AtomicInteger RUNNING = new AtomicInteger();

    private final Executor taskExecutor;
    /** The engine, the clock, the limit, the statistics and the hand-over, shared with {@link ExecutorDrivenWheel}. */
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
            log.warn("{} WheelTimers (or NettyWheelTimers) are running, each with a thread of its own: more "
                    + "than {}. Share one timer, put per-connection timers on the event loops' wheels "
                    + "(EventLoopWheels), and stop() the timers no longer needed.", MANY_TIMERS + 1, MANY_TIMERS);
        }
    }

    /**
     * Returns a builder: the wheel's defaults, tasks run on the timer's thread.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Stops the timer thread and returns the timeouts that never fired (neither expired nor
     * cancelled). They stay unfired: none of their tasks will run. Later calls return an empty set.
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
    public WheelTimeout newTimeout(WheelTimerTask task, long delayNanos) {
        return timers.newTimeout(task, delayNanos);
    }

    @Override
    public int pendingTimers() {
        return timers.pendingTimers();
    }

    @Override
    public Ticker ticker() {
        return timers.ticker;
    }

    /**
     * Timers scheduled so far. A racy snapshot: may be read from any thread, for metrics.
     *
     * @return the number of timers scheduled since the timer was built
     */
    public long scheduledCount() {
        return timers.scheduledCount();
    }

    /**
     * Pending timers cancelled so far. A racy snapshot, as {@link #scheduledCount()}.
     *
     * @return the number of pending timers cancelled since the timer was built
     */
    public long cancelledCount() {
        return timers.cancelledCount();
    }

    /**
     * Timers that fired so far. A racy snapshot, as {@link #scheduledCount()}.
     *
     * @return the number of timers fired since the timer was built
     */
    public long expiredCount() {
        return timers.expiredCount();
    }

    /**
     * Timeout tasks that threw so far, on the timer's thread or on the task executor, each also
     * logged (a task executor that throws when handed a task, other than by rejecting it, counts
     * too). A racy snapshot, as {@link #scheduledCount()}.
     *
     * @return the number of tasks that threw since the timer was built
     */
    public long failedCount() {
        return timers.failedCount();
    }

    @Override
    public String toString() {
        return "WheelTimer(" + worker.getName() + ")";
    }

    /**
     * Wakes the timer's thread to read its ticker again. Only a ticker that jumps needs it
     * (virtual time in tests: {@code VirtualTimers} in the test-jar); the system clock never does.
     */
    void wakeToReadTheClock() {
        LockSupport.unpark(worker);
    }

    /** What this timer does for {@link #timers}: its own thread owns the wheel. */
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
        public void wakeBy(long deadlineNanos) {
            // Only the timer's own thread places timers, and it computes its next wake after each round.
        }

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
                long wait = timers.nextDeadlineNanos() - timers.ticker.nanoTime();
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
        private WheelSettings wheel = new WheelSettings();
        private Executor taskExecutor;
        private ThreadFactory threadFactory = task -> {
            Thread thread = new Thread(task, "wheelbeat-timer-" + THREAD_NUMBER.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };

        private Builder() {
        }

        /**
         * The wheel's settings: tick, slots, maximum pending timers, ticker.
         *
         * @param wheel the wheel's settings
         * @return this builder
         */
        public Builder wheel(WheelSettings wheel) {
            this.wheel = Objects.requireNonNull(wheel, "wheel");
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
