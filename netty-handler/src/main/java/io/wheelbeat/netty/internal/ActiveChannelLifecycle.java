package io.wheelbeat.netty.internal;

import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;

/**
 * The lifecycle of a handler that works while its channel is active: it starts once, on whichever
 * of {@code handlerAdded} (channel already active and registered), {@code channelRegistered}
 * (already active) or {@code channelActive} comes first, and stops on {@code channelInactive} or
 * {@code handlerRemoved}, whichever comes first. A stopped handler never starts again, even if it
 * never started (Netty issue 143). This is the order Netty's {@code IdleStateHandler} follows.
 *
 * <p>Internal: not part of wheelbeat's API. Not thread-safe: event loop only, one channel.
 */
public abstract class ActiveChannelLifecycle extends ChannelDuplexHandler {

    private static final byte NEW = 0;
    private static final byte RUNNING = 1;
    private static final byte STOPPED = 2;

    private byte state = NEW;

    protected ActiveChannelLifecycle() {
    }

    /** Called once, on the event loop, when the channel is active and the handler in place. */
    protected abstract void onStart(ChannelHandlerContext ctx);

    /** Called once when the handler had started and the channel went inactive or it was removed. */
    protected abstract void onStop();

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) throws Exception {
        if (ctx.channel().isActive() && ctx.channel().isRegistered()) {
            start(ctx); // channelActive has fired already and will not reach this handler
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

    /** Whether the handler has started and not yet stopped. */
    protected final boolean running() {
        return state == RUNNING;
    }

    private void start(ChannelHandlerContext ctx) {
        if (state != NEW) {
            return;
        }
        state = RUNNING;
        onStart(ctx);
    }

    private void stop() {
        byte was = state;
        state = STOPPED;
        if (was == RUNNING) {
            onStop();
        }
    }
}
