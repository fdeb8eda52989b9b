/**
 * Client connections that reconnect by themselves, delays on the wheel:
 * {@link io.wheelbeat.netty.reconnect.ReconnectingClient}.
 */
package io.wheelbeat.netty.reconnect;
