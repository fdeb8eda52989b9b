package io.wheelbeat.netty.websocket;

/**
 * A user event of {@link WebSocketKeepAliveHandler} when nothing was read for the reader-idle timeout;
 * the close frame (after the handshake) and the close follow.
 * @param timeoutNanos the reader-idle timeout that passed without a read, in nanoseconds
 */
public record WebSocketReaderIdleEvent(long timeoutNanos) {}
