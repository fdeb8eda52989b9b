package io.wheelbeat.core;

import io.wheelbeat.core.internal.NodeDeadlines;

/**
 * A timer that lives in its owner: the queue entry of a {@link TimerWheel}, as Netty's
 * {@code ScheduledFutureTask} is its queue's entry. Links, exact deadline and scheduling order are
 * fields of this object, so arming, re-arming and cancelling write the owner's own memory and no
 * stale handle can exist. Extend it and implement {@link #expire()}, as the owner or as a final
 * field made once and re-armed for the owner's lifetime:
 * <pre>{@code
 * final TimerNode idle = new TimerNode() {
 *     protected void expire() { closeIdle(); }
 * };
 * wheel.schedule(idle, timeoutNanos); // arms or re-arms; allocates nothing
 * }</pre>
 * A re-armed node counts as scheduled anew among equal deadlines; {@link #expire()} may re-arm it.
 *
 * <p>Thread rules: a node belongs to one wheel and is touched only on its owner thread; its fields
 * are plain. Other threads use {@link WheelScheduler#newTimeout}. Handing a pending node to another
 * wheel is not detected and corrupts both: cancel it first.
 */
public abstract class TimerNode {

    /** Null when not pending. */
    TimerNode next;

    TimerNode prev;
    /** A reading of the wheel's clock. */
    long deadline;
    /**
     * The wheel's count of schedulings when this node was last (re)scheduled: the tie-break. A
     * non-negative int (the wheel renumbers its pending nodes before it would overflow), 4 bytes
     * so that the node is 32 bytes with compressed references.
     */
    int order;

    static {
        NodeDeadlines.install(new NodeDeadlines.Access() {
            @Override
            public long get(TimerNode node) {
                return node.deadline;
            }

            @Override
            public void set(TimerNode node, long deadlineNanos) {
                if (node.next != null) {
                    throw new IllegalStateException("pending: the wheel owns its deadline");
                }
                node.deadline = deadlineNanos;
            }
        });
    }

    /** For subclasses. */
    protected TimerNode() {}

    /**
     * Runs on the owner thread once per arming, when the deadline has come; the node is no longer
     * pending.
     *
     * @throws Exception anything: the wheel logs it, counts it as failed and goes on
     */
    protected abstract void expire() throws Exception;

    /**
     * Returns the node's place among equal deadlines (the wheel's count of schedulings when it
     * was last armed), compared by difference. Owner thread.
     *
     * @return the node's scheduling order
     */
    protected final long order() {
        return order & Integer.MAX_VALUE;
    }

    /**
     * Returns whether the node is armed and has neither expired nor been cancelled. Owner thread.
     *
     * @return whether the node is pending in a wheel
     */
    public final boolean isPending() {
        return next != null;
    }
}
