package io.wheelbeat.netty.deadline;

/**
 * A user event of {@link ConnectionDeadlineHandler}
 * when the peer sent nothing within the first-message limit after the channel became active, and
 * by {@link io.wheelbeat.netty.mqtt.MqttServerKeepAliveHandler} when an MQTT client sent no
 * CONNECT within the connect timeout. The handler closes the channel right after firing it.
 *
 * @param timeoutNanos the limit that passed without a message, in nanoseconds
 */
public record FirstMessageTimeoutEvent(long timeoutNanos) {}
