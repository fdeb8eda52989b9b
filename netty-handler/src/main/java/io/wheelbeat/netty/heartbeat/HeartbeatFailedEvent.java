package io.wheelbeat.netty.heartbeat;

/**
 * Fired through the pipeline ({@code userEventTriggered}) by {@link HeartbeatHandler} when the
 * peer let too many pings in a row go unanswered within the pong timeout. The handler closes the
 * channel right after firing it.
 *
 * <p>Immutable and thread-safe.
 */
public final class HeartbeatFailedEvent {

    private final int missedPongs;

    /** @param missedPongs how many pongs in a row did not come in time */
    public HeartbeatFailedEvent(int missedPongs) {
        this.missedPongs = missedPongs;
    }

    /**
     * Returns how many pongs in a row did not come in time.
     *
     * @return how many pongs in a row did not come in time
     */
    public int missedPongs() {
        return missedPongs;
    }

    @Override
    public String toString() {
        return "HeartbeatFailedEvent(missedPongs=" + missedPongs + ")";
    }
}
