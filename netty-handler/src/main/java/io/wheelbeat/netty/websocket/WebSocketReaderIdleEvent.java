package io.wheelbeat.netty.websocket;

/**
 * Fired through the pipeline ({@code userEventTriggered}) by {@link WebSocketKeepAliveHandler}
 * when nothing was read from the peer for the reader-idle timeout. Right after firing it, the
 * handler sends a close frame (1001, "idle timeout") if the opening handshake is done, and closes
 * the channel.
 *
 * <p>Immutable and thread-safe.
 */
public final class WebSocketReaderIdleEvent {

    private final long timeoutNanos;

    /** @param timeoutNanos the reader-idle timeout that passed without a read */
    public WebSocketReaderIdleEvent(long timeoutNanos) {
        this.timeoutNanos = timeoutNanos;
    }

    /**
     * Returns the reader-idle timeout that passed without a read, in nanoseconds.
     *
     * @return the reader-idle timeout that passed without a read, in nanoseconds
     */
    public long timeoutNanos() {
        return timeoutNanos;
    }

    @Override
    public String toString() {
        return "WebSocketReaderIdleEvent(timeout=" + timeoutNanos + "ns)";
    }
}
