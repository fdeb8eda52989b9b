package io.wheelbeat.netty.websocket;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandler;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.PingWebSocketFrame;
import io.netty.handler.codec.http.websocketx.PongWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketClientProtocolHandler;
import io.netty.handler.codec.http.websocketx.WebSocketCloseStatus;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;
import io.netty.util.ReferenceCountUtil;
import io.wheelbeat.core.internal.checks.ConfigChecks;
import io.wheelbeat.netty.ChannelTimerHandler;
import io.wheelbeat.netty.EventLoopWheels;
import io.wheelbeat.netty.JitteredHandlerBuilder;
import io.wheelbeat.netty.heartbeat.HeartbeatFailedEvent;
import io.wheelbeat.netty.heartbeat.HeartbeatHandler;
import io.wheelbeat.netty.heartbeat.PingLimits;
import io.wheelbeat.netty.heartbeat.TooManyPingsEvent;
import io.wheelbeat.netty.heartbeat.internal.PingLoop;
import io.wheelbeat.netty.internal.ConnectionMeters;
import io.wheelbeat.netty.internal.Jitter;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * WebSocket keepalive over Netty's WebSocket codec, for servers and clients, with {@link HeartbeatHandler}'s
 * events and meters:
 * <ul>
 *   <li><b>Pings</b> from the end of the handshake, as {@code HeartbeatHandler}'s pinging role, their
 *       8-byte id as data, echoed by the pong [RFC 6455 5.5.3]. {@link Builder#maxMissedPongs} misses
 *       in a row: {@link HeartbeatFailedEvent}, close frame 1001 {@value #PING_TIMEOUT}, close.</li>
 *   <li><b>Reader idle</b> ({@link Builder#readerIdleTimeout}): nothing read for the timeout since
 *       activation fires {@link WebSocketReaderIdleEvent}, close frame 1001 {@value #IDLE_TIMEOUT}
 *       (after the handshake), close ({@code wheelbeat.connection.closed{reason=reader_idle}}).</li>
 *   <li><b>The peer's pings</b>: answered by {@code HeartbeatHandler}'s answering role, added before the
 *       protocol handler at the handshake. The last strike of {@link Builder#pingLimits} fires
 *       {@link TooManyPingsEvent}, close frame 1008 {@value #TOO_MANY_PINGS}, close.</li>
 * </ul>
 * Pong frames are consumed; everything else passes. Once a close frame goes out, pinging stops.
 *
 * <p>Add it after {@link WebSocketServerProtocolHandler} (or {@link WebSocketClientProtocolHandler})
 * built with {@code dropPongFrames(false)}:
 * <pre>{@code
 * pipeline.addLast(new HttpServerCodec(), new HttpObjectAggregator(65536),
 *         new WebSocketServerProtocolHandler(WebSocketServerProtocolConfig.newBuilder()
 *                 .websocketPath("/ws").dropPongFrames(false).build()),
 *         keepAlive.newHandler(), application);
 * }</pre>
 * If the protocol handler is missing or drops pongs (checked with one empty pong at the
 * handshake), it logs the fix once per {@link Factory}, fires an {@link IllegalStateException} and
 * closes (close frame 1011 after the handshake). A handler serves one channel, on its event loop.
 */
public final class WebSocketKeepAliveHandler extends ChannelTimerHandler {

    /** The close reason after missed pongs. */
    public static final String PING_TIMEOUT = "ping timeout";
    /** The close reason after the reader-idle timeout. */
    public static final String IDLE_TIMEOUT = "idle timeout";
    /** The close reason for a peer that pings too often. */
    public static final String TOO_MANY_PINGS = "too many pings";

    /** RFC 6455's "going away", as Jetty and Tomcat close idle sessions. */
    private static final int GOING_AWAY = WebSocketCloseStatus.ENDPOINT_UNAVAILABLE.code();

    private static final Logger log = LoggerFactory.getLogger(WebSocketKeepAliveHandler.class);
    /** Empty and never released (an empty buffer's reference count is fixed): one serves every channel. */
    private static final PongWebSocketFrame PROBE = new PongWebSocketFrame(Unpooled.EMPTY_BUFFER);

    private final Factory settings;
    private final Pings pings = new Pings();
    private long lastReadNanos;
    private boolean handshakeDone;
    private boolean closeSent;
    private boolean probing;
    private boolean probeArrived;

    private WebSocketKeepAliveHandler(Factory settings) {
        super(settings.wheels);
        this.settings = settings;
    }

    /**
     * Returns a builder with the defaults: a pong timeout equal to the ping interval, 3 missed
     * pongs, no jitter, no reader-idle timeout. The ping interval must be set.
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
        if (!(msg instanceof PongWebSocketFrame pong)) {
            ctx.fireChannelRead(msg);
            return;
        }
        // Ours to consume: the probe, an answer to our ping, or one while we do not ping.
        probeArrived |= probing;
        if (pings.running()) {
            // The id is the 8 bytes of our ping; other application data answers no ping.
            ByteBuf data = pong.content();
            boolean ours = data.readableBytes() == Long.BYTES;
            pings.onPong(ours ? data.getLong(data.readerIndex()) : HeartbeatHandler.NO_PING);
        }
        ReferenceCountUtil.release(msg);
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) throws Exception {
        if (settings.readerIdleNanos > 0 && running()) {
            lastReadNanos = now();
        }
        ctx.fireChannelReadComplete();
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) throws Exception {
        if (msg instanceof CloseWebSocketFrame) {
            closeSent = true;
            pings.stop(); // the closing handshake is the protocol handler's
        }
        pings.onWrite();
        ctx.write(msg, promise);
    }

    @Override
    public void flush(ChannelHandlerContext ctx) throws Exception {
        pings.onFlush();
        ctx.flush();
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt instanceof WebSocketServerProtocolHandler.HandshakeComplete
                || evt == WebSocketClientProtocolHandler.ClientHandshakeStateEvent.HANDSHAKE_COMPLETE) {
            onHandshake(ctx);
        }
        ctx.fireUserEventTriggered(evt);
    }

    @Override
    protected void onStart(ChannelHandlerContext ctx, long nowNanos) {
        if (protocolHandlerBefore(ctx) == null) {
            refuse(
                    ctx,
                    "no WebSocketServerProtocolHandler or WebSocketClientProtocolHandler before "
                            + "WebSocketKeepAliveHandler in the pipeline: add the keepalive after it");
        } else if (settings.readerIdleNanos > 0) {
            lastReadNanos = nowNanos;
            schedule(this, settings.readerIdleNanos);
        }
    }

    @Override
    protected void onStop() {
        cancel(this);
        pings.stop();
    }

    /** The reader-idle timeout: the handler is its own timer, which reads postpone lazily. */
    @Override
    protected void expire() {
        long left = settings.readerIdleNanos - (now() - lastReadNanos);
        if (left > 0) {
            schedule(this, left);
            return;
        }
        ChannelHandlerContext ctx = ctx();
        ConnectionMeters.count(settings.readerIdleCloses);
        log.debug("{}: nothing read for {} ns, closing", ctx.channel(), settings.readerIdleNanos);
        ctx.fireUserEventTriggered(new WebSocketReaderIdleEvent(settings.readerIdleNanos));
        sendClose(ctx, GOING_AWAY, IDLE_TIMEOUT);
        ctx.close();
    }

    private void onHandshake(ChannelHandlerContext ctx) {
        if (handshakeDone || !running() || !ctx.channel().isActive()) {
            return;
        }
        handshakeDone = true;
        String misconfiguration = checkPongsArrive(ctx);
        if (misconfiguration != null) {
            sendClose(ctx, WebSocketCloseStatus.INTERNAL_SERVER_ERROR.code(), "");
            refuse(ctx, misconfiguration);
            return;
        }
        pings.start(settings.pinging, ctx);
        // Netty's protocol handler answers every ping at once from its own context, however many
        // wait to go out, and has no option to stop: only a handler before it can hold its answers.
        ctx.pipeline().addBefore(protocolHandlerBefore(ctx).name(), null, settings.answers.newHandler());
    }

    /** Pings carry their id as data; a miss sends close frame 1001 first. */
    private final class Pings extends PingLoop {
        @Override
        protected Object newPing(ChannelHandlerContext ctx, long pingId) {
            return new PingWebSocketFrame(
                    ctx.alloc().buffer(Long.BYTES, Long.BYTES).writeLong(pingId));
        }

        @Override
        protected void pongsMissed(ChannelHandlerContext ctx, int missedPongs) {
            sendClose(ctx, GOING_AWAY, PING_TIMEOUT);
            ctx.fireUserEventTriggered(new HeartbeatFailedEvent(missedPongs));
            ctx.close();
        }
    }

    /** Writes a close frame with {@code status} and {@code reason}, once, if the WebSocket is up. */
    private void sendClose(ChannelHandlerContext ctx, int status, String reason) {
        if (handshakeDone && !closeSent && ctx.channel().isActive()) {
            closeSent = true;
            // Not waiting for the write: a peer that does not read must not hold the channel open.
            ctx.writeAndFlush(new CloseWebSocketFrame(status, reason), ctx.voidPromise());
        }
    }

    /** Returns what is wrong with the pipeline, or null if the protocol handler passes pongs here. */
    private String checkPongsArrive(ChannelHandlerContext ctx) {
        ChannelHandlerContext protocol = protocolHandlerBefore(ctx);
        if (protocol == null) {
            return "the WebSocket protocol handler before WebSocketKeepAliveHandler is gone";
        }
        probing = true;
        try {
            ((ChannelInboundHandler) protocol.handler()).channelRead(protocol, PROBE);
        } catch (Exception e) {
            log.debug("{}: the pong probe failed", ctx.channel(), e);
        } finally {
            probing = false;
        }
        if (probeArrived) {
            return null;
        }
        boolean server = protocol.handler() instanceof WebSocketServerProtocolHandler;
        return "pong frames do not reach WebSocketKeepAliveHandler, so every ping would count as missed: "
                + "Netty's " + protocol.handler().getClass().getSimpleName() + " drops them by default; build it "
                + "with " + (server ? "WebSocketServerProtocolConfig" : "WebSocketClientProtocolConfig")
                + ".newBuilder()...dropPongFrames(false) (or the constructor's dropPongFrames = false), "
                + "with nothing between it and the keepalive that consumes pongs";
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

    /** Immutable, thread-safe settings that make one {@link WebSocketKeepAliveHandler} per channel. */
    public static final class Factory {
        private final PingLoop.Settings pinging;
        /** The answering role placed before the protocol handler. */
        private final HeartbeatHandler.Factory answers;

        private final long readerIdleNanos;
        private final EventLoopWheels wheels;
        private final Counter readerIdleCloses;
        private final AtomicBoolean misconfigurationLogged = new AtomicBoolean();

        private Factory(
                Builder b,
                PingLoop.Settings pinging,
                HeartbeatHandler.Factory answers,
                EventLoopWheels wheels,
                MeterRegistry registry) {
            this.pinging = pinging;
            this.answers = answers;
            this.readerIdleNanos = b.readerIdleNanos;
            this.wheels = wheels;
            this.readerIdleCloses = readerIdleNanos > 0 ? ConnectionMeters.closed(registry, "reader_idle") : null;
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
        private long readerIdleNanos;
        private PingLimits pingLimits = PingLimits.DEFAULT;

        private Builder() {}

        /**
         * How often the peer may ping; {@link PingLimits#DEFAULT} unless set (a flood ends at its 4th ping).
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
         * Closes a connection from which nothing was read for {@code timeout}; off by default. It
         * must exceed the longest ping interval (jitter included) plus the pong timeout. Pings go
         * out only when nothing was written for the interval: leave it off for a server that
         * writes more often than that to a peer that never writes.
         * @param timeout the time limit, positive
         * @return this builder
         */
        public Builder readerIdleTimeout(Duration timeout) {
            this.readerIdleNanos = ConfigChecks.positiveNanos("readerIdleTimeout", timeout);
            return this;
        }

        /**
         * Returns the factory of handlers with these settings.
         * @return the factory, immutable and thread-safe
         * @throws IllegalStateException if the ping interval is not set, or the reader-idle
         *     timeout does not exceed the longest ping interval plus the pong timeout
         */
        public Factory build() {
            if (intervalNanos == 0) {
                throw new IllegalStateException("set pingInterval");
            }
            long pongTimeout = pongTimeoutNanos > 0 ? pongTimeoutNanos : intervalNanos;
            long longestGap = (long) (intervalNanos * (1 + jitter)) + pongTimeout; // the cast saturates
            longestGap = longestGap < 0 ? Long.MAX_VALUE : longestGap;
            if (readerIdleNanos > 0 && readerIdleNanos <= longestGap) {
                throw new IllegalStateException("readerIdleTimeout (" + readerIdleNanos + " ns) must exceed the "
                        + "longest ping interval plus the pong timeout (" + longestGap + " ns), or a quiet peer that "
                        + "answers every ping would be closed");
            }
            HeartbeatHandler.Builder answers = HeartbeatHandler.builder()
                    .answerPings(
                            PingWebSocketFrame.class,
                            (ch, ping) -> new PongWebSocketFrame(ping.content().retain()))
                    .pingLimits(pingLimits)
                    .wheels(wheels());
            if (!pingLimits.equals(PingLimits.OFF)) {
                int policyViolation = WebSocketCloseStatus.POLICY_VIOLATION.code();
                answers.goodbye(channel -> new CloseWebSocketFrame(policyViolation, TOO_MANY_PINGS));
            }
            if (registry() != null) {
                answers.metrics(registry());
            }
            PingLoop.Settings pinging = new PingLoop.Settings(
                    intervalNanos, pongTimeout, maxMissedPongs, jitter, random(), PingLoop.Traffic.WRITES, registry());
            return new Factory(this, pinging, answers.build(), wheels(), registry());
        }
    }
}
