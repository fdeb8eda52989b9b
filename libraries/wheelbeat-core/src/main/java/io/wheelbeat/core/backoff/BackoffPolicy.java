package io.wheelbeat.core.backoff;

import io.wheelbeat.core.internal.checks.ConfigChecks;
import java.time.Duration;
import java.util.Objects;
import java.util.random.RandomGenerator;

/**
 * Retry delays: exponential growth up to a cap, optional jitter and limit on attempts. The ceiling
 * is {@code c = min(max, initial x multiplier^(failures - 1))}; with {@code u} one
 * {@link RandomGenerator#nextDouble()} draw, the delay is:
 * <ul>
 *   <li><b>none</b>: {@code c};</li>
 *   <li><b>full</b>: {@code u x c};</li>
 *   <li><b>equal</b>: {@code c/2 + u x c/2};</li>
 *   <li><b>decorrelated</b>: {@code min(max, initial + u x (p x multiplier - initial))}, {@code p}
 *       the previous delay or {@code initial};</li>
 *   <li><b>proportional</b> ({@code +/-f}): {@code c x (1 + f x (2u - 1))}, capped before the
 *       jitter as gRPC specifies, so up to {@code f x max} above {@code max}.</li>
 * </ul>
 * Immutable and thread-safe.
 */
public final class BackoffPolicy {

    /** {@link #maxAttempts()} of a policy that never gives up. */
    public static final int FOREVER = Integer.MAX_VALUE;

    private static final BackoffPolicy GRPC = exponential(Duration.ofSeconds(1), Duration.ofSeconds(120))
            .multiplier(1.6)
            .proportionalJitter(0.2)
            .build();

    private enum Jitter {
        NONE,
        FULL,
        EQUAL,
        DECORRELATED,
        PROPORTIONAL
    }

    private final long initialNanos;
    private final long maxNanos;
    private final double multiplier;
    private final Jitter jitter;
    private final double jitterFraction;
    private final int maxAttempts;

    private BackoffPolicy(Builder b) {
        this.initialNanos = b.initialNanos;
        this.maxNanos = b.maxNanos;
        this.multiplier = b.multiplier;
        this.jitter = b.jitter;
        this.jitterFraction = b.jitterFraction;
        this.maxAttempts = b.maxAttempts;
    }

    /**
     * Starts a policy; by default multiplier 2, no jitter, no limit on attempts.
     *
     * @param initial the delay of the first retry
     * @param max the cap on every delay
     * @return a builder to finish the policy
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code initial} is not positive, {@code max} is less
     *     than {@code initial}, or either overflows a long of nanoseconds
     */
    public static Builder exponential(Duration initial, Duration max) {
        return new Builder(ConfigChecks.positiveNanos("initial", initial), ConfigChecks.positiveNanos("max", max));
    }

    /**
     * gRPC's connection backoff: 1 s, x1.6, jitter +/-0.2, up to 120 s, forever.
     *
     * @return the policy
     */
    public static BackoffPolicy grpc() {
        return GRPC;
    }

    /**
     * {@return the delay before the next attempt in nanoseconds, never negative}
     *
     * @param failures consecutive failed attempts so far, at least 1
     * @param previousDelayNanos the previous delay of the run, or 0; for the decorrelated jitter
     * @param random the source of the jitter
     * @throws IllegalArgumentException if {@code failures < 1} or {@code previousDelayNanos < 0}
     * @throws NullPointerException if {@code random} is null
     */
    public long delayNanos(int failures, long previousDelayNanos, RandomGenerator random) {
        if (failures < 1) {
            throw new IllegalArgumentException("failures must be at least 1: " + failures);
        }
        if (previousDelayNanos < 0) {
            throw new IllegalArgumentException("previousDelayNanos must not be negative: " + previousDelayNanos);
        }
        Objects.requireNonNull(random, "random");
        switch (jitter) {
            case NONE:
                return ceilingNanos(failures);
            case FULL:
                return Math.round(random.nextDouble() * ceilingNanos(failures));
            case EQUAL: {
                double half = ceilingNanos(failures) / 2.0;
                return Math.round(half + random.nextDouble() * half);
            }
            case DECORRELATED: {
                double upper = Math.max(initialNanos, previousDelayNanos) * multiplier;
                return Math.min(maxNanos, Math.round(initialNanos + random.nextDouble() * (upper - initialNanos)));
            }
            case PROPORTIONAL:
                // Math.round saturates: no overflow.
                return Math.round(ceilingNanos(failures) * (1 + jitterFraction * (2 * random.nextDouble() - 1)));
            default:
                throw new AssertionError(jitter);
        }
    }

    private long ceilingNanos(int failures) {
        double ceiling = initialNanos * Math.pow(multiplier, failures - 1);
        return ceiling >= maxNanos ? maxNanos : Math.round(ceiling);
    }

