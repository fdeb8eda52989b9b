package io.wheelbeat.netty.heartbeat;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.util.ReferenceCountUtil;
import io.wheelbeat.core.internal.checks.ConfigChecks;
import io.wheelbeat.netty.ChannelTimerHandler;
import io.wheelbeat.netty.EventLoopWheels;
import io.wheelbeat.netty.JitteredHandlerBuilder;
import io.wheelbeat.netty.heartbeat.internal.PingEnforcement;
import io.wheelbeat.netty.heartbeat.internal.PingLoop;
import io.wheelbeat.netty.internal.ConnectionMeters;
import io.wheelbeat.netty.internal.HandlerFields;
import io.wheelbeat.netty.internal.Jitter;
import java.time.Duration;
import java.util.Objects;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.ToLongFunction;
import java.util.random.RandomGenerator;

/**
 * Application-level heartbeats, with the events, meters and {@link PingLimits} every keepalive shares.
 * <b>Pinging</b> ({@link Builder#sendPings}): after the ping interval without a flushed write, a ping
 * (ids random per connection, one outstanding); a pong answers by the id it echoes, or by order. In
 * time it fires {@link PongReceivedEvent}, else it is late (consumed, counted); {@link Builder#maxMissedPongs}
 * misses in a row fire {@link HeartbeatFailedEvent} and close. <b>Answering</b> ({@link Builder#answerPings}):
 * each ping gets the pong factory's pong; the last strike of {@link PingLimits} fires {@link TooManyPingsEvent},
 * writes the goodbye if set and closes; while unwritable, only the latest ping is kept (also across a move to
 * another event loop; released if the channel closes or the handler is removed first).
 *
 * <p>Pings and pongs recognised are consumed; other messages pass. A matcher or factory that throws
 * or returns null fires {@code exceptionCaught}. Meters: {@code wheelbeat.heartbeat.pings.sent},
 * {@code .pongs.missed}, {@code .pongs.late}, {@code .rtt}, {@code .pings.answered}, {@code .ping.strikes},
 * {@code wheelbeat.connection.closed{reason}}. One channel, on its event loop; after the decoder.
 */
public final class HeartbeatHandler extends ChannelTimerHandler {

    /** A pong id that answers no ping: ping ids are positive. */
    public static final long NO_PING = 0;

    private final Factory settings;
    private final Pings pings;

    private final PingEnforcement.Strikes strikes;
    /** The latest ping that came while the channel was not writable; else null. */
    private Object owedPing;

    private HeartbeatHandler(Factory settings) {
        super(settings.wheels);
        this.settings = settings;
        this.pings = settings.pinging == null ? null : new Pings();
        this.strikes = settings.enforcement == null ? null : new PingEnforcement.Strikes();
    }

    /** @return a new builder; at least one role must be set */
    public static Builder builder() {
        return new Builder();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
        Factory b = settings;
        if (pings != null && matches(ctx, b.isPong, msg)) {
            long answered = NO_PING;
            try {
                answered = b.pongId == null ? NO_PING : b.pongId.applyAsLong(msg);
            } catch (RuntimeException e) {
                ctx.fireExceptionCaught(e);
            }
            ReferenceCountUtil.release(msg);
            if (b.pongId == null) {
                pings.onPongInOrder();
            } else {
                pings.onPong(answered);
            }
        } else if (b.pongFactory != null && matches(ctx, b.isPing, msg)) {
            onPing(ctx, msg);
        } else {
            ctx.fireChannelRead(msg);
        }
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) throws Exception {
        if (pings != null) {
            pings.onWrite();
        }
        ctx.write(msg, promise);
    }

    @Override
    public void flush(ChannelHandlerContext ctx) throws Exception {
        if (pings != null) {
            pings.onFlush();
        }
        ctx.flush();
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) throws Exception {
        if (owedPing != null && ctx.channel().isWritable()) {
            Object ping = owedPing;
            owedPing = null;
            answer(ctx, ping);
        }
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        dropOwedPing();
        super.channelInactive(ctx);
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) throws Exception {
        super.handlerRemoved(ctx);
        if (ctx == ctx()) { // not a refused second addition
            dropOwedPing();
        }
    }

