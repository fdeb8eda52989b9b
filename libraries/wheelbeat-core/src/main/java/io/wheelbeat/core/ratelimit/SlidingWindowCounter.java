package io.wheelbeat.core.ratelimit;

import java.time.Duration;

/**
 * The sliding-window counter. A key's state packs three fields into the 63 low bits of a long:
 * the index of the window last written (modulo 2^indexBits), the count of the window before it,
 * and the count of that window. Each count needs only the bits of {@code permits}, so with
 * permits below 2^20 the index keeps at least 23 bits.
 *
 * <p>The index is read as a signed distance from the caller's window: threads read the clock
 * before they compare-and-set, so a thread may find a state written by one that read a later
 * clock, one window ahead of its own. Such a request counts in that later window, as if made at
 * its start (stricter, never more lenient), instead of taking the state for an old one and
 * wiping its counts. A distance of half the index range (4 million windows) would alias; an idle
 * key is evicted two windows after its last use, long before.
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
            throw new IllegalArgumentException(
                    "permits x window must stay below 2^63 ns: " + permits + " per " + window);
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
    public Kind kind() {
        return Kind.SLIDING_WINDOW;
    }

    @Override
    RateLimit share(int parts) {
        return parts == 1 ? this : new SlidingWindowCounter(-Math.floorDiv(-permits, parts), period());
    }

    @Override
    long next(long state, long requested, long now) {
        long window = now / periodNanos;
        long lag = lag(state, window);
        if (lag < 0) {
            // Written by a thread that read a later clock: count in its window, from the start.
            window -= lag;
            lag = 0;
        }
        long windowStart = window * periodNanos;
        long elapsed = Math.max(0, now - windowStart);
        long current = lag == 0 ? state & countMask : 0;
        long previous = lag == 0 ? (state >>> countBits) & countMask : lag == 1 ? state & countMask : 0;
        long room = permits - current - requested;
        // previous x (W - elapsed) / W + current + requested <= permits, without division.
        if (room >= 0 && previous * (periodNanos - elapsed) <= room * periodNanos) {
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
        // The counts weigh nothing from the start of the second window after the one written
        // (a state from a later window than the caller's is not idle).
        return lag >= 2 ? now : (window - lag + 2) * periodNanos;
    }

    @Override
    long nextCheckDelay(long state, long now) {
        return idleAt(state, now) - now;
    }

    /**
     * How many windows before {@code window} the state was written: negative if after it, read
     * modulo the index's range as a signed distance.
     */
    private long lag(long state, long window) {
        long distance = (window - (state >>> (2 * countBits))) & indexMask;
        return distance > (indexMask >>> 1) ? distance - indexMask - 1 : distance;
    }

    @Override
    public String toString() {
        return "slidingWindow(" + permits + " per " + period() + ")";
    }
}
