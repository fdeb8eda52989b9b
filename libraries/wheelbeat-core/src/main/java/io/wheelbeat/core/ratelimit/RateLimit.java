package io.wheelbeat.core.ratelimit;

import io.wheelbeat.core.internal.checks.ConfigChecks;
import java.time.Duration;

/**
 * How many permits one key may take per period, and by which algorithm: a sliding-window counter
 * or a token bucket (GCRA). A key's state is one {@code long} updated by compare-and-set.
 * Immutable and thread-safe.
 */
public abstract sealed class RateLimit permits SlidingWindowCounter, TokenBucket {

    /** The most permits per window of a sliding window: its two counts share one long. */
    public static final long MAX_WINDOW_PERMITS = SlidingWindowCounter.MAX_PERMITS;

    final long permits;
    final long periodNanos;

    RateLimit(long permits, Duration period) {
        this.periodNanos = ConfigChecks.positiveNanos("period", period);
        if (permits < 1) {
            throw new IllegalArgumentException("permits must be at least 1: " + permits);
        }
        this.permits = permits;
    }

    /**
     * A sliding-window counter: admits while {@code previous x (unexpired fraction of the window) +
     * current + requested <= permits}.
     *
     * @param permits the most permits per window
     * @param window the window
     * @return the limit
     * @throws IllegalArgumentException if {@code permits} is below 1 or above
     *     {@link #MAX_WINDOW_PERMITS}, if {@code window} is not positive, or if
     *     {@code permits x window} in nanoseconds does not fit in a {@code long}
     * @throws NullPointerException if {@code window} is null
     */
    public static RateLimit slidingWindow(long permits, Duration window) {
        return new SlidingWindowCounter(permits, window);
    }

    /**
     * A token bucket of {@code permits} tokens refilled at {@code permits} per {@code period}.
     *
     * @param permits the bucket's size and the refill per period
     * @param period the refill period
     * @return the limit
     * @throws IllegalArgumentException as {@link #tokenBucket(long, Duration, long)}
     */
    public static RateLimit tokenBucket(long permits, Duration period) {
        return new TokenBucket(permits, period, permits);
    }

    /**
     * A token bucket of {@code burst} tokens, refilled at {@code permits} per {@code period}; the
     * refill interval is rounded up to a whole nanosecond, so the rate is never exceeded.
     *
     * @param permits the refill per period
     * @param period the refill period
     * @param burst the bucket's size
     * @return the limit
     * @throws IllegalArgumentException if {@code permits} or {@code burst} is below 1, if
     *     {@code period} is not positive or shorter than {@code permits} nanoseconds, or if
     *     {@code burst x refill interval} exceeds 2^62 nanoseconds
     * @throws NullPointerException if {@code period} is null
     */
    public static RateLimit tokenBucket(long permits, Duration period, long burst) {
        return new TokenBucket(permits, period, burst);
    }

    /** {@return the permits per period (per window for a sliding window)} */
    public final long permits() {
        return permits;
    }

    /** {@return the period (the window of a sliding window)} */
    public final Duration period() {
        return Duration.ofNanos(periodNanos);
    }

    /** {@return the most permits one call may ask for: more could never be admitted} */
    public abstract long burst();

    /** {@return which algorithm this limit is} */
    public abstract Kind kind();

    /** The two algorithms. */
    public enum Kind {
        /** {@link #slidingWindow(long, Duration)}. */
        SLIDING_WINDOW,
        /** {@link #tokenBucket(long, Duration, long)}. */
        TOKEN_BUCKET
    }

    /** Returns this limit with {@code 1 / parts} of the permits and burst, rounded up. */
    abstract RateLimit share(int parts);

    /**
     * Returns the new state (never negative) if admitted, or minus the nanoseconds to wait. The
     * empty state is 0; {@code now} counts from the limiter's origin.
     */
    abstract long next(long state, long permits, long now);

    /** Returns when {@code state} becomes as good as the empty state (the key may be forgotten). */
    abstract long idleAt(long state, long now);

    /** Returns how long after {@code now} to check whether {@code state} has gone idle. */
    abstract long nextCheckDelay(long state, long now);

    final void checkPermits(long requested) {
        if (requested < 1 || requested > burst()) {
            throw new IllegalArgumentException("permits must be between 1 and " + burst()
                    + " (more could never be admitted by " + this + "): " + requested);
        }
    }
}
