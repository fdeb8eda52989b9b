/**
 * MQTT keep-alive over Netty's {@code netty-codec-mqtt}, on the event loop's shared wheel.
 *
 * <p>Use {@link io.wheelbeat.netty.mqtt.MqttServerKeepAliveHandler} in a broker or any MQTT server:
 * it enforces the keep-alive each client announces in CONNECT (closing a client silent for 1.5
 * times it), answers PINGREQ, bounds the keep-alive clients may ask for, and closes connections
 * that never send CONNECT or send something else first. Use
 * {@link io.wheelbeat.netty.mqtt.MqttClientKeepAliveHandler} in an MQTT client: it sends PINGREQ when the client has sent
 * nothing for its keep-alive and closes when PINGRESP does not come.
 *
 * <p>Both emit the events and meters of {@link io.wheelbeat.netty.heartbeat.HeartbeatHandler}
 * (round-trip times, missed pongs, too many pings, {@code wheelbeat.connection.closed} by reason),
 * so one dashboard serves every protocol. The codec is an optional dependency of netty-handler:
 * add {@code io.netty:netty-codec-mqtt} to use this package. See docs/keepalive.md.
 */
package io.wheelbeat.netty.mqtt;
