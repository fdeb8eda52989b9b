package io.wheelbeat.netty.internal;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * Validation shared by the handlers' builders, so that bad settings fail when configured with
 * a message naming the setting, never later on some connection.
 *
 * <p>Internal: not part of wheelbeat's API. Thread-safe.
 */
public final class ConfigChecks {

    private ConfigChecks() {
    }

    /**
     * Returns {@code amount} in nanoseconds (saturating, as {@link TimeUnit#toNanos}).
     *
     * @throws NullPointerException if {@code unit} is null
     * @throws IllegalArgumentException if {@code amount} is not positive
     */
    public static long positiveNanos(String name, long amount, TimeUnit unit) {
        Objects.requireNonNull(unit, name + " unit");
        if (amount <= 0) {
            throw new IllegalArgumentException(name + " must be positive: " + amount + " " + unit);
        }
        return unit.toNanos(amount);
    }

    /**
     * Returns {@code duration} in nanoseconds.
     *
     * @throws NullPointerException if {@code duration} is null
     * @throws IllegalArgumentException if {@code duration} is not positive or is over 292 years
     */
    public static long positiveNanos(String name, Duration duration) {
        Objects.requireNonNull(duration, name);
        if (duration.isNegative() || duration.isZero()) {
            throw new IllegalArgumentException(name + " must be positive: " + duration);
        }
        try {
            return duration.toNanos();
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException(name + " is too long (over 292 years): " + duration, e);
        }
    }

    /**
     * Returns {@code amount} in nanoseconds (saturating).
     *
     * @throws NullPointerException if {@code unit} is null
     * @throws IllegalArgumentException if {@code amount} is negative
     */
    public static long nonNegativeNanos(String name, long amount, TimeUnit unit) {
        Objects.requireNonNull(unit, name + " unit");
        if (amount < 0) {
            throw new IllegalArgumentException(name + " must not be negative: " + amount + " " + unit);
        }
        return unit.toNanos(amount);
    }

    /**
     * Returns {@code count}.
     *
     * @throws IllegalArgumentException if {@code count} is not positive
     */
    public static int positive(String name, int count) {
        if (count <= 0) {
            throw new IllegalArgumentException(name + " must be positive: " + count);
        }
        return count;
    }
}
