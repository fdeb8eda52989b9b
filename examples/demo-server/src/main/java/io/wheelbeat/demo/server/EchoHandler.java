package io.wheelbeat.demo.server;

import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.wheelbeat.demo.protocol.Frame;
import io.wheelbeat.demo.protocol.FrameType;

/** Echoes DATA frames; ignores every other frame the handlers before it let through. */
@ChannelHandler.Sharable
final class EchoHandler extends SimpleChannelInboundHandler<Frame> {

    static final EchoHandler INSTANCE = new EchoHandler();

    private EchoHandler() {
        super(Frame.class);
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, Frame frame) {
        if (frame.is(FrameType.DATA)) {
            ctx.write(frame.retain());
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        ctx.flush();
        ctx.fireChannelReadComplete();
    }
}
