package io.wheelbeat.netty.heartbeat;

/**
 * Fired through the pipeline ({@code userEventTriggered}) when a heartbeat pong arrives in time.
 * The first pong of a connection is the proof that the peer is alive and answering, which is
 * when a reconnecting client resets its backoff.
 *
 * <p>Immutable and thread-safe.
 */
public final class PongReceivedEvent {

    private final long roundTripNanos;
    private final boolean first;

    /**
     * @param roundTripNanos the time from sending the ping to receiving this pong
     * @param first whether this is the first pong received on the connection
     */
    public PongReceivedEvent(long roundTripNanos, boolean first) {
        this.roundTripNanos = roundTripNanos;
        this.first = first;
    }

    /**
     * Returns the time from sending the ping to receiving this pong, in nanoseconds.
     *
     * @return the time from sending the ping to receiving this pong, in nanoseconds
     */
    public long roundTripNanos() {
        return roundTripNanos;
    }

    /**
     * Returns whether this is the first pong received on the connection.
     *
     * @return whether this is the first pong received on the connection
     */
    public boolean first() {
        return first;
    }

    @Override
    public String toString() {
        return "PongReceivedEvent(rtt=" + roundTripNanos + "ns" + (first ? ", first" : "") + ")";
    }
}