    @Override
    protected void onStart(ChannelHandlerContext ctx, long nowNanos) {
        if (pings != null) {
            pings.start(settings.pinging, ctx);
        }
    }

    @Override
    protected void onStop() {
        if (pings != null) {
            pings.stop();
        }
        if (owedPing != null && HandlerFields.moving(this)) {
            // Owed across the move; a channel closed before it is on a loop again fires nothing else.
            ctx().channel().closeFuture().addListener(closed -> dropOwedPing());
        }
    }

    private void dropOwedPing() {
        ReferenceCountUtil.release(owedPing);
        owedPing = null;
    }

    /**
     * The peer says this side pings too often (gRPC's {@code too_many_pings}): doubles the factory's
     * ping interval, once however many of its connections are told at once. Event loop only.
     */
    public void peerSaysTooManyPings() {
        if (pings != null) {
            pings.peerSaysTooManyPings();
        }
    }

    private final class Pings extends PingLoop {
        @Override
        protected Object newPing(ChannelHandlerContext ctx, long pingId) {
            try {
                return reportNull(ctx, settings.pingFactory.newPing(ctx.channel(), pingId), "ping factory");
            } catch (RuntimeException e) {
                ctx.fireExceptionCaught(e);
                return null;
            }
        }
    }

    private void onPing(ChannelHandlerContext ctx, Object ping) {
        PingEnforcement enforcement = settings.enforcement;
        if (!ctx.channel().isActive()) {
            ReferenceCountUtil.release(ping); // closing: the rest of the batch gets no answers, no strikes
        } else if (enforcement != null && enforcement.strikesOut(ctx, strikes, now(), enforcement.minIntervalNanos())) {
            ReferenceCountUtil.release(ping);
            if (settings.goodbyeFactory != null && ctx.channel().isActive()) {
                Object goodbye = make(ctx, settings.goodbyeFactory, null, "goodbye factory");
                if (goodbye != null) {
                    send(ctx, goodbye); // not waited for: a peer that does not read must not hold the channel
                }
            }
            ctx.close();
        } else if (!ctx.channel().isWritable()) {
            ReferenceCountUtil.release(owedPing); // the peer does not read: owe it one answer, to its latest ping
            owedPing = ping;
        } else {
            answer(ctx, ping);
        }
    }

    private void answer(ChannelHandlerContext ctx, Object ping) {
        Object pong;
        try {
            pong = make(ctx, settings.pongFactory, ping, "pong factory");
        } finally {
            ReferenceCountUtil.release(ping);
        }
        if (pong != null) {
            ConnectionMeters.count(settings.pingsAnswered);
            send(ctx, pong);
        }
    }

    /** Writes one of this handler's own messages, which counts as a write for the pinging role. */
    private void send(ChannelHandlerContext ctx, Object msg) {
        if (pings != null) {
            pings.onWrite();
            pings.onFlush();
        }
        ctx.writeAndFlush(msg, ctx.voidPromise());
    }

    private static boolean matches(ChannelHandlerContext ctx, Predicate<Object> matcher, Object msg) {
        try {
            return matcher.test(msg);
        } catch (RuntimeException e) {
            ctx.fireExceptionCaught(e);
            return false; // passes on unmatched
        }
    }

    /** Runs a user factory; if it throws or returns null, reports it and returns null. */
    private static Object make(
            ChannelHandlerContext ctx, BiFunction<Channel, Object, ?> factory, Object input, String name) {
        try {
            return reportNull(ctx, factory.apply(ctx.channel(), input), name);
        } catch (RuntimeException e) {
            ctx.fireExceptionCaught(e);
            return null;
        }
    }

    private static Object reportNull(ChannelHandlerContext ctx, Object made, String factoryName) {
        if (made == null) {
            ctx.fireExceptionCaught(new NullPointerException(factoryName + " returned null"));
        }
        return made;
    }

