package io.wheelbeat.demo.server;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.CorruptedFrameException;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.http.websocketx.CorruptedWebSocketFrameException;
import io.netty.handler.codec.http.websocketx.WebSocketCloseStatus;
import io.netty.handler.timeout.IdleState;
import io.netty.handler.timeout.IdleStateEvent;
import io.wheelbeat.netty.deadline.FirstMessageTimeoutEvent;
import io.wheelbeat.netty.deadline.MaxConnectionAgeEvent;
import io.wheelbeat.netty.guard.ClosePacer;
import io.wheelbeat.netty.guard.SlowConsumerEvent;
import io.wheelbeat.netty.heartbeat.HeartbeatFailedEvent;
import io.wheelbeat.netty.heartbeat.TooManyPingsEvent;
import java.io.IOException;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The tail of the server pipelines, TCP and WebSocket: turns every way a connection can go wrong
 * into a close with a logged and counted reason ({@code wheelbeat.connection.closed}, tag {@code reason}), so the
 * server stays up and serves everyone else. Closes that a wheelbeat handler already counts
 * (first-message timeout, too many pings, maximum age, slow consumer, the WebSocket keepalive's
 * missed pongs and reader idle) are only logged here; malformed WebSocket frames, which Netty's
 * decoder closes with the protocol's status, are only counted.
 * Idle connections are closed through the {@link ClosePacer}, so that many falling idle at once
 * (a network blip) are closed at its rate rather than in one burst; bad input is closed at once.
 */
@ChannelHandler.Sharable
final class CloseReasons extends ChannelInboundHandlerAdapter {

    private static final Logger log = LoggerFactory.getLogger(CloseReasons.class);

    private final Counter readerIdle;
    private final Counter malformedFrame;
    private final Counter oversizedFrame;
    private final Counter ioError;
    private final Counter internalError;
    private final ClosePacer idleClosePacer;
    /** The protocol's goodbye carrying a reason: a GOODBYE frame, or a WebSocket close frame. */
    private final Function<String, Object> goodbye;

    CloseReasons(MeterRegistry registry, ClosePacer idleClosePacer, Function<String, Object> goodbye) {
        this.idleClosePacer = idleClosePacer;
        this.goodbye = goodbye;
        readerIdle = closed(registry, "reader_idle");
        malformedFrame = closed(registry, "malformed_frame");
        oversizedFrame = closed(registry, "oversized_frame");
        ioError = closed(registry, "io_error");
        internalError = closed(registry, "internal_error");
    }

    private static Counter closed(MeterRegistry registry, String reason) {
        return Counter.builder("wheelbeat.connection.closed")
                .description("Connections closed by wheelbeat, by reason")
                .baseUnit("connections")
                .tag("reason", reason)
                .register(registry);
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt instanceof IdleStateEvent idle && idle.state() == IdleState.READER_IDLE) {
            // Counted once: the idle event repeats while the connection waits for its slot.
            if (ctx.channel().isActive() && idleClosePacer.close(ctx.channel(), goodbye.apply(reasonOf(readerIdle)))) {
                readerIdle.increment();
                log.info("closing {}: reader idle", ctx.channel());
            }
        } else if (evt instanceof MaxConnectionAgeEvent age) {
            log.info("{} reached its maximum age of {} ms; saying goodbye", ctx.channel(), age.ageNanos() / 1_000_000);
            ctx.writeAndFlush(goodbye.apply("max connection age"));
        } else if (evt instanceof FirstMessageTimeoutEvent) {
            log.info("{} sent nothing in time; closed", ctx.channel());
        } else if (evt instanceof TooManyPingsEvent strikes) {
            log.info("{} pinged too often ({} strikes); closed", ctx.channel(), strikes.strikes());
        } else if (evt instanceof SlowConsumerEvent slow) {
            log.info("{} does not read fast enough ({}); closed", ctx.channel(), slow);
        } else if (evt instanceof HeartbeatFailedEvent missed) {
            log.info("{} answered none of our last {} pings; closed", ctx.channel(), missed.missedPongs());
        }
        ctx.fireUserEventTriggered(evt);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof CorruptedWebSocketFrameException corrupted) {
            // Netty's decoder has sent the close frame with the protocol's status and is closing.
            (corrupted.closeStatus().code() == WebSocketCloseStatus.MESSAGE_TOO_BIG.code()
                            ? oversizedFrame
                            : malformedFrame)
                    .increment();
            log.info("closing {}: {}", ctx.channel(), cause.getMessage());
            ctx.close();
        } else if (cause instanceof TooLongFrameException) {
            close(ctx, oversizedFrame, cause.getMessage());
        } else if (cause instanceof CorruptedFrameException) {
            close(ctx, malformedFrame, cause.getMessage());
        } else if (cause instanceof IOException) {
            close(ctx, ioError, cause.toString());
        } else {
            log.warn("{} failed; closing it", ctx.channel(), cause);
            close(ctx, internalError, cause.toString());
        }
    }

    private static String reasonOf(Counter closed) {
        return closed.getId().getTag("reason");
    }

    private void close(ChannelHandlerContext ctx, Counter reason, String detail) {
        if (ctx.channel().isActive()) {
            reason.increment();
            log.info("closing {}: {}", ctx.channel(), detail);
            // Flushed, then closed at once: a peer that does not read cannot hold the close up.
            ctx.writeAndFlush(goodbye.apply(reasonOf(reason)));
            ctx.close();
        }
    }
}
