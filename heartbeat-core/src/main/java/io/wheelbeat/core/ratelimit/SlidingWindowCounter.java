package io.wheelbeat.core.ratelimit;

import java.time.Duration;

/**
 * The sliding-window counter. A key's state packs three fields into the 63 low bits of a long:
 * the index of the window last written (modulo 2^indexBits), the count of the window before it,
 * and the count of that window. Each count needs only the bits of {@code permits}, so with
 * permits below 2^20 the index keeps at least 23 bits: it would take 8 million windows of
 * inactivity for an index to alias, and an idle key is evicted two windows after its last use.
 */
final class SlidingWindowCounter extends RateLimit {

    static final long MAX_PERMITS = (1L << 20) - 1;

    private final int countBits;
    private final long countMask;
    private final long indexMask;

    SlidingWindowCounter(long permits, Duration window) {
        super(permits, window);
        if (permits > MAX_PERMITS) {
            throw new IllegalArgumentException("a sliding window admits at most " + MAX_PERMITS
                    + " permits per window (use a token bucket for more): " + permits);
        }
        if (Math.multiplyHigh(permits, periodNanos) != 0 || permits * periodNanos < 0) {
            throw new IllegalArgumentException("permits x window must stay below 2^63 ns: "
                    + permits + " per " + window);
        }
        this.countBits = 64 - Long.numberOfLeadingZeros(permits);
        this.countMask = (1L << countBits) - 1;
        this.indexMask = (1L << (63 - 2 * countBits)) - 1;
    }

    @Override
    public long burst() {
        return permits;
    }

    @Override
    long next(long state, long requested, long now) {
        long window = now / periodNanos;
        long windowStart = window * periodNanos;
        long lag = lag(state, window);
        long current = lag == 0 ? state & countMask : 0;
        long previous = lag == 0 ? (state >>> countBits) & countMask : lag == 1 ? state & countMask : 0;
        long room = permits - current - requested;
        // previous x (W - elapsed) / W + current + requested <= permits, without division.
        if (room >= 0 && previous * (periodNanos - (now - windowStart)) <= room * periodNanos) {
            return ((window & indexMask) << (2 * countBits)) | (previous << countBits) | (current + requested);
        }
        long admitAt;
        if (room >= 0) {
            // In this window, once the previous window's weight has shrunk enough (previous > 0).
            admitAt = windowStart + periodNanos - room * periodNanos / previous;
        } else {
            // Not before the next window, where this window's count becomes the weighted one
            // (current > permits - requested >= 0).
            admitAt = windowStart + 2 * periodNanos - (permits - requested) * periodNanos / current;
        }
        return -(admitAt - now);
    }

    @Override
    long idleAt(long state, long now) {
        long window = now / periodNanos;
        long lag = lag(state, window);
        // The counts weigh nothing from the start of the second window after the one written.
        return lag >= 2 ? now : (window - lag + 2) * periodNanos;
    }

    @Override
    long nextCheckDelay(long state, long now) {
        return idleAt(state, now) - now;
    }

    /** How many windows ago {@code state} was written, modulo the index's range. */
    private long lag(long state, long window) {
        return (window - (state >>> (2 * countBits))) & indexMask;
    }

    @Override
    public String toString() {
        return "slidingWindow(" + permits + " per " + period() + ")";
    }
}
