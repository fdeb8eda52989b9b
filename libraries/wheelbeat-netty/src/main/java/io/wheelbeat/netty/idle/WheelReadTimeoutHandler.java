package io.wheelbeat.netty.idle;

import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.ReadTimeoutException;
import io.netty.handler.timeout.ReadTimeoutHandler;
import io.wheelbeat.core.internal.checks.ConfigChecks;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * A drop-in for Netty's {@link ReadTimeoutHandler}: a {@link WheelIdleStateHandler} with a reader
 * idle time whose {@link #channelIdle} calls {@link #readTimedOut}, which fires
 * {@link ReadTimeoutException#INSTANCE} and closes the channel, once, at the moment Netty's does.
 * For frameworks that ignore {@code IdleStateEvent} (Reactor Netty, Vert.x). A timeout of zero or
 * less disables it. Not a subclass of Netty's handler. One instance per channel, on its event loop.
 */
public class WheelReadTimeoutHandler extends WheelIdleStateHandler {

    private final TimeoutCloses closes;
    private boolean closed;

    /**
     * Netty's {@code ReadTimeoutHandler(int)}.
     *
     * @param timeoutSeconds the read timeout in seconds; zero or less disables it
     */
    public WheelReadTimeoutHandler(int timeoutSeconds) {
        this(timeoutSeconds, TimeUnit.SECONDS);
    }

    /**
     * Netty's {@code ReadTimeoutHandler(long, TimeUnit)}: positive timeouts are floored at 1 ms.
     *
     * @param timeout the read timeout; zero or less disables it
     * @param unit the unit of {@code timeout}
     * @throws NullPointerException if {@code unit} is null
     */
    public WheelReadTimeoutHandler(long timeout, TimeUnit unit) {
        super(timeout, 0, 0, unit);
        this.closes = TimeoutCloses.firingException();
    }

    /**
     * As {@link #WheelReadTimeoutHandler(long, TimeUnit)}.
     *
     * @param timeout the read timeout; zero disables it
     * @throws NullPointerException if {@code timeout} is null
     * @throws IllegalArgumentException if {@code timeout} is negative or over 292 years
     */
    public WheelReadTimeoutHandler(Duration timeout) {
        this(timeout, TimeoutCloses.firingException());
    }

    /**
     * As {@link #WheelReadTimeoutHandler(Duration)}, closing the way {@code closes} says
     * (quietly, counted).
     *
     * @param timeout the read timeout; zero disables it
     * @param closes how a timeout closes the channel
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code timeout} is negative or over 292 years
     */
    public WheelReadTimeoutHandler(Duration timeout, TimeoutCloses closes) {
        super(ConfigChecks.nonNegativeNanos("timeout", timeout), 0, 0, TimeUnit.NANOSECONDS);
        this.closes = Objects.requireNonNull(closes, "closes");
    }

    /** A handler with a factory's settings (say, its timer), for tests that drive the timer themselves. */
    WheelReadTimeoutHandler(Factory factory) {
        super(factory);
        this.closes = TimeoutCloses.firingException();
    }

    /** Calls {@link #readTimedOut}: the reader has been idle for the timeout. */
    @Override
    protected final void channelIdle(ChannelHandlerContext ctx, IdleStateEvent evt) throws Exception {
        readTimedOut(ctx);
    }

    /**
     * The read timed out: fires {@link ReadTimeoutException#INSTANCE} (unless quiet) and closes,
     * the first time only.
     *
     * @param ctx the handler's context
     * @throws Exception to be fired through {@code exceptionCaught}
     */
    protected void readTimedOut(ChannelHandlerContext ctx) throws Exception {
        if (!closed) {
            closed = true;
            closes.readTimedOut(ctx, getReaderIdleTimeInMillis());
        }
    }
}