    /** Makes pings that carry their id, for peers that echo it in their pong. Event loop only. */
    @FunctionalInterface
    public interface PingFactory {
        /**
         * @param channel the channel
         * @param pingId the ping's id: positive, one up per ping
         * @return the ping to write; null (or a throw) skips this interval's
         */
        Object newPing(Channel channel, long pingId);
    }

    /** Makes one {@link HeartbeatHandler} per channel; immutable but for the ping interval. Thread-safe. */
    public static final class Factory {
        private final PingLoop.Settings pinging;
        private final PingFactory pingFactory;
        private final Predicate<Object> isPong;
        /** Null: pongs answer pings by order. */
        private final ToLongFunction<Object> pongId;

        private final Predicate<Object> isPing;
        private final BiFunction<Channel, Object, ?> pongFactory;
        private final PingEnforcement enforcement;
        private final BiFunction<Channel, Object, ?> goodbyeFactory;
        private final EventLoopWheels wheels;
        private final Counter pingsAnswered;

        private Factory(Builder b, EventLoopWheels wheels, RandomGenerator random, MeterRegistry registry) {
            this.pingFactory = b.pingFactory;
            this.pinging = pingFactory == null
                    ? null
                    : new PingLoop.Settings(
                            b.intervalNanos,
                            b.pongTimeoutNanos,
                            b.maxMissedPongs,
                            b.jitter,
                            random,
                            PingLoop.Traffic.WRITES,
                            registry);
            this.isPong = b.isPong;
            this.pongId = b.pongId;
            this.isPing = b.isPing;
            this.pongFactory = b.pongFactory;
            PingLimits limits = b.pingLimits == null ? PingLimits.DEFAULT : b.pingLimits;
            this.enforcement = pongFactory == null ? null : PingEnforcement.of(limits, registry);
            this.goodbyeFactory = b.goodbyeFactory;
            this.wheels = wheels;
            this.pingsAnswered = pongFactory == null ? null : PingEnforcement.pingsAnswered(registry);
        }

        /** @return a new handler, for one channel only */
        public HeartbeatHandler newHandler() {
            return new HeartbeatHandler(this);
        }

        /** @return the ping interval before jitter, as {@code peerSaysTooManyPings} doubled it; 0 without pings */
        public Duration pingInterval() {
            return Duration.ofNanos(pinging == null ? 0 : pinging.intervalNanos());
        }
    }

    /** Settings of a {@link HeartbeatHandler}, with {@link JitteredHandlerBuilder}'s. Not thread-safe. */
    public static final class Builder extends JitteredHandlerBuilder<Builder> {
        private PingFactory pingFactory;
        private Predicate<Object> isPong;
        private ToLongFunction<Object> pongId;
        private long intervalNanos;
        private long pongTimeoutNanos;
        private int maxMissedPongs = 3;
        private double jitter;
        private boolean pingOptionSet;
        private Predicate<Object> isPing;
        private BiFunction<Channel, Object, ?> pongFactory;
        private PingLimits pingLimits;
        private BiFunction<Channel, Object, ?> goodbyeFactory;

        private Builder() {}

        /**
         * Pings with pongs that carry nothing: the n-th pong answers the n-th ping.
         * @param interval the time without a write after which a ping goes out, positive
         * @param pingFactory makes each ping
         * @param isPong tells a pong from other messages
         * @return this builder
         */
        public Builder sendPings(
                Duration interval, Function<? super Channel, ?> pingFactory, Predicate<Object> isPong) {
            Objects.requireNonNull(pingFactory, "pingFactory");
            return pinging(interval, (channel, pingId) -> pingFactory.apply(channel), isPong, null);
        }

        /**
         * Pings with pongs that echo their ping's id.
         * @param interval the time without a write after which a ping goes out, positive
         * @param pingFactory makes each ping with its id
         * @param isPong tells a pong from other messages
         * @param pongId reads the id a pong echoes, called on pongs only; {@link #NO_PING} for none
         * @return this builder
         */
        public Builder sendPings(
                Duration interval, PingFactory pingFactory, Predicate<Object> isPong, ToLongFunction<Object> pongId) {
            return pinging(interval, pingFactory, isPong, Objects.requireNonNull(pongId, "pongId"));
        }

