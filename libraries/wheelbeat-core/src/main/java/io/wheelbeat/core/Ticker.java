package io.wheelbeat.core;

/**
 * A monotonic nanosecond clock, safe to read from any thread. Only differences between readings
 * mean anything, as for {@link System#nanoTime()}; tests pass a clock they move.
 */
@FunctionalInterface
public interface Ticker {

    /** {@return the current reading, in nanoseconds from an arbitrary origin} */
    long nanoTime();

    /** {@return the clock of {@link System#nanoTime()}} */
    static Ticker system() {
        return System::nanoTime;
    }
}
