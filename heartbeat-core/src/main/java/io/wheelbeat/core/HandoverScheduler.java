package io.wheelbeat.core;

import java.util.Objects;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The thread-safe half of a driver: timeouts created on other threads are handed to the owner
 * thread through a lock-free queue and placed in the wheel there.
 *
 * <p>The maximum number of pending timers holds across threads this way: a foreign thread
 * reserves a place (an atomic count) before it hands a timeout over, and the owner thread counts
 * reserved places as taken. Both read the other's count as a snapshot, so when the owner thread
 * and other threads schedule at the same instant the limit can be passed by the number of threads
 * racing; it is never passed by more.
 */
abstract class HandoverScheduler implements WheelScheduler {

    final TimerWheel wheel;
    private final Queue<TimeoutHandle> handover = new ConcurrentLinkedQueue<>();
    private final AtomicInteger reserved = new AtomicInteger();
    private final AtomicBoolean drainRequested = new AtomicBoolean();

    HandoverScheduler(TimerWheel wheel) {
        this.wheel = wheel;
        wheel.reservations(reserved);
    }

    /** Whether the calling thread owns the wheel. */
    abstract boolean inOwnerThread();

    /** Makes the owner thread call {@link #drainHandover()} soon. */
    abstract void wakeOwnerToDrain();

    /** Whether the scheduler still takes timeouts. */
    abstract boolean accepting();

    /** Runs an expired timeout's task. Called on the owner thread. */
    abstract void runExpired(TimeoutHandle timeout);

    @Override
    public WheelTimeout newTimeout(WheelTimerTask task, long delay, TimeUnit unit) {
        Objects.requireNonNull(task, "task");
        Objects.requireNonNull(unit, "unit");
        if (!accepting()) {
            throw new IllegalStateException("cannot schedule: " + this + " has been stopped");
        }
        long deadline = TimerWheel.deadlineAfter(wheel.ticker().nanoTime(), unit.toNanos(delay));
        TimeoutHandle timeout = new TimeoutHandle(this, task, deadline);
        if (inOwnerThread()) {
            timeout.placed(wheel.scheduleAt(timeout, deadline));
            return timeout;
        }
        int max = wheel.maxPendingTimers();
        int places = reserved.incrementAndGet();
        if ((long) wheel.pendingTimers() + places > max) {
            reserved.decrementAndGet();
            throw new RejectedExecutionException("too many pending timers: the maximum is " + max);
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
        return wheel.ticker();
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
            long id = wheel.scheduleReserved(timeout, timeout.deadlineNanos());
            reserved.decrementAndGet();
            if (!timeout.placed(id)) {
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
