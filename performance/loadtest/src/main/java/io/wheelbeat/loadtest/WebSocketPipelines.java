package io.wheelbeat.loadtest;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.PingWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketClientProtocolConfig;
import io.netty.handler.codec.http.websocketx.WebSocketClientProtocolHandler;
import io.netty.handler.codec.http.websocketx.WebSocketCloseStatus;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolConfig;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;
import io.netty.handler.timeout.IdleState;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.AttributeKey;
import io.netty.util.ReferenceCountUtil;
import io.wheelbeat.netty.websocket.WebSocketKeepAliveHandler;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Queue;
import java.util.concurrent.TimeUnit;

/**
 * The load test over WebSocket: the same scenario, with Netty's HTTP and WebSocket codecs on both
 * ends. The server pings; the clients' heartbeats are binary frames and Netty's client answers
 * the pings, until a client goes silent, which then stops answering too (a dead peer).
 *
 * <p>The server keeps connections alive in one of two ways, the only difference between the
 * pipelines: {@link IdleHandlerKind#WHEEL} is wheelbeat's {@link WebSocketKeepAliveHandler}, behind a
 * {@code WheelIdleStateHandler} first in the pipeline (where the pongs the keepalive takes are read);
 * {@link IdleHandlerKind#NETTY} is what users write today, Netty's {@link IdleStateHandler} with
 * a handler that pings on writer idle and sends a close frame on reader idle
 * ({@link PingOnWriterIdle}). Both ping every third of the reader-idle time and close after the same
 * reader idle, counting every frame read, pongs included.
 */
final class WebSocketPipelines {

    static final String PATH = "/ws";
    /** The connection index of a client channel, for {@link SilenceGate}. */
    static final AttributeKey<Integer> INDEX = AttributeKey.valueOf("wheelbeat.loadtest.index");

    private static final int MAX_FRAME = 64;
    private static final int MISSED_PONGS = 10;

    private WebSocketPipelines() {}

    /** A factory of ours, pinging every third of the reader-idle time; the idle handler's event closes. */
    static WebSocketKeepAliveHandler.Factory keepAlive(long readerIdleNanos) {
        long pingNanos = pingIntervalNanos(readerIdleNanos);
        // Ten missed pongs take over three reader-idle times: the reader idle decides, as it does for
        // Netty's handler, even on a loop lagging by seconds, so both report the same kind of event.
        // No jitter: the baseline pings at exact writer-idle periods, and the same work for both is the
        // comparison (a jitter spreads the pings over more loop wake-ups; docs/loadtest.md measures it).
        return WebSocketKeepAliveHandler.builder()
                .pingInterval(Duration.ofNanos(pingNanos))
                .pingIntervalJitter(0)
                .pongTimeout(Duration.ofNanos(pingNanos))
                .maxMissedPongs(MISSED_PONGS)
                .build();
    }

    /**
     * The server's codecs, then {@code probe}, then the keepalive of {@code kind} (none for
     * {@link IdleHandlerKind#NONE}); the recorder goes last, added by the caller.
     */
    static void addServerHandlers(
            ChannelPipeline p,
            IdleHandlerKind kind,
            long readerIdleNanos,
            WebSocketKeepAliveHandler.Factory ours,
            ChannelHandler probe) {
        p.addLast(
                new HttpServerCodec(),
                new HttpObjectAggregator(1024),
                new WebSocketServerProtocolHandler(WebSocketServerProtocolConfig.newBuilder()
                        .websocketPath(PATH)
                        .maxFramePayloadLength(MAX_FRAME)
                        .dropPongFrames(false)
                        .build()),
                probe);
        switch (kind) {
            case WHEEL -> {
                p.addFirst(IdleHandlers.create(kind, readerIdleNanos, 0, 0, TimeUnit.NANOSECONDS));
                p.addLast(ours.newHandler());
            }
            case NETTY ->
                p.addLast(
                        new IdleStateHandler(
                                readerIdleNanos, pingIntervalNanos(readerIdleNanos), 0, TimeUnit.NANOSECONDS),
                        new PingOnWriterIdle());
            case NONE -> {}
        }
    }

