/**
 * Client connections that reconnect by themselves, with every delay on the shared timing wheel:
 * {@link io.wheelbeat.netty.reconnect.ReconnectingClient} (wraps a Netty bootstrap),
 * {@link io.wheelbeat.netty.reconnect.ReconnectGroup} (a shared cap on attempts in flight),
 * {@link io.wheelbeat.netty.reconnect.ReconnectEvent} and
 * {@link io.wheelbeat.netty.reconnect.ReconnectListener} (what happened), and
 * {@link io.wheelbeat.netty.reconnect.ReconnectMetrics} (Micrometer meters).
 */
package io.wheelbeat.netty.reconnect;
