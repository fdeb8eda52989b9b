package io.wheelbeat.core;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Future;
import java.util.function.Consumer;

/**
 * A hierarchical timing wheel that an existing single-threaded executor drives, such as a Netty
 * event loop: the one road to a wheel for code on the owner thread. Callbacks run on the executor's thread with no hop, and the whole wheel costs the
 * executor one scheduled task, aimed at the earliest pending deadline, however many timers it
 * holds. A timer fires at its exact deadline plus only the executor's own lateness (no rounding
 * to a tick).
 *
 * <h2>Two APIs</h2>
 * <ul>
 *   <li>On the owner thread, timers are {@link TimerNode}s that their owners hold
 *       ({@link #schedule}, {@link #scheduleAt}, {@link #cancel}): arming, re-arming and
 *       cancelling are O(1) and allocate nothing. They throw {@link IllegalStateException} when
 *       called from any other thread.</li>
 *   <li>From any thread, {@link #newTimeout} returns a {@link WheelTimeout} handle, itself a node;
 *       other threads hand it to the owner through a lock-free queue.</li>
 * </ul>
 *
 * <h2>Timing</h2>
 * A timer fires when the driving task runs at or after its deadline: never early, with no rounding
 * to a tick, by deadline and, for equal deadlines, in the order the timers were scheduled (a
 * re-arm counts as scheduling anew), as Netty's scheduler orders its tasks; deadlines are
 * compared by difference, so the ticker may start anywhere and wrap ({@link System#nanoTime()}'s
 * contract). A callback that throws is logged through SLF4J and counted in {@link #failedCount()};
 * the other timers still fire.
 *
 * <h2>Bounded work per run</h2>
 * One run of the driving task does at most 4096 units of work (timers fired, or moved between
 * the wheel's levels). When more is due
 * (a loop that stalled wakes to a backlog), it schedules itself again with no delay and returns,
 * so the executor serves its other work (a Netty loop its I/O and tasks) between batches; the
 * backlog fires over the following runs in the same order, each timer once.
 *
 * <p>Thread rules as above; the statistics ({@link #pendingTimers()}, {@link #scheduledCount()}
 * and the other counts) may be read from any thread.
 */
public final class ExecutorDrivenWheel implements WheelScheduler {

    /** The most work (timers fired or moved) one run of the driving task does; a backlog continues in the next run. */
    static final int TIMERS_PER_RUN = 4096;

    private final WheelExecutor executor;
    /** The engine, the clock, the limit, the statistics and the hand-over, shared with {@link WheelTimer}. */
    final HandoverScheduler timers;
    private final TimerWheel wheel;
    private final Ticker ticker;
    private final Runnable tick = this::tick;
    private final Runnable drain;
    /** The one scheduled task that drives the wheel, or null when none is scheduled. */
    private Future<?> wake;
    /** The reading {@link #wake} is aimed at. */
    private long wakeAt;
    /** True while the driving task runs: it aims the next wake itself when it is done. */
    private boolean ticking;

    /**
     * Creates a wheel with {@code settings}, driven by {@code executor}. The settings' ticker must
     * be the clock the executor schedules by.
     *
     * @param executor the owner thread's executor, which runs every callback
     * @param settings tick, slots, limit and the clock the executor schedules by
     */
    public ExecutorDrivenWheel(WheelExecutor executor, WheelSettings settings) {
        this.executor = Objects.requireNonNull(executor, "executor");
        this.timers = new HandoverScheduler(Objects.requireNonNull(settings, "settings"), new Driving());
        this.wheel = timers.wheel;
        this.ticker = timers.ticker;
        this.drain = timers::drainHandover;
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
        return ticker;
    }

    /**
     * Timers scheduled so far. A racy snapshot: may be read from any thread, for metrics.
     *
     * @return the number of timers scheduled since the driver was made
     */
    public long scheduledCount() {
        return timers.scheduledCount();
    }

    /**
     * Pending timers cancelled so far. A racy snapshot, as {@link #scheduledCount()}.
     *
     * @return the number of pending timers cancelled since the driver was made
     */
    public long cancelledCount() {
        return timers.cancelledCount();
    }

    /**
     * Timers that fired so far. A racy snapshot, as {@link #scheduledCount()}.
     *
     * @return the number of timers fired since the driver was made
     */
    public long expiredCount() {
        return timers.expiredCount();
    }

    /**
     * Timer callbacks and timeout tasks that threw so far (each also logged). A racy snapshot, as
     * {@link #scheduledCount()}.
     *
     * @return the number of callbacks and tasks that threw since the driver was made
     */
    public long failedCount() {
        return timers.failedCount();
    }

    /**
     * The most work one run of the driving task did so far: timers fired plus timers moved
     * between the wheel's levels, never more than the bound of 4096 per run. A racy snapshot, as
     * {@link #scheduledCount()}.
     *
     * @return the largest run since the driver was made
     */
    public int largestRun() {
        return wheel.largestPoll();
    }

    /**
     * Arms {@code node} to expire {@code delayNanos} from now (zero and negative: at the next run
     * of the driving task), or moves it there if it is pending: a re-arm, which counts as a new
     * scheduling among equal deadlines and allocates nothing. Delays beyond 2^62 ns saturate.
     * Owner thread only.
     *
     * @param node the timer, embedded in its owner (see {@link TimerNode})
     * @param delayNanos nanoseconds from now
     * @throws java.util.concurrent.RejectedExecutionException if the node is not pending and the
     *     maximum number of pending timers is reached
     * @throws IllegalStateException if called from another thread, or if the node is pending in
     *     another wheel
     */
    public void schedule(TimerNode node, long delayNanos) {
        checkOwner();
        timers.place(node, TimerWheel.deadlineAfter(ticker.nanoTime(), delayNanos), false);
    }

    /**
     * {@link #schedule(TimerNode, long)} at {@code deadlineNanos}, a reading of {@link #ticker()},
     * for a caller that has already read the clock (once per read batch, say). Owner thread only.
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
     * Passes every node placed in the wheel and still pending to {@code action} (not timeouts
     * still being handed over from other threads). For an owner that must settle its pending
     * timers itself, as an event loop shutting down cancels its scheduled tasks. Owner thread
     * only; {@code action} may cancel nodes.
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
        wake = executor.schedule(tick, Math.max(0, deadlineNanos - ticker.nanoTime()));
    }

    /** What this driver does for {@link #timers}: the executor's thread owns the wheel and runs every task. */
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
                // A backlog left by the bound is due already: this schedules the next run with no
                // delay, behind what the executor has queued meanwhile (a Netty loop fetches
                // scheduled tasks once per round of I/O and tasks).
                aim(timers.nextDeadlineNanos());
            }
        }
    }

    private void checkOwner() {
        if (!executor.inOwnerThread()) {
            throw new IllegalStateException("the node timer API is for the owner thread only; "
                    + "use newTimeout(...) from other threads");
        }
    }

    @Override
    public String toString() {
        return "ExecutorDrivenWheel(" + executor + ")";
    }
}
