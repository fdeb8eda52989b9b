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
import io.wheelbeat.netty.internal.HandlerTimer;
import io.wheelbeat.netty.internal.ConnectionMeters;
import io.wheelbeat.netty.heartbeat.internal.HeartbeatMeters;
import io.wheelbeat.netty.internal.Jitter;
import io.wheelbeat.netty.heartbeat.internal.PingEnforcement;
import io.wheelbeat.netty.heartbeat.internal.PingLoop;
import java.time.Duration;
import java.util.Objects;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.ToLongFunction;
import java.util.random.RandomGenerator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Application-level heartbeats on the event loop's shared wheel, in one or both roles.
 *
 * <h2>Pinging (client) role: {@link Builder#sendPings}</h2>
 * When nothing has been written for the ping interval (each interval optionally moved by a random
 * jitter, drawn per connection and per interval), writes a ping made by the ping factory and
 * expects its pong within the pong timeout. One ping is outstanding at a time. Writes count when
 * flushed; the pings and pongs this handler writes count too.
 *
 * <h3>Which ping a pong answers</h3>
 * Every ping has an id: a random start drawn per connection plus the ping's number (1 for the
 * connection's first ping, then 2, 3, ...), so a peer that does not read the pings cannot guess
 * the ids and pass for alive. Ids are positive, never {@link #NO_PING}. A pong answers exactly
 * one ping, told in one of two ways:
 * <ul>
 *   <li><b>Echoed id</b> ({@link Builder#sendPings(Duration, PingFactory, Predicate, ToLongFunction)}):
 *       the ping factory puts the id in the ping and the peer echoes it (a WebSocket pong echoes
 *       the ping's application data, an HTTP/2 PING ACK its 8 opaque bytes); the pong id function
 *       reads it back.</li>
 *   <li><b>Order</b> ({@link Builder#sendPings(Duration, Function, Predicate)}): for pongs
 *       that carry nothing (MQTT's PINGRESP), the n-th pong answers the n-th ping. This assumes
 *       the peer answers every ping, in order, as MQTT requires; a peer that skips one answer is
 *       one behind from then on, its pongs all late, and it is closed as below.</li>
 * </ul>
 * A pong that answers the outstanding ping before that ping's timeout is in time: it fires
 * {@link PongReceivedEvent} with the round-trip time of that ping (flagged {@code first} for the
 * connection's first pong in time) and clears the count of missed pongs. Any other pong (one that
 * answers an earlier ping, whose timeout has passed, or no ping at all) is late: it is consumed and
 * counted, fires no event and clears nothing. After {@link Builder#maxMissedPongs} pings in a row
 * get no pong in time, fires {@link HeartbeatFailedEvent} and closes the channel. The next ping
 * goes out when a ping times out (if the interval has passed), so with a pong timeout of at least
 * the interval a peer that answers every ping late is closed {@code maxMissedPongs} pong timeouts
 * after the first ping.
 *
 * <h3>"Too many pings"</h3>
 * A peer that says this side pings too often (gRPC's GOAWAY {@code too_many_pings}, the demo
 * protocol's GOODBYE) is answered with {@link #peerSaysTooManyPings()}: as gRPC clients do, the
 * ping interval doubles, for this connection and every later one of the same {@link Factory}.
 *
 * <h2>Answering (server) role: {@link Builder#answerPings}</h2>
 * Answers each ping, recognised by the ping matcher, with the pong the pong factory makes from
 * it. With {@link Builder#pingLimits}, a ping that comes sooner than their minimum interval after
 * the last ping in time is a strike (still answered); their {@code maxPingStrikes}-th strike in a
 * row fires {@link TooManyPingsEvent}, writes the goodbye message if configured, and closes the
 * channel. A ping in time clears the strikes, so a peer can never ping faster than
 * {@code maxPingStrikes} pings per minimum interval. The first ping of a connection is always in
 * time. Enforcement is on by default ({@link PingLimits#DEFAULT}: 100 ms, 3 strikes; a flood ends
 * within its first read batch); {@link PingLimits#OFF} turns it off.
 *
 * <p>Answers are bounded by what the peer reads: while the channel is not writable (more than its
 * high water mark waits to go out), a ping is not answered at once; the latest such ping is kept
 * (earlier ones released unanswered) and answered when the channel becomes writable again. A peer
 * that pings and never reads therefore costs at most one pending ping, however fast it pings.
 *
 * <h2>Messages</h2>
 * Pings and pongs recognised by the matchers are consumed: not passed on, and released (after
 * the pong factory has run, so a pong that reuses the ping's buffer must retain it). Every other
 * message passes through. A matcher or factory that throws (or a factory that returns null)
 * fires the exception through {@code exceptionCaught}: the message then passes on unmatched, or
 * the ping waits for the next interval; the connection stays open.
 *
 * <p>Place the handler on the application side of the codec (after the decoder, before the
 * encoder on the way out) so that it reads decoded messages and its pings get encoded, and so
 * that the application's writes pass through it.
 *
 * <h2>Metrics</h2>
 * With {@link Builder#metrics(MeterRegistry)}: pinging role {@code wheelbeat.heartbeat.pings.sent},
 * {@code wheelbeat.heartbeat.pongs.missed} (pings without a pong in time),
 * {@code wheelbeat.heartbeat.pongs.late} (pongs consumed without an event), timer
 * {@code wheelbeat.heartbeat.rtt} (pongs in time only),
 * {@code wheelbeat.connection.closed} tag {@code reason=heartbeat_timeout}; answering role
 * {@code wheelbeat.heartbeat.pings.answered}, {@code wheelbeat.heartbeat.ping.strikes},
 * {@code wheelbeat.connection.closed} tag {@code reason=too_many_pings}.
 *
 * <p>Usage: build a {@link Factory} once, then add {@link Factory#newHandler()} to each channel's
 * pipeline. A handler serves one channel ({@code @Sharable} it is not); all its methods run on
 * that channel's event loop. Reads, writes and flushes allocate nothing.
 */
public final class HeartbeatHandler extends ChannelTimerHandler {

    private static final Logger log = LoggerFactory.getLogger(HeartbeatHandler.class);

    private final Factory settings;
    /** The pinging role, or null. */
    private final PingLoop pings;
    // Answering role.
    private final PingEnforcement.Strikes strikes;
    /** The latest ping that came while the channel was not writable, answered when it is; else null. */
    private Object owedPing;

    private HeartbeatHandler(Factory settings) {
        super(settings.wheels);
        this.settings = settings;
        this.pings = settings.pinging == null ? null : new PingLoop(settings.pingProtocol);
        this.strikes = settings.enforcement == null ? null : new PingEnforcement.Strikes();
    }

    /**
     * Returns a builder; at least one role must be set.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
        if (pings != null && matches(ctx, settings.isPong, msg)) {
            if (settings.pongId == null) {
                ReferenceCountUtil.release(msg);
                pings.onPongInOrder(ctx);
            } else {
                long answered = pongId(ctx, msg);
                ReferenceCountUtil.release(msg);
                pings.onPong(ctx, answered);
            }
        } else if (settings.pongFactory != null && matches(ctx, settings.isPing, msg)) {
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
    protected void onStart(ChannelHandlerContext ctx, long nowNanos) {
        if (pings != null) {
            pings.start(settings.pinging, ctx, wheel());
        }
    }

    @Override
    protected void onStop() {
        if (pings != null) {
            pings.stop();
        }
        releaseOwedPing();
    }

    /** Runs the pong id function; if it throws, reports it and returns {@link #NO_PING}. */
    private long pongId(ChannelHandlerContext ctx, Object pong) {
        try {
            return settings.pongId.applyAsLong(pong);
        } catch (RuntimeException e) {
            ctx.fireExceptionCaught(e);
            return NO_PING;
        }
    }

    /**
     * The peer says this side pings too often (gRPC's GOAWAY {@code too_many_pings}, say): doubles
     * the ping interval of this handler's {@link Factory}, as gRPC clients do, from the interval
     * under way on this connection and from their next interval on the factory's other
     * connections. The doubling starts from the interval this connection last used, and only once
     * per value: when many connections of one factory are told at once, the interval doubles once,
     * not once per connection. Saturates at {@code Long.MAX_VALUE} nanoseconds; the pong timeout
     * stays as set.
     *
     * <p>Protocol handlers call it when their peer's "too many pings" arrives (the demo client on
     * the GOODBYE reason {@code too many pings}). Event loop only; does nothing without the
     * pinging role or before the handler has started.
     */
    public void peerSaysTooManyPings() {
        if (pings != null) {
            pings.peerSaysTooManyPings();
        }
    }

    // ---------------------------------------------------------------- answering role

    private void onPing(ChannelHandlerContext ctx, Object ping) {
        if (!ctx.channel().isActive()) {
            // Closing already: the rest of a read batch gets neither answers nor more strikes.
            ReferenceCountUtil.release(ping);
            return;
        }
        if (settings.enforcement != null) {
            int struckOut = settings.enforcement.tooManyPings(strikes, now());
            if (struckOut > 0) {
                ReferenceCountUtil.release(ping);
                tooManyPings(ctx, struckOut);
                return;
            }
        }
        if (!ctx.channel().isWritable()) {
            // The peer is not reading what we sent: owe it one answer, to its latest ping.
            releaseOwedPing();
            owedPing = ping;
            return;
        }
        answer(ctx, ping);
    }

    /** Answers {@code ping} with the pong factory's pong, and releases it. */
    private void answer(ChannelHandlerContext ctx, Object ping) {
        Object pong;
        try {
            pong = make(ctx, settings.pongFactory, ctx.channel(), ping, "pong factory");
        } finally {
            ReferenceCountUtil.release(ping);
        }
        if (pong != null) {
            ConnectionMeters.count(settings.pingsAnswered);
            send(ctx, pong);
        }
    }

    private void releaseOwedPing() {
        if (owedPing != null) {
            ReferenceCountUtil.release(owedPing);
            owedPing = null;
        }
    }

    private void tooManyPings(ChannelHandlerContext ctx, int strikesInARow) {
        log.debug("{}: {} pings sooner than {} ns apart, closing", ctx.channel(), strikesInARow,
                settings.enforcement.minIntervalNanos());
        ctx.fireUserEventTriggered(new TooManyPingsEvent(strikesInARow));
        if (settings.goodbyeFactory != null && ctx.channel().isActive()) {
            Object goodbye = make(ctx, settings.goodbyeFactory, ctx.channel(), null, "goodbye factory");
            if (goodbye != null) {
                // Not waiting for the write: a peer that does not read must not hold the channel open.
                send(ctx, goodbye);
            }
        }
        ctx.close();
    }

    // ---------------------------------------------------------------- shared

    /** Writes one of this handler's own messages, which counts as a write for the pinging role. */
    private void send(ChannelHandlerContext ctx, Object msg) {
        if (pings != null) {
            pings.onWrite();
            pings.onFlush();
        }
        ctx.writeAndFlush(msg, ctx.voidPromise());
    }

    /** Runs a user matcher; if it throws, reports it and lets the message pass on. */
    private static boolean matches(ChannelHandlerContext ctx, Predicate<Object> matcher, Object msg) {
        try {
            return matcher.test(msg);
        } catch (RuntimeException e) {
            ctx.fireExceptionCaught(e);
            return false;
        }
    }

    /** Runs a user factory; if it throws or returns null, reports it and returns null. */
    private static Object make(ChannelHandlerContext ctx, BiFunction<Channel, Object, ?> factory,
                               Channel channel, Object input, String name) {
        Object made;
        try {
            made = factory.apply(channel, input);
        } catch (RuntimeException e) {
            ctx.fireExceptionCaught(e);
            return null;
        }
        if (made == null) {
            ctx.fireExceptionCaught(new NullPointerException(name + " returned null"));
        }
        return made;
    }

    /** A pong id that answers no ping: ping ids are positive. */
    public static final long NO_PING = 0;

    /**
     * Makes a ping that carries its id, for peers that echo it in their pong (see
     * {@link HeartbeatHandler}). Called on the channel's event loop.
     */
    @FunctionalInterface
    public interface PingFactory {
        /**
         * Returns the ping with id {@code pingId} (a random start per connection plus the ping's
         * number: positive, one up per ping, not predictable by the peer), or throws (or returns
         * null) to skip this interval's ping.
         *
         * @param channel the channel
         * @param pingId the id of the ping (a random start per connection plus the ping's number)
         * @return the ping to write, or null to skip this interval's ping
         */
        Object newPing(Channel channel, long pingId);
    }

    /**
     * Settings that make one {@link HeartbeatHandler} per channel; immutable except for the ping
     * interval, which {@link HeartbeatHandler#peerSaysTooManyPings()} may double.
     *
     * <p>Thread-safe: {@link #newHandler()} may be called from any event loop.
     */
    public static final class Factory {
        /** The pinging role's settings, or null without it. */
        private final PingLoop.Settings pinging;
        /** Makes the pings, through the user's ping factory. */
        private final PingLoop.Protocol pingProtocol;
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
            PingFactory pingFactory = b.pingFactory;
            this.pinging = pingFactory == null ? null : new PingLoop.Settings(b.intervalNanos, b.pongTimeoutNanos,
                    b.maxMissedPongs, b.jitter, random, PingLoop.Traffic.WRITES, HeartbeatMeters.Pinging.of(registry));
            this.pingProtocol = (ctx, pingId) -> newPing(ctx, pingFactory, pingId);
            this.isPong = b.isPong;
            this.pongId = b.pongId;
            this.isPing = b.isPing;
            this.pongFactory = b.pongFactory;
            PingLimits limits = b.pingLimits == null ? PingLimits.DEFAULT : b.pingLimits;
            this.enforcement = b.pongFactory == null ? null : PingEnforcement.of(limits, registry);
            this.goodbyeFactory = b.goodbyeFactory;
            this.wheels = wheels;
            this.pingsAnswered = registry != null && pongFactory != null ? HeartbeatMeters.pingsAnswered(registry) : null;
        }

        /** Runs the user's ping factory; if it throws or returns null, reports it and returns null. */
        private static Object newPing(ChannelHandlerContext ctx, PingFactory factory, long pingId) {
            Object ping;
            try {
                ping = factory.newPing(ctx.channel(), pingId);
            } catch (RuntimeException e) {
                ctx.fireExceptionCaught(e);
                return null;
            }
            if (ping == null) {
                ctx.fireExceptionCaught(new NullPointerException("ping factory returned null"));
            }
            return ping;
        }

        /**
         * Returns a new handler for one channel.
         *
         * @return a new handler, for one channel only
         */
        public HeartbeatHandler newHandler() {
            return new HeartbeatHandler(this);
        }

        /**
         * Returns the current base ping interval (before jitter), or zero without the pinging
         * role: as configured, doubled once per {@link HeartbeatHandler#peerSaysTooManyPings()}
         * that took effect.
         *
         * @return the current base ping interval
         */
        public Duration pingInterval() {
            return Duration.ofNanos(pinging == null ? 0 : pinging.intervalNanos());
        }
    }

    /**
     * Settings of a {@link HeartbeatHandler}; {@code wheels}, {@code random} and {@code metrics}
     * are in {@link JitteredHandlerBuilder}. Every setter checks its arguments at once
     * ({@link NullPointerException} for a null, {@link IllegalArgumentException} for a value out
     * of range); {@link #build()} checks that they fit together. Not thread-safe.
     */
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
        /** Null: not set, {@link PingLimits#DEFAULT}. */
        private PingLimits pingLimits;
        private BiFunction<Channel, Object, ?> goodbyeFactory;

        private Builder() {
        }

        /**
         * Enables the pinging role for pongs that carry no identity (MQTT's PINGRESP): after
         * {@code interval} without a write, writes {@code pingFactory.apply(channel)}; a message
         * for which {@code isPong} is true is a pong, and pongs answer pings in order (the n-th
         * pong the n-th ping).
         *
         * @param interval the time without a write after which a ping goes out
         * @param pingFactory makes each ping
         * @param isPong tells a pong from other messages
         * @return this builder
         * @throws IllegalArgumentException if {@code interval} is not positive
         */
        public Builder sendPings(Duration interval, Function<? super Channel, ?> pingFactory,
                                 Predicate<Object> isPong) {
            Objects.requireNonNull(pingFactory, "pingFactory");
            return pinging(interval, (channel, pingId) -> pingFactory.apply(channel), isPong, null);
        }

        /**
         * Enables the pinging role for pongs that echo their ping's id (WebSocket, HTTP/2 PING,
         * the demo protocol): after {@code interval} without a write, writes
         * {@code pingFactory.newPing(channel, id)}; a message for which {@code isPong} is true is
         * a pong, and {@code pongId} reads the id it echoes (called only on pongs; return
         * {@link HeartbeatHandler#NO_PING} for a pong that carries no id of ours).
         *
         * @param interval the interval
         * @param pingFactory makes each ping
         * @param isPong tells a pong from other messages
         * @param pongId reads the ping id a pong echoes
         * @return this builder
         * @throws IllegalArgumentException if {@code interval} is not positive
         */
        public Builder sendPings(Duration interval, PingFactory pingFactory, Predicate<Object> isPong,
                                 ToLongFunction<Object> pongId) {
            return pinging(interval, pingFactory, isPong, Objects.requireNonNull(pongId, "pongId"));
        }

        private Builder pinging(Duration interval, PingFactory pingFactory, Predicate<Object> isPong,
                                ToLongFunction<Object> pongId) {
            long nanos = ConfigChecks.positiveNanos("ping interval", interval);
            this.pingFactory = Objects.requireNonNull(pingFactory, "pingFactory");
            this.isPong = Objects.requireNonNull(isPong, "isPong");
            this.pongId = pongId;
            this.intervalNanos = nanos;
            return this;
        }

        /**
         * How long a pong may take after its ping; the ping interval by default. It may exceed
         * the interval: the next ping then waits for the pong or its timeout.
         *
         * @param timeout the time limit
         * @return this builder
         * @throws IllegalArgumentException if {@code timeout} is not positive
         */
        public Builder pongTimeout(Duration timeout) {
            this.pongTimeoutNanos = ConfigChecks.positiveNanos("pongTimeout", timeout);
            this.pingOptionSet = true;
            return this;
        }

        /**
         * How many pongs in a row may fail to come in time; the last of them closes the channel.
         * 3 by default.
         *
         * @param count the number
         * @return this builder
         * @throws IllegalArgumentException if {@code count} is not positive
         */
        public Builder maxMissedPongs(int count) {
            this.maxMissedPongs = ConfigChecks.positive("maxMissedPongs", count);
            this.pingOptionSet = true;
            return this;
        }

        /**
         * Moves each ping interval by a uniform draw within +/- {@code fraction} of it, per
         * connection and per interval, so that connections opened together do not ping together.
         * 0 (exact intervals) by default.
         *
         * @param fraction the fraction of the value either side, 0 for none
         * @return this builder
         * @throws IllegalArgumentException unless {@code 0 <= fraction < 1}
         */
        public Builder pingIntervalJitter(double fraction) {
            this.jitter = Jitter.checkFraction("pingIntervalJitter", fraction);
            this.pingOptionSet = true;
            return this;
        }

        /**
         * Enables the answering role: answers each message for which {@code isPing} is true with
         * {@code pongFactory.apply(channel, ping)}.
         *
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
         * How often the peer may ping before the channel is closed; {@link PingLimits#DEFAULT}
         * (with the answering role) unless set. Needs the answering role.
         *
         * @param limits the limits, or {@link PingLimits#OFF}
         * @return this builder
         * @throws NullPointerException if {@code limits} is null
         */
        public Builder pingLimits(PingLimits limits) {
            this.pingLimits = Objects.requireNonNull(limits, "pingLimits");
            return this;
        }

        /**
         * The message to write before closing for too many pings (a GOAWAY, say). It is flushed
         * and the channel closed at once: delivered if the socket takes it, never waited for.
         * Needs ping limits other than {@link PingLimits#OFF}.
         *
         * @param goodbyeFactory makes the goodbye message
         * @return this builder
         */
        public Builder goodbye(Function<? super Channel, ?> goodbyeFactory) {
            Objects.requireNonNull(goodbyeFactory, "goodbyeFactory");
            this.goodbyeFactory = (channel, unused) -> goodbyeFactory.apply(channel);
            return this;
        }

        /**
         * Returns the factory of handlers with these settings.
         *
         * @return the factory, immutable and thread-safe
         * @throws IllegalStateException if no role is set, or an option is set whose role or
         *     setting is missing
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
