package io.wheelbeat.netty.deadline;

import io.wheelbeat.core.internal.checks.ConfigChecks;
import io.wheelbeat.netty.internal.Jitter;
import java.time.Duration;
import java.util.Objects;

/**
 * The age at which {@link ConnectionDeadlineHandler} ends a connection, as gRPC's
 * {@code maxConnectionAge}: the maximum moved by a uniform draw within +/- the jitter, once per
 * connection; then the goodbye, and the close after the grace. Immutable and thread-safe.
 */
public final class MaxConnectionAge {

    /** The jitter unless set: 0.1, as gRPC, so ages spread over 90% to 110% of the maximum. */
    private static final double DEFAULT_JITTER = 0.1;

    private final Duration age;
    private final double jitter;
    private final Duration grace;

    private MaxConnectionAge(Duration age, double jitter, Duration grace) {
        this.age = age;
        this.jitter = jitter;
        this.grace = grace;
    }

    /**
     * A maximum age of {@code age}, with a jitter of 0.1 (as gRPC: ages spread over 90% to 110%
     * of it) and no grace.
     *
     * @param age the maximum age
     * @return the maximum age
     * @throws NullPointerException if {@code age} is null
     * @throws IllegalArgumentException if {@code age} is not positive
     */
    public static MaxConnectionAge of(Duration age) {
        ConfigChecks.positiveNanos("maxConnectionAge", age);
        return new MaxConnectionAge(age, DEFAULT_JITTER, Duration.ZERO);
    }

    /**
     * This age with another jitter: each connection's age is a uniform draw within +/-
     * {@code fraction} of the maximum; 0 gives every connection the exact age.
     *
     * @param fraction the fraction of the age either side, 0 for none
     * @return the maximum age with that jitter
     * @throws IllegalArgumentException unless {@code 0 <= fraction < 1}
     */
    public MaxConnectionAge withJitter(double fraction) {
        return new MaxConnectionAge(age, Jitter.checkFraction("maxConnectionAge jitter", fraction), grace);
    }

    /**
     * This age with a grace period: how long after the age the channel is closed, however the
     * goodbye goes (an HTTP/2 drain, say). Zero, the default, closes it right after the goodbye.
     *
     * @param grace the grace period
     * @return the maximum age with that grace
     * @throws NullPointerException if {@code grace} is null
     * @throws IllegalArgumentException if {@code grace} is negative
     */
    public MaxConnectionAge withGrace(Duration grace) {
        ConfigChecks.nonNegativeNanos("maxConnectionAge grace", grace);
        return new MaxConnectionAge(age, jitter, grace);
    }

    /**
     * The maximum age, before jitter.
     *
     * @return the maximum age
     */
    public Duration age() {
        return age;
    }

    /**
     * The jitter, as a fraction of the age either side.
     *
     * @return the fraction, at least 0 and below 1
     */
    public double jitter() {
        return jitter;
    }

    /**
     * The grace period.
     *
     * @return how long after the age the channel is closed
     */
    public Duration grace() {
        return grace;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof MaxConnectionAge other
                && age.equals(other.age)
                && jitter == other.jitter
                && grace.equals(other.grace);
    }

    @Override
    public int hashCode() {
        return Objects.hash(age, jitter, grace);
    }

    @Override
    public String toString() {
        return "MaxConnectionAge(" + age + ", jitter " + jitter + ", grace " + grace + ")";
    }
}
