package io.wheelbeat.netty.internal;

import io.netty.channel.ChannelHandlerContext;
import io.wheelbeat.core.ExecutorDrivenWheel;
import io.wheelbeat.core.TimerNode;
import io.wheelbeat.netty.EventLoopWheels;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * The timers of one handler on its channel's event-loop wheel, each a {@link Timer} node the
 * handler holds in a final field and re-arms for the channel's life, and the lifecycle they follow: they start once, on whichever of
 * {@code handlerAdded} (channel already active and registered), {@code channelRegistered}
 * (already active) or {@code channelActive} comes first, and stop on {@code channelInactive} or
 * {@code handlerRemoved}, whichever comes first; stopped, they never start again, even if they
 * never started (Netty issue 143). This is the order Netty's {@code IdleStateHandler} follows.
 *
 * <p>A handler holds one (composition, so that no internal type is in a public handler's
 * hierarchy) and forwards those five events to it:
 * <pre>{@code
 * handlerAdded, channelRegistered:  if (timers.startIfActive(ctx)) start(timers.now());
 * channelActive:                    if (timers.start(ctx)) start(timers.now());
 * channelInactive, handlerRemoved:  if (timers.stop()) stop();
 * }</pre>
 * Each timer's expiry calls the consumer it was made with, on the event loop.
 *
 * <p>Internal: not part of wheelbeat's API. Not thread-safe: event loop only, one channel.
 */
public final class ChannelTimers {

    /** Not yet started. */
    private static final byte NEW = 0;
    /** Started and not yet stopped. */
    private static final byte RUNNING = 1;
    /** Stopped for good: never starts again, even if it never started. */
    private static final byte STOPPED = 2;

    private final EventLoopWheels wheels;
    private ExecutorDrivenWheel wheel;
    private ChannelHandlerContext ctx;
    private byte state = NEW;

    public ChannelTimers(EventLoopWheels wheels) {
        this.wheels = Objects.requireNonNull(wheels, "wheels");
    }

    /**
     * A handler's timer: a node, held in a final field of its owner and re-armed for the channel's
     * life, that tells its owner's handler which timer expired.
     */
    public static final class Timer extends TimerNode {
        private final Consumer<Timer> onExpiry;

        public Timer(Consumer<Timer> onExpiry) {
            this.onExpiry = Objects.requireNonNull(onExpiry, "onExpiry");
        }

        @Override
        protected void expire() {
            onExpiry.accept(this);
        }
    }

    /**
     * For {@code handlerAdded} and {@code channelRegistered}: starts if the channel is active and
     * registered already, since {@code channelActive} has fired then and will not come.
     *
     * @return whether the handler must start its work now
     */
    public boolean startIfActive(ChannelHandlerContext ctx) {
        return state == NEW && ctx.channel().isActive() && ctx.channel().isRegistered() && start(ctx);
    }

    /**
     * For {@code channelActive}: starts unless started or stopped before.
     *
     * @return whether the handler must start its work now
     */
    public boolean start(ChannelHandlerContext ctx) {
        if (state != NEW) {
            return false;
        }
        // Before RUNNING: if this throws, stop() tells the handler it has nothing to cancel.
        this.wheel = wheels.wheelFor(ctx.executor());
        state = RUNNING;
        this.ctx = ctx;
        return true;
    }

    /**
     * For {@code channelInactive} and {@code handlerRemoved}: stops for good.
     *
     * @return whether the handler had started and must stop its work (cancel its timers) now
     */
    public boolean stop() {
        byte was = state;
        state = STOPPED;
        return was == RUNNING;
    }

    /** Whether the handler has started and not yet stopped. */
    public boolean running() {
        return state == RUNNING;
    }

    /** The context, once started. */
    public ChannelHandlerContext ctx() {
        return ctx;
    }

    /** A reading of the event loop's ticker (virtual time under {@code EmbeddedChannel}); once started. */
    public long now() {
        return wheel.ticker().nanoTime();
    }

    /** Arms or re-arms {@code timer} to expire {@code delayNanos} from now. Running only. */
    public void schedule(TimerNode timer, long delayNanos) {
        wheel.schedule(timer, delayNanos);
    }

    /** Disarms {@code timer} if it is pending; nothing happens before the start. */
    public void cancel(TimerNode timer) {
        if (timer.isPending()) {
            wheel.cancel(timer);
        }
    }
}
