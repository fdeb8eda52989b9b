package io.wheelbeat.netty.internal;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * The heartbeat meters that {@code HeartbeatHandler} and the protocol keepalives share, so that
 * one dashboard reads them all.
 *
 * <p>Internal: not part of wheelbeat's API. Thread-safe.
 */
public final class HeartbeatMeters {

    private HeartbeatMeters() {
    }

    /** {@code wheelbeat.heartbeat.pings.answered}: the peer's pings answered with a pong. */
    public static Counter pingsAnswered(MeterRegistry registry) {
        return ConnectionMeters.counter(registry, "wheelbeat.heartbeat.pings.answered",
                "Heartbeat pings answered with a pong", "pings");
    }
}
