package io.wheelbeat.core.internal;

import io.wheelbeat.core.TimerNode;

/**
 * A node's deadline for wheelbeat's own owners that know it before arming (a loop task made on
 * another thread, a periodic task between runs), so that they need not store it twice. Not on
 * {@link TimerNode} itself: every public type that extends a node would show it.
 */
public final class NodeDeadlines {

    /** How the node's package reads and writes the field; installed when {@link TimerNode} loads. */
    public interface Access {
        long get(TimerNode node);

        void set(TimerNode node, long deadlineNanos);
    }

    private static Access access;

    private NodeDeadlines() {}

    /**
     * Called once, by {@link TimerNode}'s class initialisation.
     *
     * @param nodes the node package's access
     */
    public static void install(Access nodes) {
        if (access != null) {
            throw new IllegalStateException("installed already");
        }
        access = nodes;
    }

    /**
     * {@return the deadline {@code node} was last armed with or last given by {@link #set}, a
     * reading of its wheel's clock}
     *
     * @param node the node
     */
    public static long get(TimerNode node) {
        return access.get(node);
    }

    /**
     * Sets what {@link #get} returns until the node is armed.
     *
     * @param node a node not pending
     * @param deadlineNanos a reading of the clock of the wheel it will be armed on
     * @throws IllegalStateException if the node is pending
     */
    public static void set(TimerNode node, long deadlineNanos) {
        access.set(node, deadlineNanos);
    }
}
