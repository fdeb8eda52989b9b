package io.wheelbeat.core.ratelimit;

import io.wheelbeat.core.internal.checks.ConfigChecks;
import java.time.Duration;

/**
 * How many permits one key may take per period, and by which algorithm:
 * {@link #slidingWindow(long, Duration)} admits while {@code previous x (unexpired fraction of the
 * window) + current + requested <= permits}, so no fixed window holds more than {@code permits} and
 * the edge burst of a fixed window is smoothed; {@link #tokenBucket(long, Duration, long)} is GCRA,
 * admitting at most {@code burst + permits x t / period} in any span {@code t}. A key's state is one
 * {@code long} updated by compare-and-set. Immutable and thread-safe.
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
     * A sliding-window counter: at most {@code permits} per {@code window}, weighted across the
     * edge of two fixed windows. A key may take all of its permits at once; there is no separate
     * burst.
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
     * A token bucket of {@code permits} tokens refilled at {@code permits} per {@code period}: a
     * key may take all of them at once, then one every {@code period / permits}.
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
     * A token bucket of {@code burst} tokens, refilled at {@code permits} per {@code period}. The
     * refill interval {@code period / permits} is rounded up to a whole nanosecond, so the rate
     * is never exceeded (and is slower by at most one nanosecond per permit).
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

    /**
     * Returns the permits per period (per window for a sliding window).
     *
     * @return the permits per period
     */
    public final long permits() {
        return permits;
    }

    /**
     * Returns the period (the window of a sliding window).
     *
     * @return the period
     */
    public final Duration period() {
        return Duration.ofNanos(periodNanos);
    }

    /**
     * Returns the most permits one call may ask for: more could never be admitted.
     *
     * @return the most permits per call
     */
    public abstract long burst();

    /**
     * Returns which algorithm this limit is.
     *
     * @return the kind
     */
    public abstract Kind kind();

    /** The two algorithms. */
    public enum Kind {
        /** {@link #slidingWindow(long, Duration)}. */
        SLIDING_WINDOW,
        /** {@link #tokenBucket(long, Duration, long)}. */
        TOKEN_BUCKET
    }

    /**
     * Returns the same kind of limit over the same period with {@code 1 / parts} of the permits
     * (and of the burst), rounded up: one process's share when {@code parts} processes share
     * this limit.
     */
    abstract RateLimit share(int parts);

    /**
     * Takes {@code permits} from {@code state} at {@code now} (nanoseconds since the limiter's
     * origin). Returns the new state (never negative) if admitted, or minus the nanoseconds until
     * it would be admitted if not. The empty state is 0.
     */
    abstract long next(long state, long permits, long now);

    /**
     * Returns the time at or after which {@code state} is as good as the empty state, so the key
     * can be forgotten without changing any decision; a time at or before {@code now} if it
     * already is.
     */
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
