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
import io.wheelbeat.core.internal.checks.ConfigChecks;
import io.wheelbeat.netty.ChannelTimerHandler;
import io.wheelbeat.netty.EventLoopWheels;
import io.wheelbeat.netty.JitteredHandlerBuilder;
import io.wheelbeat.netty.deadline.MaxConnectionAgeEvent;
import io.wheelbeat.netty.heartbeat.HeartbeatFailedEvent;
import io.wheelbeat.netty.heartbeat.PingLimits;
import io.wheelbeat.netty.heartbeat.TooManyPingsEvent;
import io.wheelbeat.netty.heartbeat.internal.PingEnforcement;
import io.wheelbeat.netty.heartbeat.internal.PingLoop;
import io.wheelbeat.netty.internal.ConnectionMeters;
import io.wheelbeat.netty.internal.HandlerFields;
import io.wheelbeat.netty.internal.Jitter;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.random.RandomGenerator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * gRPC's keepalive rules over Netty's {@link Http2FrameCodec}: PINGs after {@link Builder#keepAliveTime}
 * without a read, no ACK nor read within {@link Builder#keepAliveTimeout} firing {@link HeartbeatFailedEvent},
 * GOAWAY {@code ping_timeout} and a close; the peer's PINGs judged by {@link Builder#pingLimits} (HEADERS or DATA
 * written forgive the strikes), the last strike firing {@link TooManyPingsEvent}, GOAWAY {@code ENHANCE_YOUR_CALM
 * too_many_pings} and a close. A graceful shutdown (RFC 9113 6.8) after {@link Builder#maxConnectionIdle}
 * ({@link MaxConnectionIdleEvent}) or at a {@link MaxConnectionAgeEvent} (from a {@code ConnectionDeadlineHandler}
 * before the codec, which closes after its grace): GOAWAY with the largest stream id and a PING, on its ACK (or
 * 10 s later) GOAWAY with the last stream id, the close when the last stream ends.
 *
 * <p>Place it right after the codec (else it throws {@link IllegalStateException} at start), before
 * {@code Http2MultiplexHandler}. Frames pass, but for its own PING ACKs. Meters: {@code HeartbeatHandler}'s and
 * {@code wheelbeat.connection.closed{reason}}. Not for gRPC-java, which has these rules. One channel.
 */
public final class Http2KeepAliveHandler extends ChannelTimerHandler {

    private static final Logger log = LoggerFactory.getLogger(Http2KeepAliveHandler.class);
    /** gRPC's minimum ping interval while no stream is open, unless pings without calls are permitted. */
    private static final long NO_CALLS_MIN_PING_NANOS = TimeUnit.HOURS.toNanos(2);
    /** How long the drain PING may take before the second GOAWAY goes anyway (gRPC's value). */
    private static final long DRAIN_PING_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(10);
    /** The opaque data of the drain PING (gRPC's), told apart from the keepalive's by it. */
    static final long DRAIN_PING = 0x97ACEF001L;

    private final Factory settings;
    private final PingEnforcement.Strikes strikes;
    private final KeepAlivePings pings;

    private final Http2Connection.Listener streams = new StreamListener();
    private ChannelHandlerContext codecCtx;
    private Http2Connection connection;
    private boolean draining;
    private boolean drainPingAcked;

    private long idleSinceNanos;

    private Http2KeepAliveHandler(Factory settings) {
        super(settings.wheels);
        this.settings = settings;
        this.strikes = settings.enforcement == null ? null : new PingEnforcement.Strikes();
        this.pings = settings.keepAlive == null ? null : new KeepAlivePings();
    }

    /** @return a new builder; at least one rule must be set */
    public static Builder builder() {
        return new Builder();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
        if (pings != null) {
            pings.onRead();
        }
        if (msg instanceof Http2PingFrame ping && running()) {
            if (ping.ack() && ping.content() == DRAIN_PING && draining) {
                onDrainPingAcked();
                return;
            }
            if (ping.ack() && pings != null && pings.sent(ping.content())) {
                pings.onPong(ping.content());
                return;
            }
            if (!ping.ack() && settings.enforcement != null && endedBy(ctx)) {
                return;
            }
        }
        ctx.fireChannelRead(msg);
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) throws Exception {
        if (pings != null) {
            pings.onFlush();
        }
        ctx.fireChannelReadComplete();
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        ctx.fireUserEventTriggered(evt);
        if (evt instanceof MaxConnectionAgeEvent && running()) {
            drain("max_age");
        }
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) throws Exception {
        if (strikes != null && (msg instanceof Http2DataFrame || msg instanceof Http2HeadersFrame)) {
            strikes.forgive();
        }
        ctx.write(msg, promise);
    }

    @Override
    protected void onStart(ChannelHandlerContext ctx, long nowNanos) {
        codecCtx = ctx.pipeline().context(Http2FrameCodec.class);
        if (codecCtx == null) {
            throw new IllegalStateException(
                    "Http2KeepAliveHandler needs Netty's Http2FrameCodec before it in the pipeline: "
                            + ctx.pipeline().names());
        }
        connection = ((Http2FrameCodec) codecCtx.handler()).connection();
        connection.addListener(streams);
        if (settings.maxIdleNanos > 0 && connection.numActiveStreams() == 0) {
            if (!HandlerFields.moving(this)) { // moved to another loop, the connection keeps its idle-since time
                idleSinceNanos = nowNanos;
            }
            schedule(this, settings.maxIdleNanos);
        }
        if (pings != null) {
            pings.start(settings.keepAlive, ctx);
        }
    }

    @Override
    protected void onStop() {
        if (connection != null) {
            connection.removeListener(streams);
        }
        cancel(this);
        if (pings != null) {
            pings.stop();
        }
    }

    /** The keepalive: PING frames, paused while no stream is open unless permitted, GOAWAY on a miss. */
    private final class KeepAlivePings extends PingLoop {
        @Override
        protected Object newPing(ChannelHandlerContext ctx, long pingId) {
            return new DefaultHttp2PingFrame(pingId);
        }

        @Override
        protected boolean mayPing() {
            return settings.keepAliveWithoutCalls || connection.numActiveStreams() > 0;
        }

        @Override
        protected void pongsMissed(ChannelHandlerContext ctx, int missedPongs) {
            ctx.fireUserEventTriggered(new HeartbeatFailedEvent(missedPongs));
            if (ctx.channel().isActive()) {
                goAway(Http2Error.NO_ERROR, "ping_timeout", 0);
                closeNow();
            }
        }
    }

    /** Judges the peer's ping; returns whether it ended the connection (the ping is then dropped). */
    private boolean endedBy(ChannelHandlerContext ctx) {
        if (!ctx.channel().isActive()) {
            return true; // closing already: the rest of a read batch gets no more strikes
        }
        long minNanos = settings.enforcement.minIntervalNanos();
        if (settings.noCallsRule && connection.numActiveStreams() == 0) {
            minNanos = Math.max(minNanos, NO_CALLS_MIN_PING_NANOS);
        }
        if (!settings.enforcement.strikesOut(ctx, strikes, now(), minNanos)) {
            return false;
        }
        goAway(Http2Error.ENHANCE_YOUR_CALM, "too_many_pings", 0);
        closeNow();
        return true;
    }

    /** The handler is its one timer: until the graceful shutdown the maximum idle's, then the drain PING's. */
    @Override
    protected void expire() {
        if (draining) {
            onDrainPingAcked();
            return;
        }
        long maxIdleNanos = settings.maxIdleNanos;
        if (connection.numActiveStreams() > 0) {
            return; // re-armed when the last stream closes
        }
        long left = maxIdleNanos - (now() - idleSinceNanos);
        if (left > 0) {
            schedule(this, left);
            return;
        }
        ConnectionMeters.count(settings.idleCloses);
        log.debug("{}: no stream for {} ns, shutting down gracefully", ctx().channel(), maxIdleNanos);
        ctx().fireUserEventTriggered(new MaxConnectionIdleEvent(maxIdleNanos));
        drain("max_idle");
    }

    /** Starts the graceful shutdown: GOAWAY with the largest stream id and the drain PING. */
    private void drain(String why) {
        if (draining || !ctx().channel().isActive()) {
            return;
        }
        draining = true;
        goAway(Http2Error.NO_ERROR, why, Integer.MAX_VALUE);
        schedule(this, DRAIN_PING_TIMEOUT_NANOS);
        ctx().writeAndFlush(new DefaultHttp2PingFrame(DRAIN_PING), ctx().voidPromise());
    }

    /** The peer has seen the first GOAWAY (or had 10 s to): the second one names the last stream. */
    private void onDrainPingAcked() {
        if (drainPingAcked) {
            return;
        }
        drainPingAcked = true;
        cancel(this);
        if (ctx().channel().isActive()) {
            goAway(Http2Error.NO_ERROR, "drained", 0);
            closeWhenNoStreams();
        }
    }

    private void onNoStreams() {
        if (draining) {
            closeWhenNoStreams();
        } else if (settings.maxIdleNanos > 0) {
            idleSinceNanos = now();
            if (!isPending()) {
                schedule(this, settings.maxIdleNanos);
            }
        }
    }

    private void closeWhenNoStreams() {
        if (drainPingAcked && connection.numActiveStreams() == 0) {
            ctx().close();
        }
    }

    private void goAway(Http2Error error, String debugData, int extraStreamIds) {
        ChannelHandlerContext ctx = ctx();
        DefaultHttp2GoAwayFrame goAway =
                new DefaultHttp2GoAwayFrame(error, ByteBufUtil.writeAscii(ctx.alloc(), debugData));
        goAway.setExtraStreamIds(extraStreamIds);
        // Not waiting for the write: a peer that does not read must not hold the channel open.
        ctx.writeAndFlush(goAway, ctx.voidPromise());
    }

    /** Closes the socket at once, past the codec, whose own close would wait for the open streams. */
    private void closeNow() {
        codecCtx.close();
    }

    private final class StreamListener extends Http2ConnectionAdapter {
        /** Resumes paused pings; a stream this side opens after a long silence gets a PING at once. */
        @Override
        public void onStreamActive(Http2Stream stream) {
            if (pings != null) {
                pings.resumeIfPaused(connection.remote().isValidStreamId(stream.id()));
            }
        }

        @Override
        public void onStreamClosed(Http2Stream stream) {
            if (running() && connection.numActiveStreams() == 0) {
                onNoStreams();
            }
        }
    }

    /** Immutable, thread-safe settings that make one {@link Http2KeepAliveHandler} per channel. */
    public static final class Factory {
        private final PingEnforcement enforcement;
        /** gRPC's two hours while no stream is open: with a minimum set explicitly and calls not permitted. */
        private final boolean noCallsRule;

        private final PingLoop.Settings keepAlive;
        private final boolean keepAliveWithoutCalls;
        private final long maxIdleNanos;
        private final EventLoopWheels wheels;
        private final Counter idleCloses;

        private Factory(
                Builder b,
                PingEnforcement enforcement,
                EventLoopWheels wheels,
                RandomGenerator random,
                MeterRegistry registry) {
            this.enforcement = enforcement;
            this.noCallsRule = b.pingLimits != null && !b.permitWithoutCalls;
            // gRPC closes at the first ACK missed, unless anything else was read meanwhile.
            this.keepAlive = b.keepAliveNanos == 0
                    ? null
                    : new PingLoop.Settings(
                            b.keepAliveNanos,
                            b.keepAliveTimeoutNanos,
                            1,
                            b.keepAliveJitter,
                            random,
                            PingLoop.Traffic.READS,
                            registry);
            this.keepAliveWithoutCalls = b.keepAliveWithoutCalls;
            this.maxIdleNanos = b.maxIdleNanos;
            this.wheels = wheels;
            this.idleCloses = ConnectionMeters.closed(registry, "max_connection_idle");
        }

        /** @return a new handler, for one channel only */
        public Http2KeepAliveHandler newHandler() {
            return new Http2KeepAliveHandler(this);
        }
    }

    /** Settings of a {@link Http2KeepAliveHandler}, with {@link JitteredHandlerBuilder}'s. Not thread-safe. */
    public static final class Builder extends JitteredHandlerBuilder<Builder> {
        /** Null: not set, {@link PingLimits#DEFAULT} (and no two-hour rule without calls). */
        private PingLimits pingLimits;

        private boolean permitWithoutCalls;
        private boolean permitSet;
        private long maxIdleNanos;
        private long keepAliveNanos;
        private long keepAliveTimeoutNanos = TimeUnit.SECONDS.toNanos(20); // gRPC's
        private boolean keepAliveWithoutCalls;
        private double keepAliveJitter;
        private boolean keepAliveOptionSet;

        private Builder() {}

        /**
         * Sends a keepalive PING after {@code time} without a read (gRPC's {@code keepAliveTime}); off by default.
         * @param time the time without a read, positive
         * @return this builder
         */
        public Builder keepAliveTime(Duration time) {
            this.keepAliveNanos = ConfigChecks.positiveNanos("keepAliveTime", time);
            return this;
        }

        /**
         * How long a keepalive PING may wait for its ACK (or any read) before the connection is
         * closed; 20 s by default (gRPC's {@code keepAliveTimeout}).
         * @param timeout the time limit, positive
         * @return this builder
         */
        public Builder keepAliveTimeout(Duration timeout) {
            this.keepAliveTimeoutNanos = ConfigChecks.positiveNanos("keepAliveTimeout", timeout);
            this.keepAliveOptionSet = true;
            return this;
        }

        /**
         * Whether keepalive PINGs go out while no stream is open; false by default (gRPC's
         * {@code keepAliveWithoutCalls}).
         * @param ping whether to ping
         * @return this builder
         */
        public Builder keepAliveWithoutCalls(boolean ping) {
            this.keepAliveWithoutCalls = ping;
            this.keepAliveOptionSet = true;
            return this;
        }

        /**
         * Moves each keepalive interval by a uniform draw within +/- {@code fraction} of it; 0 by default.
         * @param fraction the fraction either side, {@code 0 <= fraction < 1}
         * @return this builder
         */
        public Builder keepAliveJitter(double fraction) {
            this.keepAliveJitter = Jitter.checkFraction("keepAliveJitter", fraction);
            this.keepAliveOptionSet = true;
            return this;
        }

        /**
         * Whether the peer may ping at the minimum interval while no stream is open; false (the
         * default, as gRPC) holds it to one ping per two hours then. Needs {@link #pingLimits}.
         * @param permit whether to permit it
         * @return this builder
         */
        public Builder permitKeepAliveWithoutCalls(boolean permit) {
            this.permitWithoutCalls = permit;
            this.permitSet = true;
            return this;
        }

        /**
         * Shuts a connection down gracefully once it has had no open stream for {@code idle}.
         * @param idle the longest time without an open stream, positive
         * @return this builder
         */
        public Builder maxConnectionIdle(Duration idle) {
            this.maxIdleNanos = ConfigChecks.positiveNanos("maxConnectionIdle", idle);
            return this;
        }

        /**
         * How often the peer may PING; {@link PingLimits#DEFAULT} unless set. Set, a connection with
         * no open stream is held to one PING per two hours unless {@link #permitKeepAliveWithoutCalls}.
         * @param limits the limits, or {@link PingLimits#OFF}; not null
         * @return this builder
         */
        public Builder pingLimits(PingLimits limits) {
            this.pingLimits = Objects.requireNonNull(limits, "pingLimits");
            return this;
        }

        /**
         * @return the factory of handlers with these settings, immutable and thread-safe
         * @throws IllegalStateException if no rule is set, or an option is set without its rule
         */
        public Factory build() {
            PingEnforcement enforcement =
                    PingEnforcement.of(pingLimits == null ? PingLimits.DEFAULT : pingLimits, registry());
            if (enforcement == null && maxIdleNanos == 0 && keepAliveNanos == 0) {
                throw new IllegalStateException("set keepAliveTime, pingLimits or maxConnectionIdle");
            }
            if (keepAliveOptionSet && keepAliveNanos == 0) {
                throw new IllegalStateException("keepAliveTimeout/WithoutCalls/Jitter need keepAliveTime");
            }
            if (permitSet && (enforcement == null || pingLimits == null)) {
                throw new IllegalStateException("permitKeepAliveWithoutCalls needs pingLimits other than OFF");
            }
            return new Factory(this, enforcement, wheels(), random(), registry());
        }
    }
}
