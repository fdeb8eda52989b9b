package io.wheelbeat.netty.mqtt;

/**
 * A user event of {@link MqttServerKeepAliveHandler} when the client sent nothing for 1.5 times its
 * keep-alive; the close follows (after DISCONNECT "Keep Alive timeout" to an MQTT 5 client).
 * @param keepAliveSeconds the keep-alive in force on the connection, in seconds
 */
public record MqttKeepAliveTimeoutEvent(int keepAliveSeconds) {}
