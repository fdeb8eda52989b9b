package io.wheelbeat.netty.internal;

import io.wheelbeat.core.TimerNode;
import io.wheelbeat.netty.ChannelTimerHandler;

/**
 * The two fields of a {@code ChannelTimerHandler} that its subclasses share with it, for
 * wheelbeat's own handlers: the reference that holds the context, or a {@link ContextHolder} in
 * its place, and the flags beside the handler's lifecycle state in one int; and its timer
 * operations, for the objects that time on a handler's behalf (the ping loop). Not protected
 * members of the handler: every public handler, and every user's subclass, would show them.
 *
 * <p>Internal: not part of wheelbeat's API. Event loop only.
 */
public final class HandlerFields {

    /** The most bits a subclass may keep in {@link #flags}. */
    public static final int FLAG_BITS = 29;

    /** How the handler's package reads and writes the fields; installed when the handler class loads. */
    public interface Access {
        Object context(ChannelTimerHandler handler);

        void hold(ChannelTimerHandler handler, ContextHolder holder);

        int flags(ChannelTimerHandler handler);

        void flags(ChannelTimerHandler handler, int flags);

        boolean moving(ChannelTimerHandler handler);

        long now(ChannelTimerHandler handler);

        void schedule(ChannelTimerHandler handler, TimerNode timer, long delayNanos);

        void cancel(ChannelTimerHandler handler, TimerNode timer);
    }

    private static Access access;

    private HandlerFields() {}

    /** Called once, by {@code ChannelTimerHandler}'s class initialisation. */
    public static void install(Access fields) {
        if (access != null) {
            throw new IllegalStateException("installed already");
        }
        access = fields;
    }

    /** {@return the context, the holder that holds it, or null before the handler is added} */
    public static Object context(ChannelTimerHandler handler) {
        return access.context(handler);
    }

    /**
     * Makes {@code holder} the handler's context reference; before the handler is added only.
     *
     * @throws IllegalStateException if the handler was added
     */
    public static void hold(ChannelTimerHandler handler, ContextHolder holder) {
        access.hold(handler, holder);
    }

    /** {@return the subclass's flags, {@value #FLAG_BITS} bits} */
    public static int flags(ChannelTimerHandler handler) {
        return access.flags(handler);
    }

    /** Sets the subclass's flags; bits above {@value #FLAG_BITS} are dropped. */
    public static void flags(ChannelTimerHandler handler, int flags) {
        access.flags(handler, flags);
    }

    /**
     * {@return whether the handler's channel is moving to another loop: its {@code onStop} runs on
     * the old loop, or its {@code onStart} on the new one, and the handler keeps its timers' deadlines}
     */
    public static boolean moving(ChannelTimerHandler handler) {
        return access.moving(handler);
    }

    /** {@return the handler's {@code now()}} */
    public static long now(ChannelTimerHandler handler) {
        return access.now(handler);
    }

    /** The handler's {@code schedule(timer, delayNanos)}: the channel's loop's wheel, moves included. */
    public static void schedule(ChannelTimerHandler handler, TimerNode timer, long delayNanos) {
        access.schedule(handler, timer, delayNanos);
    }

    /** The handler's {@code cancel(timer)}. */
    public static void cancel(ChannelTimerHandler handler, TimerNode timer) {
        access.cancel(handler, timer);
    }
}
