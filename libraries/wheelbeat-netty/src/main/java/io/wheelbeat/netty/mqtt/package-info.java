/**
 * MQTT keep-alive over {@code netty-codec-mqtt}, which it needs: the broker's side
 * ({@link io.wheelbeat.netty.mqtt.MqttServerKeepAliveHandler}) and the client's
 * ({@link io.wheelbeat.netty.mqtt.MqttClientKeepAliveHandler}).
 */
package io.wheelbeat.netty.mqtt;
