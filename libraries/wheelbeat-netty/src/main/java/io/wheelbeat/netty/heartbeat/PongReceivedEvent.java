package io.wheelbeat.netty.heartbeat;

/**
 * Fired through the pipeline ({@code userEventTriggered}) when a heartbeat pong arrives in time.
 * The first pong of a connection is the proof that the peer is alive and answering, which is
 * when a reconnecting client resets its backoff.
 * @param roundTripNanos the time from sending the ping to receiving this pong, in nanoseconds
 * @param first whether this is the first pong received on the connection
 */
public record PongReceivedEvent(long roundTripNanos, boolean first) {}
