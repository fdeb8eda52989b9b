package io.wheelbeat.core;

import io.wheelbeat.core.internal.TimerWheel;
import java.util.Objects;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;

/**
 * What the two drivers of a {@link TimerWheel} share: the clock, the maximum number of pending
 * timers, the lateness metric, and the hand-over of timeouts created on other threads, which go to
 * the owner thread through a lock-free queue and are placed in the wheel there.
 *
 * <p>The maximum number of pending timers holds across threads this way: a foreign thread
 * reserves a place (an atomic count) before it hands a timeout over, and the owner thread counts
 * reserved places as taken. Both read the other's count as a snapshot, so when the owner thread
 * and other threads schedule at the same instant the limit can be passed by the number of threads
 * racing; it is never passed by more.
 */
abstract class HandoverScheduler implements WheelScheduler {

    private static final LongConsumer NO_LATENESS = lateness -> { };

    final TimerWheel wheel;
    final Ticker ticker;
    private final int maxPendingTimers;
    private final Queue<TimeoutHandle> handover = new ConcurrentLinkedQueue<>();
    private final AtomicInteger reserved = new AtomicInteger();
    private final AtomicBoolean drainRequested = new AtomicBoolean();
    /** Tasks of timeouts ({@link WheelTimeout}s) that threw: the driver runs them, not the wheel. */
    private final AtomicLong failedTasks = new AtomicLong();
    /** Told how late each timer fires (set when metrics are bound). */
    private volatile LongConsumer lateness = NO_LATENESS;

    HandoverScheduler(WheelSettings settings) {
        this.ticker = settings.ticker();
        this.maxPendingTimers = settings.maxPendingTimers();
        this.wheel = TimerWheel.of(settings);
    }

    /** Whether the calling thread owns the wheel. */
    abstract boolean inOwnerThread();

    /** Makes the owner thread call {@link #drainHandover()} soon. */
    abstract void wakeOwnerToDrain();

    /** Whether the scheduler still takes timeouts. */
    abstract boolean accepting();

    /** Runs an expired timeout's task. Called on the owner thread. */
    abstract void runExpired(TimeoutHandle timeout);

    /**
     * Tells the driver that a timer now waits for {@code deadlineNanos}, in case that is earlier
     * than it planned to poll. Owner thread.
     */
    abstract void wakeBy(long deadlineNanos);

    @Override
    public WheelTimeout newTimeout(WheelTimerTask task, long delayNanos) {
        Objects.requireNonNull(task, "task");
        if (!accepting()) {
            throw new IllegalStateException("cannot schedule: " + this + " has been stopped");
        }
        long deadline = TimerWheel.deadlineAfter(ticker.nanoTime(), delayNanos);
        TimeoutHandle timeout = new TimeoutHandle(this, task, deadline);
        if (inOwnerThread()) {
            timeout.placed(place(timeout, deadline));
            return timeout;
        }
        int places = reserved.incrementAndGet();
        if ((long) wheel.pendingTimers() + places > maxPendingTimers) {
            reserved.decrementAndGet();
            throw new RejectedExecutionException("too many pending timers: the maximum is " + maxPendingTimers);
        }
        handover.add(timeout);
        requestDrain();
        if (!accepting() && timeout.cancel()) {
            // Stopped while handing over: the owner may never place it, so it must not count.
            throw new IllegalStateException("cannot schedule: " + this + " has been stopped");
        }
        return timeout;
    }

    @Override
    public int pendingTimers() {
        return wheel.pendingTimers() + reserved.get();
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
        return wheel.scheduledCount();
    }

    /**
     * Pending timers cancelled so far. A racy snapshot, as {@link #scheduledCount()}.
     *
     * @return the number of pending timers cancelled since the driver was made
     */
    public long cancelledCount() {
        return wheel.cancelledCount();
    }

    /**
     * Timers that fired so far. A racy snapshot, as {@link #scheduledCount()}.
     *
     * @return the number of timers fired since the driver was made
     */
    public long expiredCount() {
        return wheel.expiredCount();
    }

    /**
     * Timer callbacks and timeout tasks that threw so far (each also logged). A racy snapshot, as
     * {@link #scheduledCount()}.
     *
     * @return the number of callbacks and tasks that threw since the driver was made
     */
    public long failedCount() {
        return wheel.failedCount() + failedTasks.get();
    }

    /** Counts a timeout's task that threw; any thread (a task executor may run tasks). */
    final void taskFailed() {
        failedTasks.incrementAndGet();
    }

    /**
     * Places a timer within the limit, counting places reserved by other threads. Owner thread.
     *
     * @throws RejectedExecutionException if the limit is reached
     */
    final long place(TimerCallback callback, long deadlineNanos) {
        if (maxPendingTimers != Integer.MAX_VALUE) {
            int taken = wheel.pendingTimers() + reserved.get();
            if (taken >= maxPendingTimers) {
                throw new RejectedExecutionException("too many pending timers: " + taken
                        + " pending, the maximum is " + maxPendingTimers);
            }
        }
        long id = wheel.scheduleAt(callback, deadlineNanos);
        wakeBy(deadlineNanos);
        return id;
    }

    /**
     * Fires what is due now, at most {@code limit} timers; the lateness metric sees each timer.
     * Owner thread.
     *
     * @return how many fired: {@code limit} when some may still be due
     */
    final int pollWheel(int limit) {
        return wheel.poll(ticker.nanoTime(), lateness, limit);
    }

    /** Records each timer's lateness with {@code recorder} from now on. */
    final void lateness(LongConsumer recorder) {
        this.lateness = Objects.requireNonNull(recorder, "recorder");
    }

    /** Called by a timeout cancelled while it sat in the wheel. */
    void cancelled(TimeoutHandle timeout) {
        if (inOwnerThread()) {
            wheel.cancel(timeout.timerId());
        } else {
            handover.add(timeout);
            requestDrain();
        }
    }

    /** Places handed-over timeouts and removes cancelled ones. Owner thread only. */
    final void drainHandover() {
        drainRequested.set(false);
        TimeoutHandle timeout;
        while ((timeout = handover.poll()) != null) {
            if (timeout.timerId() != TimerWheel.NO_TIMER) {
                // Handed over a second time: it was cancelled after being placed.
                wheel.cancel(timeout.timerId());
                continue;
            }
            // Its place was reserved: no limit check.
            long id = wheel.scheduleAt(timeout, timeout.deadlineNanos());
            reserved.decrementAndGet();
            if (timeout.placed(id)) {
                wakeBy(timeout.deadlineNanos());
            } else {
                wheel.cancel(id);
            }
        }
    }

    /** Removes every timeout not yet placed and returns it to {@code out} if still pending. */
    final void drainUnplaced(java.util.Collection<? super WheelTimeout> out) {
        TimeoutHandle timeout;
        while ((timeout = handover.poll()) != null) {
            if (timeout.timerId() == TimerWheel.NO_TIMER) {
                reserved.decrementAndGet();
                if (!timeout.isCancelled()) {
                    out.add(timeout);
                }
            }
        }
    }

    private void requestDrain() {
        if (!drainRequested.get() && drainRequested.compareAndSet(false, true)) {
            wakeOwnerToDrain();
        }
    }
}
