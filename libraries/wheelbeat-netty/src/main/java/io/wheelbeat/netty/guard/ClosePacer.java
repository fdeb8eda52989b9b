package io.wheelbeat.netty.guard;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import io.netty.util.AttributeKey;
import io.netty.util.ReferenceCountUtil;
import io.wheelbeat.core.TimerNode;
import io.wheelbeat.netty.EventLoopWheels;
import io.wheelbeat.netty.HandlerBuilder;
import io.wheelbeat.netty.internal.ConnectionMeters;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Spreads closes over time, so that deadlines falling due together do not become a burst of
 * closes and reconnects (as HiveMQ closes at most 100 idle connections per 100 ms).
 * {@link #close(Channel, Object)} gives each close the next free slot of a rate shared by every
 * channel ({@code period / n} apart); {@link #closeAllOver} closes a set evenly over a window
 * (lame duck). Use it for closes that may wait, not for hostile input.
 *
 * <p>Meters ({@link Builder#metrics(MeterRegistry)}): gauge {@code wheelbeat.connection.closes.waiting}
 * and counter {@code wheelbeat.connection.closes.paced}.
 *
 * <p>Thread-safe. A waiting close is a timer on the wheel of the channel's event loop when the
 * close was asked, and is cancelled there if the channel closes first. A channel moved to another
 * loop meanwhile is closed on its loop at the time of the slot: the goodbye factory, the write and
 * the close run on the channel's thread. A close that an event loop refuses (shut down: Netty's
 * loops close their channels as they shut down) is given up: the goodbye is released unwritten,
 * the channel's close is asked at once, and it no longer waits.
 */
public final class ClosePacer {

    private static final Logger log = LoggerFactory.getLogger(ClosePacer.class);
    /** Set on a channel once a paced close has been asked for it. */
    private static final AttributeKey<Boolean> CLOSE_ASKED = AttributeKey.valueOf(ClosePacer.class, "closeAsked");

    private final CloseSlots slots;
    private final EventLoopWheels wheels;
    private final AtomicInteger waiting = new AtomicInteger();
    private final Counter paced;

    private ClosePacer(long slotNanos, EventLoopWheels wheels, MeterRegistry registry) {
        this.slots = new CloseSlots(slotNanos);
        this.wheels = wheels;
        if (registry != null) {
            Gauge.builder("wheelbeat.connection.closes.waiting", waiting, AtomicInteger::get)
                    .description("Closes waiting for their slot of the close rate")
                    .baseUnit("connections")
                    .register(registry);
            this.paced = ConnectionMeters.counter(
                    registry,
                    "wheelbeat.connection.closes.paced",
                    "Closes that waited for a slot of the close rate",
                    "connections");
        } else {
            this.paced = null;
        }
    }

    /**
     * Returns a builder of a pacer that closes at most {@code closes} connections per
     * {@code period}, evenly spaced.
     *
     * @param closes the most closes per period
     * @param period the period
     * @return a new builder
     * @throws IllegalArgumentException if {@code closes} or {@code period} is not positive
     * @throws ArithmeticException if {@code period} is over 292 years
     * @throws NullPointerException if {@code period} is null
     */
    public static Builder builder(int closes, Duration period) {
        return new Builder(closes, period);
    }

    /**
     * Closes {@code channel} at its slot of the rate, first writing and flushing {@code goodbye}
     * if it is not null. The goodbye is released if the channel closes before its slot. A channel
     * gets one paced close: asking again changes nothing.
     *
     * @param channel the channel
     * @param goodbye the last message to write, or null for none
     * @return {@code true} if this call asked for the channel's close, {@code false} if a paced
     *     close had been asked for it already (the goodbye is then released)
     */
    public boolean close(Channel channel, Object goodbye) {
        Objects.requireNonNull(channel, "channel");
        if (channel.attr(CLOSE_ASKED).setIfAbsent(Boolean.TRUE) != null) {
            ReferenceCountUtil.release(goodbye);
            return false;
        }
        EventLoop loop = channel.eventLoop();
        if (loop.inEventLoop()) {
            closePaced(loop, channel, goodbye);
        } else if (!tryExecute(loop, () -> closePaced(loop, channel, goodbye))) {
            refused(channel, goodbye);
        }
        return true;
    }

    /**
     * Closes every channel of {@code channels} (a snapshot taken now), spread evenly over
     * {@code window} from now in their iteration order, each after writing and flushing the
     * goodbye {@code goodbye} makes for it (null for none) on its event loop.
     *
     * @param channels the channels to close
     * @param window the time to spread the closes over
     * @param goodbye the last message to write to each, or null for none
     * @return completes when every one of them is closed or given up, its event loop shut down
     * @throws IllegalArgumentException if {@code window} is negative
     */
    public CompletableFuture<Void> closeAllOver(
            Collection<? extends Channel> channels, Duration window, Function<? super Channel, ?> goodbye) {
        Objects.requireNonNull(goodbye, "goodbye");
        if (window.isNegative()) {
            throw new IllegalArgumentException("window must not be negative: " + window);
        }
        List<Channel> all = new ArrayList<>(channels);
        long windowNanos = window.toNanos();
        List<CompletableFuture<Void>> closed = new ArrayList<>(all.size());
        for (int i = 0; i < all.size(); i++) {
            Channel channel = all.get(i);
            // Evenly spaced: the i-th of n at i/n of the window.
            long offset = (long) (windowNanos * ((double) i / all.size()));
            CompletableFuture<Void> done = new CompletableFuture<>();
            closed.add(done);
            EventLoop loop = channel.eventLoop();
            long start = wheels.wheelFor(loop).ticker().getAsLong();
            if (tryExecute(loop, () -> new PacedClose(loop, channel, null, goodbye, done).arm(start + offset))) {
                channel.closeFuture().addListener(f -> done.complete(null));
            } else { // not listened to: a loop that refuses tasks cannot tell listeners
                refused(channel, null);
                done.complete(null);
            }
        }
        return CompletableFuture.allOf(closed.toArray(CompletableFuture[]::new));
    }

    /** @return the number of closes waiting for their slot now */
    public int waiting() {
        return waiting.get();
    }

    /** On {@code loop}, the channel's when the close was asked. */
    private void closePaced(EventLoop loop, Channel channel, Object goodbye) {
        long now = wheels.wheelFor(loop).ticker().getAsLong();
        long slot = slots.reserve(now);
        if (slot - now <= 0) {
            closeNow(channel, goodbye, null);
        } else {
            ConnectionMeters.count(paced);
            waiting.incrementAndGet();
            new PacedClose(loop, channel, goodbye, null, null).arm(slot);
        }
    }

    /**
     * A close waiting on the wheel of {@code loop} (the channel's when it was asked) for its time,
     * which writes the goodbye (given, or made then) and closes. Settled once, by the first of: its
     * time, the channel's close (cancels it), a loop refusing a task (gives up). Atomically: a loop
     * that refuses tasks may still run its last ones.
     */
    private final class PacedClose extends TimerNode {
        private static final AtomicIntegerFieldUpdater<PacedClose> SETTLED =
                AtomicIntegerFieldUpdater.newUpdater(PacedClose.class, "settled");

        private final EventLoop loop;
        private final Channel channel;
        private final Object goodbye;
        private final Function<? super Channel, ?> goodbyeFactory;
        /** closeAllOver's, completed when the channel closes or is given up; null: one of the {@link #waiting()}. */
        private final CompletableFuture<Void> done;

        private volatile int settled;

        PacedClose(
                EventLoop loop,
                Channel channel,
                Object goodbye,
                Function<? super Channel, ?> goodbyeFactory,
                CompletableFuture<Void> done) {
            this.loop = loop;
            this.channel = channel;
            this.goodbye = goodbye;
            this.goodbyeFactory = goodbyeFactory;
            this.done = done;
        }

        /** On {@code loop}. */
        void arm(long deadline) {
            wheels.wheelFor(loop).scheduleAt(this, deadline);
            // Closed meanwhile: nothing left to do at the slot; let go of the timer and the goodbye now.
            // The listener runs on the channel's loop, which is not loop if the channel moved.
            channel.closeFuture().addListener(f -> {
                if (loop.inEventLoop()) {
                    cancel();
                } else if (!tryExecute(loop, this::cancel) && settle()) {
                    ReferenceCountUtil.release(goodbye); // loop and its wheel are going: the timer never fires
                }
            });
        }

        @Override
        protected void expire() {
            if (!settle()) {
                return;
            }
            EventLoop now = channel.eventLoop(); // another than loop if the channel moved
            if (now.inEventLoop()) {
                closeNow(channel, goodbye, goodbyeFactory);
            } else if (!tryExecute(now, () -> closeNow(channel, goodbye, goodbyeFactory))) {
                refused(channel, goodbye);
                if (done != null) {
                    done.complete(null);
                }
            }
        }

        /** On {@code loop}. */
        private void cancel() {
            if (wheels.wheelFor(loop).cancel(this) && settle()) {
                ReferenceCountUtil.release(goodbye);
            }
        }

        private boolean settle() {
            if (!SETTLED.compareAndSet(this, 0, 1)) {
                return false;
            }
            if (done == null) {
                waiting.decrementAndGet();
            }
            return true;
        }
    }

    /** Runs {@code task} on {@code loop}; false if the loop refused it (shut down). */
    private static boolean tryExecute(EventLoop loop, Runnable task) {
        try {
            loop.execute(task);
            return true;
        } catch (RejectedExecutionException e) {
            return false;
        }
    }

    /** The channel's loop refused the close: shutting down, it closes its channels itself. */
    private static void refused(Channel channel, Object goodbye) {
        log.debug("{}: its event loop refused the paced close; closing without a goodbye", channel);
        ReferenceCountUtil.release(goodbye);
        channel.close();
    }

    private static void closeNow(Channel channel, Object goodbye, Function<? super Channel, ?> goodbyeFactory) {
        if (!channel.isActive()) {
            ReferenceCountUtil.release(goodbye);
            channel.close(); // registered but never active, or closing already
            return;
        }
        Object message = goodbye;
        if (goodbyeFactory != null) {
            try {
                message = goodbyeFactory.apply(channel);
            } catch (RuntimeException e) {
                log.warn("{}: the goodbye factory threw; closing without a goodbye", channel, e);
            }
        }
        if (message != null) {
            // Not waiting for the write: a peer that does not read must not hold the close up.
            channel.writeAndFlush(message, channel.voidPromise());
        }
        channel.close();
    }

    @Override
    public String toString() {
        return "ClosePacer(" + slots + ", " + waiting.get() + " waiting)";
    }

    /**
     * Settings of a {@link ClosePacer}; {@code wheels} (where the waiting closes go) and
     * {@code metrics} are in {@link HandlerBuilder}. Not thread-safe.
     */
    public static final class Builder extends HandlerBuilder<Builder> {
        private final long slotNanos;

        private Builder(int closes, Duration period) {
            Objects.requireNonNull(period, "period");
            if (closes <= 0 || period.isNegative() || period.isZero()) {
                throw new IllegalArgumentException("need positive closes and period: " + closes + " per " + period);
            }
            long periodNanos = period.toNanos();
            this.slotNanos = -Math.floorDiv(-periodNanos, closes); // rounded up: never faster than asked
        }

        /** @return the pacer */
        public ClosePacer build() {
            return new ClosePacer(slotNanos, wheels(), registry());
        }
    }
}
