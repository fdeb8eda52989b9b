package io.wheelbeat.netty.deadline;

/**
 * A user event of {@link ConnectionDeadlineHandler} when the peer sent nothing within the
 * first-message limit after the channel became active. The handler closes the channel right after
 * firing it.
 *
 * @param timeoutNanos the limit that passed without a message, in nanoseconds
 */
public record FirstMessageTimeoutEvent(long timeoutNanos) {}
