package io.wheelbeat.core.backoff;

import java.util.Objects;
import java.util.random.RandomGenerator;

/**
 * The retry schedule of one connection: turns the {@link BackoffPolicy}'s delays into deadlines
 * from ticker readings the caller passes in. The next attempt is due the delay after the
 * <em>start</em> of the attempt that failed (as gRPC measures it). Not thread-safe.
 */
public final class BackoffSchedule {

    private final BackoffPolicy policy;
    private final RandomGenerator random;
    private int failures;
    private long lastDelayNanos;
    private boolean attemptOpen;
    private long attemptStartNanos;
    private long nextAttemptNanos;

    /**
     * A schedule that draws its jitter from {@code random} on the caller's thread.
     *
     * @param policy the delays and the limit on attempts
     * @param random the source of jitter
     * @throws NullPointerException if an argument is null
     */
    public BackoffSchedule(BackoffPolicy policy, RandomGenerator random) {
        this.policy = Objects.requireNonNull(policy, "policy");
        this.random = Objects.requireNonNull(random, "random");
    }

    /**
     * Records that an attempt starts.
     *
     * @param nowNanos the start, a ticker reading
     */
    public void attemptStarted(long nowNanos) {
        attemptOpen = true;
        attemptStartNanos = nowNanos;
    }

    /**
     * Records that the current attempt (or its connection) failed; computes the next deadline.
     *
     * @param nowNanos the moment of the failure, a ticker reading
     * @return {@code true} if another attempt is allowed, due at {@link #nextAttemptNanos()};
     *     {@code false} if the policy gives up
     */
    public boolean attemptFailed(long nowNanos) {
        long base = attemptOpen ? attemptStartNanos : nowNanos;
        attemptOpen = false;
        if (failures < Integer.MAX_VALUE) {
            failures++;
        }
        if (!policy.retryAllowed(failures)) {
            return false;
        }
        lastDelayNanos = policy.delayNanos(failures, lastDelayNanos, random);
        long deadline = base + lastDelayNanos;
        // Saturate, not wrap to the past.
        nextAttemptNanos = deadline < base ? Long.MAX_VALUE : deadline;
        return true;
    }

    /** Ends the run (the connection is healthy): the next failure starts a new one. */
    public void reset() {
        failures = 0;
        lastDelayNanos = 0;
        attemptOpen = false;
    }

    /** {@return the consecutive failed attempts of the current run; 0 after {@link #reset()}} */
    public int failures() {
        return failures;
    }

    /** {@return the nanoseconds chosen by the last {@link #attemptFailed} that allowed a retry; 0 after reset} */
    public long lastDelayNanos() {
        return lastDelayNanos;
    }

    /** {@return the ticker reading computed by the last {@link #attemptFailed} that allowed a retry} */
    public long nextAttemptNanos() {
        return nextAttemptNanos;
    }

    /** {@return the policy} */
    public BackoffPolicy policy() {
        return policy;
    }
}
