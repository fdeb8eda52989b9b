package io.wheelbeat.core;

import java.util.Objects;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link TimerWheel} that an existing single-threaded executor drives, such as a Netty event
 * loop: callbacks run on the executor's thread with no hop, and the whole wheel costs the
 * executor one scheduled task, aimed at the next occupied slot, however many timers it holds.
 *
 * <h2>Two APIs</h2>
 * <ul>
 *   <li>On the owner thread, the {@code long} id API ({@link #schedule}, {@link #cancel},
 *       {@link #reschedule}, ...) is the {@link TimerWheel}'s own: O(1) and allocation free. It
 *       throws {@link IllegalStateException} when called from any other thread.</li>
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
    private final TimerWheel.WakeHook wakeEarlier = this::wakeEarlier;
    /** The one scheduled task that drives the wheel, or null when nothing is pending. */
    private Future<?> wake;

    /**
     * Creates a wheel with {@code settings}, driven by {@code executor}. The settings' ticker must
     * be the clock the executor schedules by.
     */
    public ExecutorDrivenWheel(WheelExecutor executor, TimerWheel.Builder settings) {
        super(Objects.requireNonNull(settings, "settings").build());
        this.executor = Objects.requireNonNull(executor, "executor");
        wheel.armWake(wakeEarlier);
    }

    /**
     * Schedules {@code callback} after {@code delay}. Owner thread only.
     *
     * @see TimerWheel#schedule(TimerCallback, long, TimeUnit)
     */
    public long schedule(TimerCallback callback, long delay, TimeUnit unit) {
        checkOwner();
        return wheel.schedule(callback, delay, unit);
    }

    /**
     * Schedules {@code callback} at {@code deadlineNanos} of {@link #ticker()}. Owner thread only.
     *
     * @see TimerWheel#scheduleAt(TimerCallback, long)
     */
    public long scheduleAt(TimerCallback callback, long deadlineNanos) {
        checkOwner();
        return wheel.scheduleAt(callback, deadlineNanos);
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
     * Moves a pending timer to fire after {@code delay}. Owner thread only.
     *
     * @see TimerWheel#reschedule(long, long, TimeUnit)
     */
    public boolean reschedule(long timerId, long delay, TimeUnit unit) {
        checkOwner();
        return wheel.reschedule(timerId, delay, unit);
    }

    /**
     * Moves a pending timer to fire at {@code deadlineNanos}. Owner thread only.
     *
     * @see TimerWheel#rescheduleAt(long, long)
     */
    public boolean rescheduleAt(long timerId, long deadlineNanos) {
        checkOwner();
        return wheel.rescheduleAt(timerId, deadlineNanos);
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
     * Returns the wheel. Its statistics may be read from any thread; everything else is for the
     * owner thread only.
     */
    public TimerWheel wheel() {
        return wheel;
    }

    /** Moves the driving task earlier: a timer landed before the tick it was aimed at. */
    private void wakeEarlier(long expiryNanos) {
        if (wake != null) {
            wake.cancel(false);
        }
        wake = executor.schedule(tick, Math.max(0, expiryNanos - wheel.ticker().nanoTime()));
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
        drainHandover();
        wheel.advance(wheel.ticker().nanoTime());
        long next = wheel.armWake(wakeEarlier);
        if (next != Long.MAX_VALUE) {
            wake = executor.schedule(tick, Math.max(0, next - wheel.ticker().nanoTime()));
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
