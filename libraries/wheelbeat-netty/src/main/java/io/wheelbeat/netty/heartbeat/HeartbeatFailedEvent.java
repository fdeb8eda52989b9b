package io.wheelbeat.netty.heartbeat;

/**
 * A user event of every pinging keepalive ({@link HeartbeatHandler} and the protocols') when the
 * peer let too many pings in a row go unanswered within the pong timeout. The handler closes the
 * channel right after firing it.
 * @param missedPongs how many pongs in a row did not come in time
 */
public record HeartbeatFailedEvent(int missedPongs) {}
