package io.wheelbeat.core;

import io.wheelbeat.core.internal.HandoverScheduler;
import io.wheelbeat.core.internal.TimeoutHandle;
import io.wheelbeat.core.internal.WheelExecutor;
import io.wheelbeat.core.internal.WheelSettings;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Future;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * A timing wheel driven by a single-threaded executor, such as a Netty event loop. It costs the
 * executor one scheduled task, aimed at the earliest deadline. Timers fire on the executor's
 * thread, never early, by deadline then scheduling order (Netty's order). A callback that throws is
 * logged and counted.
 *
 * <p>On the owner thread, {@link TimerNode}s are armed, re-armed and cancelled in O(1) without
 * allocating ({@link #schedule}, {@link #scheduleAt}, {@link #cancel}; {@link IllegalStateException}
 * from other threads). From any thread, {@link #newTimeout} hands a {@link WheelTimeout} over through
 * a lock-free queue. One run of the driving task fires or moves at most 4096 timers; a backlog goes
 * on in the next runs, in the same order, so the executor serves its other work in between. The
 * counts may be read from any thread.
 */
public final class ExecutorDrivenWheel implements WheelScheduler {

    /** The most timers one run of the driving task fires or moves. */
    static final int TIMERS_PER_RUN = 4096;

    private final WheelExecutor executor;
    final HandoverScheduler timers;
    private final TimerWheel wheel;
    private final LongSupplier ticker;
    private final Runnable tick = this::tick;
    private final Runnable drain;
    /** The one scheduled task that drives the wheel, or null when none is scheduled. */
    private Future<?> wake;
    /** The reading {@link #wake} is aimed at. */
    private long wakeAt;
    /** True while the driving task runs: it aims the next wake itself when it is done. */
    private boolean ticking;

    /** Made by {@code Drivers.executorDriven}; the settings' ticker is the executor's clock. */
    ExecutorDrivenWheel(WheelExecutor executor, WheelSettings settings) {
        this.executor = Objects.requireNonNull(executor, "executor");
        this.timers = new HandoverScheduler(Objects.requireNonNull(settings, "settings"), new Driving());
        this.wheel = timers.wheel;
        this.ticker = timers.ticker;
        this.drain = timers::drainHandover;
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
        return ticker;
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

    /** {@return the callbacks and tasks that threw so far (each logged); a racy snapshot} */
    public long failedCount() {
        return timers.failedCount();
    }

    /**
     * The most work one run of the driving task did: timers fired plus timers moved between
     * levels, at most 4096. A racy snapshot.
     *
     * @return the largest run since the driver was made
     */
    public int largestRun() {
        return wheel.largestPoll();
    }

    /**
     * Arms or re-arms {@code node}; delays of zero or less fire at the next run. Owner thread only.
     *
     * @param node the timer
     * @param delayNanos nanoseconds from now
     * @throws java.util.concurrent.RejectedExecutionException if the node is not pending and the
     *     maximum number of pending timers is reached
     * @throws IllegalStateException if called from another thread
     */
    public void schedule(TimerNode node, long delayNanos) {
        checkOwner();
        timers.place(node, TimerWheel.deadlineAfter(ticker.getAsLong(), delayNanos), false);
    }

    /**
     * {@link #schedule(TimerNode, long)} at a reading of {@link #ticker()}. Owner thread only.
     *
     * @param node the timer
     * @param deadlineNanos the deadline, a reading of {@link #ticker()}
     */
    public void scheduleAt(TimerNode node, long deadlineNanos) {
        checkOwner();
        timers.place(node, deadlineNanos, false);
    }

    /**
     * {@link #scheduleAt}, except that {@code node} keeps its place among equal deadlines from its
     * last arming on this wheel, as Netty's periodic task keeps its id. Owner thread only.
     *
     * @param node the timer, armed on this wheel before
     * @param deadlineNanos the deadline, a reading of {@link #ticker()}
     */
    public void rescheduleAt(TimerNode node, long deadlineNanos) {
        checkOwner();
        timers.place(node, deadlineNanos, true);
    }

    /**
     * Disarms a pending node. Owner thread only.
     *
     * @param node the timer
     * @return whether the node was pending (and now will not expire)
     */
    public boolean cancel(TimerNode node) {
        checkOwner();
        return wheel.cancel(node);
    }

    /**
     * Passes every pending node placed in the wheel (not timeouts still being handed over) to
     * {@code action}, which may cancel nodes: for an owner that settles its timers at shutdown.
     * Owner thread only.
     *
     * @param action told each pending node
     */
    public void forEachPending(Consumer<? super TimerNode> action) {
        checkOwner();
        Objects.requireNonNull(action, "action");
        List<TimerNode> pending = new ArrayList<>(wheel.pendingTimers());
        wheel.forEachPending(pending::add);
        pending.forEach(action);
    }

    private void wakeBy(long deadlineNanos) {
        if (!ticking && (wake == null || deadlineNanos - wakeAt < 0)) {
            aim(deadlineNanos);
        }
    }

    private void aim(long deadlineNanos) {
        if (wake != null) {
            wake.cancel(false);
        }
        wakeAt = deadlineNanos;
        wake = executor.schedule(tick, Math.max(0, deadlineNanos - ticker.getAsLong()));
    }

    private final class Driving implements HandoverScheduler.Driver {

        @Override
        public boolean inOwnerThread() {
            return executor.inOwnerThread();
        }

        @Override
        public void wakeOwnerToDrain() {
            executor.execute(drain);
        }

        @Override
        public boolean accepting() {
            return true;
        }

        @Override
        public void runExpired(TimeoutHandle timeout) {
            timers.runTask(timeout);
        }

        @Override
        public void wakeBy(long deadlineNanos) {
            ExecutorDrivenWheel.this.wakeBy(deadlineNanos);
        }

        @Override
        public String toString() {
            return ExecutorDrivenWheel.this.toString();
        }
    }

    private void tick() {
        wake = null;
        ticking = true;
        try {
            timers.drainHandover();
            timers.pollWheel(TIMERS_PER_RUN);
        } finally {
            ticking = false;
            if (timers.placed() > 0) {
                // A backlog: run again with no delay, behind the executor's queued work.
                aim(timers.nextDeadlineNanos());
            }
        }
    }

    private void checkOwner() {
        if (!executor.inOwnerThread()) {
            throw new IllegalStateException(
                    "the node timer API is for the owner thread only; " + "use newTimeout(...) from other threads");
        }
    }

    @Override
    public String toString() {
        return "ExecutorDrivenWheel(" + executor + ")";
    }
}
