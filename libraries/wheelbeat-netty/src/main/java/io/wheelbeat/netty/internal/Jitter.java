package io.wheelbeat.netty.internal;

import java.util.concurrent.ThreadLocalRandom;
import java.util.random.RandomGenerator;

/**
 * Spreads a duration uniformly over {@code base x (1 - fraction)} to {@code base x (1 + fraction)},
 * so that connections opened together do not act together.
 *
 * <p>Internal: not part of wheelbeat's API. Thread-safe.
 */
public final class Jitter {

    /** Draws from the calling thread's {@link ThreadLocalRandom}: shareable, never contended. */
    public static final RandomGenerator THREAD_LOCAL_RANDOM =
            () -> ThreadLocalRandom.current().nextLong();

    private Jitter() {}

    /**
     * Checks a jitter fraction.
     *
     * @return {@code fraction}
     * @throws IllegalArgumentException unless {@code 0 <= fraction < 1}
     */
    public static double checkFraction(String name, double fraction) {
        if (!(fraction >= 0 && fraction < 1)) {
            throw new IllegalArgumentException(name + " must be at least 0 and below 1: " + fraction);
        }
        return fraction;
    }

    /**
     * Returns {@code baseNanos} moved by a uniform draw in [-fraction, +fraction) of itself,
     * saturating at {@code Long.MAX_VALUE} and never below 1 ns. Draws nothing when
     * {@code fraction} is zero.
     */
    public static long apply(long baseNanos, double fraction, RandomGenerator random) {
        if (fraction == 0) {
            return baseNanos;
        }
        double offset = (2 * random.nextDouble() - 1) * fraction * baseNanos;
        // The cast saturates at Long.MAX_VALUE (JLS 5.1.3).
        return Math.max(1, (long) (baseNanos + offset));
    }
}
