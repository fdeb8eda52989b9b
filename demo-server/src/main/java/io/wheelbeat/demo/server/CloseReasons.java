package io.wheelbeat.demo.server;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.CorruptedFrameException;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.timeout.IdleState;
import io.netty.handler.timeout.IdleStateEvent;
import io.wheelbeat.demo.protocol.Frame;
import io.wheelbeat.netty.ClosePacer;
import io.wheelbeat.netty.FirstMessageTimeoutEvent;
import io.wheelbeat.netty.MaxConnectionAgeEvent;
import io.wheelbeat.netty.SlowConsumerEvent;
import io.wheelbeat.netty.heartbeat.TooManyPingsEvent;
import java.io.IOException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The tail of the server pipeline: turns every way a connection can go wrong into a close with a
 * logged and counted reason ({@code wheelbeat.connection.closed}, tag {@code reason}), so the
 * server stays up and serves everyone else. Closes that a wheelbeat handler already counts
 * (first-message timeout, too many pings, maximum age, slow consumer) are only logged here.
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

    CloseReasons(MeterRegistry registry, ClosePacer idleClosePacer) {
        this.idleClosePacer = idleClosePacer;
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
            if (ctx.channel().isActive() && idleClosePacer.close(ctx.channel(), Frame.goodbye(reasonOf(readerIdle)))) {
                readerIdle.increment();
                log.info("closing {}: reader idle", ctx.channel());
            }
        } else if (evt instanceof MaxConnectionAgeEvent age) {
            log.info("{} reached its maximum age of {} ms; saying goodbye", ctx.channel(), age.ageNanos() / 1_000_000);
            ctx.writeAndFlush(Frame.goodbye("max connection age"));
        } else if (evt instanceof FirstMessageTimeoutEvent) {
            log.info("{} sent nothing in time; closed", ctx.channel());
        } else if (evt instanceof TooManyPingsEvent strikes) {
            log.info("{} pinged too often ({} strikes); closed", ctx.channel(), strikes.strikes());
        } else if (evt instanceof SlowConsumerEvent slow) {
            log.info("{} does not read fast enough ({}); closed", ctx.channel(), slow);
        }
        ctx.fireUserEventTriggered(evt);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof TooLongFrameException) {
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

    private static void close(ChannelHandlerContext ctx, Counter reason, String detail) {
        if (ctx.channel().isActive()) {
            reason.increment();
            log.info("closing {}: {}", ctx.channel(), detail);
            // Flushed, then closed at once: a peer that does not read cannot hold the close up.
            ctx.writeAndFlush(Frame.goodbye(reasonOf(reason)));
            ctx.close();
        }
    }
}