    /**
     * {@return whether another attempt is allowed: {@code failures < maxAttempts()}}
     *
     * @param failures consecutive failed attempts so far
     */
    public boolean retryAllowed(int failures) {
        return failures < maxAttempts;
    }

    /** {@return the most attempts a run makes, the first included, or {@link #FOREVER}} */
    public int maxAttempts() {
        return maxAttempts;
    }

    /** {@return the delay of the first retry before jitter} */
    public Duration initialDelay() {
        return Duration.ofNanos(initialNanos);
    }

    /** {@return the cap on the delay before jitter} */
    public Duration maxDelay() {
        return Duration.ofNanos(maxNanos);
    }

    /** {@return the factor by which the delay grows per failure, 1 or more} */
    public double multiplier() {
        return multiplier;
    }

    @Override
    public String toString() {
        String jitterText = jitter == Jitter.PROPORTIONAL
                ? "jitter +/-" + jitterFraction
                : jitter.name().toLowerCase(java.util.Locale.ROOT) + " jitter";
        return "BackoffPolicy(" + Duration.ofNanos(initialNanos) + " x" + multiplier + " up to "
                + Duration.ofNanos(maxNanos) + ", " + jitterText + ", "
                + (maxAttempts == FOREVER ? "forever" : "at most " + maxAttempts + " attempts") + ")";
    }

    /** Settings of a {@link BackoffPolicy}. Not thread-safe. */
    public static final class Builder {
        private final long initialNanos;
        private final long maxNanos;
        private double multiplier = 2.0;
        private Jitter jitter = Jitter.NONE;
        private double jitterFraction;
        private int maxAttempts = FOREVER;

        private Builder(long initialNanos, long maxNanos) {
            if (initialNanos <= 0) {
                throw new IllegalArgumentException("initial must be positive: " + Duration.ofNanos(initialNanos));
            }
            if (maxNanos < initialNanos) {
                throw new IllegalArgumentException("max (" + Duration.ofNanos(maxNanos)
                        + ") must not be less than initial (" + Duration.ofNanos(initialNanos) + ")");
            }
            this.initialNanos = initialNanos;
            this.maxNanos = maxNanos;
        }

        /**
         * The factor by which the delay grows per failure; 2 by default.
         *
         * @param multiplier the growth factor, 1 or more
         * @return this builder
         * @throws IllegalArgumentException if less than 1 or not finite
         */
        public Builder multiplier(double multiplier) {
            if (!(multiplier >= 1.0) || Double.isInfinite(multiplier)) {
                throw new IllegalArgumentException("multiplier must be finite and at least 1: " + multiplier);
            }
            this.multiplier = multiplier;
            return this;
        }

        /**
         * No jitter (the default).
         *
         * @return this builder
         */
        public Builder noJitter() {
            return jitter(Jitter.NONE, 0);
        }

        /**
         * Full jitter: uniform in {@code [0, c]}.
         *
         * @return this builder
         */
        public Builder fullJitter() {
            return jitter(Jitter.FULL, 0);
        }

        /**
         * Equal jitter: {@code c/2} plus uniform in {@code [0, c/2]}.
         *
         * @return this builder
         */
        public Builder equalJitter() {
            return jitter(Jitter.EQUAL, 0);
        }

        /**
         * Decorrelated jitter (see the class comment).
         *
         * @return this builder
         */
        public Builder decorrelatedJitter() {
            return jitter(Jitter.DECORRELATED, 0);
        }

        /**
         * gRPC's jitter: the ceiling times a uniform factor in {@code 1 +/- fraction}.
         *
         * @param fraction the spread either side of the ceiling, in [0, 1]
         * @return this builder
         * @throws IllegalArgumentException if {@code fraction} is not in {@code [0, 1]}
         */
        public Builder proportionalJitter(double fraction) {
            if (!(fraction >= 0 && fraction <= 1)) {
                throw new IllegalArgumentException("jitter fraction must be in [0, 1]: " + fraction);
            }
            return jitter(Jitter.PROPORTIONAL, fraction);
        }

        private Builder jitter(Jitter jitter, double fraction) {
            this.jitter = jitter;
            this.jitterFraction = fraction;
            return this;
        }

        /**
         * Gives up after {@code attempts} attempts in a run.
         *
         * @param attempts the most attempts in a run, the first included
         * @return this builder
         * @throws IllegalArgumentException if less than 1
         */
        public Builder maxAttempts(int attempts) {
            if (attempts < 1) {
                throw new IllegalArgumentException("maxAttempts must be at least 1: " + attempts);
            }
            this.maxAttempts = attempts;
            return this;
        }

        /**
         * Never gives up (the default).
         *
         * @return this builder
         */
        public Builder forever() {
            this.maxAttempts = FOREVER;
            return this;
        }

        /**
         * Builds the policy.
         *
         * @return the policy, immutable and thread-safe
         */
        public BackoffPolicy build() {
            return new BackoffPolicy(this);
        }
    }
}
