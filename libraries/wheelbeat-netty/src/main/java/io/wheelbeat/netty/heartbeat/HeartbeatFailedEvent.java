package io.wheelbeat.netty.heartbeat;

/**
 * Fired through the pipeline ({@code userEventTriggered}) by {@link HeartbeatHandler} when the
 * peer let too many pings in a row go unanswered within the pong timeout. The handler closes the
 * channel right after firing it.
 *
 * <p>Immutable and thread-safe.
 *
 * @param missedPongs how many pongs in a row did not come in time
 */
public record HeartbeatFailedEvent(int missedPongs) {
}
