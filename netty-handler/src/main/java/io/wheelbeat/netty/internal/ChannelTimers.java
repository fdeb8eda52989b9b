package io.wheelbeat.netty.internal;

import io.netty.channel.ChannelHandlerContext;
import io.wheelbeat.core.ExecutorDrivenWheel;
import io.wheelbeat.core.TimerCallback;
import io.wheelbeat.netty.EventLoopWheels;
import java.util.Objects;

/**
 * The timers of one handler on its channel's event-loop wheel, through the allocation-free
 * long-id API, and the lifecycle they follow: they start once, on whichever of
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
 * Every timer's expiry calls the handler's one {@link TimerCallback} with the timer's id.
 *
 * <p>The lifecycle's rules are also static methods over a state byte ({@link #NEW},
 * {@link #RUNNING}, {@link #STOPPED}), for a handler that keeps its state and timers itself:
 * {@code WheelIdleStateHandler}, whose 48 bytes per channel have no room for this 32-byte object.
 *
 * <p>Internal: not part of wheelbeat's API. Not thread-safe: event loop only, one channel.
 */
public final class ChannelTimers {

    /** Not yet started. */
    public static final byte NEW = 0;
    /** Started and not yet stopped. */
    public static final byte RUNNING = 1;
    /** Stopped for good: never starts again, even if it never started. */
    public static final byte STOPPED = 2;

    private final EventLoopWheels wheels;
    /** One callback for every timer of the handler; it tells them apart by id. */
    private final TimerCallback callback;
    private ExecutorDrivenWheel wheel;
    private ChannelHandlerContext ctx;
    private byte state = NEW;

    public ChannelTimers(EventLoopWheels wheels, TimerCallback callback) {
        this.wheels = Objects.requireNonNull(wheels, "wheels");
        this.callback = Objects.requireNonNull(callback, "callback");
    }

    /**
     * For {@code handlerAdded} and {@code channelRegistered}: starts if the channel is active and
     * registered already, since {@code channelActive} has fired then and will not come.
     *
     * @return whether the handler must start its work now
     */
    public boolean startIfActive(ChannelHandlerContext ctx) {
        return startsEarly(state, ctx) && start(ctx);
    }

    /**
     * For {@code channelActive}: starts unless started or stopped before.
     *
     * @return whether the handler must start its work now
     */
    public boolean start(ChannelHandlerContext ctx) {
        if (!starts(state)) {
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

    /**
     * For {@code handlerAdded} and {@code channelRegistered} of a handler in {@code state}: whether
     * it starts now, being new on a channel that is active and registered already
     * ({@code channelActive} has fired then and will not come).
     */
    public static boolean startsEarly(byte state, ChannelHandlerContext ctx) {
        return starts(state) && ctx.channel().isActive() && ctx.channel().isRegistered();
    }

    /**
     * For {@code channelActive} of a handler in {@code state}: whether it starts now, being new.
     * It sets {@link #RUNNING} once what may throw in its start is done, so that a failed start
     * leaves nothing to stop.
     */
    public static boolean starts(byte state) {
        return state == NEW;
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

    /** Schedules a timer {@code delayNanos} from now and returns its id. Running only. */
    public long schedule(long delayNanos) {
        return wheel.schedule(callback, delayNanos);
    }

    /** Cancels {@code timerId} if it is pending and returns {@link ExecutorDrivenWheel#NO_TIMER}. */
    public long cancel(long timerId) {
        if (timerId != ExecutorDrivenWheel.NO_TIMER) {
            wheel.cancel(timerId);
        }
        return ExecutorDrivenWheel.NO_TIMER;
    }
}
