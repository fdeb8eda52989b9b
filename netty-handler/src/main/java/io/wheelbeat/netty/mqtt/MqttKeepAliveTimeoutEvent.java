package io.wheelbeat.netty.mqtt;

/**
 * Fired through the pipeline ({@code userEventTriggered}) by {@link MqttServerKeepAliveHandler}
 * when the client sent no packet for one and a half times its keep-alive. The handler closes the
 * channel right after firing it (an MQTT 5 client is sent DISCONNECT "Keep Alive timeout" first).
 *
 * <p>Immutable and thread-safe.
 */
public final class MqttKeepAliveTimeoutEvent {

    private final int keepAliveSeconds;

    /** @param keepAliveSeconds the keep-alive in force on the connection */
    public MqttKeepAliveTimeoutEvent(int keepAliveSeconds) {
        this.keepAliveSeconds = keepAliveSeconds;
    }

    /**
     * Returns the keep-alive in force on the connection, in seconds; the deadline was 1.5 times it.
     *
     * @return the keep-alive in force on the connection, in seconds
     */
    public int keepAliveSeconds() {
        return keepAliveSeconds;
    }

    @Override
    public String toString() {
        return "MqttKeepAliveTimeoutEvent(keepAlive=" + keepAliveSeconds + "s)";
    }
}
