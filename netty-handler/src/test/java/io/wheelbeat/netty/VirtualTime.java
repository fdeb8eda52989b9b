package io.wheelbeat.netty;

import static java.util.concurrent.TimeUnit.NANOSECONDS;

import io.netty.channel.embedded.EmbeddedChannel;

/** Drives an {@code EmbeddedChannel} with frozen time as a punctual event loop would. */
final class VirtualTime {

    private VirtualTime() {
    }

    /** Returns the channel's clock reading. */
    static long now(EmbeddedChannel ch) {
        return ch.eventLoop().ticker().nanoTime();
    }

    /**
     * Moves virtual time forward to {@code nanoTime}, stopping at every scheduled task on the way
     * and running it at its own deadline, so each task sees the time it was scheduled for.
     */
    static void advanceTo(EmbeddedChannel ch, long nanoTime) {
        for (int steps = 0; steps < 10_000_000; steps++) {
            long next = ch.runScheduledPendingTasks(); // delay to the next task, or -1 if none
            long left = nanoTime - now(ch);
            if (next < 0 || next > left) {
                ch.advanceTimeBy(Math.max(0, left), NANOSECONDS);
                ch.runScheduledPendingTasks();
                return;
            }
            ch.advanceTimeBy(next, NANOSECONDS);
        }
        throw new AssertionError("scheduled tasks keep falling due at the same instant");
    }
}
