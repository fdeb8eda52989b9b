package io.wheelbeat.core.ratelimit;

import java.time.Duration;

/**
 * The token bucket as GCRA (the generic cell rate algorithm): a key's state is its theoretical
 * arrival time, the instant at which its bucket will be full again. Taking {@code n} permits
 * pushes it {@code n} refill intervals later; the request is admitted while it stays within
 * {@code burst} intervals of now. One timestamp carries both the token count and the refill
 * clock, so one compare-and-set updates a key.
 */
final class TokenBucket extends RateLimit {

    private static final long MAX_TOLERANCE_NANOS = 1L << 62;

    private final long burst;
    /** The refill interval, {@code period / permits} rounded up. */
    private final long intervalNanos;
    /** How far ahead of now the arrival time may run: {@code burst} intervals. */
    private final long toleranceNanos;

    TokenBucket(long permits, Duration period, long burst) {
        super(permits, period);
        if (burst < 1) {
            throw new IllegalArgumentException("burst must be at least 1: " + burst);
        }
        if (periodNanos < permits) {
            throw new IllegalArgumentException("at most one permit per nanosecond: " + permits + " per " + period);
        }
        this.burst = burst;
        this.intervalNanos = -Math.floorDiv(-periodNanos, permits);
        if (Math.multiplyHigh(burst, intervalNanos) != 0 || burst * intervalNanos > MAX_TOLERANCE_NANOS) {
            throw new IllegalArgumentException("burst x refill interval must not exceed 2^62 ns: burst " + burst
                    + " of " + permits + " per " + period);
        }
        this.toleranceNanos = burst * intervalNanos;
    }

    @Override
    public long burst() {
        return burst;
    }

    @Override
    public Kind kind() {
        return Kind.TOKEN_BUCKET;
    }

    @Override
    RateLimit share(int parts) {
        return parts == 1
                ? this
                : new TokenBucket(-Math.floorDiv(-permits, parts), period(), -Math.floorDiv(-burst, parts));
    }

    @Override
    long next(long arrival, long requested, long now) {
        long after = Math.max(arrival, now) + requested * intervalNanos;
        long admitAt = after - toleranceNanos;
        return admitAt > now ? -(admitAt - now) : after;
    }

    @Override
    long idleAt(long arrival, long now) {
        return arrival;
    }

    /**
     * Until the bucket is full, but no sooner than one period: a key used steadily below its rate
     * then costs one check per period instead of one per refill interval.
     */
    @Override
    long nextCheckDelay(long arrival, long now) {
        return Math.max(arrival - now, periodNanos);
    }

    @Override
    public String toString() {
        return "tokenBucket(" + permits + " per " + period() + ", burst " + burst + ")";
    }
}
