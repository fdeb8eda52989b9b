package io.wheelbeat.netty.internal;

import io.micrometer.core.instrument.MeterRegistry;
import io.wheelbeat.core.internal.checks.ConfigChecks;
import java.time.Duration;

/**
 * The options of every handler that answers pings and refuses a peer that pings too often
 * (see {@link PingEnforcement}): a minimum ping interval and the strike that ends the connection.
 * Enforcement is on by default ({@link #DEFAULT_MIN_PING_INTERVAL}, 3 strikes), so that a flood
 * of pings ends the connection within its first read batch; a zero interval turns it off. A
 * public builder holds one and forwards its setters to it.
 *
 * <p>Internal: not part of wheelbeat's API. Not thread-safe, as the builders.
 */
public final class PingLimitOptions {

    /**
     * The minimum ping interval unless set: the 3rd of 3 pings within 100 ms of the last ping in
     * time ends the connection (a peer pinging every 33 ms or more often), far above any keepalive's
     * rate and far below a flood's.
     */
    public static final Duration DEFAULT_MIN_PING_INTERVAL = Duration.ofMillis(100);

    private long minPingNanos = DEFAULT_MIN_PING_INTERVAL.toNanos();
    private int maxPingStrikes = 3;
    private boolean minPingSet;
    private boolean strikesSet;

    /**
     * A ping sooner than {@code interval} after the last one is a strike; zero turns enforcement off.
     *
     * @throws IllegalArgumentException if {@code interval} is negative
     */
    public void minPingInterval(Duration interval) {
        this.minPingNanos = ConfigChecks.nonNegativeNanos("minPingInterval", interval);
        this.minPingSet = true;
    }

    /**
     * The strike that ends the connection: 3 by default.
     *
     * @throws IllegalArgumentException if {@code strikes} is not positive
     */
    public void maxPingStrikes(int strikes) {
        this.maxPingStrikes = ConfigChecks.positive("maxPingStrikes", strikes);
        this.strikesSet = true;
    }

    /** The minimum ping interval in nanoseconds, 0 when not enforced. */
    public long minPingNanos() {
        return minPingNanos;
    }

    /** Whether {@link #minPingInterval} was set (to any value, zero included). */
    public boolean minPingSet() {
        return minPingSet;
    }

    /** Whether {@link #maxPingStrikes} was set. */
    public boolean strikesSet() {
        return strikesSet;
    }

    /**
     * The enforcement these options ask for, or null when it is turned off.
     *
     * @param registry where to count strikes and closes, or null
     * @throws IllegalStateException if {@link #maxPingStrikes} is set while enforcement is off
     */
    public PingEnforcement enforcement(MeterRegistry registry) {
        if (strikesSet && minPingNanos == 0) {
            throw new IllegalStateException("maxPingStrikes needs a minPingInterval above zero");
        }
        return minPingNanos > 0 ? new PingEnforcement(maxPingStrikes, registry) : null;
    }
}
