package io.wheelbeat.core;

import java.util.Objects;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link TimerWheel} that an existing single-threaded executor drives, such as a Netty event
 * loop: callbacks run on the executor's thread with no hop, and the whole wheel costs the
 * executor one scheduled task, aimed at the earliest pending deadline, however many timers it
 * holds. A timer fires at its exact deadline plus only the executor's own lateness (no rounding
 * to a tick).
 *
 * <h2>Two APIs</h2>
 * <ul>
 *   <li>On the owner thread, the {@code long} id API ({@link #schedule}, {@link #scheduleAt},
 *       {@link #cancel}, {@link #reschedule}, {@link #rescheduleAt}, {@link #isPending}): O(1)
 *       and allocation free, with the contract of {@link TimerWheel}. It throws
 *       {@link IllegalStateException} when called from any other thread.</li>
 *   <li>From any thread, {@link #newTimeout} returns a {@link WheelTimeout} handle; other threads
 *       hand it to the owner through a lock-free queue.</li>
 * </ul>
 *
 * <p>Thread rules as above; the statistics of {@link #wheel()} may be read from any thread.
 */
public final class ExecutorDrivenWheel extends HandoverScheduler {

    private static final Logger log = LoggerFactory.getLogger(ExecutorDrivenWheel.class);

    private final WheelExecutor executor;
    private final Runnable tick = this::tick;
    private final Runnable drain = this::drainHandover;
    /** The one scheduled task that drives the wheel, or null when none is scheduled. */
    private Future<?> wake;
    /** The reading {@link #wake} is aimed at. */
    private long wakeAt;
    /** True while the driving task runs: it aims the next wake itself when it is done. */
    private boolean ticking;

    /**
     * Creates a wheel with {@code settings}, driven by {@code executor}. The settings' ticker must
     * be the clock the executor schedules by.
     */
    public ExecutorDrivenWheel(WheelExecutor executor, TimerWheel.Builder settings) {
        super(Objects.requireNonNull(settings, "settings"));
        this.executor = Objects.requireNonNull(executor, "executor");
    }

    /**
     * Schedules {@code callback} to run once after {@code delay} (zero and negative: at once, on
     * the next run of the driving task). Delays beyond 2^62 ns (146 years) saturate. Owner thread
     * only.
     *
     * @return the timer's id, never {@link TimerWheel#NO_TIMER}
     * @throws NullPointerException if {@code callback} or {@code unit} is null
     * @throws java.util.concurrent.RejectedExecutionException if the maximum number of pending
     *     timers is reached
     */
    public long schedule(TimerCallback callback, long delay, TimeUnit unit) {
        checkOwner();
        Objects.requireNonNull(unit, "unit");
        return place(callback, TimerWheel.deadlineAfter(ticker.nanoTime(), unit.toNanos(delay)));
    }

    /**
     * Schedules {@code callback} at {@code deadlineNanos}, a reading of {@link #ticker()}; lets a
     * caller that has already read the clock (once per read batch, say) skip a second reading.
     * Owner thread only.
     *
     * @see TimerWheel#scheduleAt(TimerCallback, long)
     */
    public long scheduleAt(TimerCallback callback, long deadlineNanos) {
        checkOwner();
        return place(callback, deadlineNanos);
    }

    /**
     * Cancels a pending timer. Owner thread only.
     *
     * @see TimerWheel#cancel(long)
     */
    public boolean cancel(long timerId) {
        checkOwner();
        return wheel.cancel(timerId);
    }

    /**
     * Moves a pending timer to fire after {@code delay} instead. Owner thread only.
     *
     * @throws NullPointerException if {@code unit} is null
     * @see TimerWheel#rescheduleAt(long, long)
     */
    public boolean reschedule(long timerId, long delay, TimeUnit unit) {
        checkOwner();
        Objects.requireNonNull(unit, "unit");
        return move(timerId, TimerWheel.deadlineAfter(ticker.nanoTime(), unit.toNanos(delay)));
    }

    /**
     * Moves a pending timer to fire at {@code deadlineNanos}, a reading of {@link #ticker()}.
     * Owner thread only.
     *
     * @see TimerWheel#rescheduleAt(long, long)
     */
    public boolean rescheduleAt(long timerId, long deadlineNanos) {
        checkOwner();
        return move(timerId, deadlineNanos);
    }

    /**
     * Returns whether a timer is pending. Owner thread only.
     *
     * @see TimerWheel#isPending(long)
     */
    public boolean isPending(long timerId) {
        checkOwner();
        return wheel.isPending(timerId);
    }

    /**
     * Returns the wheel, for its statistics ({@link TimerWheel#pendingTimers()}, the counts),
     * which may be read from any thread. Schedule through this driver, not through the wheel: a
     * timer placed there directly would not move the driving task earlier.
     */
    public TimerWheel wheel() {
        return wheel;
    }

    private boolean move(long timerId, long deadlineNanos) {
        if (!wheel.rescheduleAt(timerId, deadlineNanos)) {
            return false;
        }
        wakeBy(deadlineNanos);
        return true;
    }

    @Override
    void wakeBy(long deadlineNanos) {
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

    @Override
    boolean inOwnerThread() {
        return executor.inOwnerThread();
    }

    @Override
    void wakeOwnerToDrain() {
        executor.execute(drain);
    }

    @Override
    boolean accepting() {
        return true;
    }

    @Override
    void runExpired(TimeoutHandle timeout) {
        try {
            timeout.task().run(timeout);
        } catch (Throwable t) {
            log.warn("task of {} threw; the wheel goes on", timeout, t);
        }
    }

    private void tick() {
        wake = null;
        ticking = true;
        try {
            drainHandover();
            pollWheel();
        } finally {
            ticking = false;
            if (wheel.pendingTimers() > 0) {
                aim(wheel.nextDeadlineNanos());
            }
        }
    }

    private void checkOwner() {
        if (!executor.inOwnerThread()) {
            throw new IllegalStateException("the long-id timer API is for the owner thread only; "
                    + "use newTimeout(...) from other threads");
        }
    }

    @Override
    public String toString() {
        return "ExecutorDrivenWheel(" + executor + ")";
    }
}