        private Builder pinging(
                Duration interval, PingFactory pingFactory, Predicate<Object> isPong, ToLongFunction<Object> pongId) {
            this.intervalNanos = ConfigChecks.positiveNanos("ping interval", interval);
            this.pingFactory = Objects.requireNonNull(pingFactory, "pingFactory");
            this.isPong = Objects.requireNonNull(isPong, "isPong");
            this.pongId = pongId;
            return this;
        }

        /**
         * How long a pong may take; the ping interval by default (longer, the next ping waits for it).
         * @param timeout the time limit, positive
         * @return this builder
         */
        public Builder pongTimeout(Duration timeout) {
            this.pongTimeoutNanos = ConfigChecks.positiveNanos("pongTimeout", timeout);
            this.pingOptionSet = true;
            return this;
        }

        /**
         * How many pings in a row may go without a pong in time; the last closes. 3 by default.
         * @param count the number, positive
         * @return this builder
         */
        public Builder maxMissedPongs(int count) {
            this.maxMissedPongs = ConfigChecks.positive("maxMissedPongs", count);
            this.pingOptionSet = true;
            return this;
        }

        /**
         * Moves each ping interval by a uniform draw within +/- {@code fraction} of it; 0 by default.
         * @param fraction the fraction either side, {@code 0 <= fraction < 1}
         * @return this builder
         */
        public Builder pingIntervalJitter(double fraction) {
            this.jitter = Jitter.checkFraction("pingIntervalJitter", fraction);
            this.pingOptionSet = true;
            return this;
        }

        /**
         * Answers each ping with {@code pongFactory.apply(channel, ping)}.
         * @param isPing tells a ping from other messages
         * @param pongFactory makes the answer to a ping
         * @return this builder
         */
        public Builder answerPings(Predicate<Object> isPing, BiFunction<? super Channel, Object, ?> pongFactory) {
            Objects.requireNonNull(pongFactory, "pongFactory");
            this.isPing = Objects.requireNonNull(isPing, "isPing");
            this.pongFactory = pongFactory::apply;
            return this;
        }

        /**
         * How often the peer may ping; {@link PingLimits#DEFAULT} unless set. Needs the answering role.
         * @param limits the limits, or {@link PingLimits#OFF}; not null
         * @return this builder
         */
        public Builder pingLimits(PingLimits limits) {
            this.pingLimits = Objects.requireNonNull(limits, "pingLimits");
            return this;
        }

        /**
         * The message written before closing for too many pings; needs limits other than {@link PingLimits#OFF}.
         * @param goodbyeFactory makes the goodbye message
         * @return this builder
         */
        public Builder goodbye(Function<? super Channel, ?> goodbyeFactory) {
            Objects.requireNonNull(goodbyeFactory, "goodbyeFactory");
            this.goodbyeFactory = (channel, unused) -> goodbyeFactory.apply(channel);
            return this;
        }

        /**
         * @return the factory of handlers with these settings, immutable and thread-safe
         * @throws IllegalStateException if no role is set, or an option is set without its role
         */
        public Factory build() {
            if (pingFactory == null && pongFactory == null) {
                throw new IllegalStateException("set sendPings, answerPings or both");
            }
            if (pingOptionSet && pingFactory == null) {
                throw new IllegalStateException("pongTimeout/maxMissedPongs/pingIntervalJitter need sendPings");
            }
            if (pingLimits != null && pongFactory == null) {
                throw new IllegalStateException("pingLimits needs answerPings");
            }
            if (goodbyeFactory != null && PingLimits.OFF.equals(pingLimits)) {
                throw new IllegalStateException("goodbye needs pingLimits other than OFF");
            }
            return new Factory(this, wheels(), random(), registry());
        }
    }
}
