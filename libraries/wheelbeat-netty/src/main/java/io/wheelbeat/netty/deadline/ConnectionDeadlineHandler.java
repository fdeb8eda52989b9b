package io.wheelbeat.netty.deadline;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.DecoderResultProvider;
import io.wheelbeat.core.internal.checks.ConfigChecks;
import io.wheelbeat.netty.ChannelTimerHandler;
import io.wheelbeat.netty.EventLoopWheels;
import io.wheelbeat.netty.JitteredHandlerBuilder;
import io.wheelbeat.netty.internal.ConnectionMeters;
import io.wheelbeat.netty.internal.HandlerFields;
import io.wheelbeat.netty.internal.HandlerTimer;
import io.wheelbeat.netty.internal.Jitter;
import java.time.Duration;
import java.util.Objects;
import java.util.random.RandomGenerator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ends connections that outstay their welcome, on the event loop's shared wheel:
 * <ul>
 *   <li><b>First message:</b> if nothing is read within the limit after the channel becomes
 *       active, fires {@link FirstMessageTimeoutEvent} and closes the channel. Put it right after
 *       the frame decoder so that a peer trickling one byte at a time does not pass for talking; a
 *       message whose {@code DecoderResultProvider} result is a failure does not count either.</li>
 *   <li><b>Maximum age:</b> at the connection's (jittered) maximum age, fires
 *       {@link MaxConnectionAgeEvent} so the protocol can say goodbye (an {@code Http2KeepAliveHandler}
 *       after it drains the connection), then closes the channel after the grace period.</li>
 * </ul>
 * Messages pass through untouched. Timers run while the channel is active and the handler in place.
 *
 * <p>Meters ({@link Builder#metrics(MeterRegistry)}): {@code wheelbeat.connection.closed} tagged
 * {@code reason} = {@code first_message_timeout} or {@code max_connection_age}.
 *
 * <p>A handler serves one channel, on its event loop; build a {@link Factory} once.
 */
public final class ConnectionDeadlineHandler extends ChannelTimerHandler {

    private static final Logger log = LoggerFactory.getLogger(ConnectionDeadlineHandler.class);

    private final Factory settings;
    private final HandlerTimer firstMessageTimer = new HandlerTimer(this::onTimer);
    private final HandlerTimer ageTimer = new HandlerTimer(this::onTimer);
    private final HandlerTimer graceTimer = new HandlerTimer(this::onTimer);
    private long ageNanos;

    private ConnectionDeadlineHandler(Factory settings) {
        super(settings.wheels);
        this.settings = settings;
    }

    /**
     * Returns a builder; at least one of the two deadlines must be set.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
        if (firstMessageTimer.isPending() && !undecodable(msg)) {
            cancel(firstMessageTimer);
        }
        ctx.fireChannelRead(msg);
    }

    /** A message its decoder failed on (garbage, as a hostile peer sends) is not the peer talking. */
    private static boolean undecodable(Object msg) {
        return msg instanceof DecoderResultProvider decoded
                && decoded.decoderResult().isFailure();
    }

    @Override
    protected void onStart(ChannelHandlerContext ctx, long nowNanos) {
        if (settings.firstMessageNanos > 0) {
            schedule(firstMessageTimer, settings.firstMessageNanos);
        }
        if (settings.maxAgeNanos > 0) {
            if (!HandlerFields.moving(this)) { // moved to another loop, the connection keeps its age
                ageNanos = Jitter.apply(settings.maxAgeNanos, settings.ageJitter, settings.random);
            }
            schedule(ageTimer, ageNanos);
        }
    }

    @Override
    protected void onStop() {
        cancel(firstMessageTimer);
        cancel(ageTimer);
        cancel(graceTimer);
    }

    private void onTimer(HandlerTimer timer) {
        ChannelHandlerContext ctx = ctx();
        if (timer == firstMessageTimer) {
            ConnectionMeters.count(settings.firstMessageCloses);
            log.debug(
                    "{}: nothing read within {} ns of activation, closing", ctx.channel(), settings.firstMessageNanos);
            ctx.fireUserEventTriggered(new FirstMessageTimeoutEvent(settings.firstMessageNanos));
            ctx.close();
        } else if (timer == ageTimer) {
            ConnectionMeters.count(settings.ageCloses);
            log.debug(
                    "{}: reached its maximum age of {} ns, closing after {} ns",
                    ctx.channel(),
                    ageNanos,
                    settings.graceNanos);
            // Armed before the event, so that a listener closing the channel cancels it.
            if (settings.graceNanos > 0) {
                schedule(graceTimer, settings.graceNanos);
            }
            ctx.fireUserEventTriggered(new MaxConnectionAgeEvent(ageNanos, settings.graceNanos));
            if (settings.graceNanos == 0) {
                ctx.close();
            }
        } else if (timer == graceTimer) {
            log.debug("{}: grace after maximum age over, closing", ctx.channel());
            ctx.close();
        }
    }

    /** Immutable, thread-safe settings that make one {@link ConnectionDeadlineHandler} per channel. */
    public static final class Factory {
        private final long firstMessageNanos;
        private final long maxAgeNanos;
        private final double ageJitter;
        private final long graceNanos;
        private final EventLoopWheels wheels;
        private final RandomGenerator random;
        private final Counter firstMessageCloses;
        private final Counter ageCloses;

        private Factory(Builder b, EventLoopWheels wheels, RandomGenerator random, MeterRegistry registry) {
            this.firstMessageNanos = b.firstMessageNanos;
            this.maxAgeNanos = b.maxAge == null ? 0 : b.maxAge.age().toNanos();
            this.ageJitter = b.maxAge == null ? 0 : b.maxAge.jitter();
            this.graceNanos = b.maxAge == null ? 0 : b.maxAge.grace().toNanos();
            this.wheels = wheels;
            this.random = random;
            this.firstMessageCloses =
                    registry == null ? null : ConnectionMeters.closed(registry, "first_message_timeout");
            this.ageCloses = registry == null ? null : ConnectionMeters.closed(registry, "max_connection_age");
        }

        /** @return a new handler, for one channel only */
        public ConnectionDeadlineHandler newHandler() {
            return new ConnectionDeadlineHandler(this);
        }
    }

    /**
     * Settings of a {@link ConnectionDeadlineHandler}; {@code wheels}, {@code random} and
     * {@code metrics} are in {@link JitteredHandlerBuilder}. Not thread-safe.
     */
    public static final class Builder extends JitteredHandlerBuilder<Builder> {
        private long firstMessageNanos;
        private MaxConnectionAge maxAge;

        private Builder() {}

        /**
         * Closes the channel if nothing is read within {@code limit} after it becomes active.
         *
         * @param limit the time limit
         * @return this builder
         * @throws IllegalArgumentException if {@code limit} is not positive
         */
        public Builder firstMessageTimeout(Duration limit) {
            this.firstMessageNanos = ConfigChecks.positiveNanos("firstMessageTimeout", limit);
            return this;
        }

        /**
         * Ends the connection at its maximum age after it becomes active: fires
         * {@link MaxConnectionAgeEvent}, then closes the channel after the grace (zero unless set).
         *
         * @param maxAge the maximum age, its jitter and grace
         * @return this builder
         * @throws NullPointerException if {@code maxAge} is null
         */
        public Builder maxConnectionAge(MaxConnectionAge maxAge) {
            this.maxAge = Objects.requireNonNull(maxAge, "maxConnectionAge");
            return this;
        }

        /**
         * Returns the factory of handlers with these settings.
         *
         * @return the factory, immutable and thread-safe
         * @throws IllegalStateException if neither deadline is set
         */
        public Factory build() {
            if (firstMessageNanos == 0 && maxAge == null) {
                throw new IllegalStateException("set firstMessageTimeout, maxConnectionAge or both");
            }
            return new Factory(this, wheels(), random(), registry());
        }
    }
}
