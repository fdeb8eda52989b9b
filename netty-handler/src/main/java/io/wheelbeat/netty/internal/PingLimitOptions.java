package io.wheelbeat.netty.internal;

import io.micrometer.core.instrument.MeterRegistry;
import io.wheelbeat.core.internal.ConfigChecks;
import java.time.Duration;

/**
 * The options of every handler that answers pings and may refuse a peer that pings too often
 * (see {@link PingEnforcement}): a minimum ping interval and the strike that ends the connection.
 * A public builder holds one and forwards its setters to it.
 *
 * <p>Internal: not part of wheelbeat's API. Not thread-safe, as the builders.
 */
public final class PingLimitOptions {

    private long minPingNanos;
    private int maxPingStrikes = 3;
    private boolean strikesSet;

    /**
     * A ping sooner than {@code interval} after the last one is a strike.
     *
     * @throws IllegalArgumentException if {@code interval} is not positive
     */
    public void minPingInterval(Duration interval) {
        this.minPingNanos = ConfigChecks.positiveNanos("minPingInterval", interval);
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

    /** Whether {@link #maxPingStrikes} was set. */
    public boolean strikesSet() {
        return strikesSet;
    }

    /**
     * The enforcement these options ask for, or null when no minimum interval is set.
     *
     * @param registry where to count strikes and closes, or null
     * @throws IllegalStateException if {@link #maxPingStrikes} is set without {@link #minPingInterval}
     */
    public PingEnforcement enforcement(MeterRegistry registry) {
        if (strikesSet && minPingNanos == 0) {
            throw new IllegalStateException("maxPingStrikes needs minPingInterval");
        }
        return minPingNanos > 0 ? new PingEnforcement(maxPingStrikes, registry) : null;
    }
}
