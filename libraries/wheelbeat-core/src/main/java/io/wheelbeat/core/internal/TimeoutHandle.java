package io.wheelbeat.core.internal;

import io.wheelbeat.core.TimerNode;
import io.wheelbeat.core.WheelTimeout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.function.Consumer;

/**
 * A {@link WheelTimeout} that is its own timer node: what the user holds is what the wheel links,
 * so no stale handle can exist. Its state moves once, from pending to cancelled or to expired, by
 * compare-and-set, so cancel and expiry never both win.
 */
public final class TimeoutHandle extends TimerNode implements WheelTimeout {

    private static final int HANDED_OVER = 0;
    private static final int PLACED = 1;
    private static final int CANCELLED = 2;
    private static final int EXPIRED = 3;
    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(TimeoutHandle.class, "state", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final HandoverScheduler scheduler;
    private final Consumer<WheelTimeout> task;
    private final long deadlineNanos;
    /** Set by the owner thread when it links this node: read by the owner thread only. */
    boolean linked;

    @SuppressWarnings("unused") // accessed through STATE
    private volatile int state = HANDED_OVER;

    TimeoutHandle(HandoverScheduler scheduler, Consumer<WheelTimeout> task, long deadlineNanos) {
        this.scheduler = scheduler;
        this.task = task;
        this.deadlineNanos = deadlineNanos;
    }

    /** Marks the timeout placed; returns false if it was cancelled before. Owner thread. */
    boolean placed() {
        linked = true;
        return STATE.compareAndSet(this, HANDED_OVER, PLACED);
    }

    @Override
    protected void expire() {
        if (STATE.compareAndSet(this, PLACED, EXPIRED)) {
            scheduler.runExpired(this);
        }
    }

    @Override
    public boolean cancel() {
        int seen = (int) STATE.getVolatile(this);
        while (seen == HANDED_OVER || seen == PLACED) {
            int witness = (int) STATE.compareAndExchange(this, seen, CANCELLED);
            if (witness == seen) {
                if (seen == PLACED) {
                    scheduler.cancelled(this);
                }
                return true;
            }
            seen = witness;
        }
        return false;
    }

    @Override
    public boolean isCancelled() {
        return (int) STATE.getVolatile(this) == CANCELLED;
    }

    @Override
    public boolean isExpired() {
        return (int) STATE.getVolatile(this) == EXPIRED;
    }

    @Override
    public Consumer<WheelTimeout> task() {
        return task;
    }

    @Override
    public long deadlineNanos() {
        return deadlineNanos;
    }

    @Override
    public String toString() {
        String[] names = {"handed over", "pending", "cancelled", "expired"};
        return "WheelTimeout(" + task + ", " + names[(int) STATE.getVolatile(this)] + ")";
    }
}
