package io.wheelbeat.core.internal;

import io.wheelbeat.core.TimerNode;
import io.wheelbeat.core.TimerWheel;
import io.wheelbeat.core.WheelScheduler;
import io.wheelbeat.core.WheelTimeout;
import java.util.Objects;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the two drivers of a {@link TimerWheel} share: the engine and its clock, the limit of
 * pending timers, the counts, the lateness metric, and the lock-free hand-over of timeouts made on
 * other threads. A foreign thread reserves a place before handing over, so the limit is passed by
 * at most the number of threads racing. Driver-specific work goes through {@link Driver}.
 */
public final class HandoverScheduler {

    /** What a driver does for the scheduler it holds. */
    public interface Driver {

        /** Whether the calling thread owns the wheel. */
        boolean inOwnerThread();

        /** Makes the owner thread call {@link #drainHandover()} soon. */
        void wakeOwnerToDrain();

        /** Whether the driver still takes timeouts. */
        boolean accepting();

        /** Runs an expired timeout's task. Called on the owner thread. */
        void runExpired(TimeoutHandle timeout);

        /**
         * Tells the driver that a timer now waits for {@code deadlineNanos}, in case that is
         * earlier than it planned to poll. Owner thread.
         */
        void wakeBy(long deadlineNanos);
    }

    private static final Logger log = LoggerFactory.getLogger(HandoverScheduler.class);
    private static final LongConsumer NO_LATENESS = lateness -> {};

    /** The engine. */
    public final TimerWheel wheel;
    /** The clock the engine is read with. */
    public final LongSupplier ticker;

    private final Driver driver;
    private final int maxPendingTimers;
    private final Queue<TimeoutHandle> handover = new ConcurrentLinkedQueue<>();
    private final AtomicInteger reserved = new AtomicInteger();
    private final AtomicBoolean drainRequested = new AtomicBoolean();
    /** Tasks of timeouts ({@link WheelTimeout}s) that threw: the driver runs them, not the wheel. */
    private final AtomicLong failedTasks = new AtomicLong();
    /** Told how late each timer fires (set when metrics are bound). */
    private volatile LongConsumer lateness = NO_LATENESS;

    /** A wheel with {@code settings}, starting at their ticker's reading now, run by {@code driver}. */
    public HandoverScheduler(WheelSettings settings, Driver driver) {
        this.ticker = settings.ticker();
        this.maxPendingTimers = settings.maxPendingTimers();
        this.driver = driver;
        this.wheel = new TimerWheel(ticker.getAsLong(), settings.tick().toNanos(), settings.slots());
    }

    /** {@link WheelScheduler#newTimeout}, for the drivers. */
    public WheelTimeout newTimeout(Consumer<WheelTimeout> task, long delayNanos) {
        Objects.requireNonNull(task, "task");
        if (!driver.accepting()) {
            throw new IllegalStateException("cannot schedule: " + driver + " has been stopped");
        }
        long deadline = TimerWheel.deadlineAfter(ticker.getAsLong(), delayNanos);
        TimeoutHandle timeout = new TimeoutHandle(this, task, deadline);
        if (driver.inOwnerThread()) {
            place(timeout, deadline, false);
            timeout.placed();
            return timeout;
        }
        int places = reserved.incrementAndGet();
        if ((long) placed() + places > maxPendingTimers) {
            reserved.decrementAndGet();
            throw new RejectedExecutionException("too many pending timers: the maximum is " + maxPendingTimers);
        }
        handover.add(timeout);
        requestDrain();
        if (!driver.accepting() && timeout.cancel()) {
            // Stopped while handing over: the owner may never place it, so it must not count.
            throw new IllegalStateException("cannot schedule: " + driver + " has been stopped");
        }
        return timeout;
    }

    /** {@link WheelScheduler#pendingTimers()}: placed timers and places reserved by other threads. */
    public int pendingTimers() {
        return placed() + reserved.get();
    }

    /** Timers in the wheel. Owner thread, or a snapshot. */
    public int placed() {
        return wheel.pendingTimers();
    }

    public long scheduledCount() {
        return wheel.scheduledCount();
    }