    /**
     * Both keepalives ping after a third of the reader-idle time without writes: a live peer's
     * pong always lands within the reader idle, as our handler's settings check demands.
     */
    static long pingIntervalNanos(long readerIdleNanos) {
        return readerIdleNanos / 3;
    }

    /** The client pipeline: codecs, the silence gate, the frame wrapper, the sink. */
    static ChannelHandler clientInitializer(HeartbeatDriver driver) {
        return new ChannelInitializer<>() {
            @Override
            protected void initChannel(io.netty.channel.Channel ch) {
                ch.pipeline()
                        .addLast(
                                new HttpClientCodec(),
                                new HttpObjectAggregator(1024),
                                new SilenceGate(driver),
                                new WebSocketClientProtocolHandler(WebSocketClientProtocolConfig.newBuilder()
                                        .webSocketUri(URI.create("ws://loadtest" + PATH))
                                        .maxFramePayloadLength(MAX_FRAME)
                                        .handshakeTimeoutMillis(TimeUnit.MINUTES.toMillis(1))
                                        .build()),
                                new BinaryFrames(),
                                HeartbeatDriver.ClientSink.INSTANCE);
            }
        };
    }

    /**
     * What users write today with Netty's {@link IdleStateHandler}: a ping on writer idle, a close
     * frame (1001) on reader idle, the event passed on.
     */
    static final class PingOnWriterIdle extends ChannelInboundHandlerAdapter {
        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (evt instanceof IdleStateEvent idle) {
                if (idle.state() == IdleState.WRITER_IDLE) {
                    ctx.writeAndFlush(new PingWebSocketFrame(), ctx.voidPromise());
                    return;
                }
                if (idle.state() == IdleState.READER_IDLE) {
                    ctx.writeAndFlush(
                            new CloseWebSocketFrame(WebSocketCloseStatus.ENDPOINT_UNAVAILABLE, "idle timeout"),
                            ctx.voidPromise());
                }
            }
            ctx.fireUserEventTriggered(evt);
        }
    }

    /**
     * Sits before the client's protocol handler: once its connection has gone silent, drops the
     * server's pings, so that a silent client is a dead one and not just a quiet one.
     */
    static final class SilenceGate extends ChannelInboundHandlerAdapter {
        private final HeartbeatDriver driver;

        SilenceGate(HeartbeatDriver driver) {
            this.driver = driver;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (msg instanceof PingWebSocketFrame) {
                Integer index = ctx.channel().attr(INDEX).get();
                if (index != null && driver.hasGoneSilent(index, Clock.nanoTime(), driver.silenceStartNanos())) {
                    ReferenceCountUtil.release(msg);
                    return;
                }
            }
            ctx.fireChannelRead(msg);
        }
    }

    /** Wraps the client's byte writes into binary frames, holding them until the handshake is done. */
    static final class BinaryFrames extends ChannelDuplexHandler {
        private Queue<Object[]> held = new ArrayDeque<>(2);

        @Override
        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
            if (!(msg instanceof ByteBuf bytes)) {
                ctx.write(msg, promise);
            } else if (held != null) {
                held.add(new Object[] {bytes, promise});
            } else {
                ctx.write(new BinaryWebSocketFrame(bytes), promise);
            }
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (evt == WebSocketClientProtocolHandler.ClientHandshakeStateEvent.HANDSHAKE_COMPLETE) {
                Queue<Object[]> writes = held;
                held = null;
                for (Object[] w : writes) {
                    ctx.write(new BinaryWebSocketFrame((ByteBuf) w[0]), (ChannelPromise) w[1]);
                }
                ctx.flush();
            }
            ctx.fireUserEventTriggered(evt);
        }

        @Override
        public void handlerRemoved(ChannelHandlerContext ctx) {
            if (held != null) {
                held.forEach(w -> ReferenceCountUtil.release(w[0]));
                held = null;
            }
        }
    }
}
