package io.wheelbeat.netty.websocket;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.PingWebSocketFrame;
import io.netty.handler.codec.http.websocketx.PongWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketClientProtocolHandler;
import io.netty.handler.codec.http.websocketx.WebSocketCloseStatus;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;
import io.netty.handler.timeout.IdleState;
import io.netty.handler.timeout.IdleStateEvent;
import io.wheelbeat.core.internal.checks.ConfigChecks;
import io.wheelbeat.netty.ChannelTimerHandler;
import io.wheelbeat.netty.EventLoopWheels;
import io.wheelbeat.netty.JitteredHandlerBuilder;
import io.wheelbeat.netty.heartbeat.HeartbeatFailedEvent;
import io.wheelbeat.netty.heartbeat.HeartbeatHandler;
import io.wheelbeat.netty.heartbeat.PingLimits;
import io.wheelbeat.netty.heartbeat.TooManyPingsEvent;
import io.wheelbeat.netty.idle.WheelIdleStateHandler;
import io.wheelbeat.netty.internal.HandlerFields;
import io.wheelbeat.netty.internal.Jitter;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * WebSocket keepalive over Netty's codec, for servers and clients. At the end of the handshake it adds a
 * {@link HeartbeatHandler} before the protocol handler (which drops pongs and answers every ping at once): ping
 * frames after the ping interval without a write, their 8-byte id echoed by the pong [RFC 6455 5.5.3], and
 * {@link Builder#maxMissedPongs} misses firing {@link HeartbeatFailedEvent}, close frame 1001 {@value #PING_TIMEOUT};
 * the peer's pings answered, the last strike of {@link Builder#pingLimits} firing {@link TooManyPingsEvent}, close
 * frame 1008 {@value #TOO_MANY_PINGS}. A close frame written removes the heartbeat. A reader-idle
 * {@link IdleStateEvent} (from a {@link WheelIdleStateHandler} first in the pipeline) writes close frame 1001
 * {@value #IDLE_TIMEOUT} (after the handshake). Each of these closes.
 *
 * <p>Add it after {@link WebSocketServerProtocolHandler} or {@link WebSocketClientProtocolHandler}; without one
 * before it, it logs the fix once per {@link Factory}, fires an {@link IllegalStateException} and closes. One
 * channel, on its event loop.
 */
public final class WebSocketKeepAliveHandler extends ChannelTimerHandler {

    /** The close reason after missed pongs. */
    public static final String PING_TIMEOUT = "ping timeout";
    /** The close reason at a reader-idle event. */
    public static final String IDLE_TIMEOUT = "idle timeout";
    /** The close reason for a peer that pings too often. */
    public static final String TOO_MANY_PINGS = "too many pings";

    /** RFC 6455's "going away", as Jetty and Tomcat close idle sessions. */
    private static final int GOING_AWAY = WebSocketCloseStatus.ENDPOINT_UNAVAILABLE.code();

    private static final Logger log = LoggerFactory.getLogger(WebSocketKeepAliveHandler.class);

    private final Factory settings;
    /** Before the protocol handler, from the handshake until a close frame. */
    private HeartbeatHandler heartbeat;

    private boolean handshakeDone;
    private boolean closeSent;

    private WebSocketKeepAliveHandler(Factory settings) {
        super(settings.wheels);
        this.settings = settings;
    }

    /** @return a new builder; the ping interval must be set */
    public static Builder builder() {
        return new Builder();
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) throws Exception {
        if (msg instanceof CloseWebSocketFrame) {
            closeSent = true;
            removeHeartbeat(ctx); // the closing handshake is the protocol handler's
        }
        ctx.write(msg, promise);
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt instanceof WebSocketServerProtocolHandler.HandshakeComplete
                || evt == WebSocketClientProtocolHandler.ClientHandshakeStateEvent.HANDSHAKE_COMPLETE) {
            onHandshake(ctx);
        } else if (evt instanceof HeartbeatFailedEvent && heartbeat != null) {
            sendClose(ctx, GOING_AWAY, PING_TIMEOUT); // the heartbeat closes right after the event
        }
        ctx.fireUserEventTriggered(evt);
        if (evt instanceof IdleStateEvent idle && idle.state() == IdleState.READER_IDLE) {
            sendClose(ctx, GOING_AWAY, IDLE_TIMEOUT);
            ctx.close();
        }
    }

    @Override
    protected void onStart(ChannelHandlerContext ctx, long nowNanos) {
        if (protocolHandlerBefore(ctx) == null) {
            refuse(
                    ctx,
                    "no WebSocketServerProtocolHandler or WebSocketClientProtocolHandler before "
                            + "WebSocketKeepAliveHandler in the pipeline: add the keepalive after it");
        }
    }

    @Override
    protected void onStop() {
        // Removed from an open channel that stays on its loop: the heartbeat goes too.
        if (ctx().channel().isActive() && !HandlerFields.moving(this)) {
            removeHeartbeat(ctx());
        }
    }

    private void onHandshake(ChannelHandlerContext ctx) {
        ChannelHandlerContext protocol = protocolHandlerBefore(ctx); // there at the start: it sent the event
        if (handshakeDone || !running() || !ctx.channel().isActive() || protocol == null) {
            return;
        }
        handshakeDone = true;
        heartbeat = settings.heartbeats.newHandler();
        ctx.pipeline().addBefore(protocol.name(), null, heartbeat);
    }

    private void removeHeartbeat(ChannelHandlerContext ctx) {
        if (heartbeat != null && ctx.pipeline().context(heartbeat) != null) {
            ctx.pipeline().remove(heartbeat);
        }
        heartbeat = null;
    }

    /** Writes a close frame with {@code status} and {@code reason}, once, if the WebSocket is up. */
    private void sendClose(ChannelHandlerContext ctx, int status, String reason) {
        if (handshakeDone && !closeSent && ctx.channel().isActive()) {
            closeSent = true;
            // Not waiting for the write: a peer that does not read must not hold the channel open.
            ctx.writeAndFlush(new CloseWebSocketFrame(status, reason), ctx.voidPromise());
        }
    }

    private static ChannelHandlerContext protocolHandlerBefore(ChannelHandlerContext ctx) {
        ChannelHandler found = null;
        for (Map.Entry<String, ChannelHandler> entry : ctx.pipeline()) {
            ChannelHandler handler = entry.getValue();
            if (handler == ctx.handler()) {
                break;
            }
            if (handler instanceof WebSocketServerProtocolHandler
                    || handler instanceof WebSocketClientProtocolHandler) {
                found = handler;
            }
        }
        return found == null ? null : ctx.pipeline().context(found);
    }

    private void refuse(ChannelHandlerContext ctx, String misconfiguration) {
        if (settings.misconfigurationLogged.compareAndSet(false, true)) {
            log.error("{}: {}; closing this and every connection of this pipeline", ctx.channel(), misconfiguration);
        } else {
            log.debug("{}: {}; closing", ctx.channel(), misconfiguration);
        }
        ctx.fireExceptionCaught(new IllegalStateException(misconfiguration));
        ctx.close();
    }

    /**
     * The heartbeat this keepalive adds at the handshake, for pipelines that place it themselves (Reactor
     * Netty's): ping frames carrying their id, the peer's pings answered under {@code limits}, close frame
     * 1008 {@value #TOO_MANY_PINGS} for a peer that breaks them.
     * @param pingInterval the time without a write after which a ping goes out, positive
     * @param limits how often the peer may ping
     * @return the heartbeat's builder, to complete (pong timeout, misses, meters) and build
     */
    public static HeartbeatHandler.Builder heartbeat(Duration pingInterval, PingLimits limits) {
        HeartbeatHandler.Builder heartbeat = HeartbeatHandler.builder()
                .sendPings(
                        pingInterval,
                        WebSocketKeepAliveHandler::ping,
                        PongWebSocketFrame.class::isInstance,
                        WebSocketKeepAliveHandler::pingId)
                .answerPings(
                        PingWebSocketFrame.class::isInstance,
                        (ch, ping) -> new PongWebSocketFrame(
                                ((PingWebSocketFrame) ping).content().retain()))
                .pingLimits(limits);
        if (!limits.equals(PingLimits.OFF)) {
            int policyViolation = WebSocketCloseStatus.POLICY_VIOLATION.code();
            heartbeat.goodbye(channel -> new CloseWebSocketFrame(policyViolation, TOO_MANY_PINGS));
        }
        return heartbeat;
    }

    /** A ping frame whose data is the ping's id. */
    private static PingWebSocketFrame ping(Channel channel, long pingId) {
        return new PingWebSocketFrame(
                channel.alloc().buffer(Long.BYTES, Long.BYTES).writeLong(pingId));
    }

    /** The id a pong echoes: the 8 bytes of our ping; other data answers no ping. */
    private static long pingId(Object pong) {
        ByteBuf data = ((PongWebSocketFrame) pong).content();
        return data.readableBytes() == Long.BYTES ? data.getLong(data.readerIndex()) : HeartbeatHandler.NO_PING;
    }

    /** Immutable, thread-safe settings that make one {@link WebSocketKeepAliveHandler} per channel. */
    public static final class Factory {
        private final HeartbeatHandler.Factory heartbeats;
        private final EventLoopWheels wheels;
        private final AtomicBoolean misconfigurationLogged = new AtomicBoolean();

        private Factory(HeartbeatHandler.Factory heartbeats, EventLoopWheels wheels) {
            this.heartbeats = heartbeats;
            this.wheels = wheels;
        }

        /** @return a new handler, for one channel only */
        public WebSocketKeepAliveHandler newHandler() {
            return new WebSocketKeepAliveHandler(this);
        }
    }

    /** Settings of a {@link WebSocketKeepAliveHandler}, with {@link JitteredHandlerBuilder}'s. Not thread-safe. */
    public static final class Builder extends JitteredHandlerBuilder<Builder> {
        private long intervalNanos;
        private long pongTimeoutNanos;
        private int maxMissedPongs = 3;
        private double jitter;
        private PingLimits pingLimits = PingLimits.DEFAULT;

        private Builder() {}

        /**
         * How often the peer may ping; {@link PingLimits#DEFAULT} unless set.
         * @param limits the limits, or {@link PingLimits#OFF}; not null
         * @return this builder
         */
        public Builder pingLimits(PingLimits limits) {
            this.pingLimits = Objects.requireNonNull(limits, "pingLimits");
            return this;
        }

        /**
         * Pings after this long without a write. Required.
         * @param interval the interval, positive
         * @return this builder
         */
        public Builder pingInterval(Duration interval) {
            this.intervalNanos = ConfigChecks.positiveNanos("pingInterval", interval);
            return this;
        }

        /**
         * Moves each ping interval by a uniform draw within +/- {@code fraction} of it; 0 by default.
         * @param fraction the fraction either side, {@code 0 <= fraction < 1}
         * @return this builder
         */
        public Builder pingIntervalJitter(double fraction) {
            this.jitter = Jitter.checkFraction("pingIntervalJitter", fraction);
            return this;
        }

        /**
         * How long a pong may take after its ping; the ping interval by default.
         * @param timeout the time limit, positive
         * @return this builder
         */
        public Builder pongTimeout(Duration timeout) {
            this.pongTimeoutNanos = ConfigChecks.positiveNanos("pongTimeout", timeout);
            return this;
        }

        /**
         * How many pings in a row may go without a pong in time; the last closes. 3 by default.
         * @param count the number, positive
         * @return this builder
         */
        public Builder maxMissedPongs(int count) {
            this.maxMissedPongs = ConfigChecks.positive("maxMissedPongs", count);
            return this;
        }

        /**
         * @return the factory of handlers with these settings, immutable and thread-safe
         * @throws IllegalStateException without a ping interval
         */
        public Factory build() {
            if (intervalNanos == 0) {
                throw new IllegalStateException("set pingInterval");
            }
            HeartbeatHandler.Builder heartbeats = heartbeat(Duration.ofNanos(intervalNanos), pingLimits)
                    .pongTimeout(Duration.ofNanos(pongTimeoutNanos > 0 ? pongTimeoutNanos : intervalNanos))
                    .maxMissedPongs(maxMissedPongs)
                    .pingIntervalJitter(jitter)
                    .random(random())
                    .wheels(wheels());
            if (registry() != null) {
                heartbeats.metrics(registry());
            }
            return new Factory(heartbeats.build(), wheels());
        }
    }
}
