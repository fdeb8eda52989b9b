package io.wheelbeat.core.backoff;

import java.util.Objects;
import java.util.random.RandomGenerator;

/**
 * The retry schedule of one connection: counts the failed attempts of the current run and turns
 * the {@link BackoffPolicy}'s delays into deadlines, from ticker readings the caller passes in.
 * The next attempt is due the delay after the <em>start</em> of the attempt that failed (as gRPC
 * measures it). {@link #reset()} ends a run once the connection is healthy; the next failure then
 * starts a new run measured from that failure. When {@link BackoffPolicy#maxAttempts()} is used
 * up, {@link #attemptFailed} answers {@code false}. Not thread-safe: one per connection.
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
     * A schedule that draws its jitter from {@code random}, which it uses on the caller's thread.
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
     * Records that an attempt starts at {@code nowNanos}, a ticker reading.
     *
     * @param nowNanos the start, a ticker reading
     */
    public void attemptStarted(long nowNanos) {
        attemptOpen = true;
        attemptStartNanos = nowNanos;
    }

    /**
     * Records that the current attempt (or the connection it made) failed at {@code nowNanos},
     * and computes when the next attempt is due.
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
        // Saturate: a delay of centuries must not wrap round to the past.
        nextAttemptNanos = deadline < base ? Long.MAX_VALUE : deadline;
        return true;
    }

    /**
     * The connection has proven healthy: ends the run. The failure count and the previous delay
     * go back to zero, and the next failure is measured from when it happens.
     */
    public void reset() {
        failures = 0;
        lastDelayNanos = 0;
        attemptOpen = false;
    }

    /**
     * Returns the consecutive failed attempts of the current run; 0 after {@link #reset()}.
     *
     * @return the consecutive failures
     */
    public int failures() {
        return failures;
    }

    /**
     * Returns the delay chosen by the last {@link #attemptFailed} that allowed a retry; 0 after {@link #reset()}.
     *
     * @return the last delay in nanoseconds
     */
    public long lastDelayNanos() {
        return lastDelayNanos;
    }

    /**
     * Returns the deadline computed by the last {@link #attemptFailed} that allowed a retry.
     *
     * @return the next attempt's deadline, a ticker reading
     */
    public long nextAttemptNanos() {
        return nextAttemptNanos;
    }

    /**
     * Returns the policy.
     *
     * @return the policy this schedule follows
     */
    public BackoffPolicy policy() {
        return policy;
    }
}
