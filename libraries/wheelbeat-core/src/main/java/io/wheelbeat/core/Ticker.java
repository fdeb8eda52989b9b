package io.wheelbeat.core;

/**
 * A monotonic nanosecond clock, safe to read from any thread. Only differences between readings
 * mean anything, as for {@link System#nanoTime()}; tests pass a clock they move.
 */
@FunctionalInterface
public interface Ticker {

    /**
     * Returns the current reading.
     *
     * @return nanoseconds from an arbitrary origin
     */
    long nanoTime();

    /**
     * Returns the clock of {@link System#nanoTime()}.
     *
     * @return the system ticker
     */
    static Ticker system() {
        return System::nanoTime;
    }
}
