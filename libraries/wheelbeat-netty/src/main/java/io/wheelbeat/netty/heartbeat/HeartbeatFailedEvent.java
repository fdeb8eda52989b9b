package io.wheelbeat.netty.heartbeat;

/**
 * A user event of every pinging keepalive when too many pings in a row went unanswered in time; the
 * channel is closed right after.
 * @param missedPongs how many pongs in a row did not come in time
 */
public record HeartbeatFailedEvent(int missedPongs) {}
