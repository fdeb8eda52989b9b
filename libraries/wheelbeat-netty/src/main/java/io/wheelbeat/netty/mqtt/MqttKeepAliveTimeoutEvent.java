package io.wheelbeat.netty.mqtt;

/**
 * A user event of {@link MqttServerKeepAliveHandler}
 * when the client sent no packet for one and a half times its keep-alive. The handler closes the
 * channel right after firing it (an MQTT 5 client is sent DISCONNECT "Keep Alive timeout" first).
 * @param keepAliveSeconds the keep-alive in force on the connection, in seconds
 */
public record MqttKeepAliveTimeoutEvent(int keepAliveSeconds) {}
