package io.wheelbeat.core.internal;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * A clock ({@link LongSupplier} of nanoseconds) that moves only when told to: virtual time for tests.
 *
 * <p>Thread-safe: any thread may read or advance it.
 */
public final class ManualTicker implements LongSupplier {

    private final AtomicLong nanos;
    private final List<Runnable> listeners = new CopyOnWriteArrayList<>();

    /** Creates a ticker that reads zero. */
    public ManualTicker() {
        this(0);
    }

    /**
     * Creates a ticker that reads {@code startNanos}.
     *
     * @param startNanos the first reading; any long, Long.MIN_VALUE and Long.MAX_VALUE included
     */
    public ManualTicker(long startNanos) {
        this.nanos = new AtomicLong(startNanos);
    }

    /** {@return the current reading, in nanoseconds} */
    public long nanoTime() {
        return nanos.get();
    }

    @Override
    public long getAsLong() {
        return nanos.get();
    }

    /**
     * Moves time forward.
     *
     * @param amount how far, zero or more
     * @param unit the unit of {@code amount}
     * @throws IllegalArgumentException if {@code amount} is negative: a ticker never goes back
     * @return the new reading
     */
    public long advance(long amount, TimeUnit unit) {
        long delta = unit.toNanos(amount);
        if (delta < 0) {
            throw new IllegalArgumentException("time cannot go backwards: " + amount + " " + unit);
        }
        long now = nanos.addAndGet(delta);
        listeners.forEach(Runnable::run);
        return now;
    }

    /**
     * Runs {@code listener} after every {@link #advance}, on the advancing thread: for instance to
     * wake a thread that sleeps until a deadline on this ticker.
     *
     * @param listener what to run after each advance
     */
    public void onAdvance(Runnable listener) {
        listeners.add(Objects.requireNonNull(listener, "listener"));
    }
}
