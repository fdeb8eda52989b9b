package io.wheelbeat.netty.internal;

import io.netty.channel.ChannelHandlerContext;
import io.wheelbeat.netty.EventLoopWheels;
import java.util.Objects;

/**
 * What a {@code ChannelTimerHandler} keeps in its one reference field when the context alone is not
 * enough: the context beside wheels other than the shared ones, or a subclass's per-channel state.
 * A handler on the shared wheels with nothing more keeps the context itself there.
 *
 * <p>Internal: not part of wheelbeat's API. Event loop only, but for the wheels (final).
 */
public class ContextHolder {
    private final EventLoopWheels wheels;
    private ChannelHandlerContext ctx;

    public ContextHolder(EventLoopWheels wheels) {
        this.wheels = Objects.requireNonNull(wheels, "wheels");
    }

    public final EventLoopWheels wheels() {
        return wheels;
    }

    /** {@return the handler's context, null before it is added} */
    public final ChannelHandlerContext ctx() {
        return ctx;
    }

    public final void ctx(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }
}
