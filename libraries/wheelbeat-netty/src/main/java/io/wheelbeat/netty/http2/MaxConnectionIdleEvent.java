package io.wheelbeat.netty.http2;

/**
 * A user event of {@link Http2KeepAliveHandler} when the connection had no open stream for the
 * maximum idle time; its graceful shutdown follows.
 * @param idleNanos how long the connection had no open stream, in nanoseconds
 */
public record MaxConnectionIdleEvent(long idleNanos) {}
