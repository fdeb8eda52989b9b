package io.wheelbeat.netty.internal;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * Registers the counters the handlers share.
 *
 * <p>{@value #CLOSED} counts connections a wheelbeat handler closed (or, for the maximum age,
 * began to close), tagged {@code reason} with one of a fixed set of values. Never tagged by
 * connection.
 *
 * <p>Internal: not part of wheelbeat's API. Thread-safe.
 */
public final class ConnectionMeters {

    /** The counter of connections closed by a wheelbeat handler, tagged {@code reason}. */
    public static final String CLOSED = "wheelbeat.connection.closed";

    private ConnectionMeters() {}

    /** The {@value #CLOSED} counter for {@code reason}, or null without a registry. */
    public static Counter closed(MeterRegistry registry, String reason) {
        return counter(
                registry,
                CLOSED,
                "Connections closed by a wheelbeat handler, by reason",
                "connections",
                "reason",
                reason);
    }

    /** Increments {@code counter} unless it is null (no registry: no meters, no cost). */
    public static void count(Counter counter) {
        if (counter != null) {
            counter.increment();
        }
    }

    /** A counter, with {@code tags} as key, value, key, value... (none for an untagged one); null without registry. */
    public static Counter counter(
            MeterRegistry registry, String name, String description, String baseUnit, String... tags) {
        if (registry == null) {
            return null; // no Micrometer needed: no meter class loads
        }
        return Counter.builder(name)
                .description(description)
                .baseUnit(baseUnit)
                .tags(tags)
                .register(registry);
    }
}
