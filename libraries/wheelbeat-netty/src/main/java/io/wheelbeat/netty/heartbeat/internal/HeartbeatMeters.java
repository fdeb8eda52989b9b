package io.wheelbeat.netty.heartbeat.internal;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.wheelbeat.netty.internal.ConnectionMeters;
import java.util.concurrent.TimeUnit;

/**
 * The heartbeat meters that {@code HeartbeatHandler} and the protocol keepalives share, so that
 * one dashboard reads them all.
 *
 * <p>Internal: not part of wheelbeat's API. Thread-safe.
 */
public final class HeartbeatMeters {

    private HeartbeatMeters() {}

    /** {@code wheelbeat.heartbeat.pings.answered}: the peer's pings answered with a pong. */
    public static Counter pingsAnswered(MeterRegistry registry) {
        return ConnectionMeters.counter(
                registry, "wheelbeat.heartbeat.pings.answered", "Heartbeat pings answered with a pong", "pings");
    }

    /**
     * The pinging side's meters: {@code wheelbeat.heartbeat.pings.sent},
     * {@code wheelbeat.heartbeat.pongs.missed}, {@code wheelbeat.heartbeat.pongs.late}, timer
     * {@code wheelbeat.heartbeat.rtt} and {@code wheelbeat.connection.closed} tag
     * {@code reason=heartbeat_timeout}; every method does nothing on {@link #NONE}.
     */
    public static final class Pinging {
        /** No registry: no meters, no cost. */
        public static final Pinging NONE = new Pinging(null);

        private final Counter pingsSent;
        private final Counter pongsMissed;
        private final Counter pongsLate;
        private final Timer roundTrip;
        private final Counter closes;

        private Pinging(MeterRegistry registry) {
            boolean on = registry != null;
            this.pingsSent = on
                    ? ConnectionMeters.counter(
                            registry, "wheelbeat.heartbeat.pings.sent", "Heartbeat pings sent", "pings")
                    : null;
            this.pongsMissed = on
                    ? ConnectionMeters.counter(
                            registry,
                            "wheelbeat.heartbeat.pongs.missed",
                            "Heartbeat pongs that did not come within the pong timeout",
                            "pongs")
                    : null;
            this.pongsLate = on
                    ? ConnectionMeters.counter(
                            registry,
                            "wheelbeat.heartbeat.pongs.late",
                            "Heartbeat pongs that answered no ping awaiting them: after its timeout, or unasked",
                            "pongs")
                    : null;
            this.roundTrip = on
                    ? Timer.builder("wheelbeat.heartbeat.rtt")
                            .description("Time from sending a heartbeat ping to receiving its pong")
                            .register(registry)
                    : null;
            this.closes = on ? ConnectionMeters.closed(registry, "heartbeat_timeout") : null;
        }

        /** The pinging meters of {@code registry}, or {@link #NONE} for null. */
        public static Pinging of(MeterRegistry registry) {
            return registry == null ? NONE : new Pinging(registry);
        }

        public void pingSent() {
            ConnectionMeters.count(pingsSent);
        }

        public void pongMissed() {
            ConnectionMeters.count(pongsMissed);
        }

        public void pongLate() {
            ConnectionMeters.count(pongsLate);
        }

        public void pongInTime(long roundTripNanos) {
            if (roundTrip != null) {
                roundTrip.record(roundTripNanos, TimeUnit.NANOSECONDS);
            }
        }

        public void closed() {
            ConnectionMeters.count(closes);
        }
    }
}
