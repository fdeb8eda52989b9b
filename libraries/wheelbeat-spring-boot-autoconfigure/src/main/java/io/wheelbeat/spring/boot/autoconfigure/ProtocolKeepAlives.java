package io.wheelbeat.spring.boot.autoconfigure;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.PingWebSocketFrame;
import io.netty.handler.codec.http.websocketx.PongWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketCloseStatus;
import io.netty.handler.codec.http2.CleartextHttp2ServerUpgradeHandler;
import io.netty.handler.codec.http2.Http2FrameCodec;
import io.netty.handler.ssl.ApplicationProtocolNegotiationHandler;
import io.wheelbeat.netty.heartbeat.HeartbeatHandler;
import io.wheelbeat.netty.heartbeat.PingLimits;
import io.wheelbeat.netty.http2.Http2KeepAliveHandler;
import java.time.Duration;
import reactor.netty.NettyPipeline;

/**
 * The protocol keepalives of a Reactor Netty connection, which can only go in once the connection
 * has become HTTP/2 or WebSocket: Reactor Netty builds those pipelines after the connection is set
 * up (HTTP/2 at the prior-knowledge preface, the h2c upgrade or ALPN; WebSocket at the handshake,
 * with a bare {@code WebSocketServerHandshaker}), so a watcher waits for the moment and puts the
 * keepalive in its place.
 */
final class ProtocolKeepAlives {

    /** RFC 6455's "policy violation", the close status for a peer that pings too often. */
    private static final int POLICY_VIOLATION = WebSocketCloseStatus.POLICY_VIOLATION.code();

    private ProtocolKeepAlives() {}

    /**
     * The WebSocket keepalive as a {@link HeartbeatHandler}: ping frames carrying the ping's id,
     * which the peer's pong echoes [RFC 6455 5.5.3]; the peer's pings answered (instead of by
     * Reactor Netty, which cannot limit them) under {@code limits}, with a close frame 1008 for a
     * peer that pings too often.
     */
    static HeartbeatHandler.Builder webSocket(
            Duration interval, Duration pongTimeout, int maxMissedPongs, PingLimits limits) {
        HeartbeatHandler.Builder builder = HeartbeatHandler.builder()
                .sendPings(
                        interval,
                        ProtocolKeepAlives::ping,
                        PongWebSocketFrame.class::isInstance,
                        ProtocolKeepAlives::pingIdOf)
                .maxMissedPongs(maxMissedPongs)
                .answerPings(
                        PingWebSocketFrame.class::isInstance,
                        (channel, ping) -> new PongWebSocketFrame(
                                ((PingWebSocketFrame) ping).content().retain()))
                .pingLimits(limits);
        if (pongTimeout != null) {
            builder.pongTimeout(pongTimeout);
        }
        if (!PingLimits.OFF.equals(limits)) {
            builder.goodbye(channel -> new CloseWebSocketFrame(POLICY_VIOLATION, "too many pings"));
        }
        return builder;
    }

    /** A ping frame whose data is the ping's id. */
    private static PingWebSocketFrame ping(Channel channel, long id) {
        return new PingWebSocketFrame(
                channel.alloc().buffer(Long.BYTES, Long.BYTES).writeLong(id));
    }

    /** The id our ping carried, or {@link HeartbeatHandler#NO_PING} for a pong with other data. */
    private static long pingIdOf(Object pong) {
        ByteBuf data = ((PongWebSocketFrame) pong).content();
        return data.readableBytes() == Long.BYTES ? data.getLong(data.readerIndex()) : HeartbeatHandler.NO_PING;
    }

    /**
     * Sits nearest the socket and, after each read, looks for the {@link Http2FrameCodec} Reactor
     * Netty installs when the connection turns out to be HTTP/2; puts the keepalive right after it
     * (before the stream multiplexer, so that it sees the streams' frames) and leaves. It also
     * leaves once the connection settled on HTTP/1.1 (an HTTP/1.1 codec with no h2c upgrade or
     * ALPN pending), so an HTTP/1.1 connection pays for a few reads at most.
     */
    static final class Http2Watcher extends ChannelInboundHandlerAdapter {
        private final Http2KeepAliveHandler.Factory keepAlive;

        Http2Watcher(Http2KeepAliveHandler.Factory keepAlive) {
            this.keepAlive = keepAlive;
        }

        @Override
        public void handlerAdded(ChannelHandlerContext ctx) {
            check(ctx); // a client with prior knowledge has its codec from the start
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ctx.fireChannelRead(msg);
            check(ctx);
        }

        private void check(ChannelHandlerContext ctx) {
            if (ctx.isRemoved()) {
                return;
            }
            ChannelPipeline pipeline = ctx.pipeline();
            ChannelHandlerContext codec = pipeline.context(Http2FrameCodec.class);
            if (codec != null) {
                pipeline.addAfter(codec.name(), "wheelbeat.http2KeepAlive", keepAlive.newHandler());
                pipeline.remove(this);
            } else if ((pipeline.get(HttpServerCodec.class) != null || pipeline.get(HttpClientCodec.class) != null)
                    && pipeline.get(CleartextHttp2ServerUpgradeHandler.class) == null
                    && pipeline.get(ApplicationProtocolNegotiationHandler.class) == null) {
                pipeline.remove(this);
            }
        }
    }

    /**
     * Watches the server's responses for the WebSocket handshake's {@code 101 Switching
     * Protocols}; once it is written, puts the keepalive before Reactor Netty's bridge (where it
     * reads the frames and its pings are encoded) and leaves.
     */
    static final class WebSocketWatcher extends ChannelDuplexHandler {
        private static final String KEEPALIVE_NAME = "wheelbeat.webSocketKeepAlive";
        private final HeartbeatHandler.Factory keepAlive;

        WebSocketWatcher(HeartbeatHandler.Factory keepAlive) {
            this.keepAlive = keepAlive;
        }

        @Override
        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
            if (msg instanceof HttpResponse response
                    && response.status().code() == HttpResponseStatus.SWITCHING_PROTOCOLS.code()
                    && response.headers().containsValue(HttpHeaderNames.UPGRADE, HttpHeaderValues.WEBSOCKET, true)) {
                ChannelPromise written = promise.unvoid();
                written.addListener(future -> {
                    if (future.isSuccess() && !ctx.isRemoved() && ctx.channel().isActive()) {
                        upgraded(ctx);
                    }
                });
                ctx.write(msg, written);
                return;
            }
            ctx.write(msg, promise);
        }

        private void upgraded(ChannelHandlerContext ctx) {
            ChannelPipeline pipeline = ctx.pipeline();
            if (pipeline.get(NettyPipeline.ReactiveBridge) != null) {
                pipeline.addBefore(NettyPipeline.ReactiveBridge, KEEPALIVE_NAME, keepAlive.newHandler());
            } else {
                pipeline.addAfter(ctx.name(), KEEPALIVE_NAME, keepAlive.newHandler());
            }
            pipeline.remove(this);
        }
    }
}
