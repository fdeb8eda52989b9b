package io.wheelbeat.netty.heartbeat;

import io.wheelbeat.core.internal.checks.ConfigChecks;
import java.time.Duration;
import java.util.Objects;

/**
 * How often a peer may ping, for every handler that answers pings: a ping sooner than
 * {@link #minPingInterval()} after the last ping in time is a strike, a ping in time clears the
 * strikes, and the {@link #maxPingStrikes()}-th strike in a row ends the connection. Answering
 * handlers enforce {@link #DEFAULT} unless told otherwise. Immutable and thread-safe.
 */
public final class PingLimits {

    /**
     * 100 ms and 3 strikes: the 3rd of 3 pings within 100 ms of the last ping in time ends the
     * connection (a peer pinging every 33 ms or more often), far above any keepalive's rate and
     * far below a flood's; two early pings in a row are tolerated, as gRPC does.
     */
    public static final PingLimits DEFAULT = new PingLimits(Duration.ofMillis(100), 3);

    /** No limit: pings are answered at any rate. Its interval is zero and its strikes 0. */
    public static final PingLimits OFF = new PingLimits(Duration.ZERO, 0);

    private final Duration minPingInterval;
    private final int maxPingStrikes;

    private PingLimits(Duration minPingInterval, int maxPingStrikes) {
        this.minPingInterval = minPingInterval;
        this.maxPingStrikes = maxPingStrikes;
    }

    /**
     * Limits that make a ping sooner than {@code minPingInterval} after the last one in time a
     * strike, and the {@code maxPingStrikes}-th strike in a row the end of the connection. Set the
     * interval below the shortest interval the peers are meant to ping at, minus their jitter.
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