    public long cancelledCount() {
        return wheel.cancelledCount();
    }

    public long expiredCount() {
        return wheel.expiredCount();
    }

    /** Node expiries (counted by the wheel) and timeout tasks (counted here) that threw. */
    public long failedCount() {
        return wheel.failedCount() + failedTasks.get();
    }

    /** When to poll next, as {@link TimerWheel#nextDeadlineNanos()}; some timer must be placed. Owner thread. */
    public long nextDeadlineNanos() {
        return wheel.nextDeadlineNanos();
    }

    /**
     * Runs a timeout's task; one that throws is logged and counted, and the driver goes on. Any
     * thread (a task executor may run tasks).
     */
    public void runTask(TimeoutHandle timeout) {
        try {
            timeout.task().accept(timeout);
        } catch (Throwable t) {
            failedTasks.incrementAndGet();
            log.warn("task of {} threw; {} goes on", timeout, driver, t);
        }
    }

    /**
     * Arms or re-arms {@code node} within the limit, counting places reserved by other threads (a
     * re-arm takes no new place), keeping its order among equal deadlines if {@code keepOrder}.
     * Owner thread.
     *
     * @throws RejectedExecutionException if the limit is reached
     */
    public void place(TimerNode node, long deadlineNanos, boolean keepOrder) {
        if (!node.isPending()) {
            checkLimit();
        }
        if (keepOrder) {
            wheel.rescheduleAt(node, deadlineNanos);
        } else {
            wheel.scheduleAt(node, deadlineNanos);
        }
        driver.wakeBy(deadlineNanos);
    }

    private void checkLimit() {
        if (maxPendingTimers != Integer.MAX_VALUE) {
            int taken = placed() + reserved.get();
            if (taken >= maxPendingTimers) {
                throw new RejectedExecutionException(
                        "too many pending timers: " + taken + " pending, the maximum is " + maxPendingTimers);
            }
        }
    }

    /**
     * Fires what is due now, at most {@code limit} timers; the lateness metric sees each timer.
     * Owner thread.
     *
     * @return how many fired: {@code limit} when some may still be due
     */
    public int pollWheel(int limit) {
        return wheel.poll(ticker.getAsLong(), lateness, limit);
    }

    /** Records each timer's lateness with {@code recorder} from now on. */
    public void lateness(LongConsumer recorder) {
        this.lateness = Objects.requireNonNull(recorder, "recorder");
    }

    /** Called by a timeout that expired: the driver runs its task. Owner thread. */
    public void runExpired(TimeoutHandle timeout) {
        driver.runExpired(timeout);
    }

    /** Called by a timeout cancelled while it sat in the wheel. */
    public void cancelled(TimeoutHandle timeout) {
        if (driver.inOwnerThread()) {
            wheel.cancel(timeout);
        } else {
            handover.add(timeout);
            requestDrain();
        }
    }

    /** Places handed-over timeouts and removes cancelled ones. Owner thread only. */
    public void drainHandover() {
        drainRequested.set(false);
        TimeoutHandle timeout;
        while ((timeout = handover.poll()) != null) {
            if (timeout.linked) {
                // Handed over a second time: it was cancelled after being placed.
                wheel.cancel(timeout);
                continue;
            }
            reserved.decrementAndGet();
            if (timeout.placed()) {
                // Its place was reserved: no limit check.
                wheel.scheduleAt(timeout, timeout.deadlineNanos());
                driver.wakeBy(timeout.deadlineNanos());
            }
        }
    }

    /** Removes every timeout not yet placed and returns it to {@code out} if still pending. */
    public void drainUnplaced(java.util.Collection<? super WheelTimeout> out) {
        TimeoutHandle timeout;
        while ((timeout = handover.poll()) != null) {
            if (!timeout.linked) {
                reserved.decrementAndGet();
                if (!timeout.isCancelled()) {
                    out.add(timeout);
                }
            }
        }
    }

    private void requestDrain() {
        if (!drainRequested.get() && drainRequested.compareAndSet(false, true)) {
            driver.wakeOwnerToDrain();
        }
    }
}
