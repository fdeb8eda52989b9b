package io.wheelbeat.netty.heartbeat;

/**
 * A user event of every answering keepalive when the peer broke {@link PingLimits} (gRPC's
 * {@code too_many_pings}); the goodbye, if any, and the close follow.
 * @param strikes how many early pings the peer sent since its last ping in time
 */
public record TooManyPingsEvent(int strikes) {}
