package io.wheelbeat.core.internal.checks;

import java.time.Duration;
import java.util.Objects;

/**
 * Validation shared by every settings class and builder of wheelbeat's modules, so that bad
 * settings fail when configured, with a message naming the setting, never later on some
 * connection.
 *
 * <p>Internal: not part of wheelbeat's API. Thread-safe.
 */
public final class ConfigChecks {

    private ConfigChecks() {}

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
     * Returns {@code duration} in nanoseconds.
     *
     * @throws NullPointerException if {@code duration} is null
     * @throws IllegalArgumentException if {@code duration} is negative or is over 292 years
     */
    public static long nonNegativeNanos(String name, Duration duration) {
        Objects.requireNonNull(duration, name);
        if (duration.isNegative()) {
            throw new IllegalArgumentException(name + " must not be negative: " + duration);
        }
        return duration.isZero() ? 0 : positiveNanos(name, duration);
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
