package io.wheelbeat.netty;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler.Sharable;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandler;
import io.netty.channel.ChannelOutboundHandler;
import io.netty.channel.ChannelPipelineException;
import io.netty.channel.ChannelPromise;
import io.netty.util.Attribute;
import io.netty.util.AttributeKey;
import io.netty.util.concurrent.EventExecutor;
import io.wheelbeat.core.ExecutorDrivenWheel;
import io.wheelbeat.core.TimerNode;
import io.wheelbeat.core.internal.NodeDeadlines;
import io.wheelbeat.netty.internal.ContextHolder;
import io.wheelbeat.netty.internal.HandlerFields;
import io.wheelbeat.netty.internal.LoopClocks;
import java.net.SocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The base of wheelbeat's per-channel handlers: timers on the channel's event-loop wheel, started
 * once and stopped once, and carried along when the channel moves to another loop.
 * {@link #onStart} runs on whichever of {@code handlerAdded} (channel active and registered
 * already), {@code channelRegistered} (active already) or {@code channelActive} comes first;
 * {@link #onStop} on the first of {@code channelInactive} and {@code handlerRemoved}, and only after
 * a start. Stopped, a handler never starts again, even if it never started (the order of Netty's
 * {@code IdleStateHandler}).
 *
 * <p>A channel moved to another event loop while active ({@code deregister()}, then
 * {@code register} with another loop) takes its timers along: on {@code channelUnregistered} the
 * handler runs {@link #onStop} on the old loop, so that no timer of the channel is left on that
 * loop's wheel, and on {@code channelRegistered} it runs {@link #onStart} again on the new loop. The
 * timers keep their deadlines: each timer pending when the channel left and not cancelled since is
 * armed on the new loop's wheel at the deadline it had (in the order {@code onStop} cancelled
 * them), while the arming in that second {@code onStart} is dropped, so a timer that was not
 * pending stays unarmed (a connection's age and a first-message timeout count on). Between the
 * two the handler is not running; a timer armed then waits on the new loop's wheel. A channel
 * closed while deregistered keeps no timer.
 *
 * <p>The handler is a timer node itself: {@code schedule(this, ...)} arms it and {@link #expire()}
 * runs when it falls due, so a handler with one timer needs no other object. Every callback it does
 * not override passes the event on, as Netty's {@code ChannelDuplexHandler}. Unless its class is
 * {@code @Sharable}, {@code handlerAdded} refuses a second pipeline with a
 * {@link ChannelPipelineException}, and the pipeline removes it again: Netty checks only its
 * {@code ChannelHandlerAdapter}s itself.
 *
 * <p>Extend it for a per-channel handler of your own. Not thread-safe: event loop only, one channel.
 */
public abstract class ChannelTimerHandler extends TimerNode implements ChannelInboundHandler, ChannelOutboundHandler {

    private static final int NEW = 0;
    private static final int RUNNING = 1;
    /** For good, started or not. */
    private static final int STOPPED = 2;
    /** Left its loop while running: stopped there, waits to start on the next. */
    private static final int MOVING = 3;
    /** In {@link #onStart} on the new loop after a move: arming is dropped, the old deadlines restored after. */
    private static final int RESTARTING = 4;

    private static final int STATE_BITS = 3;
    private static final int STATE_MASK = (1 << STATE_BITS) - 1;
    /** Per channel, the timers of its handlers while it moves between loops: in a channel attribute, not a field. */
    private static final AttributeKey<MovingTimers> MOVING_TIMERS =
            AttributeKey.valueOf(ChannelTimerHandler.class, "movingTimers");

    /**
     * The context once added, or a {@link ContextHolder} that holds it beside wheels other than the
     * shared ones or a subclass's state: one reference. The wheel is not kept: found from the
     * context's executor when needed.
     */
    private Object context;
    /** The lifecycle state in the low bits, a subclass's flags above ({@link HandlerFields}). */
    private int bits;

    static {
        HandlerFields.install(new HandlerFields.Access() {
            @Override
            public Object context(ChannelTimerHandler handler) {
                return handler.context;
            }

            @Override
            public void hold(ChannelTimerHandler handler, ContextHolder holder) {
                if (handler.ctx() != null) {
                    throw new IllegalStateException("added already");
                }
                handler.context = holder;
            }

            @Override
            public int flags(ChannelTimerHandler handler) {
                return handler.bits >>> STATE_BITS;
            }

            @Override
            public void flags(ChannelTimerHandler handler, int flags) {
                handler.bits = flags << STATE_BITS | handler.bits & STATE_MASK;
            }

            @Override
            public boolean moving(ChannelTimerHandler handler) {
                int state = handler.state();
                return state == MOVING || state == RESTARTING;
            }

            @Override
            public long now(ChannelTimerHandler handler) {
                return handler.now();
            }

            @Override
            public void schedule(ChannelTimerHandler handler, TimerNode timer, long delayNanos) {
                handler.schedule(timer, delayNanos);
            }

            @Override
            public void cancel(ChannelTimerHandler handler, TimerNode timer) {
                handler.cancel(timer);
            }
        });
    }

    /**
     * For wheelbeat's handlers only.
     *
     * @param wheels the wheels to put the timers on
     * @throws NullPointerException if {@code wheels} is null
     */
    protected ChannelTimerHandler(EventLoopWheels wheels) {
        if (Objects.requireNonNull(wheels, "wheels") != EventLoopWheels.shared()) {
            this.context = new ContextHolder(wheels);
        }
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) throws Exception {
        if (ctx() != null) {
            if (isSharable()) {
                return; // as Netty's IdleStateHandler: stopped once removed, it never starts again
            }
            // The pipeline checks this only for ChannelHandlerAdapter; it removes a handler whose handlerAdded throws.
            throw new ChannelPipelineException(
                    getClass().getName() + " is not a @Sharable handler, so can't be added or removed multiple times.");
        }
        if (context instanceof ContextHolder holder) {
            holder.ctx(ctx);
        } else {
            context = ctx;
        }
        startIfActive(ctx);
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) throws Exception {
        if (ctx == ctx()) { // not a refused second addition
            stop();
        }
    }

    @Override
    public void channelRegistered(ChannelHandlerContext ctx) throws Exception {
        if (state() == MOVING && ctx == ctx()) {
            if (ctx.channel().isActive()) {
                restart(ctx);
            }
        } else {
            startIfActive(ctx);
        }
        ctx.fireChannelRegistered();
    }

    @Override
    public void channelUnregistered(ChannelHandlerContext ctx) throws Exception {
        if (state() == RUNNING && ctx == ctx()) {
            leave(ctx);
        }
        ctx.fireChannelUnregistered();
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        if (state() == NEW) {
            start(ctx);
        }
        ctx.fireChannelActive();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        stop();
        ctx.fireChannelInactive();
    }

    /**
     * Whether the handler's class is annotated {@link Sharable}, as Netty's {@code ChannelHandlerAdapter}
     * answers: then it may be added to several pipelines (it times the first only).
     *
     * @return whether the handler may be added more than once
     */
    public boolean isSharable() {
        return getClass().isAnnotationPresent(Sharable.class);
    }

    /** Before {@code channelActive} fired, or when it has fired already and will not come again. */
    private void startIfActive(ChannelHandlerContext ctx) {
        if (state() == NEW && ctx.channel().isActive() && ctx.channel().isRegistered()) {
            start(ctx);
        }
    }

    private void start(ChannelHandlerContext ctx) {
        // Before RUNNING: if this throws, the handler stops without anything to cancel.
        ExecutorDrivenWheel wheel = wheels().wheelFor(ctx.executor());
        state(RUNNING);
        onStart(ctx, wheel.ticker().getAsLong());
    }

    private void stop() {
        int was = state();
        if (was == RUNNING) {
            state(STOPPED);
            onStop();
        } else if (was == NEW) {
            state(STOPPED);
        } else if (was == MOVING) {
            state(STOPPED); // onStop ran when it left its loop
            MovingTimers.take(ctx().channel(), this);
        }
    }

    /** On the old loop, the channel deregistered while active: {@link #cancel} records what {@link #onStop} cancels. */
    private void leave(ChannelHandlerContext ctx) {
        MovingTimers.add(
                ctx.channel(),
                new MovingTimers(this, ctx.executor(), loopWheel().ticker().getAsLong()));
        state(MOVING);
        onStop();
    }

    /** On the new loop, the channel active: {@link #onStart} with its arming dropped, then the old deadlines. */
    private void restart(ChannelHandlerContext ctx) {
        ExecutorDrivenWheel wheel = wheels().wheelFor(ctx.executor());
        state(RESTARTING);
        try {
            onStart(ctx, wheel.ticker().getAsLong());
        } finally {
            state(RUNNING);
            MovingTimers moved = MovingTimers.take(ctx.channel(), this); // after onStart, which may cancel
            if (moved != null) {
                moved.arm(ctx.executor(), wheel);
            }
        }
    }

    private int state() {
        return bits & STATE_MASK;
    }

    private void state(int state) {
        bits = bits & ~STATE_MASK | state;
    }

    private EventLoopWheels wheels() {
        return context instanceof ContextHolder holder ? holder.wheels() : EventLoopWheels.shared();
    }

    /** The wheel of the context's executor; after the start only. */
    private ExecutorDrivenWheel loopWheel() {
        return wheels().wheelOn(ctx().executor());
    }

    /**
     * The channel is active and registered: arm the timers. Called once at most, and again on the
     * new loop after each move to another loop, where the arming is dropped (see above): state set
     * here from {@code nowNanos} (a last read's time, a drawn age) should be set on the first call
     * only, or the move resets it.
     *
     * @param ctx this handler's context
     * @param nowNanos a reading of {@link #now()}
     */
    protected abstract void onStart(ChannelHandlerContext ctx, long nowNanos);

    /**
     * The channel is inactive or the handler removed, after a start: cancel the timers (with
     * {@link #cancel}). Called once at most, and on the old loop before each move to another loop.
     */
    protected abstract void onStop();

    /**
     * Runs when this handler, armed as its own timer by {@code schedule(this, ...)}, falls due; by
     * default nothing. Event loop; not after a cancel.
     *
     * @throws Exception anything: the wheel logs it and goes on
     */
    @Override
    protected void expire() throws Exception {}

    /**
     * Whether the handler has started and not stopped, and is not between two loops.
     *
     * @return whether it runs
     */
    protected final boolean running() {
        int state = state();
        return state == RUNNING || state == RESTARTING;
    }

    /**
     * This handler's context.
     *
     * @return the context, null before the handler is added
     */
    protected final ChannelHandlerContext ctx() {
        Object context = this.context;
        return context instanceof ContextHolder holder ? holder.ctx() : (ChannelHandlerContext) context;
    }

    /**
     * A reading of the wheel's ticker (virtual time under {@code EmbeddedChannel}). After the start only.
     *
     * @return the time, in nanoseconds
     */
    protected final long now() {
        EventExecutor executor = ctx().executor();
        // The wheel's clock: on Netty 4.2 the executor's ticker, read without finding the wheel.
        return LoopClocks.nettyHasTickers()
                ? LoopClocks.nanoTime(executor)
                : wheels().wheelOn(executor).ticker().getAsLong();
    }

    /**
     * Arms or re-arms {@code timer} to expire {@code delayNanos} from now. After the start only.
     *
     * @param timer the timer, a node this handler holds or the handler itself
     * @param delayNanos nanoseconds from now
     */
    protected final void schedule(TimerNode timer, long delayNanos) {
        int state = state();
        if (state == MOVING) {
            scheduleAt(timer, now() + delayNanos);
        } else if (state != RESTARTING) {
            loopWheel().schedule(timer, delayNanos);
        }
    }

    /**
     * Arms or re-arms {@code timer} to expire at {@code deadlineNanos}, a reading of {@link #now()}.
     * After the start only.
     *
     * @param timer the timer, a node this handler holds or the handler itself
     * @param deadlineNanos when it expires
     */
    protected final void scheduleAt(TimerNode timer, long deadlineNanos) {
        int state = state();
        if (state == MOVING) { // between two loops: armed on the new one, as the timers it took along
            cancel(timer);
            MovingTimers.of(ctx().channel(), this).defer(timer, deadlineNanos);
        } else if (state != RESTARTING) {
            loopWheel().scheduleAt(timer, deadlineNanos);
        }
    }

    /**
     * Disarms {@code timer} if it is pending; does nothing otherwise, before the start included.
     * Between two loops, a timer the channel takes along is dropped: it stays disarmed on the new loop.
     *
     * @param timer the timer
     */
    protected final void cancel(TimerNode timer) {
        if (timer.isPending()) {
            if (state() == MOVING) {
                MovingTimers.of(ctx().channel(), this).add(timer);
            }
            loopWheel().cancel(timer);
        } else if (state() >= MOVING) {
            MovingTimers moving = MovingTimers.of(ctx().channel(), this);
            if (moving != null) {
                moving.timers.remove(timer);
            }
        }
    }

    /**
     * One handler's timers that were pending when its channel left a loop, with their deadlines;
     * kept in the channel's attribute, a list of its moving handlers, from the old loop's
     * {@code channelUnregistered} to the new loop's {@code channelRegistered}.
     */
    private static final class MovingTimers {
        private final ChannelTimerHandler handler;
        /** The loop the channel left, and a reading of its clock then. */
        private final EventExecutor oldLoop;

        private final long leftAt;
        private final List<TimerNode> timers = new ArrayList<>(4);
        private MovingTimers next;

        MovingTimers(ChannelTimerHandler handler, EventExecutor oldLoop, long leftAt) {
            this.handler = handler;
            this.oldLoop = oldLoop;
            this.leftAt = leftAt;
        }

        static void add(Channel channel, MovingTimers moving) {
            Attribute<MovingTimers> attribute = channel.attr(MOVING_TIMERS);
            moving.next = attribute.get();
            attribute.set(moving);
        }

        /** The handler's timers; null if there are none. */
        static MovingTimers of(Channel channel, ChannelTimerHandler handler) {
            MovingTimers moving = channel.attr(MOVING_TIMERS).get();
            while (moving != null && moving.handler != handler) {
                moving = moving.next;
            }
            return moving;
        }

        /** Removes and returns the handler's timers; null if there are none. */
        static MovingTimers take(Channel channel, ChannelTimerHandler handler) {
            Attribute<MovingTimers> attribute = channel.attr(MOVING_TIMERS);
            MovingTimers previous = null;
            for (MovingTimers moving = attribute.get(); moving != null; moving = moving.next) {
                if (moving.handler == handler) {
                    if (previous == null) {
                        attribute.set(moving.next);
                    } else {
                        previous.next = moving.next;
                    }
                    return moving;
                }
                previous = moving;
            }
            return null;
        }

        /** A pending timer about to be cancelled: its node keeps the deadline until armed again. */
        void add(TimerNode timer) {
            timers.add(timer);
        }

        /** A timer not pending, armed between the loops at {@code deadline} of the old loop's clock. */
        void defer(TimerNode timer, long deadline) {
            NodeDeadlines.set(timer, deadline);
            if (!timers.contains(timer)) {
                timers.add(timer);
            }
        }

        /** On the new loop: each timer at its old deadline; from the time left if the clocks differ. */
        void arm(EventExecutor newLoop, ExecutorDrivenWheel wheel) {
            long shift =
                    LoopClocks.sameClock(oldLoop, newLoop) ? 0 : wheel.ticker().getAsLong() - leftAt;
            for (TimerNode timer : timers) {
                if (!timer.isPending()) {
                    wheel.scheduleAt(timer, NodeDeadlines.get(timer) + shift);
                }
            }
        }
    }

    // Netty's ChannelDuplexHandler: every other event passes on.

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
        ctx.fireChannelRead(msg);
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) throws Exception {
        ctx.fireChannelReadComplete();
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        ctx.fireUserEventTriggered(evt);
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) throws Exception {
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    @SuppressWarnings("deprecation") // ChannelHandler's copy is deprecated, ChannelInboundHandler's is not
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) throws Exception {
        ctx.fireExceptionCaught(cause);
    }

    @Override
    public void bind(ChannelHandlerContext ctx, SocketAddress localAddress, ChannelPromise promise) throws Exception {
        ctx.bind(localAddress, promise);
    }

    @Override
    public void connect(
            ChannelHandlerContext ctx, SocketAddress remoteAddress, SocketAddress localAddress, ChannelPromise promise)
            throws Exception {
        ctx.connect(remoteAddress, localAddress, promise);
    }

    @Override
    public void disconnect(ChannelHandlerContext ctx, ChannelPromise promise) throws Exception {
        ctx.disconnect(promise);
    }

    @Override
    public void close(ChannelHandlerContext ctx, ChannelPromise promise) throws Exception {
        ctx.close(promise);
    }

    @Override
    public void deregister(ChannelHandlerContext ctx, ChannelPromise promise) throws Exception {
        ctx.deregister(promise);
    }

    @Override
    public void read(ChannelHandlerContext ctx) throws Exception {
        ctx.read();
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) throws Exception {
        ctx.write(msg, promise);
    }

    @Override
    public void flush(ChannelHandlerContext ctx) throws Exception {
        ctx.flush();
    }
}
