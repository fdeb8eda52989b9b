package io.wheelbeat.core;

/**
 * A monotonic nanosecond clock.
 *
 * <p>Every timer in wheelbeat reads time through a ticker, so that tests can run in virtual time
 * ({@link ManualTicker}) and production reads {@link System#nanoTime()} ({@link #system()}).
 * Only differences between two readings are meaningful; the origin is arbitrary.
 *
 * <p>Implementations must be monotonic (never go backwards) and safe to call from any thread.
 */
@FunctionalInterface
public interface Ticker {

    /**
     * Returns the current reading in nanoseconds.
     *
     * @return the reading; only differences between readings mean anything, as for {@link System#nanoTime()}
     */
    long nanoTime();

    /**
     * Returns the ticker that reads {@link System#nanoTime()}.
     *
     * @return the system ticker
     */
    static Ticker system() {
        return System::nanoTime;
    }
}
