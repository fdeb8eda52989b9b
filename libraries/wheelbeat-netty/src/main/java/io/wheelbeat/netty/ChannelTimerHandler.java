package io.wheelbeat.netty;

import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.wheelbeat.core.ExecutorDrivenWheel;
import io.wheelbeat.core.TimerNode;
import java.util.Objects;

/**
 * The base of wheelbeat's per-channel handlers: timers on the channel's event-loop wheel, started
 * once and stopped once. {@link #onStart} runs on whichever of {@code handlerAdded} (channel active
 * and registered already), {@code channelRegistered} (active already) or {@code channelActive}
 * comes first; {@link #onStop} on the first of {@code channelInactive} and {@code handlerRemoved},
 * and only after a start. Stopped, a handler never starts again, even if it never started (the
 * order of Netty's {@code IdleStateHandler}).
 *
 * <p>Extended only by wheelbeat's handlers. Not thread-safe: event loop only, one channel.
 */
public abstract class ChannelTimerHandler extends ChannelDuplexHandler {

    private static final byte NEW = 0;
    private static final byte RUNNING = 1;
    private static final byte STOPPED = 2;

    private final EventLoopWheels wheels;
    private ExecutorDrivenWheel wheel;
    private ChannelHandlerContext ctx;
    private byte state = NEW;

    /**
     * For wheelbeat's handlers only.
     *
     * @param wheels the wheels to put the timers on
     * @throws NullPointerException if {@code wheels} is null
     */
    protected ChannelTimerHandler(EventLoopWheels wheels) {
        this.wheels = Objects.requireNonNull(wheels, "wheels");
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) throws Exception {
        startIfActive(ctx);
    }

    @Override
    public void channelRegistered(ChannelHandlerContext ctx) throws Exception {
        startIfActive(ctx);
        ctx.fireChannelRegistered();
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        if (state == NEW) {
            start(ctx);
        }
        ctx.fireChannelActive();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        stop();
        ctx.fireChannelInactive();
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) throws Exception {
        stop();
    }

    /** Before {@code channelActive} fired, or when it has fired already and will not come again. */
    private void startIfActive(ChannelHandlerContext ctx) {
        if (state == NEW && ctx.channel().isActive() && ctx.channel().isRegistered()) {
            start(ctx);
        }
    }

    private void start(ChannelHandlerContext ctx) {
        // Before RUNNING: if this throws, the handler stops without anything to cancel.
        this.wheel = wheels.wheelFor(ctx.executor());
        state = RUNNING;
        this.ctx = ctx;
        onStart(ctx, now());
    }

    private void stop() {
        byte was = state;
        state = STOPPED;
        if (was == RUNNING) {
            onStop();
        }
    }

    /**
     * The channel is active and registered: arm the timers. Called once at most.
     *
     * @param ctx this handler's context
     * @param nowNanos a reading of {@link #now()}
     */
    protected abstract void onStart(ChannelHandlerContext ctx, long nowNanos);

    /** The channel is inactive or the handler removed, after a start: cancel the timers. Called once at most. */
    protected abstract void onStop();

    /**
     * Whether the handler has started and not stopped.
     *
     * @return whether it runs
     */
    protected final boolean running() {
        return state == RUNNING;
    }

    /**
     * This handler's context.
     *
     * @return the context, null before the start
     */
    protected final ChannelHandlerContext ctx() {
        return ctx;
    }

    /**
     * The channel's event-loop wheel.
     *
     * @return the wheel, null before the start
     */
    protected final ExecutorDrivenWheel wheel() {
        return wheel;
    }

    /**
     * A reading of the wheel's ticker (virtual time under {@code EmbeddedChannel}). After the start only.
     *
     * @return the time, in nanoseconds
     */
    protected final long now() {
        return wheel.ticker().getAsLong();
    }

    /**
     * Arms or re-arms {@code timer} to expire {@code delayNanos} from now. After the start only.
     *
     * @param timer the timer, a node this handler holds
     * @param delayNanos nanoseconds from now
     */
    protected final void schedule(TimerNode timer, long delayNanos) {
        wheel.schedule(timer, delayNanos);
    }

    /**
     * Disarms {@code timer} if it is pending; does nothing otherwise, before the start included.
     *
     * @param timer the timer
     */
    protected final void cancel(TimerNode timer) {
        if (timer.isPending()) {
            wheel.cancel(timer);
        }
    }
}
