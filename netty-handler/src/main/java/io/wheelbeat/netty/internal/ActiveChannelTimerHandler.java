package io.wheelbeat.netty.internal;

import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.wheelbeat.core.ExecutorDrivenWheel;
import io.wheelbeat.core.TimerCallback;
import io.wheelbeat.core.TimerWheel;
import io.wheelbeat.netty.EventLoopWheels;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * The lifecycle shared by wheelbeat handlers that keep timers while their channel is active:
 * timers start once, on whichever of {@code handlerAdded} (channel already active and
 * registered), {@code channelRegistered} (already active) or {@code channelActive} comes first,
 * and every timer is cancelled on {@code channelInactive} or {@code handlerRemoved}. A stopped
 * handler never starts again. This is the order Netty's {@code IdleStateHandler} follows.
 *
 * <p>Timers go on the channel's event-loop wheel through the allocation-free long-id API; the
 * expired timer's id is passed to {@link #onTimer(long)}, on the event loop.
 *
 * <p>Internal: not part of wheelbeat's API. Not thread-safe: event loop only, one channel.
 */
public abstract class ActiveChannelTimerHandler extends ChannelDuplexHandler {

    private static final byte NEW = 0;
    private static final byte RUNNING = 1;
    private static final byte STOPPED = 2;

    private final EventLoopWheels wheels;
    /** One callback for every timer of this handler; {@link #onTimer} tells them apart by id. */
    private final TimerCallback callback = this::onTimer;
    private byte state = NEW;
    private ExecutorDrivenWheel wheel;
    private ChannelHandlerContext ctx;

    protected ActiveChannelTimerHandler(EventLoopWheels wheels) {
        this.wheels = Objects.requireNonNull(wheels, "wheels");
    }

    /** Called once, on the event loop, when the channel is active and the handler in place. */
    protected abstract void onStart(long nowNanos);

    /** Called once when the handler had started and the channel went inactive or it was removed. */
    protected abstract void onStop();

    /** Called on the event loop when the timer {@code timerId} of this handler expires. */
    protected abstract void onTimer(long timerId);

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) throws Exception {
        if (ctx.channel().isActive() && ctx.channel().isRegistered()) {
            start(ctx);
        }
        super.handlerAdded(ctx);
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) throws Exception {
        stop();
        super.handlerRemoved(ctx);
    }

    @Override
    public void channelRegistered(ChannelHandlerContext ctx) throws Exception {
        if (ctx.channel().isActive()) {
            start(ctx);
        }
        super.channelRegistered(ctx);
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        start(ctx);
        super.channelActive(ctx);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        stop();
        super.channelInactive(ctx);
    }

    /** Whether the timers have started and not yet stopped. */
    protected final boolean running() {
        return state == RUNNING;
    }

    /** The context, once started. */
    protected final ChannelHandlerContext ctx() {
        return ctx;
    }

    /** A reading of the event loop's ticker (virtual time under {@code EmbeddedChannel}). */
    protected final long now() {
        return wheel.wheel().ticker().nanoTime();
    }

    /** Schedules a timer of this handler {@code delayNanos} from now. Running only. */
    protected final long schedule(long delayNanos) {
        return wheel.schedule(callback, delayNanos, TimeUnit.NANOSECONDS);
    }

    /** Cancels {@code timerId} if it is pending and returns {@link TimerWheel#NO_TIMER}. */
    protected final long cancel(long timerId) {
        if (timerId != TimerWheel.NO_TIMER) {
            wheel.cancel(timerId);
        }
        return TimerWheel.NO_TIMER;
    }

    private void start(ChannelHandlerContext ctx) {
        if (state != NEW) {
            return;
        }
        state = RUNNING;
        this.ctx = ctx;
        this.wheel = wheels.wheelFor(ctx.executor());
        onStart(now());
    }

    private void stop() {
        byte was = state;
        state = STOPPED;
        if (was == RUNNING) {
            onStop();
        }
    }
}
