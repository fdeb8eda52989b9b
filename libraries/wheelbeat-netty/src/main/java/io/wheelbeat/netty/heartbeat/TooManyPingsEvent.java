package io.wheelbeat.netty.heartbeat;

/**
 * A user event of {@link HeartbeatHandler} when the
 * peer pinged earlier than the minimum ping interval too many times (gRPC's
 * {@code too_many_pings}). Right after firing it, the handler writes the goodbye message if one
 * is configured and closes the channel.
 * @param strikes how many early pings the peer sent since its last ping in time
 */
public record TooManyPingsEvent(int strikes) {}
