package io.wheelbeat.netty.guard;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.channel.ChannelConfig;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.ChannelPromise;
import io.netty.channel.WriteBufferWaterMark;
import io.wheelbeat.core.internal.checks.ConfigChecks;
import io.wheelbeat.netty.ChannelTimerHandler;
import io.wheelbeat.netty.EventLoopWheels;
import io.wheelbeat.netty.HandlerBuilder;
import io.wheelbeat.netty.internal.ConnectionMeters;
import io.wheelbeat.netty.internal.HandlerTimer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Guards a server against a peer that sends but does not read, whose answers would pile up in the
 * outbound buffer:
 * <ul>
 *   <li><b>Water marks</b> set at start (Netty's 32/64 KiB unless set).</li>
 *   <li><b>Back-pressure:</b> stops reading ({@code autoRead} off) while the channel is unwritable;
 *       the read batch under way finishes first.</li>
 *   <li><b>Cap:</b> a write that leaves more than {@link Builder#maxPendingBytes} (4 MiB) pending,
 *       counted as Netty counts writability, ends the connection.</li>
 *   <li><b>Deadline:</b> unwritable longer than {@link Builder#unwritableTimeout} (30 s) ends it.</li>
 * </ul>
 * Ending fires {@link SlowConsumerEvent} and closes at once; write nothing in answer. Place it at
 * the head of the pipeline so that every write passes it.
 *
 * <p>Meters ({@link Builder#metrics(MeterRegistry)}): {@code wheelbeat.connection.closed{reason=slow_consumer}}
 * and {@code wheelbeat.slow.consumer.read.pauses}.
 *
 * <p>A channel moved to another event loop is checked again on arrival: drained meanwhile, it
 * reads again and its unwritable deadline is gone. A handler serves one channel, on its event
 * loop; build a {@link Factory} once.
 */
public final class SlowConsumerHandler extends ChannelTimerHandler {

    private static final Logger log = LoggerFactory.getLogger(SlowConsumerHandler.class);

    private final Factory settings;
    private final HandlerTimer unwritableTimer = new HandlerTimer(this::onTimer);
    /** Whether this handler turned autoRead off, and so must turn it back on. */
    private boolean readingPaused;

    private boolean ended;

    private SlowConsumerHandler(Factory settings) {
        super(settings.wheels);
        this.settings = settings;
    }

    /** @return a new builder */
    public static Builder builder() {
        return new Builder();
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) throws Exception {
        ctx.write(msg, promise);
        ChannelOutboundBuffer pending = ctx.channel().unsafe().outboundBuffer();
        if (pending != null && pending.totalPendingWriteBytes() > settings.maxPendingBytes && running()) {
            end(SlowConsumerEvent.Cause.PENDING_BYTES, pending.totalPendingWriteBytes());
        }
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) throws Exception {
        if (running()) {
            writabilityChanged(ctx.channel().isWritable());
        }
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    protected void onStart(ChannelHandlerContext ctx, long nowNanos) {
        ChannelConfig config = ctx().channel().config();
        config.setWriteBufferWaterMark(settings.waterMark);
        // Also after a move to another loop: the channel may have drained on no loop, unseen.
        writabilityChanged(ctx().channel().isWritable());
    }

    @Override
    protected void onStop() {
        cancel(unwritableTimer);
    }

    private void onTimer(HandlerTimer timer) {
        if (timer == unwritableTimer) {
            ChannelOutboundBuffer pending = ctx().channel().unsafe().outboundBuffer();
            end(SlowConsumerEvent.Cause.UNWRITABLE_TOO_LONG, pending == null ? 0 : pending.totalPendingWriteBytes());
        }
    }

    private void writabilityChanged(boolean writable) {
        ChannelConfig config = ctx().channel().config();
        if (!writable) {
            if (settings.pauseReading && config.isAutoRead()) {
                config.setAutoRead(false);
                readingPaused = true;
                ConnectionMeters.count(settings.readPauses);
            }
            if (!unwritableTimer.isPending()) {
                schedule(unwritableTimer, settings.unwritableTimeoutNanos);
            }
        } else {
            cancel(unwritableTimer);
            if (readingPaused) {
                readingPaused = false;
                config.setAutoRead(true); // also asks for a read
            }
        }
    }

    private void end(SlowConsumerEvent.Cause cause, long pendingBytes) {
        if (ended) {
            return; // the rest of a write batch after the close
        }
        ended = true;
        ChannelHandlerContext ctx = ctx();
        ConnectionMeters.count(settings.closes);
        log.debug("{}: slow consumer ({}, {} bytes pending), closing", ctx.channel(), cause, pendingBytes);
        ctx.fireUserEventTriggered(new SlowConsumerEvent(cause, pendingBytes));
        ctx.close();
    }

    /** Immutable, thread-safe settings that make one {@link SlowConsumerHandler} per channel. */
    public static final class Factory {
        private final long maxPendingBytes;
        private final long unwritableTimeoutNanos;
        private final WriteBufferWaterMark waterMark;
        private final boolean pauseReading;
        private final EventLoopWheels wheels;
        private final Counter closes;
        private final Counter readPauses;

        private Factory(Builder b, EventLoopWheels wheels, MeterRegistry registry) {
            this.maxPendingBytes = b.maxPendingBytes;
            this.unwritableTimeoutNanos = b.unwritableTimeoutNanos;
            this.waterMark = new WriteBufferWaterMark(b.lowWaterMark, b.highWaterMark);
            this.pauseReading = b.pauseReading;
            this.wheels = wheels;
            this.closes = registry == null ? null : ConnectionMeters.closed(registry, SlowConsumerEvent.CLOSE_REASON);
            this.readPauses = registry == null
                    ? null
                    : ConnectionMeters.counter(
                            registry,
                            "wheelbeat.slow.consumer.read.pauses",
                            "Times reading from a connection was paused because it was not writable",
                            "pauses");
        }

        /** @return a new handler, for one channel only */
        public SlowConsumerHandler newHandler() {
            return new SlowConsumerHandler(this);
        }
    }

    /**
     * Settings of a {@link SlowConsumerHandler}; {@code wheels} and {@code metrics} are in
     * {@link HandlerBuilder}. Not thread-safe.
     */
    public static final class Builder extends HandlerBuilder<Builder> {
        private long maxPendingBytes = 4L << 20;
        private long unwritableTimeoutNanos = TimeUnit.SECONDS.toNanos(30);
        private int lowWaterMark = 32 << 10;
        private int highWaterMark = 64 << 10;
        private boolean pauseReading = true;

        private Builder() {}

        /**
         * The most bytes that may be pending in a channel's outbound buffer after a write; more
         * ends the connection. 4 MiB by default.
         *
         * @param bytes the limit in bytes
         * @return this builder
         * @throws IllegalArgumentException if {@code bytes} is not positive
         */
        public Builder maxPendingBytes(long bytes) {
            if (bytes <= 0) {
                throw new IllegalArgumentException("maxPendingBytes must be positive: " + bytes);
            }
            this.maxPendingBytes = bytes;
            return this;
        }

        /**
         * How long a channel may stay unwritable before the connection is ended. 30 s by default.
         *
         * @param timeout the time limit
         * @return this builder
         * @throws IllegalArgumentException if {@code timeout} is not positive
         */
        public Builder unwritableTimeout(Duration timeout) {
            this.unwritableTimeoutNanos = ConfigChecks.positiveNanos("unwritableTimeout", timeout);
            return this;
        }

        /**
         * The write-buffer water marks set on each channel: unwritable above {@code high} bytes
         * pending, writable again below {@code low}. 32 KiB and 64 KiB by default (Netty's).
         *
         * @param low the low water mark in bytes
         * @param high the high water mark in bytes
         * @return this builder
         * @throws IllegalArgumentException unless {@code 0 <= low <= high}, and {@code high}
         *     is positive
         */
        public Builder writeBufferWaterMark(int low, int high) {
            if (low < 0 || high <= 0 || low > high) {
                throw new IllegalArgumentException("need 0 <= low <= high and high > 0: low " + low + ", high " + high);
            }
            this.lowWaterMark = low;
            this.highWaterMark = high;
            return this;
        }

        /**
         * Whether to stop reading while the channel is unwritable; {@code true} by default. Turn
         * it off only if another handler already applies back-pressure through {@code autoRead}.
         *
         * @param pause whether to stop reading
         * @return this builder
         */
        public Builder pauseReadingWhileUnwritable(boolean pause) {
            this.pauseReading = pause;
            return this;
        }

        /**
         * Returns the factory of handlers with these settings.
         *
         * @return the factory, immutable and thread-safe
         * @throws IllegalStateException if the cap is not above the high water mark: the channel
         *     must be able to turn unwritable before the cap ends it
         */
        public Factory build() {
            if (maxPendingBytes <= highWaterMark) {
                throw new IllegalStateException("maxPendingBytes (" + maxPendingBytes
                        + ") must be above the high water mark (" + highWaterMark + ")");
            }
            return new Factory(this, wheels(), registry());
        }
    }
}
