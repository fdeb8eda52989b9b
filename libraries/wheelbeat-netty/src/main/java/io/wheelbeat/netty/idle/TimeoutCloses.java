package io.wheelbeat.netty.idle;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.timeout.ReadTimeoutException;
import io.netty.handler.timeout.WriteTimeoutException;
import io.wheelbeat.netty.internal.ConnectionMeters;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How {@link WheelReadTimeoutHandler} and {@link WheelWriteTimeoutHandler} close a connection
 * that timed out. Either way the close is logged once at DEBUG with its reason and the channel is
 * closed; the choice is what else happens:
 * <ul>
 *   <li>{@link #firingException()} (the default, Netty's behaviour): Netty's
 *       {@code ReadTimeoutException.INSTANCE} or {@code WriteTimeoutException.INSTANCE} is fired
 *       through {@code exceptionCaught} first. Frameworks that log what reaches the pipeline's
 *       tail (Reactor Netty, Vert.x) log it at ERROR with a stack trace.</li>
 *   <li>{@link #quiet()}: no exception; the DEBUG line is all that is said.</li>
 * </ul>
 * With {@link #withMetrics(MeterRegistry)}, closes are also counted:
 * {@code wheelbeat.connection.closed} tagged {@code reason} = {@code read_timeout} or
 * {@code write_timeout}.
 *
 * <p>Immutable and thread-safe: build one and share it among every handler.
 */
public final class TimeoutCloses {

    private static final Logger log = LoggerFactory.getLogger(TimeoutCloses.class);
    private static final TimeoutCloses FIRING_EXCEPTION = new TimeoutCloses(false, null, null);
    private static final TimeoutCloses QUIET = new TimeoutCloses(true, null, null);

    private final boolean quiet;
    private final Counter readCloses;
    private final Counter writeCloses;

    private TimeoutCloses(boolean quiet, Counter readCloses, Counter writeCloses) {
        this.quiet = quiet;
        this.readCloses = readCloses;
        this.writeCloses = writeCloses;
    }

    /**
     * Netty's way: fire the timeout exception, then close. Counts nothing.
     *
     * @return the default way
     */
    public static TimeoutCloses firingException() {
        return FIRING_EXCEPTION;
    }

    /**
     * Close without firing an exception. Counts nothing.
     *
     * @return the quiet way
     */
    public static TimeoutCloses quiet() {
        return QUIET;
    }

    /**
     * The same way, counting closes in {@code registry} (the counters are registered now).
     *
     * @param registry where to count
     * @return a new instance that counts
     * @throws NullPointerException if {@code registry} is null
     */
    public TimeoutCloses withMetrics(MeterRegistry registry) {
        Objects.requireNonNull(registry, "registry");
        return new TimeoutCloses(
                quiet,
                ConnectionMeters.closed(registry, "read_timeout"),
                ConnectionMeters.closed(registry, "write_timeout"));
    }

    void readTimedOut(ChannelHandlerContext ctx, long timeoutMillis) {
        ConnectionMeters.count(readCloses);
        log.debug("{}: nothing read for {} ms, closing (read timeout)", ctx.channel(), timeoutMillis);
        if (!quiet) {
            ctx.fireExceptionCaught(ReadTimeoutException.INSTANCE);
        }
        ctx.close();
    }

    void writeTimedOut(ChannelHandlerContext ctx, long timeoutNanos) {
        ConnectionMeters.count(writeCloses);
        log.debug(
                "{}: a write did not complete within {} ms, closing (write timeout)",
                ctx.channel(),
                TimeUnit.NANOSECONDS.toMillis(timeoutNanos));
        if (!quiet) {
            ctx.fireExceptionCaught(WriteTimeoutException.INSTANCE);
        }
        ctx.close();
    }

    @Override
    public String toString() {
        return "TimeoutCloses(" + (quiet ? "quiet" : "firing exception") + (readCloses == null ? "" : ", counted")
                + ")";
    }
}
