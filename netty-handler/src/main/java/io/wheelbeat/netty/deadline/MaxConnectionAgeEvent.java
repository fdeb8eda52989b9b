package io.wheelbeat.netty.deadline;

/**
 * Fired through the pipeline ({@code userEventTriggered}) by {@link ConnectionDeadlineHandler}
 * when the connection reaches its maximum age: the moment for the protocol to send its goodbye
 * (an HTTP/2 GOAWAY, say) and stop taking new work. The handler closes the channel
 * {@link #graceNanos()} later, unless it closes earlier; with no grace it closes right after
 * firing this event. {@link io.wheelbeat.netty.http2.Http2KeepAliveHandler} fires it too, as it
 * begins its graceful shutdown; its grace is {@code Long.MAX_VALUE} when unlimited.
 *
 * <p>Immutable and thread-safe.
 */
public final class MaxConnectionAgeEvent {

    private final long ageNanos;
    private final long graceNanos;

    /**
     * @param ageNanos the age this connection was given (the configured maximum with its jitter)
     * @param graceNanos how long after this event the channel is forcibly closed
     */
    public MaxConnectionAgeEvent(long ageNanos, long graceNanos) {
        this.ageNanos = ageNanos;
        this.graceNanos = graceNanos;
    }

    /**
     * Returns the age this connection was given, jitter included, in nanoseconds.
     *
     * @return the age this connection was given, jitter included, in nanoseconds
     */
    public long ageNanos() {
        return ageNanos;
    }

    /**
     * Returns how long after this event the channel is forcibly closed, in nanoseconds.
     *
     * @return how long after this event the channel is forcibly closed, in nanoseconds
     */
    public long graceNanos() {
        return graceNanos;
    }

    @Override
    public String toString() {
        return "MaxConnectionAgeEvent(age=" + ageNanos + "ns, grace=" + graceNanos + "ns)";
    }
}
