package io.wheelbeat.demo.client;

import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketClientProtocolConfig;
import io.netty.handler.codec.http.websocketx.WebSocketClientProtocolHandler;
import io.netty.util.ReferenceCountUtil;
import io.wheelbeat.core.ExecutorDrivenWheel;
import io.wheelbeat.core.TimerNode;
import io.wheelbeat.demo.protocol.Frame;
import io.wheelbeat.demo.protocol.FrameDecoder;
import io.wheelbeat.demo.protocol.FrameEncoder;
import io.wheelbeat.demo.protocol.FrameType;
import io.wheelbeat.demo.server.DemoServer;
import io.wheelbeat.netty.EventLoopWheels;
import io.wheelbeat.netty.heartbeat.HeartbeatHandler;
import io.wheelbeat.netty.heartbeat.PongReceivedEvent;
import io.wheelbeat.netty.reconnect.ReconnectingClient;
import io.wheelbeat.netty.websocket.WebSocketKeepAliveHandler;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The client pipeline: frame codec, heartbeats (ping on writer idle, close after missed pongs),
 * an optional periodic DATA sender on the loop's wheel, and the stats tail, which follows the
 * server's GOODBYE: "too many pings" doubles the ping interval, and a reconnect window spreads
 * the reconnect over it. With {@code --websocket}: Netty's WebSocket client and the WebSocket
 * keepalive instead of the frame codec and heartbeats, text frames as data, and a close frame
 * from the server as its goodbye.
 */
@ChannelHandler.Sharable
final class ClientPipeline extends ChannelInitializer<Channel> {

    private static final Logger log = LoggerFactory.getLogger(ClientPipeline.class);
    private static final int MAX_FRAME_BYTES = 64 * 1024;
    private static final int MAX_HANDSHAKE_BYTES = 8192;

    private final HeartbeatHandler.Factory heartbeats;
    /** With --websocket: the client protocol handler's settings and the keepalive; else null. */
    private final WebSocketClientProtocolConfig webSocket;

    private final WebSocketKeepAliveHandler.Factory webSocketKeepAlive;
    private final long dataIntervalMillis;
    private final ClientStats stats;

    ClientPipeline(DemoClient options, ClientStats stats) {
        this.stats = stats;
        this.dataIntervalMillis = options.dataIntervalMillis;
        this.webSocket = !options.webSocket
                ? null
                : WebSocketClientProtocolConfig.newBuilder()
                        .webSocketUri("ws://" + options.host + ":" + options.port + DemoServer.WEBSOCKET_PATH)
                        .maxFramePayloadLength(MAX_FRAME_BYTES)
                        .handleCloseFrames(false) // the stats tail counts the server's close frame as its goodbye
                        .build();
        this.webSocketKeepAlive = !options.webSocket
                ? null
                : WebSocketKeepAliveHandler.builder()
                        .pingInterval(Duration.ofMillis(options.pingIntervalMillis))
                        .pongTimeout(Duration.ofMillis(options.pongTimeoutMillis))
                        .maxMissedPongs(options.maxMissedPongs)
                        .build();
        this.heartbeats = HeartbeatHandler.builder()
                // The PONG echoes the PING's 8-byte payload: the ping id tells which ping it answers.
                .sendPings(
                        Duration.ofMillis(options.pingIntervalMillis),
                        (channel, pingId) -> Frame.ping(pingId),
                        msg -> msg instanceof Frame frame && frame.is(FrameType.PONG),
                        msg -> ((Frame) msg).pingId())
                .pongTimeout(Duration.ofMillis(options.pongTimeoutMillis))
                .maxMissedPongs(options.maxMissedPongs)
                .pingIntervalJitter(0.1)
                .build();
    }

    @Override
    protected void initChannel(Channel channel) {
        if (webSocket != null) {
            channel.pipeline()
                    .addLast(
                            new HttpClientCodec(),
                            new HttpObjectAggregator(MAX_HANDSHAKE_BYTES),
                            new WebSocketClientProtocolHandler(webSocket),
                            webSocketKeepAlive.newHandler());
        } else {
            channel.pipeline()
                    .addLast(new FrameDecoder(MAX_FRAME_BYTES), FrameEncoder.INSTANCE, heartbeats.newHandler());
        }
        if (dataIntervalMillis > 0) {
            channel.pipeline().addLast(new DataSender(dataIntervalMillis, webSocket != null));
        }
        channel.pipeline().addLast(new StatsTail(stats));
    }

