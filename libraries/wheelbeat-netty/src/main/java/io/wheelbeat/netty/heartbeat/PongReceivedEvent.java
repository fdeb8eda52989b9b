package io.wheelbeat.netty.heartbeat;

/**
 * A user event of every pinging keepalive when a pong came in time; the first proves the peer alive
 * (when a reconnecting client resets its backoff).
 * @param roundTripNanos the time from sending the ping to receiving this pong, in nanoseconds
 * @param first whether this is the first pong received on the connection
 */
public record PongReceivedEvent(long roundTripNanos, boolean first) {}
