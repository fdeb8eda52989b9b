package io.wheelbeat.netty.guard;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The slots of a close rate: each close takes the next free one, {@code slotNanos} after the
 * previous, or now if that has passed. Readings follow {@link System#nanoTime()}'s contract
 * (any origin, may wrap), so they are compared by difference only.
 *
 * <p>Thread-safe: one compare-and-set per close.
 */
final class CloseSlots {

    /** {@link #next} before the first close: every slot is free. */
    private static final long NONE = Long.MIN_VALUE;

    private final long slotNanos;
    /** The earliest reading the next close may happen at, or {@link #NONE}. */
    private final AtomicLong next = new AtomicLong(NONE);

    CloseSlots(long slotNanos) {
        this.slotNanos = slotNanos;
    }

    /** Takes the next free slot at or after {@code now} and returns it: when the close may happen. */
    long reserve(long now) {
        while (true) {
            long taken = next.get();
            long slot = taken == NONE || taken - now <= 0 ? now : taken;
            long after = slot + slotNanos;
            if (next.compareAndSet(taken, after == NONE ? after + 1 : after)) {
                return slot;
            }
        }
    }

    @Override
    public String toString() {
        return "one close per " + slotNanos + " ns";
    }
}
