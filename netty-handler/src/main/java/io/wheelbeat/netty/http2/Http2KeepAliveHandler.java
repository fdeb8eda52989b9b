package io.wheelbeat.netty.http2;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http2.DefaultHttp2GoAwayFrame;
import io.netty.handler.codec.http2.DefaultHttp2PingFrame;
import io.netty.handler.codec.http2.Http2Connection;
import io.netty.handler.codec.http2.Http2ConnectionAdapter;
import io.netty.handler.codec.http2.Http2DataFrame;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2FrameCodec;
import io.netty.handler.codec.http2.Http2HeadersFrame;
import io.netty.handler.codec.http2.Http2PingFrame;
import io.netty.handler.codec.http2.Http2Stream;
import io.wheelbeat.core.TimerWheel;
import io.wheelbeat.netty.EventLoopWheels;
import io.wheelbeat.netty.MaxConnectionAgeEvent;
import io.wheelbeat.netty.heartbeat.TooManyPingsEvent;
import io.wheelbeat.netty.internal.ActiveChannelTimerHandler;
import io.wheelbeat.netty.internal.ConfigChecks;
import io.wheelbeat.netty.internal.ConnectionMeters;
import io.wheelbeat.netty.internal.Jitter;
import io.wheelbeat.netty.internal.PingEnforcement;
import io.wheelbeat.netty.internal.PingLimitBuilder;
import java.util.concurrent.TimeUnit;
import java.util.random.RandomGenerator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Connection management for HTTP/2 over Netty's {@link Http2FrameCodec}, on the event loop's shared
 * wheel, with gRPC's rules and defaults.
 *
 * <h2>Rules</h2>
 * <ul>
 *   <li><b>Ping enforcement</b> ({@link Builder#minPingInterval}, gRPC's
 *       {@code permitKeepAliveTime}): the peer's PINGs (not ACKs) are judged by the rule of
 *       {@code HeartbeatHandler}'s answering role; the {@link Builder#maxPingStrikes}-th strike in
 *       a row fires {@link TooManyPingsEvent}, sends GOAWAY {@code ENHANCE_YOUR_CALM} with debug
 *       data {@code "too_many_pings"} and closes the connection at once. While no stream is
 *       open the minimum is two hours unless {@link Builder#permitKeepAliveWithoutCalls} (as
 *       gRPC's {@code KeepAliveEnforcer}). Every HEADERS or DATA frame this side writes forgives
 *       the pings so far, so that a peer measuring the bandwidth with a PING per response (as
 *       gRPC clients do) is never struck for it. The codec still acknowledges every PING, as
 *       it does by default.</li>
 *   <li><b>Maximum idle</b> ({@link Builder#maxConnectionIdle}): a connection with no open
 *       stream for that long fires {@link MaxConnectionIdleEvent} and is shut down
 *       gracefully.</li>
 *   <li><b>Maximum age</b> ({@link Builder#maxConnectionAge}, moved by +/-10% per connection
 *       unless {@link Builder#maxConnectionAgeJitter} says otherwise): at its age a connection
 *       fires {@link MaxConnectionAgeEvent} and is shut down gracefully; after
 *       {@link Builder#maxConnectionAgeGrace} (unlimited by default, as gRPC) it is closed
 *       whatever streams are still open.</li>
 * </ul>
 *
 * <h2>Graceful shutdown</h2>
 * As RFC 9113 section 6.8 and gRPC: GOAWAY {@code NO_ERROR} with the largest stream id and a PING;
 * once that PING is acknowledged (or 10 s later), a second GOAWAY with the last stream id the
 * peer opened, so no request in flight is refused; the channel is closed when the last open
 * stream ends. The debug data says why: {@code "max_idle"} or {@code "max_age"}.
 *
 * <h2>Pipeline</h2>
 * Right after the codec, before {@code Http2MultiplexHandler} or the application, so that it sees
 * the streams' writes: {@code Http2FrameCodecBuilder.forServer().build(), keepAlive.newHandler(),
 * new Http2MultiplexHandler(...)}. It also works when added later, as an h2c upgrade does. Without
 * an {@link Http2FrameCodec} before it, the handler fails at start with an
 * {@link IllegalStateException} saying so. Every frame passes through, the acknowledgement of
 * its own drain PING excepted.
 *
 * <h2>Metrics</h2>
 * With {@link Builder#metrics(MeterRegistry)}: {@code wheelbeat.heartbeat.ping.strikes} and
 * {@code wheelbeat.connection.closed} tagged {@code reason} = {@code too_many_pings},
 * {@code max_connection_idle} or {@code max_connection_age} (the last two when the shutdown
 * begins, whoever does the final close).
 *
 * <p>Usage: build a {@link Factory} once, then add {@link Factory#newHandler()} to each channel's
 * pipeline. A handler serves one channel ({@code @Sharable} it is not); all its methods run on
 * that channel's event loop.
 */
public final class Http2KeepAliveHandler extends ActiveChannelTimerHandler {

    private static final Logger log = LoggerFactory.getLogger(Http2KeepAliveHandler.class);
    /** gRPC's minimum ping interval while no stream is open, unless pings without calls are permitted. */
    private static final long NO_CALLS_MIN_PING_NANOS = TimeUnit.HOURS.toNanos(2);
    /** How long the drain PING may take before the second GOAWAY goes anyway (gRPC's value). */
    private static final long DRAIN_PING_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(10);
    /** The opaque data of the drain PING (gRPC's), told apart from the keepalive's by it. */
    static final long DRAIN_PING = 0x97ACEF001L;

    private final Factory settings;
    private final PingEnforcement.Strikes strikes;
    private final Http2Connection.Listener streams = new StreamListener();
    private ChannelHandlerContext codecCtx;
    private Http2Connection connection;
    private long idleTimer = TimerWheel.NO_TIMER;
    private long idleSinceNanos;
    private long ageTimer = TimerWheel.NO_TIMER;
    private long ageNanos;
    private long graceTimer = TimerWheel.NO_TIMER;
    private long drainTimer = TimerWheel.NO_TIMER;
    private boolean draining;
    private boolean drainPingAcked;

    private Http2KeepAliveHandler(Factory settings) {
        super(settings.wheels);
        this.settings = settings;
        this.strikes = settings.enforcement == null ? null : new PingEnforcement.Strikes();
    }

    /** Returns a builder; at least one rule must be set. */
    public static Builder builder() {
        return new Builder();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
        if (msg instanceof Http2PingFrame ping && running()) {
            if (ping.ack()) {
                if (ping.content() == DRAIN_PING && draining) {
                    onDrainPingAcked();
                    return;
                }
            } else if (settings.enforcement != null && onPing(ctx)) {
                return;
            }
        }
        ctx.fireChannelRead(msg);
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) throws Exception {
        if (strikes != null && (msg instanceof Http2DataFrame || msg instanceof Http2HeadersFrame)) {
            strikes.forgive();
        }
        ctx.write(msg, promise);
    }

    @Override
    protected void onStart(long nowNanos) {
        ChannelHandlerContext ctx = ctx();
        codecCtx = ctx.pipeline().context(Http2FrameCodec.class);
        if (codecCtx == null) {
            throw new IllegalStateException(getClass().getSimpleName()
                    + " needs Netty's Http2FrameCodec before it in the pipeline: " + ctx.pipeline().names());
        }
        connection = ((Http2FrameCodec) codecCtx.handler()).connection();
        connection.addListener(streams);
        if (settings.maxIdleNanos > 0 && connection.numActiveStreams() == 0) {
            idleSinceNanos = nowNanos;
            idleTimer = schedule(settings.maxIdleNanos);
        }
        if (settings.maxAgeNanos > 0) {
            ageNanos = Jitter.apply(settings.maxAgeNanos, settings.ageJitter, settings.random);
            ageTimer = schedule(ageNanos);
        }
    }

    @Override
    protected void onStop() {
        if (connection != null) {
            connection.removeListener(streams);
        }
        idleTimer = cancel(idleTimer);
        ageTimer = cancel(ageTimer);
        graceTimer = cancel(graceTimer);
        drainTimer = cancel(drainTimer);
    }

    @Override
    protected void onTimer(long timerId) {
        if (timerId == idleTimer) {
            idleTimer = TimerWheel.NO_TIMER;
            onIdleTimer();
        } else if (timerId == ageTimer) {
            ageTimer = TimerWheel.NO_TIMER;
            onMaxAge();
        } else if (timerId == drainTimer) {
            drainTimer = TimerWheel.NO_TIMER;
            onDrainPingAcked();
        } else if (timerId == graceTimer) {
            graceTimer = TimerWheel.NO_TIMER;
            log.debug("{}: grace after maximum age over, closing", ctx().channel());
            closeNow();
        }
    }

    // ---------------------------------------------------------------- ping enforcement

    /** Judges the peer's ping; returns whether it ended the connection (the ping is then dropped). */
    private boolean onPing(ChannelHandlerContext ctx) {
        if (!ctx.channel().isActive()) {
            return true; // closing already: the rest of a read batch gets no more strikes
        }
        long minNanos = settings.permitWithoutCalls || connection.numActiveStreams() > 0
                ? settings.minPingNanos : Math.max(settings.minPingNanos, NO_CALLS_MIN_PING_NANOS);
        int struckOut = settings.enforcement.tooManyPings(strikes, now(), minNanos);
        if (struckOut == 0) {
            return false;
        }
        log.debug("{}: {} PINGs sooner than {} ns apart, GOAWAY ENHANCE_YOUR_CALM", ctx.channel(), struckOut,
                minNanos);
        ctx.fireUserEventTriggered(new TooManyPingsEvent(struckOut));
        goAway(Http2Error.ENHANCE_YOUR_CALM, "too_many_pings", 0);
        closeNow();
        return true;
    }

    // ---------------------------------------------------------------- idle and age

    private void onIdleTimer() {
        if (connection.numActiveStreams() > 0 || draining) {
            return; // re-armed when the last stream closes
        }
        long left = settings.maxIdleNanos - (now() - idleSinceNanos);
        if (left > 0) {
            idleTimer = schedule(left);
            return;
        }
        ConnectionMeters.count(settings.idleCloses);
        log.debug("{}: no stream for {} ns, shutting down gracefully", ctx().channel(), settings.maxIdleNanos);
        ctx().fireUserEventTriggered(new MaxConnectionIdleEvent(settings.maxIdleNanos));
        drain("max_idle");
    }

    private void onMaxAge() {
        ConnectionMeters.count(settings.ageCloses);
        log.debug("{}: reached its maximum age, shutting down gracefully", ctx().channel());
        if (settings.graceNanos != Long.MAX_VALUE) {
            // Armed before the event, so that a listener closing the channel cancels it.
            graceTimer = schedule(settings.graceNanos);
        }
        ctx().fireUserEventTriggered(new MaxConnectionAgeEvent(ageNanos, settings.graceNanos));
        drain("max_age");
    }

    /** Starts the graceful shutdown: GOAWAY with the largest stream id and the drain PING. */
    private void drain(String why) {
        if (draining || !ctx().channel().isActive()) {
            return;
        }
        draining = true;
        idleTimer = cancel(idleTimer);
        goAway(Http2Error.NO_ERROR, why, Integer.MAX_VALUE);
        drainTimer = schedule(DRAIN_PING_TIMEOUT_NANOS);
        ctx().writeAndFlush(new DefaultHttp2PingFrame(DRAIN_PING), ctx().voidPromise());
    }

    /** The peer has seen the first GOAWAY (or had 10 s to): the second one names the last stream. */
    private void onDrainPingAcked() {
        if (drainPingAcked) {
            return;
        }
        drainPingAcked = true;
        drainTimer = cancel(drainTimer);
        if (!ctx().channel().isActive()) {
            return;
        }
        goAway(Http2Error.NO_ERROR, "drained", 0);
        closeWhenNoStreams();
    }

    private void closeWhenNoStreams() {
        if (drainPingAcked && connection.numActiveStreams() == 0) {
            ctx().close();
        }
    }

    // ---------------------------------------------------------------- writing and closing

    private void goAway(Http2Error error, String debugData, int extraStreamIds) {
        ChannelHandlerContext ctx = ctx();
        DefaultHttp2GoAwayFrame goAway = new DefaultHttp2GoAwayFrame(error,
                ByteBufUtil.writeAscii(ctx.alloc(), debugData));
        goAway.setExtraStreamIds(extraStreamIds);
        // Not waiting for the write: a peer that does not read must not hold the channel open.
        ctx.writeAndFlush(goAway, ctx.voidPromise());
    }

    /**
     * Closes the socket at once, past the codec, whose own close would wait for the open streams.
     */
    private void closeNow() {
        codecCtx.close();
    }

    private final class StreamListener extends Http2ConnectionAdapter {
        @Override
        public void onStreamClosed(Http2Stream stream) {
            if (!running() || connection.numActiveStreams() > 0) {
                return;
            }
            if (draining) {
                closeWhenNoStreams();
            } else if (settings.maxIdleNanos > 0) {
                idleSinceNanos = now();
                if (idleTimer == TimerWheel.NO_TIMER) {
                    idleTimer = schedule(settings.maxIdleNanos);
                }
            }
        }
    }

    /**
     * Immutable settings that make one {@link Http2KeepAliveHandler} per channel.
     *
     * <p>Thread-safe: {@link #newHandler()} may be called from any event loop.
     */
    public static final class Factory {
        private final long minPingNanos;
        private final PingEnforcement enforcement;
        private final boolean permitWithoutCalls;
        private final long maxIdleNanos;
        private final long maxAgeNanos;
        private final double ageJitter;
        private final long graceNanos;
        private final EventLoopWheels wheels;
        private final RandomGenerator random;
        private final Counter idleCloses;
        private final Counter ageCloses;

        private Factory(Builder b, long minPingNanos, PingEnforcement enforcement, EventLoopWheels wheels,
                        RandomGenerator random, MeterRegistry registry) {
            this.minPingNanos = minPingNanos;
            this.enforcement = enforcement;
            this.permitWithoutCalls = b.permitWithoutCalls;
            this.maxIdleNanos = b.maxIdleNanos;
            this.maxAgeNanos = b.maxAgeNanos;
            this.ageJitter = b.ageJitter;
            this.graceNanos = b.graceNanos;
            this.wheels = wheels;
            this.random = random;
            this.idleCloses = registry == null ? null : ConnectionMeters.closed(registry, "max_connection_idle");
            this.ageCloses = registry == null ? null : ConnectionMeters.closed(registry, "max_connection_age");
        }

        /** Returns a new handler for one channel. */
        public Http2KeepAliveHandler newHandler() {
            return new Http2KeepAliveHandler(this);
        }
    }

    /**
     * Settings of a {@link Http2KeepAliveHandler}. Every setter checks its arguments at once
     * ({@link NullPointerException} for a null, {@link IllegalArgumentException} for a value out
     * of range); {@link #build()} checks that they fit together. Not thread-safe.
     */
    public static final class Builder extends PingLimitBuilder<Builder> {
        private boolean permitWithoutCalls;
        private boolean permitSet;
        private long maxIdleNanos;
        private long maxAgeNanos;
        private double ageJitter = 0.1;
        private long graceNanos = Long.MAX_VALUE;
        private boolean ageOptionSet;

        private Builder() {
        }

        /**
         * Whether the peer may ping at the minimum interval while no stream is open; false (the
         * default, as gRPC) holds it to one ping per two hours then. Needs
         * {@link #minPingInterval}.
         */
        public Builder permitKeepAliveWithoutCalls(boolean permit) {
            this.permitWithoutCalls = permit;
            this.permitSet = true;
            return this;
        }

        /**
         * Shuts a connection down gracefully once it has had no open stream for {@code idle}.
         *
         * @throws IllegalArgumentException if {@code idle} is not positive
         */
        public Builder maxConnectionIdle(long idle, TimeUnit unit) {
            this.maxIdleNanos = ConfigChecks.positiveNanos("maxConnectionIdle", idle, unit);
            return this;
        }

        /**
         * Shuts a connection down gracefully at {@code age} after it starts, moved by the jitter.
         *
         * @throws IllegalArgumentException if {@code age} is not positive
         */
        public Builder maxConnectionAge(long age, TimeUnit unit) {
            this.maxAgeNanos = ConfigChecks.positiveNanos("maxConnectionAge", age, unit);
            return this;
        }

        /**
         * Moves each connection's maximum age by a uniform draw within +/- {@code fraction} of it:
         * 0.1 (the default, as gRPC) gives 90% to 110%.
         *
         * @throws IllegalArgumentException unless {@code 0 <= fraction < 1}
         */
        public Builder maxConnectionAgeJitter(double fraction) {
            this.ageJitter = Jitter.checkFraction("maxConnectionAgeJitter", fraction);
            this.ageOptionSet = true;
            return this;
        }

        /**
         * How long after its maximum age a connection is closed however many streams are still
         * open; unlimited by default (as gRPC).
         *
         * @throws IllegalArgumentException if {@code grace} is negative
         */
        public Builder maxConnectionAgeGrace(long grace, TimeUnit unit) {
            this.graceNanos = ConfigChecks.nonNegativeNanos("maxConnectionAgeGrace", grace, unit);
            this.ageOptionSet = true;
            return this;
        }

        /**
         * Returns the factory of handlers with these settings.
         *
         * @throws IllegalStateException if no rule is set, or an option is set without its rule
         */
        public Factory build() {
            PingEnforcement enforcement = chosenEnforcement();
            if (enforcement == null && maxIdleNanos == 0 && maxAgeNanos == 0) {
                throw new IllegalStateException("set minPingInterval, maxConnectionIdle or maxConnectionAge");
            }
            if (permitSet && enforcement == null) {
                throw new IllegalStateException("permitKeepAliveWithoutCalls needs minPingInterval");
            }
            if (ageOptionSet && maxAgeNanos == 0) {
                throw new IllegalStateException("maxConnectionAgeJitter/Grace need maxConnectionAge");
            }
            return new Factory(this, chosenMinPingNanos(), enforcement, chosenWheels(), chosenRandom(),
                    chosenRegistry());
        }
    }
}
