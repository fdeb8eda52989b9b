/**
 * Connection deadlines that do not depend on traffic patterns:
 * {@link io.wheelbeat.netty.deadline.ConnectionDeadlineHandler} closes a connection that sends
 * nothing within a first-message timeout, and ends every connection at a maximum age (with
 * jitter and a grace period), as gRPC's {@code maxConnectionAge} does. Use it on servers that
 * must shed silent or immortal connections; for idleness use the {@code idle} package.
 *
 * <p>Thread rules: a handler serves one channel, on its event loop; a built factory is
 * thread-safe.
 */
package io.wheelbeat.netty.deadline;
