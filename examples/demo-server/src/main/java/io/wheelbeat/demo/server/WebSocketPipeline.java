package io.wheelbeat.demo.server;

import io.micrometer.core.instrument.MeterRegistry;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketCloseStatus;
import io.netty.handler.codec.http.websocketx.WebSocketDecoderConfig;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolConfig;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;
import io.wheelbeat.core.ratelimit.KeyedRateLimiter;
import io.wheelbeat.netty.EventLoopWheels;
import io.wheelbeat.netty.guard.ClosePacer;
import io.wheelbeat.netty.ratelimit.RateLimitHandler;
import io.wheelbeat.netty.websocket.WebSocketKeepAliveHandler;

/**
 * The WebSocket endpoint's pipeline ({@code ws://HOST:WEBSOCKET_PORT/ws}): the TCP pipeline's
 * guards, limits and metrics around Netty's WebSocket server, with the server pinging (browsers
 * cannot). In order: the slow-consumer guard, connection-rate limit per source address (the same
 * limiter as the TCP port), HTTP codec and aggregator for the handshake, first-message timeout and
 * maximum age, Netty's WebSocket protocol handler (pongs passed on), the WebSocket keepalive
 * (pings, close after missed pongs, reader idle), message-rate limit per connection on data
 * frames, echo, and the close-reason tail, whose goodbye is a close frame 1001.
 */
final class WebSocketPipeline extends ChannelInitializer<Channel> {

    /** A handshake request is a few hundred bytes; nothing else comes in over HTTP. */
    private static final int MAX_HANDSHAKE_BYTES = 8192;

    private final ServerPipeline guards;
    private final WebSocketServerProtocolConfig protocol;
    private final WebSocketKeepAliveHandler.Factory keepAlive;
    private final RateLimitHandler messageRate;
    private final CloseReasons closeReasons;

    /**
     * @param guards the TCP pipeline, whose slow-consumer guard, connection limiter, deadlines and
     *     connection group this endpoint shares
     */
    WebSocketPipeline(
            DemoServer options,
            ServerPipeline guards,
            EventLoopWheels wheels,
            MeterRegistry registry,
            KeyedRateLimiter<Object> messageLimiter,
            ClosePacer closePacer) {
        this.guards = guards;
        this.protocol = WebSocketServerProtocolConfig.newBuilder()
                .websocketPath(DemoServer.WEBSOCKET_PATH)
                // Every close that says why writes its own close frame (a goodbye, the keepalive's,
                // the decoder's 1002/1007/1009); Netty's default would add a second, 1000 "Bye".
                .sendCloseFrame(null)
                .decoderConfig(WebSocketDecoderConfig.newBuilder()
                        .maxFramePayloadLength(options.maxFrameBytes)
                        .build())
                .build();
        this.keepAlive =
                options.webSocketKeepAlive().wheels(wheels).metrics(registry).build();
        this.messageRate = RateLimitHandler.builder(
                        messageLimiter,
                        (channel, msg) -> msg instanceof TextWebSocketFrame || msg instanceof BinaryWebSocketFrame
                                ? channel
                                : null)
                .dropWhenOver()
                .build();
        this.closeReasons = new CloseReasons(registry, closePacer, WebSocketPipeline::goodbye);
    }

    /** A close frame 1001 (going away) with {@code reason}: the WebSocket endpoint's goodbye. */
    static CloseWebSocketFrame goodbye(String reason) {
        return new CloseWebSocketFrame(WebSocketCloseStatus.ENDPOINT_UNAVAILABLE.code(), reason);
    }

    /** Whether {@code channel} is a connection of the WebSocket endpoint. */
    static boolean serves(Channel channel) {
        return channel.pipeline().get(WebSocketServerProtocolHandler.class) != null;
    }

    @Override
    protected void initChannel(Channel channel) {
        guards.connections.add(channel);
        ChannelPipeline pipeline = channel.pipeline();
        // First, where every frame is read: the keepalive takes the pongs before the protocol handler.
        pipeline.addLast("reader-idle", guards.readerIdle.newHandler());
        pipeline.addLast("slow-consumer", guards.slowConsumers.newHandler());
        pipeline.addLast(
                "connection-rate",
                RateLimitHandler.builder(guards.connectionLimiter)
                        .perConnection()
                        .build());
        pipeline.addLast("http-codec", new HttpServerCodec());
        pipeline.addLast("http-aggregator", new HttpObjectAggregator(MAX_HANDSHAKE_BYTES));
        pipeline.addLast("deadlines", guards.deadlines.newHandler());
        pipeline.addLast("websocket", new WebSocketServerProtocolHandler(protocol));
        pipeline.addLast("keepalive", keepAlive.newHandler());
        pipeline.addLast("message-rate", messageRate);
        pipeline.addLast("echo", WebSocketEcho.INSTANCE);
        pipeline.addLast("close-reasons", closeReasons);
    }
}
