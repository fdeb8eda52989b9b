package io.wheelbeat.netty.http2;

/**
 * Fired through the pipeline ({@code userEventTriggered}) by {@link Http2KeepAliveHandler} when
 * the connection had no open stream for the maximum idle time; the handler then begins its
 * graceful shutdown (GOAWAY, then close once no stream is open).
 *
 * <p>Immutable and thread-safe.
 */
public final class MaxConnectionIdleEvent {

    private final long idleNanos;

    /** @param idleNanos how long the connection had no open stream */
    public MaxConnectionIdleEvent(long idleNanos) {
        this.idleNanos = idleNanos;
    }

    /**
     * Returns how long the connection had no open stream, in nanoseconds.
     *
     * @return how long the connection had no open stream, in nanoseconds
     */
    public long idleNanos() {
        return idleNanos;
    }

    @Override
    public String toString() {
        return "MaxConnectionIdleEvent(idle=" + idleNanos + "ns)";
    }
}
