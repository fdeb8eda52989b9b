package io.wheelbeat.netty.heartbeat.internal;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.wheelbeat.netty.heartbeat.PingLimits;
import io.wheelbeat.netty.internal.ConnectionMeters;

/**
 * The answering side's rule against peers that ping too often, shared by {@code HeartbeatHandler}
 * and the protocol keepalives so that they count the same way and in the same meters: a ping
 * sooner than the minimum interval after the last ping in time is a strike; a ping in time clears
 * the strikes; the first ping of a connection (or after {@link Strikes#forgive()}) is in time; the
 * {@code maxStrikes}-th strike in a row ends the connection. A peer can therefore never ping
 * faster than {@code maxStrikes} pings per minimum interval.
 *
 * <p>With a registry: {@code wheelbeat.heartbeat.ping.strikes} counts strikes and
 * {@code wheelbeat.connection.closed{reason=too_many_pings}} the connections that struck out.
 *
 * <p>Internal: not part of wheelbeat's API. Immutable and thread-safe; each {@link Strikes} is
 * one channel's, event loop only.
 */
public final class PingEnforcement {

    /** The {@code reason} tag of {@link ConnectionMeters#CLOSED} for a peer that struck out. */
    public static final String TOO_MANY_PINGS = "too_many_pings";

    private final long minIntervalNanos;
    private final int maxStrikes;
    private final Counter strikes;
    private final Counter closes;

    private PingEnforcement(PingLimits limits, MeterRegistry registry) {
        this.minIntervalNanos = limits.minPingInterval().toNanos();
        this.maxStrikes = limits.maxPingStrikes();
        this.strikes = registry == null
                ? null
                : ConnectionMeters.counter(
                        registry,
                        "wheelbeat.heartbeat.ping.strikes",
                        "Pings sooner than the minimum ping interval",
                        "pings");
        this.closes = registry == null ? null : ConnectionMeters.closed(registry, TOO_MANY_PINGS);
    }

    /**
     * The enforcement of {@code limits}, or null when they are {@link PingLimits#OFF}.
     *
     * @param registry where to count, or null for no meters
     */
    public static PingEnforcement of(PingLimits limits, MeterRegistry registry) {
        return limits.equals(PingLimits.OFF) ? null : new PingEnforcement(limits, registry);
    }

    /** The minimum time between the peer's pings, in nanoseconds, as the limits set it. */
    public long minIntervalNanos() {
        return minIntervalNanos;
    }

    /** Records a ping that came at {@code nowNanos}, judged against the limits' minimum interval. */
    public int tooManyPings(Strikes state, long nowNanos) {
        return tooManyPings(state, nowNanos, minIntervalNanos);
    }

    /**
     * Records a ping that came at {@code nowNanos}, judged against {@code minIntervalNanos} (HTTP/2
     * holds a connection without streams to a longer one).
     *
     * @return the strikes in a row if this ping is the one that ends the connection (the close is
     *     counted then), else 0
     */
    public int tooManyPings(Strikes state, long nowNanos, long minIntervalNanos) {
        if (state.pingSeen && nowNanos - state.lastTimelyPingNanos < minIntervalNanos) {
            ConnectionMeters.count(strikes);
            if (++state.strikes >= maxStrikes) {
                ConnectionMeters.count(closes);
                return state.strikes;
            }
            return 0;
        }
        state.pingSeen = true;
        state.lastTimelyPingNanos = nowNanos;
        state.strikes = 0;
        return 0;
    }

    /** One channel's pings so far. Event loop only. */
    public static final class Strikes {
        private boolean pingSeen;
        private long lastTimelyPingNanos;
        private int strikes;

        /** Forgets the pings so far: the next one is in time. */
        public void forgive() {
            pingSeen = false;
            strikes = 0;
        }
    }
}
