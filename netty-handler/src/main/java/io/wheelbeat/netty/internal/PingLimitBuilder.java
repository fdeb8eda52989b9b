package io.wheelbeat.netty.internal;

import java.util.concurrent.TimeUnit;

/**
 * The settings of every handler that answers pings and may refuse a peer that pings too often
 * (see {@link PingEnforcement}): a minimum ping interval and the strike that ends the connection.
 *
 * <p>Internal: the public builders extend it; use them. Not thread-safe.
 *
 * @param <B> the concrete builder, returned by every setter
 */
public abstract class PingLimitBuilder<B extends PingLimitBuilder<B>> extends HandlerBuilder<B> {

    private long minPingNanos;
    private int maxPingStrikes = 3;
    private boolean strikesSet;

    protected PingLimitBuilder() {
    }

    /**
     * Enforces a minimum time between the peer's pings: a sooner ping is a strike. Set it below
     * the shortest interval the peers are meant to ping at. Not enforced by default.
     *
     * @throws IllegalArgumentException if {@code interval} is not positive
     */
    public final B minPingInterval(long interval, TimeUnit unit) {
        this.minPingNanos = ConfigChecks.positiveNanos("minPingInterval", interval, unit);
        return self();
    }

    /**
     * The strike that ends the connection: 3 by default (two early pings in a row are tolerated,
     * as gRPC does). Needs {@link #minPingInterval}.
     *
     * @throws IllegalArgumentException if {@code strikes} is not positive
     */
    public final B maxPingStrikes(int strikes) {
        this.maxPingStrikes = ConfigChecks.positive("maxPingStrikes", strikes);
        this.strikesSet = true;
        return self();
    }

    /** The minimum ping interval in nanoseconds, 0 when not enforced. */
    protected final long chosenMinPingNanos() {
        return minPingNanos;
    }

    /**
     * The enforcement these settings ask for, or null when no minimum interval is set.
     *
     * @throws IllegalStateException if {@link #maxPingStrikes} is set without {@link #minPingInterval}
     */
    protected final PingEnforcement chosenEnforcement() {
        if (strikesSet && minPingNanos == 0) {
            throw new IllegalStateException("maxPingStrikes needs minPingInterval");
        }
        return minPingNanos > 0 ? new PingEnforcement(maxPingStrikes, chosenRegistry()) : null;
    }
}
