package io.wheelbeat.loadtest;

import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.timeout.IdleState;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.ReferenceCountUtil;
import io.wheelbeat.loadtest.InstrumentedEventLoopGroup.LoopCounters;

/**
 * Last handler of every server channel, behind the idle handler: what an application does with
 * a reader-idle event. It records the event's time in the {@link ConnectionLedger} and closes
 * the channel, as a server reaping dead clients would. It also releases the heartbeats, which
 * the server only needs to have received.
 *
 * <p>Shared by all channels; runs on each channel's event loop.
 */
@ChannelHandler.Sharable
final class IdleRecorder extends ChannelInboundHandlerAdapter {

    private final ConnectionLedger ledger;
    private final InstrumentedEventLoopGroup serverLoops;

    IdleRecorder(ConnectionLedger ledger, InstrumentedEventLoopGroup serverLoops) {
        this.ledger = ledger;
        this.serverLoops = serverLoops;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ReferenceCountUtil.release(msg);
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        boolean readerIdle = evt instanceof IdleStateEvent idle && idle.state() == IdleState.READER_IDLE;
        if (!readerIdle) {
            ctx.fireUserEventTriggered(evt);
            return;
        }
        long now = ctx.executor().ticker().nanoTime();
        LoopCounters loop = serverLoops.counters(ctx.executor());
        if (((IdleStateEvent) evt).isFirst()) {
            loop.firstIdleEvents++;
        } else {
            loop.repeatIdleEvents++;
        }
        ServerProbe probe = ctx.pipeline().get(ServerProbe.class);
        if (probe != null && probe.index() >= 0) {
            ledger.idle(probe.index(), now);
        } else {
            ledger.unidentifiedIdle();
        }
        ctx.close();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        // A client that goes away resets its connection; that ends the connection, nothing more.
        ctx.close();
    }
}
