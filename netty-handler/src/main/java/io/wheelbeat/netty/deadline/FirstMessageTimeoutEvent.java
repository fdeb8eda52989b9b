package io.wheelbeat.netty.deadline;

/**
 * Fired through the pipeline ({@code userEventTriggered}) by {@link ConnectionDeadlineHandler}
 * when the peer sent nothing within the first-message limit after the channel became active, and
 * by {@link io.wheelbeat.netty.mqtt.MqttServerKeepAliveHandler} when an MQTT client sent no
 * CONNECT within the connect timeout. The handler closes the channel right after firing it.
 *
 * <p>Immutable and thread-safe.
 */
public final class FirstMessageTimeoutEvent {

    private final long timeoutNanos;

    /** @param timeoutNanos the limit that passed without a message */
    public FirstMessageTimeoutEvent(long timeoutNanos) {
        this.timeoutNanos = timeoutNanos;
    }

    /**
     * Returns the limit that passed without a message, in nanoseconds.
     *
     * @return the limit that passed without a message, in nanoseconds
     */
    public long timeoutNanos() {
        return timeoutNanos;
    }

    @Override
    public String toString() {
        return "FirstMessageTimeoutEvent(timeout=" + timeoutNanos + "ns)";
    }
}
