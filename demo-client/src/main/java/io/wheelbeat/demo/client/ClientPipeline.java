package io.wheelbeat.demo.client;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.util.ReferenceCountUtil;
import io.wheelbeat.core.ExecutorDrivenWheel;
import io.wheelbeat.core.TimerCallback;
import io.wheelbeat.core.TimerWheel;
import io.wheelbeat.demo.protocol.Frame;
import io.wheelbeat.demo.protocol.FrameDecoder;
import io.wheelbeat.demo.protocol.FrameEncoder;
import io.wheelbeat.demo.protocol.FrameType;
import io.wheelbeat.netty.EventLoopWheels;
import io.wheelbeat.netty.heartbeat.HeartbeatHandler;
import io.wheelbeat.netty.heartbeat.PongReceivedEvent;
import io.wheelbeat.netty.reconnect.ReconnectingClient;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The client pipeline: frame codec, heartbeats (ping on writer idle, close after missed pongs),
 * an optional periodic DATA sender on the loop's wheel, and the stats tail, which follows the
 * server's GOODBYE: "too many pings" doubles the ping interval, and a reconnect window spreads
 * the reconnect over it.
 */
@ChannelHandler.Sharable
final class ClientPipeline extends ChannelInitializer<Channel> {

    private static final Logger log = LoggerFactory.getLogger(ClientPipeline.class);
    private static final int MAX_FRAME_BYTES = 64 * 1024;

    private final HeartbeatHandler.Factory heartbeats;
    private final long dataIntervalMillis;
    private final ClientStats stats;

    ClientPipeline(DemoClient options, ClientStats stats) {
        this.stats = stats;
        this.dataIntervalMillis = options.dataIntervalMillis;
        this.heartbeats = HeartbeatHandler.builder()
                // The PONG echoes the PING's 8-byte payload: the ping id tells which ping it answers.
                .sendPings(options.pingIntervalMillis, TimeUnit.MILLISECONDS,
                        (channel, pingId) -> Frame.ping(pingId),
                        msg -> msg instanceof Frame frame && frame.is(FrameType.PONG),
                        msg -> ((Frame) msg).pingId())
                .pongTimeout(options.pongTimeoutMillis, TimeUnit.MILLISECONDS)
                .maxMissedPongs(options.maxMissedPongs)
                .pingIntervalJitter(0.1)
                .build();
    }

    @Override
    protected void initChannel(Channel channel) {
        channel.pipeline().addLast(new FrameDecoder(MAX_FRAME_BYTES), FrameEncoder.INSTANCE, heartbeats.newHandler());
        if (dataIntervalMillis > 0) {
            channel.pipeline().addLast(new DataSender(dataIntervalMillis));
        }
        channel.pipeline().addLast(new StatsTail(stats));
    }

    /** Sends a DATA frame every interval, on the event loop's shared wheel. */
    private static final class DataSender extends ChannelInboundHandlerAdapter implements TimerCallback {
        private final long intervalMillis;
        private ChannelHandlerContext ctx;
        private ExecutorDrivenWheel wheel;
        private long timer = TimerWheel.NO_TIMER;
        private long sequence;

        DataSender(long intervalMillis) {
            this.intervalMillis = intervalMillis;
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            this.ctx = ctx;
            wheel = EventLoopWheels.shared().wheelFor(ctx.executor());
            timer = wheel.schedule(this, intervalMillis, TimeUnit.MILLISECONDS);
            ctx.fireChannelActive();
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            if (wheel != null) {
                wheel.cancel(timer);
            }
            ctx.fireChannelInactive();
        }

        @Override
        public void onTimeout(long timerId) {
            if (ctx.channel().isActive()) {
                ctx.writeAndFlush(Frame.data("data " + sequence++));
                timer = wheel.schedule(this, intervalMillis, TimeUnit.MILLISECONDS);
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
                    log.debug("{}: server says goodbye: {} (reconnect window {} ms)", ctx.channel(), reason, windowMillis);
                    if (Frame.TOO_MANY_PINGS.equals(reason)) {
                        // As gRPC clients do on GOAWAY too_many_pings: ping half as often from now on.
                        ctx.pipeline().get(HeartbeatHandler.class).peerSaysTooManyPings();
                    }
                    ReconnectingClient client = ReconnectingClient.of(ctx.channel());
                    if (windowMillis > 0 && client != null) {
                        client.spreadReconnectOver(Duration.ofMillis(windowMillis));
                    }
                } else if (msg instanceof Frame frame && frame.is(FrameType.DATA)) {
                    stats.recordEcho();
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
