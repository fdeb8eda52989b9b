package io.wheelbeat.netty.heartbeat.internal;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.netty.channel.ChannelHandlerContext;
import io.wheelbeat.core.TimerNode;
import io.wheelbeat.netty.ChannelTimerHandler;
import io.wheelbeat.netty.heartbeat.HeartbeatFailedEvent;
import io.wheelbeat.netty.heartbeat.HeartbeatHandler;
import io.wheelbeat.netty.heartbeat.PongReceivedEvent;
import io.wheelbeat.netty.internal.ConnectionMeters;
import io.wheelbeat.netty.internal.HandlerFields;
import io.wheelbeat.netty.internal.Jitter;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.random.RandomGenerator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ping state machine of {@code HeartbeatHandler} and {@code Http2KeepAliveHandler}, one per connection: after
 * the (jittered) interval without {@link Traffic traffic}, a ping, whose pong must come within the pong timeout.
 * Lazy as Netty's {@code IdleStateHandler}: traffic stamps a time once per flush or read batch, an early timer
 * re-arms for the rest. The subclass writes the pings and closes its way; the handler feeds in traffic and pongs.
 * The loop is its one timer, armed through its handler so that it follows the channel to another event loop.
 * Event loop only; {@link Settings} is shared by a factory's loops.
 */
public abstract class PingLoop extends TimerNode {

    private static final Logger log = LoggerFactory.getLogger(PingLoop.class);

    /** What postpones the next ping. */
    public enum Traffic {
        /** Flushed writes, the pings included ("nothing sent for"). */
        WRITES,
        /** Reads, pongs included (gRPC's "nothing received for"). */
        READS
    }

    /** A factory's settings and pinging meters. Thread-safe. */
    public static final class Settings {
        /** Before jitter; doubled when the peer says "too many pings". */
        private final AtomicLong intervalNanos;

        private final long pongTimeoutNanos;
        private final int maxMissedPongs;
        private final double jitter;
        private final RandomGenerator random;
        private final Traffic traffic;
        private final Counter pingsSent;
        private final Counter pongsMissed;
        private final Counter pongsLate;
        private final Timer roundTrip;
        private final Counter closes;

        /** A {@code pongTimeoutNanos} of 0 means the interval; a null {@code registry}, no meters. */
        public Settings(
                long intervalNanos,
                long pongTimeoutNanos,
                int maxMissedPongs,
                double jitter,
                RandomGenerator random,
                Traffic traffic,
                MeterRegistry registry) {
            this.intervalNanos = new AtomicLong(intervalNanos);
            this.pongTimeoutNanos = pongTimeoutNanos > 0 ? pongTimeoutNanos : intervalNanos;
            this.maxMissedPongs = maxMissedPongs;
            this.jitter = jitter;
            this.random = random;
            this.traffic = traffic;
            String prefix = "wheelbeat.heartbeat.";
            pingsSent = ConnectionMeters.counter(registry, prefix + "pings.sent", "Heartbeat pings sent", "pings");
            String missed = "Heartbeat pongs that did not come within the pong timeout";
            String late = "Heartbeat pongs that answered no ping awaiting them: after its timeout, or unasked";
            pongsMissed = ConnectionMeters.counter(registry, prefix + "pongs.missed", missed, "pongs");
            pongsLate = ConnectionMeters.counter(registry, prefix + "pongs.late", late, "pongs");
            roundTrip = registry == null
                    ? null
                    : Timer.builder(prefix + "rtt")
                            .description("Time from sending a heartbeat ping to receiving its pong")
                            .register(registry);
            closes = ConnectionMeters.closed(registry, "heartbeat_timeout");
        }

        public long intervalNanos() {
            return intervalNanos.get();
        }
    }

    private Settings settings;
    private ChannelHandlerContext ctx;
    private ChannelTimerHandler handler;
    private boolean running;
    /** This interval's length, jitter included. */
    private long intervalNanos;
    /** The base interval this connection last drew from, 0 before the start. */
    private long baseIntervalNanos;

    private long lastTrafficNanos;
    private boolean trafficUnstamped;
    private boolean readSincePing;
    private boolean awaitingPong;
    /** The random id before the first ping. */
    private long firstPingIdMinusOne;

    private long lastPingId;
    /** Pongs matched by order: the id of the ping the last pong answered. */
    private long pongsCounted;

    private long pingSentNanos;
    private boolean pongSeen;
    private int missedPongs;

    /** Returns the ping carrying {@code pingId}, or null (reported already) to skip it. */
    protected abstract Object newPing(ChannelHandlerContext ctx, long pingId);

    /** Whether a ping may go out now; a loop told no waits for {@link #resumeIfPaused}. */
    protected boolean mayPing() {
        return true;
    }

    /** The last allowed pong did not come: ends the connection, the protocol's way. */
    protected void pongsMissed(ChannelHandlerContext ctx, int missedPongs) {
        ctx.fireUserEventTriggered(new HeartbeatFailedEvent(missedPongs));
        ctx.close();
    }

    /** Starts pinging, once; {@code ctx} is the running {@link ChannelTimerHandler}'s that holds the loop. */
    public final void start(Settings settings, ChannelHandlerContext ctx) {
        if (this.settings != null) {
            return;
        }
        this.settings = settings;
        this.ctx = ctx;
        this.handler = (ChannelTimerHandler) ctx.handler();
        running = true;
        // Uniform in [2^40, 2^62): the next 2^62 ids are positive (never NO_PING) and above small
        // constants such as HTTP/2's drain PING. The loop's thread's generator: no contention.
        firstPingIdMinusOne = ThreadLocalRandom.current().nextLong(1L << 40, 1L << 62);
        lastPingId = pongsCounted = firstPingIdMinusOne;
        lastTrafficNanos = now();
        intervalNanos = nextInterval();
        HandlerFields.schedule(handler, this, intervalNanos);
    }

