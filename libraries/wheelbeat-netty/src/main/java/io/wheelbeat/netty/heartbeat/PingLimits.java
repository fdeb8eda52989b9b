package io.wheelbeat.netty.heartbeat;

import io.wheelbeat.core.internal.checks.ConfigChecks;
import java.time.Duration;
import java.util.Objects;

/**
 * How often a peer may ping: a ping sooner than {@link #minPingInterval()} after the last ping in time is a
 * strike, a ping in time clears the strikes, the {@link #maxPingStrikes()}-th strike in a row ends the
 * connection. Answering handlers enforce {@link #DEFAULT} unless told otherwise. Immutable, thread-safe.
 */
public final class PingLimits {

    /** 100 ms and 3 strikes: far above a keepalive's rate, far below a flood's; two early pings pass, as gRPC. */
    public static final PingLimits DEFAULT = new PingLimits(Duration.ofMillis(100), 3);

    /** No limit: interval zero, 0 strikes. */
    public static final PingLimits OFF = new PingLimits(Duration.ZERO, 0);

    private final Duration minPingInterval;
    private final int maxPingStrikes;

    private PingLimits(Duration minPingInterval, int maxPingStrikes) {
        this.minPingInterval = minPingInterval;
        this.maxPingStrikes = maxPingStrikes;
    }

    /**
     * Limits; set the interval below the shortest the peers ping at, minus their jitter.
     * @param minPingInterval the shortest time between pings that is not a strike, positive
     * @param maxPingStrikes the strike that ends the connection, positive ({@link #OFF} turns the limit off)
     * @return the limits
     */
    public static PingLimits of(Duration minPingInterval, int maxPingStrikes) {
        ConfigChecks.positiveNanos("minPingInterval", minPingInterval);
        return new PingLimits(minPingInterval, ConfigChecks.positive("maxPingStrikes", maxPingStrikes));
    }

    /** @return the shortest time between pings that is not a strike, zero for {@link #OFF} */
    public Duration minPingInterval() {
        return minPingInterval;
    }

    /** @return the strike that ends the connection (strikes in a row), 0 for {@link #OFF} */
    public int maxPingStrikes() {
        return maxPingStrikes;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof PingLimits other
                && minPingInterval.equals(other.minPingInterval)
                && maxPingStrikes == other.maxPingStrikes;
    }

    @Override
    public int hashCode() {
        return Objects.hash(minPingInterval, maxPingStrikes);
    }

    @Override
    public String toString() {
        return this == OFF ? "PingLimits.OFF" : "PingLimits(" + minPingInterval + ", " + maxPingStrikes + " strikes)";
    }
}
