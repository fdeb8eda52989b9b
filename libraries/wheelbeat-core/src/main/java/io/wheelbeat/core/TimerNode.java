package io.wheelbeat.core;

/**
 * A timer that lives in its owner: the queue entry of a {@link TimerWheel}, as Netty's
 * {@code ScheduledFutureTask} is the entry of its scheduler's queue and Linux's {@code timer_list}
 * is embedded in the structure it times. Its links, exact deadline and scheduling order are
 * fields of this object, so scheduling, re-arming and cancelling write the owner's own memory:
 * there is no id to look up, and no handle that can outlive its timer.
 *
 * <h2>How an owner embeds it</h2>
 * Extend it and implement {@link #expire()}: either the owner is the node (a class with one timer
 * extends {@code TimerNode}), or the owner holds one node per timer, typically a final field
 * holding an instance of an inner class, made once and re-armed for the owner's lifetime:
 * <pre>{@code
 * final class Connection {
 *     private final TimerNode idle = new TimerNode() {
 *         protected void expire() { closeIdle(); }
 *     };
 *     void onRead() { wheel.schedule(idle, timeoutNanos); } // arms or re-arms; allocates nothing
 *     void onClose() { wheel.cancel(idle); }
 * }
 * }</pre>
 * Arm and re-arm are one call ({@link ExecutorDrivenWheel#schedule}, or {@link TimerWheel#scheduleAt}
 * on the engine): a pending node moves to its new deadline and counts as scheduled anew among
 * timers with equal deadlines. When {@link #expire()} runs the node is no longer pending, so it
 * may re-arm itself from there (a periodic timer).
 *
 * <h2>Thread rules</h2>
 * A node belongs to one wheel, and is touched only on that wheel's owner thread: scheduling,
 * cancelling, {@link #isPending()}; {@link #expire()} runs there too. Its fields are plain (not
 * volatile): code on other threads uses {@link WheelScheduler#newTimeout}, whose
 * {@link WheelTimeout} hands itself to the owner thread. Handing a node pending in one wheel to
 * another wheel is not detected (the node keeps no reference to its wheel, to stay small) and
 * corrupts both: cancel it first.
 *
 * <p>Memory: 36 bytes with compressed references (header, two links, two longs), plus the
 * subclass's own fields; 40 bytes with one reference to its owner.
 */
public abstract class TimerNode {

    /** Null when not pending. */
    TimerNode next;
    TimerNode prev;
    /** Nanoseconds after the wheel's start reading. */
    long deadline;
    /** The wheel's count of schedulings when this node was last (re)scheduled: the tie-break. */
    long order;

    /** For subclasses. */
    protected TimerNode() {
    }

    /**
     * Runs on the wheel's owner thread when the deadline has come, once per arming. The node is no
     * longer pending when this runs. An exception is logged and counted, and the wheel goes on.
     *
     * @throws Exception anything: the wheel logs it, counts it as failed and goes on
     */
    protected abstract void expire() throws Exception;

    /**
     * Returns the wheel's count of schedulings when this node was last armed: its place among
     * equal deadlines, compared by difference. Owner thread (a racy read elsewhere).
     *
     * @return the node's scheduling order
     */
    protected final long order() {
        return order;
    }

    /**
     * Returns whether the node is armed: scheduled, and neither expired nor cancelled since.
     * Owner thread.
     *
     * @return whether the node is pending in a wheel
     */
    public final boolean isPending() {
        return next != null;
    }
}
