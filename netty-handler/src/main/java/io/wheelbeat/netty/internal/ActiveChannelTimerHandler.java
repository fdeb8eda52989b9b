package io.wheelbeat.netty.internal;

import io.netty.channel.ChannelHandlerContext;
import io.wheelbeat.core.ExecutorDrivenWheel;
import io.wheelbeat.core.TimerCallback;
import io.wheelbeat.core.TimerWheel;
import io.wheelbeat.netty.EventLoopWheels;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * An {@link ActiveChannelLifecycle} whose timers go on the channel's event-loop wheel through the
 * allocation-free long-id API; the expired timer's id is passed to {@link #onTimer(long)}, on the
 * event loop.
 *
 * <p>Internal: not part of wheelbeat's API. Not thread-safe: event loop only, one channel.
 */
public abstract class ActiveChannelTimerHandler extends ActiveChannelLifecycle {

    private final EventLoopWheels wheels;
    /** One callback for every timer of this handler; {@link #onTimer} tells them apart by id. */
    private final TimerCallback callback = this::onTimer;
    private ExecutorDrivenWheel wheel;
    private ChannelHandlerContext ctx;

    protected ActiveChannelTimerHandler(EventLoopWheels wheels) {
        this.wheels = Objects.requireNonNull(wheels, "wheels");
    }

    /** Called once, on the event loop, when the channel is active and the handler in place. */
    protected abstract void onStart(long nowNanos);

    /** Called on the event loop when the timer {@code timerId} of this handler expires. */
    protected abstract void onTimer(long timerId);

    @Override
    protected final void onStart(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        this.wheel = wheels.wheelFor(ctx.executor());
        onStart(now());
    }

    /** The context, once started. */
    protected final ChannelHandlerContext ctx() {
        return ctx;
    }

    /** A reading of the event loop's ticker (virtual time under {@code EmbeddedChannel}). */
    protected final long now() {
        return wheel.ticker().nanoTime();
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
}
