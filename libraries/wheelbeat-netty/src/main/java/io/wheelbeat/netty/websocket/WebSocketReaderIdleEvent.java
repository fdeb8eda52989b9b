package io.wheelbeat.netty.websocket;

/**
 * A user event of {@link WebSocketKeepAliveHandler}
 * when nothing was read from the peer for the reader-idle timeout. Right after firing it, the
 * handler sends a close frame (1001, "idle timeout") if the opening handshake is done, and closes
 * the channel.
 * @param timeoutNanos the reader-idle timeout that passed without a read, in nanoseconds
 */
public record WebSocketReaderIdleEvent(long timeoutNanos) {}
