package io.wheelbeat.netty.deadline;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.wheelbeat.core.ExecutorDrivenWheel;
import io.wheelbeat.core.internal.checks.ConfigChecks;
import io.wheelbeat.netty.EventLoopWheels;
import io.wheelbeat.netty.internal.ChannelTimers;
import io.wheelbeat.netty.internal.ConnectionMeters;
import io.wheelbeat.netty.internal.HandlerOptions;
import io.wheelbeat.netty.internal.Jitter;
import java.time.Duration;
import java.util.random.RandomGenerator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ends connections that outstay their welcome, on the event loop's shared wheel:
 * <ul>
 *   <li><b>First message:</b> if nothing is read within the limit after the channel becomes
 *       active, fires {@link FirstMessageTimeoutEvent} and closes the channel. What counts as a
 *       message is whatever reaches this handler's {@code channelRead}: put it right after the
 *       frame decoder so that a peer trickling one byte at a time does not pass for talking.</li>
 *   <li><b>Maximum age:</b> when the connection reaches its age (the maximum moved by a random
 *       jitter, +/-10% by default, drawn once per connection so that connections opened together
 *       do not end together), fires {@link MaxConnectionAgeEvent} so the protocol can say
 *       goodbye, then closes the channel after the grace period unless it closed before.</li>
 * </ul>
 * Messages pass through untouched. Timers start when the channel is active (also when the
 * handler is added to an already active channel) and are all cancelled when it goes inactive or
 * the handler is removed.
 *
 * <p>With {@link Builder#metrics(MeterRegistry)}, counts {@code wheelbeat.connection.closed} with
 * tag {@code reason} = {@code first_message_timeout} or {@code max_connection_age} (the latter
 * when the age is reached, whoever does the final close).
 *
 * <p>Usage: build a {@link Factory} once, then add {@link Factory#newHandler()} to each channel's
 * pipeline. A handler serves one channel ({@code @Sharable} it is not); all its methods run on
 * that channel's event loop.
 */
public final class ConnectionDeadlineHandler extends ChannelDuplexHandler {

    private static final Logger log = LoggerFactory.getLogger(ConnectionDeadlineHandler.class);

    private final Factory settings;
    private final ChannelTimers timers;
    private long firstMessageTimer = ExecutorDrivenWheel.NO_TIMER;
    private long ageTimer = ExecutorDrivenWheel.NO_TIMER;
    private long graceTimer = ExecutorDrivenWheel.NO_TIMER;
    private long ageNanos;

    private ConnectionDeadlineHandler(Factory settings) {
        this.timers = new ChannelTimers(settings.wheels, this::onTimer);
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
        if (firstMessageTimer != ExecutorDrivenWheel.NO_TIMER) {
            firstMessageTimer = timers.cancel(firstMessageTimer);
        }
        ctx.fireChannelRead(msg);
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        if (timers.startIfActive(ctx)) {
            onStart(timers.now());
        }
    }

    @Override
    public void channelRegistered(ChannelHandlerContext ctx) {
        if (timers.startIfActive(ctx)) {
            onStart(timers.now());
        }
        ctx.fireChannelRegistered();
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        if (timers.start(ctx)) {
            onStart(timers.now());
        }
        ctx.fireChannelActive();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        if (timers.stop()) {
            onStop();
        }
        ctx.fireChannelInactive();
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        if (timers.stop()) {
            onStop();
        }
    }

    private void onStart(long nowNanos) {
        if (settings.firstMessageNanos > 0) {
            firstMessageTimer = timers.schedule(settings.firstMessageNanos);
        }
        if (settings.maxAgeNanos > 0) {
            ageNanos = Jitter.apply(settings.maxAgeNanos, settings.ageJitter, settings.random);
            ageTimer = timers.schedule(ageNanos);
        }
    }

    private void onStop() {
        firstMessageTimer = timers.cancel(firstMessageTimer);
        ageTimer = timers.cancel(ageTimer);
        graceTimer = timers.cancel(graceTimer);
    }

    private void onTimer(long timerId) {
        ChannelHandlerContext ctx = timers.ctx();
        if (timerId == firstMessageTimer) {
            firstMessageTimer = ExecutorDrivenWheel.NO_TIMER;
            ConnectionMeters.count(settings.firstMessageCloses);
            log.debug("{}: nothing read within {} ns of activation, closing", ctx.channel(), settings.firstMessageNanos);
            ctx.fireUserEventTriggered(new FirstMessageTimeoutEvent(settings.firstMessageNanos));
            ctx.close();
        } else if (timerId == ageTimer) {
            ageTimer = ExecutorDrivenWheel.NO_TIMER;
            ConnectionMeters.count(settings.ageCloses);
            log.debug("{}: reached its maximum age of {} ns, closing after {} ns", ctx.channel(), ageNanos,
                    settings.graceNanos);
            // Armed before the event, so that a listener closing the channel cancels it.
            if (settings.graceNanos > 0) {
                graceTimer = timers.schedule(settings.graceNanos);
            }
            ctx.fireUserEventTriggered(new MaxConnectionAgeEvent(ageNanos, settings.graceNanos));
            if (settings.graceNanos == 0) {
                ctx.close();
            }
        } else if (timerId == graceTimer) {
            graceTimer = ExecutorDrivenWheel.NO_TIMER;
            log.debug("{}: grace after maximum age over, closing", ctx.channel());
            ctx.close();
        }
    }

    /**
     * Immutable settings that make one {@link ConnectionDeadlineHandler} per channel.
     *
     * <p>Thread-safe: {@link #newHandler()} may be called from any event loop.
     */
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
            this.maxAgeNanos = b.maxAgeNanos;
            this.ageJitter = b.ageJitter;
            this.graceNanos = b.graceNanos;
            this.wheels = wheels;
            this.random = random;
            this.firstMessageCloses = registry == null ? null
                    : ConnectionMeters.closed(registry, "first_message_timeout");
            this.ageCloses = registry == null ? null : ConnectionMeters.closed(registry, "max_connection_age");
        }

        /**
         * Returns a new handler for one channel.
         *
         * @return a new handler, for one channel only
         */
        public ConnectionDeadlineHandler newHandler() {
            return new ConnectionDeadlineHandler(this);
        }
    }

    /**
     * Settings of a {@link ConnectionDeadlineHandler}. Every setter checks its argument at once
     * ({@link NullPointerException} for a null, {@link IllegalArgumentException} for a value out
     * of range). Not thread-safe.
     */
    public static final class Builder {
        private final HandlerOptions options = new HandlerOptions();
        private long firstMessageNanos;
        private long maxAgeNanos;
        private double ageJitter = 0.1;
        private long graceNanos;
        private boolean ageOptionSet;

        private Builder() {
        }

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
         * Ends the connection at {@code age} after it becomes active, moved by the jitter.
         *
         * @param age the maximum age
         * @return this builder
         * @throws IllegalArgumentException if {@code age} is not positive
         */
        public Builder maxConnectionAge(Duration age) {
            this.maxAgeNanos = ConfigChecks.positiveNanos("maxConnectionAge", age);
            return this;
        }

        /**
         * Moves each connection's maximum age by a uniform draw within +/- {@code fraction} of it:
         * 0.1 (the default, as gRPC) gives 90% to 110%; 0 gives every connection the exact age.
         *
         * @param fraction the fraction of the value either side, 0 for none
         * @return this builder
         * @throws IllegalArgumentException unless {@code 0 <= fraction < 1}
         */
        public Builder maxConnectionAgeJitter(double fraction) {
            this.ageJitter = Jitter.checkFraction("maxConnectionAgeJitter", fraction);
            this.ageOptionSet = true;
            return this;
        }

        /**
         * How long after the {@link MaxConnectionAgeEvent} the channel is forcibly closed. Zero
         * (the default) closes it right after the event, once the listeners have run.
         *
         * @param grace the grace period
         * @return this builder
         * @throws IllegalArgumentException if {@code grace} is negative
         */
        public Builder maxConnectionAgeGrace(Duration grace) {
            this.graceNanos = ConfigChecks.nonNegativeNanos("maxConnectionAgeGrace", grace);
            this.ageOptionSet = true;
            return this;
        }

        /**
         * Puts the timers on these per-event-loop wheels; {@link EventLoopWheels#shared()} by default.
         *
         * @param wheels the per-event-loop wheels
         * @return this builder
         * @throws NullPointerException if {@code wheels} is null
         */
        public Builder wheels(EventLoopWheels wheels) {
            options.wheels(wheels);
            return this;
        }

        /**
         * The source of the jitter; the calling event loop's {@code ThreadLocalRandom} by default.
         * It is called on every channel's event loop, so it must be thread-safe if the handlers
         * serve several loops. A seeded or scripted generator makes tests exact.
         *
         * @param random the source of the jitter; thread-safe
         * @return this builder
         * @throws NullPointerException if {@code random} is null
         */
        public Builder random(RandomGenerator random) {
            options.random(random);
            return this;
        }

        /**
         * Records the handler's meters in {@code registry}, registered once when the factory is
         * built. Without it, no meter exists and nothing is recorded.
         *
         * @param registry the meter registry
         * @return this builder
         * @throws NullPointerException if {@code registry} is null
         */
        public Builder metrics(MeterRegistry registry) {
            options.metrics(registry);
            return this;
        }

        /**
         * Returns the factory of handlers with these settings.
         *
         * @return the factory, immutable and thread-safe
         * @throws IllegalStateException if neither deadline is set, or an age option is set
         *     without {@link #maxConnectionAge}
         */
        public Factory build() {
            if (firstMessageNanos == 0 && maxAgeNanos == 0) {
                throw new IllegalStateException("set firstMessageTimeout, maxConnectionAge or both");
            }
            if (ageOptionSet && maxAgeNanos == 0) {
                throw new IllegalStateException("maxConnectionAgeJitter/Grace need maxConnectionAge");
            }
            return new Factory(this, options.wheels(), options.random(), options.registry());
        }
    }
}