    /** Stops pinging, for good unless the channel is moving to another loop. */
    public final void stop() {
        if (running) {
            running = HandlerFields.moving(handler);
            disarm();
        }
    }

    /** A write passed the handler: it counts when flushed. */
    public final void onWrite() {
        trafficUnstamped = true;
    }

    /** A flush passed the handler, or a read batch completed: stamps the traffic before it. */
    public final void onFlush() {
        if (trafficUnstamped) {
            trafficUnstamped = false;
            if (running) {
                lastTrafficNanos = now();
            }
        }
    }

    /** A message was read: it counts when its batch completes, and proves the peer alive. */
    public final void onRead() {
        trafficUnstamped = true;
        readSincePing = true;
    }

    /** Whether {@code pingId} is the id of a ping this loop sent. */
    public final boolean sent(long pingId) {
        return pingId > firstPingIdMinusOne && pingId <= lastPingId;
    }

    /** A pong that answers the ping {@code answeredPingId} (0: none of ours): in time if the outstanding one. */
    public final void onPong(long answeredPingId) {
        if (settings == null) {
            return; // before the start: no ping was sent, and no meters to count it in
        }
        if (!awaitingPong || answeredPingId != lastPingId) {
            ConnectionMeters.count(settings.pongsLate);
            return;
        }
        long now = now();
        long roundTripNanos = now - pingSentNanos;
        awaitingPong = false;
        disarm();
        missedPongs = 0;
        boolean first = !pongSeen;
        pongSeen = true;
        if (settings.roundTrip != null) {
            settings.roundTrip.record(roundTripNanos, TimeUnit.NANOSECONDS);
        }
        ctx.fireUserEventTriggered(new PongReceivedEvent(roundTripNanos, first));
        if (settings.traffic == Traffic.READS) {
            lastTrafficNanos = now;
        }
        pingWhenIdle(now);
    }

    /** A pong that carries nothing (MQTT's PINGRESP): the n-th pong answers the n-th ping, one beyond them none. */
    public final void onPongInOrder() {
        onPong(pongsCounted < lastPingId ? ++pongsCounted : HeartbeatHandler.NO_PING);
    }

    /** Resumes a loop that {@link #mayPing} paused (no timer pending), first stamping traffic if {@code trafficNow}. */
    public final void resumeIfPaused(boolean trafficNow) {
        if (!running || isPending()) {
            return;
        }
        long now = now();
        if (trafficNow) {
            lastTrafficNanos = now;
        }
        pingWhenIdle(now);
    }

    /** Doubles the shared interval from the one this connection last used: many told at once double it once. */
    public final void peerSaysTooManyPings() {
        long base = baseIntervalNanos;
        if (base == 0) {
            return;
        }
        long doubled = base > Long.MAX_VALUE / 2 ? Long.MAX_VALUE : base * 2;
        if (settings.intervalNanos.compareAndSet(base, doubled)) {
            log.info(
                    "{}: the peer says we ping too often; ping interval now {} ms", ctx.channel(), doubled / 1_000_000);
        }
        if (running) {
            intervalNanos = nextInterval(); // an early timer re-arms for the rest of the longer interval
        }
    }

    @Override
    protected void expire() {
        if (awaitingPong) { // the pong timeout
            awaitingPong = false;
            if (settings.traffic == Traffic.WRITES || !readSincePing) { // else the peer sent something: alive
                ConnectionMeters.count(settings.pongsMissed);
                if (++missedPongs >= settings.maxMissedPongs) {
                    ConnectionMeters.count(settings.closes);
                    log.debug("{}: {} pongs missed in a row, closing", ctx.channel(), missedPongs);
                    pongsMissed(ctx, missedPongs);
                    return;
                }
            }
        }
        pingWhenIdle(now());
    }

    /** Pings if there was no traffic for the interval, else arms the timer for the rest of it. */
    private void pingWhenIdle(long now) {
        if (!running || !ctx.channel().isActive() || !mayPing()) {
            return; // closing, or paused until resumeIfPaused
        }
        long idleNanos = now - lastTrafficNanos;
        if (idleNanos < intervalNanos) {
            HandlerFields.schedule(handler, this, intervalNanos - idleNanos);
            return;
        }
        long pingId = lastPingId + 1;
        Object ping = newPing(ctx, pingId);
        intervalNanos = nextInterval();
        if (ping == null) {
            HandlerFields.schedule(handler, this, intervalNanos);
            return;
        }
        lastPingId = pingId;
        awaitingPong = true;
        readSincePing = false;
        pingSentNanos = now;
        // Armed before the write, so that a write failing into a close cancels it.
        HandlerFields.schedule(handler, this, settings.pongTimeoutNanos);
        ConnectionMeters.count(settings.pingsSent);
        if (settings.traffic == Traffic.WRITES) {
            lastTrafficNanos = now;
        }
        ctx.writeAndFlush(ping, ctx.voidPromise());
    }

    private long nextInterval() {
        baseIntervalNanos = settings.intervalNanos.get();
        return Jitter.apply(baseIntervalNanos, settings.jitter, settings.random);
    }

    private long now() {
        return HandlerFields.now(handler);
    }

    private void disarm() {
        HandlerFields.cancel(handler, this);
    }
}
