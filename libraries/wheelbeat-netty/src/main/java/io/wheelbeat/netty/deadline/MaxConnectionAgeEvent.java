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
 *
 * @param ageNanos the age this connection was given, jitter included, in nanoseconds
 * @param graceNanos how long after this event the channel is forcibly closed, in nanoseconds
 */
public record MaxConnectionAgeEvent(long ageNanos, long graceNanos) {
}
