package io.wheelbeat.netty.http2;

/**
 * A user event of {@link Http2KeepAliveHandler} when
 * the connection had no open stream for the maximum idle time; the handler then begins its
 * graceful shutdown (GOAWAY, then close once no stream is open).
 * @param idleNanos how long the connection had no open stream, in nanoseconds
 */
public record MaxConnectionIdleEvent(long idleNanos) {}