    /**
     * Sends a DATA frame (a text frame over WebSocket, from the end of the handshake on) every
     * interval, on the event loop's shared wheel.
     */
    private static final class DataSender extends ChannelInboundHandlerAdapter {
        private final long intervalMillis;
        private final boolean webSocket;
        private ChannelHandlerContext ctx;
        private ExecutorDrivenWheel wheel;
        /** The send timer, re-armed after each send. */
        private final TimerNode timer = new TimerNode() {
            @Override
            protected void expire() {
                send();
            }
        };

        private long sequence;

        DataSender(long intervalMillis, boolean webSocket) {
            this.intervalMillis = intervalMillis;
            this.webSocket = webSocket;
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            if (!webSocket) {
                start(ctx);
            }
            ctx.fireChannelActive();
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (webSocket && evt == WebSocketClientProtocolHandler.ClientHandshakeStateEvent.HANDSHAKE_COMPLETE) {
                start(ctx);
            }
            ctx.fireUserEventTriggered(evt);
        }

        private void start(ChannelHandlerContext ctx) {
            this.ctx = ctx;
            wheel = EventLoopWheels.shared().wheelFor(ctx.executor());
            wheel.schedule(timer, TimeUnit.MILLISECONDS.toNanos(intervalMillis));
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            if (wheel != null) {
                wheel.cancel(timer);
            }
            ctx.fireChannelInactive();
        }

        private void send() {
            if (ctx.channel().isActive()) {
                String data = "data " + sequence++;
                ctx.writeAndFlush(webSocket ? new TextWebSocketFrame(data) : Frame.data(data));
                wheel.schedule(timer, TimeUnit.MILLISECONDS.toNanos(intervalMillis));
            }
        }
    }

    /** Records round trips, echoes and goodbyes; releases every frame. */
    private static final class StatsTail extends ChannelInboundHandlerAdapter {
        private final ClientStats stats;

        StatsTail(ClientStats stats) {
            this.stats = stats;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            try {
                if (msg instanceof Frame frame && frame.is(FrameType.GOODBYE)) {
                    stats.recordGoodbye();
                    String reason = frame.goodbyeReason();
                    long windowMillis = frame.reconnectWindowMillis();
                    log.debug(
                            "{}: server says goodbye: {} (reconnect window {} ms)",
                            ctx.channel(),
                            reason,
                            windowMillis);
                    if (Frame.TOO_MANY_PINGS.equals(reason)) {
                        // As gRPC clients do on GOAWAY too_many_pings: ping half as often from now on.
                        ctx.pipeline().get(HeartbeatHandler.class).peerSaysTooManyPings();
                    }
                    ReconnectingClient client = ReconnectingClient.of(ctx.channel());
                    if (windowMillis > 0 && client != null) {
                        client.spreadReconnectOver(Duration.ofMillis(windowMillis));
                    }
                } else if (msg instanceof Frame frame && frame.is(FrameType.DATA)
                        || msg instanceof TextWebSocketFrame) {
                    stats.recordEcho();
                } else if (msg instanceof CloseWebSocketFrame close) {
                    stats.recordGoodbye();
                    log.debug(
                            "{}: server closes the WebSocket: {} {}",
                            ctx.channel(),
                            close.statusCode(),
                            close.reasonText());
                    // The closing handshake: answer with the same status, then close.
                    ctx.writeAndFlush(new CloseWebSocketFrame(close.statusCode(), close.reasonText()))
                            .addListener(ChannelFutureListener.CLOSE);
                }
            } finally {
                ReferenceCountUtil.release(msg);
            }
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (evt instanceof PongReceivedEvent pong) {
                stats.recordRoundTrip(pong.roundTripNanos());
            }
            ctx.fireUserEventTriggered(evt);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            log.debug("{}: {}; closing", ctx.channel(), cause.toString());
            ctx.close();
        }
    }
}
