package io.wheelbeat.netty.heartbeat;

/**
 * A user event of every answering keepalive ({@link HeartbeatHandler} and the protocols') when the
 * peer pinged sooner than {@link PingLimits}' minimum interval too many times (gRPC's
 * {@code too_many_pings}). Right after firing it, the handler writes its goodbye, if any, and closes.
 * @param strikes how many early pings the peer sent since its last ping in time
 */
public record TooManyPingsEvent(int strikes) {}
