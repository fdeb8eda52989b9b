package io.wheelbeat.netty.guard;

import java.util.Objects;

/**
 * A user event of {@link SlowConsumerHandler} when
 * it ends a connection whose peer does not read fast enough. The handler closes the channel right
 * after firing it. Immutable.
 */
public final class SlowConsumerEvent {

    /** The {@code reason} tag of {@code wheelbeat.connection.closed} for these closes. */
    public static final String CLOSE_REASON = "slow_consumer";

    /** Which rule ended the connection. */
    public enum Cause {
        /** A write left more than the maximum of bytes pending. */
        PENDING_BYTES,
        /** The channel stayed unwritable longer than the limit. */
        UNWRITABLE_TOO_LONG
    }

    private final Cause cause;
    private final long pendingBytes;

    /**
     * @param cause which rule ended the connection
     * @param pendingBytes the bytes pending in the outbound buffer then
     */
    public SlowConsumerEvent(Cause cause, long pendingBytes) {
        this.cause = Objects.requireNonNull(cause, "cause");
        this.pendingBytes = pendingBytes;
    }

    /** @return which rule ended the connection */
    public Cause cause() {
        return cause;
    }

    /** @return the bytes pending in the outbound buffer when the connection was ended */
    public long pendingBytes() {
        return pendingBytes;
    }

    @Override
    public String toString() {
        return "SlowConsumerEvent(" + cause + ", " + pendingBytes + " bytes pending)";
    }
}
