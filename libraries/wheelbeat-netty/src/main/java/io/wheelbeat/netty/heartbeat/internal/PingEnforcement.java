package io.wheelbeat.netty.heartbeat.internal;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.channel.ChannelHandlerContext;
import io.wheelbeat.netty.heartbeat.PingLimits;
import io.wheelbeat.netty.heartbeat.TooManyPingsEvent;
import io.wheelbeat.netty.internal.ConnectionMeters;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link PingLimits} enforced, for every answering keepalive; the first ping, or the first after
 * {@link Strikes#forgive()}, is in time. Thread-safe; each {@link Strikes} is one channel's.
 */
public final class PingEnforcement {

    private static final Logger log = LoggerFactory.getLogger(PingEnforcement.class);

    private final long minIntervalNanos;
    private final int maxStrikes;
    private final Counter strikes;
    private final Counter closes;

    private PingEnforcement(PingLimits limits, MeterRegistry registry) {
        this.minIntervalNanos = limits.minPingInterval().toNanos();
        this.maxStrikes = limits.maxPingStrikes();
        this.strikes = ConnectionMeters.counter(
                registry, "wheelbeat.heartbeat.ping.strikes", "Pings sooner than the minimum ping interval", "pings");
        this.closes = ConnectionMeters.closed(registry, "too_many_pings");
    }

    /** The enforcement of {@code limits} ({@code registry} null for no meters), or null for {@link PingLimits#OFF}. */
    public static PingEnforcement of(PingLimits limits, MeterRegistry registry) {
        return limits.equals(PingLimits.OFF) ? null : new PingEnforcement(limits, registry);
    }

    /** {@code wheelbeat.heartbeat.pings.answered}, for the sides that answer pings themselves. */
    public static Counter pingsAnswered(MeterRegistry registry) {
        return ConnectionMeters.counter(
                registry, "wheelbeat.heartbeat.pings.answered", "Heartbeat pings answered with a pong", "pings");
    }

    public long minIntervalNanos() {
        return minIntervalNanos;
    }

    /**
     * Judges a ping against {@code minIntervalNanos} (HTTP/2's may be longer than the limits'); true if it is
     * the strike that ends the connection: {@link TooManyPingsEvent} fired, the caller closes.
     */
    public boolean strikesOut(ChannelHandlerContext ctx, Strikes state, long nowNanos, long minIntervalNanos) {
        if (!state.pingSeen || nowNanos - state.lastTimelyPingNanos >= minIntervalNanos) {
            state.pingSeen = true;
            state.lastTimelyPingNanos = nowNanos;
            state.strikes = 0;
            return false;
        }
        ConnectionMeters.count(strikes);
        if (++state.strikes < maxStrikes) {
            return false;
        }
        ConnectionMeters.count(closes);
        log.debug("{}: {} pings sooner than {} ns apart, closing", ctx.channel(), state.strikes, minIntervalNanos);
        ctx.fireUserEventTriggered(new TooManyPingsEvent(state.strikes));
        return true;
    }

    /** One channel's pings so far. */
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
