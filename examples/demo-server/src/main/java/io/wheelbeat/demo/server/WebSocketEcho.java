package io.wheelbeat.demo.server;

import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.ContinuationWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.util.ReferenceCountUtil;

/**
 * Echoes WebSocket data frames; answers an HTTP request for any other path than the endpoint's
 * with 404 and closes; drops everything else the handlers before it let through.
 */
@ChannelHandler.Sharable
final class WebSocketEcho extends ChannelInboundHandlerAdapter {

    static final WebSocketEcho INSTANCE = new WebSocketEcho();

    private WebSocketEcho() {}

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof TextWebSocketFrame
                || msg instanceof BinaryWebSocketFrame
                || msg instanceof ContinuationWebSocketFrame) {
            ctx.write(msg);
            return;
        }
        ReferenceCountUtil.release(msg);
        if (msg instanceof FullHttpRequest) {
            ctx.writeAndFlush(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.NOT_FOUND))
                    .addListener(ChannelFutureListener.CLOSE);
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        ctx.flush();
        ctx.fireChannelReadComplete();
    }
}
