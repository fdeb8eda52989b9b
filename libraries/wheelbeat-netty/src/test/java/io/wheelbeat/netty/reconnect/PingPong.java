package io.wheelbeat.netty.reconnect;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.AttributeKey;
import io.netty.util.ReferenceCountUtil;
import io.wheelbeat.netty.heartbeat.PongReceivedEvent;

/**
 * The least heartbeat that speaks the {@link PongReceivedEvent} contract over real bytes: one
 * ping byte when the connection becomes active; whatever comes back is the pong. Stands in for
 * HeartbeatHandler, which another branch delivers, only as the source of the event.
 */
@ChannelHandler.Sharable
final class PingPong extends ChannelInboundHandlerAdapter {

    private static final AttributeKey<Long> PING_SENT = AttributeKey.valueOf(PingPong.class, "pingSent");

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        ctx.channel().attr(PING_SENT).set(System.nanoTime());
        ctx.writeAndFlush(Unpooled.wrappedBuffer(new byte[] {1}));
        ctx.fireChannelActive();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ReferenceCountUtil.release(msg);
        Long sent = ctx.channel().attr(PING_SENT).getAndSet(null);
        if (sent != null) {
            ctx.fireUserEventTriggered(new PongReceivedEvent(System.nanoTime() - sent, true));
        }
    }
}
