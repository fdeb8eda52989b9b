/**
 * MQTT keep-alive over {@code netty-codec-mqtt}, which it needs, for brokers and clients.
 */
package io.wheelbeat.netty.mqtt;
