package io.wheelbeat.spring.boot.autoconfigure;

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
import io.netty.handler.codec.http2.CleartextHttp2ServerUpgradeHandler;
import io.netty.handler.codec.http2.Http2FrameCodec;
import io.netty.handler.ssl.ApplicationProtocolNegotiationHandler;
import io.wheelbeat.netty.heartbeat.HeartbeatHandler;
import io.wheelbeat.netty.heartbeat.PingLimits;
import io.wheelbeat.netty.http2.Http2KeepAliveHandler;
import io.wheelbeat.netty.websocket.WebSocketKeepAliveHandler;
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

    private ProtocolKeepAlives() {}

    /**
     * The WebSocket keepalive as {@link WebSocketKeepAliveHandler}'s heartbeat, placed by
     * {@link WebSocketWatcher}: the peer's pings are answered by it (instead of by Reactor Netty,
     * which cannot limit them) under {@code limits}.
     */
    static HeartbeatHandler.Builder webSocket(
            Duration interval, Duration pongTimeout, int maxMissedPongs, PingLimits limits) {
        HeartbeatHandler.Builder builder =
                WebSocketKeepAliveHandler.heartbeat(interval, limits).maxMissedPongs(maxMissedPongs);
        return pongTimeout == null ? builder : builder.pongTimeout(pongTimeout);
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
