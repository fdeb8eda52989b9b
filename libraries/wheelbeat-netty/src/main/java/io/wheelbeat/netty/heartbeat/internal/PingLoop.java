package io.wheelbeat.netty.heartbeat.internal;

import io.netty.channel.ChannelHandlerContext;
import io.wheelbeat.core.ExecutorDrivenWheel;
import io.wheelbeat.netty.heartbeat.HeartbeatFailedEvent;
import io.wheelbeat.netty.heartbeat.PongReceivedEvent;
import io.wheelbeat.netty.internal.HandlerTimer;
import io.wheelbeat.netty.internal.Jitter;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.random.RandomGenerator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The pinging side of every keepalive, one per connection; the protocol adds its {@link Protocol}.
 * When the connection had no {@link Traffic traffic} for the (jittered) interval, writes a ping
 * and expects its pong within the pong timeout. Lazy as Netty's {@code IdleStateHandler}: traffic
 * stamps a time once per flush or read batch, and an early timer re-arms for the rest. A pong in
 * time fires {@link PongReceivedEvent}. After {@code maxMissedPongs} misses in a row,
 * {@link Protocol#pongsMissed}. With {@code READS} traffic, anything read while a ping is out
 * proves the peer alive (gRPC's rule).
 *
 * <p>Internal. Event loop only, one channel; {@link Settings} is shared by a factory's loops.
 */
public final class PingLoop {

    private static final Logger log = LoggerFactory.getLogger(PingLoop.class);
    /** The id no pong answers with: ids are positive. */
    private static final long NO_PING = 0;

    /** What postpones the next ping. */
    public enum Traffic {
        /** Flushed writes, the pings included (heartbeat, WebSocket, MQTT: "nothing sent for"). */
        WRITES,
        /** Reads, pongs included (HTTP/2 as gRPC: "nothing received for"). */
        READS
    }

    /** The protocol's part of the loop. Event loop only. */
    public interface Protocol {
        /** Returns the ping carrying {@code pingId}, or null (reported already) to skip this interval. */
        Object newPing(ChannelHandlerContext ctx, long pingId);

        /** Whether a ping may go out now; a loop that was told no waits for {@link PingLoop#resumeIfPaused}. */
        default boolean mayPing() {
            return true;
        }

        /** The last allowed pong did not come: ends the connection, the protocol's way. */
        default void pongsMissed(ChannelHandlerContext ctx, int missedPongs) {
            ctx.fireUserEventTriggered(new HeartbeatFailedEvent(missedPongs));
            ctx.close();
        }
    }

    /** The settings a factory's loops share. Thread-safe. */
    public static final class Settings {
        /** The base interval, before jitter; doubled when the peer says "too many pings". */
        private final AtomicLong intervalNanos;

        private final long pongTimeoutNanos;
        private final int maxMissedPongs;
        private final double jitter;
        private final RandomGenerator random;
        private final Traffic traffic;
        private final HeartbeatMeters.Pinging meters;

        /**
         * @param pongTimeoutNanos how long a pong may take; {@code 0} for the interval
         * @param meters the pinging meters, {@link HeartbeatMeters.Pinging#NONE} for none
         */
        public Settings(
                long intervalNanos,
                long pongTimeoutNanos,
                int maxMissedPongs,
                double jitter,
                RandomGenerator random,
                Traffic traffic,
                HeartbeatMeters.Pinging meters) {
            this.intervalNanos = new AtomicLong(intervalNanos);
            this.pongTimeoutNanos = pongTimeoutNanos > 0 ? pongTimeoutNanos : intervalNanos;
            this.maxMissedPongs = maxMissedPongs;
            this.jitter = jitter;
            this.random = random;
            this.traffic = traffic;
            this.meters = meters;
        }

        /** The current base interval: as configured, doubled once per "too many pings" that took effect. */
        public long intervalNanos() {
            return intervalNanos.get();
        }
    }

    private final Protocol protocol;
    private Settings settings;
    private ChannelHandlerContext ctx;
    private ExecutorDrivenWheel wheel;
    private boolean running;
    private final HandlerTimer pingTimer = new HandlerTimer(this::onTimer);
    private final HandlerTimer pongTimer = new HandlerTimer(this::onTimer);
    /** This interval's length, jitter included. */
    private long intervalNanos;
    /** The base interval this connection last drew from, 0 before the start. */
    private long baseIntervalNanos;

    private long lastTrafficNanos;
    private boolean trafficUnstamped;
    private boolean readSincePing;
    private boolean awaitingPong;
    /** The random id before the first ping: ids of this connection's pings are above it. */
    private long firstPingIdMinusOne;

    private long lastPingId;
    /** Pongs matched by order: the id of the ping the last pong answered. */
    private long pongsCounted;

    private long pingSentNanos;
    private boolean pongSeen;
    private int missedPongs;

    public PingLoop(Protocol protocol) {
        this.protocol = protocol;
    }

    /** Starts pinging with {@code settings} on the channel's {@code wheel}, the interval counted from now; once. */
    public void start(Settings settings, ChannelHandlerContext ctx, ExecutorDrivenWheel wheel) {
        if (this.settings != null) {
            return;
        }
        this.settings = settings;
        this.ctx = ctx;
        this.wheel = wheel;
        long nowNanos = now();
        running = true;
        // Uniform in [2^40, 2^62): the next 2^62 ids are positive (never NO_PING) and above small
        // constants such as HTTP/2's drain PING. The loop's thread's generator: no contention.
        firstPingIdMinusOne = ThreadLocalRandom.current().nextLong(1L << 40, 1L << 62);
        lastPingId = firstPingIdMinusOne;
        pongsCounted = firstPingIdMinusOne;
        lastTrafficNanos = nowNanos;
        intervalNanos = nextInterval();
        wheel.schedule(pingTimer, intervalNanos);
    }

    /** Stops pinging for good: cancels the timers; later pongs are the handler's to drop. */
    public void stop() {
        running = false;
        cancel(pingTimer);
        cancel(pongTimer);
    }

    private void cancel(HandlerTimer timer) {
        if (timer.isPending()) {
            wheel.cancel(timer);
        }
    }

    private long now() {
        return wheel.ticker().getAsLong();
    }

    /** Whether the loop has started and not stopped. */
    public boolean running() {
        return running;
    }

    private void onTimer(HandlerTimer timer) {
        if (timer == pingTimer) {
            pingWhenIdle(now());
        } else {
            onPongTimeout();
        }
    }

    /** A write passed the handler: it counts when flushed. */
    public void onWrite() {
        trafficUnstamped = true;
    }

    /** A flush passed the handler: stamps the writes before it. */
    public void onFlush() {
        stampTraffic();
    }

    /** A message was read: it counts when its batch completes, and proves the peer alive. */
    public void onRead() {
        trafficUnstamped = true;
        readSincePing = true;
    }

    /** A read batch completed: stamps its reads, one clock read per batch. */
    public void onReadComplete() {
        stampTraffic();
    }

    private void stampTraffic() {
        if (trafficUnstamped) {
            trafficUnstamped = false;
            if (running) {
                lastTrafficNanos = now();
            }
        }
    }

    /** Whether {@code pingId} is the id of a ping this loop sent. */
    public boolean sent(long pingId) {
        return pingId > firstPingIdMinusOne && pingId <= lastPingId;
    }

    /**
     * A pong that answers the ping with id {@code answeredPingId} (or {@code 0}, no ping of ours):
     * in time if it answers the outstanding ping before its timeout, else late.
     */
    public void onPong(ChannelHandlerContext ctx, long answeredPingId) {
        if (settings == null) {
            return; // before the start: no ping was sent, and no meters to count it in
        }
        if (!awaitingPong || answeredPingId != lastPingId) {
            settings.meters.pongLate();
            return;
        }
        long now = now();
        long roundTripNanos = now - pingSentNanos;
        awaitingPong = false;
        cancel(pongTimer);
        missedPongs = 0;
        boolean first = !pongSeen;
        pongSeen = true;
        settings.meters.pongInTime(roundTripNanos);
        ctx.fireUserEventTriggered(new PongReceivedEvent(roundTripNanos, first));
        if (settings.traffic == Traffic.READS) {
            lastTrafficNanos = now;
        }
        pingWhenIdle(now);
    }

    /**
     * A pong that carries nothing (MQTT's PINGRESP): the n-th pong answers the n-th ping, and a
     * pong beyond the pings sent answers none.
     */
    public void onPongInOrder(ChannelHandlerContext ctx) {
        onPong(ctx, pongsCounted < lastPingId ? ++pongsCounted : NO_PING);
    }

    /**
     * Resumes a loop that {@link Protocol#mayPing} paused (no ping and no pong timer pending),
     * first stamping traffic if {@code trafficNow}.
     */
    public void resumeIfPaused(boolean trafficNow) {
        if (!running || pingTimer.isPending() || pongTimer.isPending()) {
            return;
        }
        long now = now();
        if (trafficNow) {
            lastTrafficNanos = now;
        }
        pingWhenIdle(now);
    }

    /**
     * The peer says this side pings too often: doubles the base interval of the loops sharing these
     * settings, from the interval this connection last used, so that many connections told at once
     * double it once. Does nothing before the start.
     */
    public void peerSaysTooManyPings() {
        long base = baseIntervalNanos;
        if (base == 0) {
            return;
        }
        long doubled = base > Long.MAX_VALUE / 2 ? Long.MAX_VALUE : base * 2;
        if (settings.intervalNanos.compareAndSet(base, doubled)) {
            log.info(
                    "{}: the peer says we ping too often; ping interval now {} ms",
                    ctx.channel(),
                    TimeUnit.NANOSECONDS.toMillis(doubled));
        }
        if (running) {
            // The idle timer, when it fires early, re-arms for the rest of the longer interval.
            intervalNanos = nextInterval();
        }
    }

    /** Pings if there was no traffic for the interval, else arms the timer for the rest of it. */
    private void pingWhenIdle(long now) {
        if (!running || !ctx.channel().isActive() || !protocol.mayPing()) {
            return; // closing, or paused until resumeIfPaused
        }
        long idleNanos = now - lastTrafficNanos;
        if (idleNanos < intervalNanos) {
            wheel.schedule(pingTimer, intervalNanos - idleNanos);
            return;
        }
        long pingId = lastPingId + 1;
        Object ping = protocol.newPing(ctx, pingId);
        intervalNanos = nextInterval();
        if (ping == null) {
            wheel.schedule(pingTimer, intervalNanos);
            return;
        }
        lastPingId = pingId;
        awaitingPong = true;
        readSincePing = false;
        pingSentNanos = now;
        // Armed before the write, so that a write failing into a close cancels it.
        wheel.schedule(pongTimer, settings.pongTimeoutNanos);
        settings.meters.pingSent();
        if (settings.traffic == Traffic.WRITES) {
            lastTrafficNanos = now;
        }
        ctx.writeAndFlush(ping, ctx.voidPromise());
    }

    private void onPongTimeout() {
        awaitingPong = false;
        if (settings.traffic == Traffic.READS && readSincePing) {
            pingWhenIdle(now()); // the peer sent something meanwhile: alive
            return;
        }
        missedPongs++;
        settings.meters.pongMissed();
        if (missedPongs < settings.maxMissedPongs) {
            pingWhenIdle(now());
            return;
        }
        settings.meters.closed();
        log.debug("{}: {} pongs missed in a row, closing", ctx.channel(), missedPongs);
        protocol.pongsMissed(ctx, missedPongs);
    }

    private long nextInterval() {
        baseIntervalNanos = settings.intervalNanos.get();
        return Jitter.apply(baseIntervalNanos, settings.jitter, settings.random);
    }
}
