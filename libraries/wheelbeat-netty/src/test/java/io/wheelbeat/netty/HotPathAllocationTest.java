package io.wheelbeat.netty;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.embedded.EmbeddedChannel;
import io.wheelbeat.netty.deadline.ConnectionDeadlineHandler;
import io.wheelbeat.netty.deadline.MaxConnectionAge;
import io.wheelbeat.netty.guard.SlowConsumerHandler;
import io.wheelbeat.netty.heartbeat.HeartbeatHandler;
import io.wheelbeat.netty.heartbeat.PingLimits;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Reads (late pongs included), writes and flushes through the handlers allocate nothing: the same traffic through a
 * pipeline with and without them allocates the same number of bytes on this thread.
 */
class HotPathAllocationTest {

    private static final int OPERATIONS = 1_000_000;

    /** A pong that answers no ping: the heartbeat handler consumes and counts it as late. */
    private record Pong(long pingId) {}

    private static final Pong LATE_PONG = new Pong(HeartbeatHandler.NO_PING);

    /** Takes the writes and flushes at the head end, so that the channel's own queue never grows. */
    private static final class OutboundSink extends ChannelOutboundHandlerAdapter {
        @Override
        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {}

        @Override
        public void flush(ChannelHandlerContext ctx) {}
    }

    /** Takes the reads at the tail end. */
    private static final class InboundSink extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {}
    }

    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    private static long allocatedBy(EmbeddedChannel ch) {
        long before = THREADS.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < OPERATIONS; i++) {
            ch.pipeline().fireChannelRead("data");
            ch.pipeline().fireChannelRead(LATE_PONG);
            ch.pipeline().write("data", ch.voidPromise());
            ch.pipeline().flush();
        }
        return THREADS.getCurrentThreadAllocatedBytes() - before;
    }

    @Test
    void readsWritesAndFlushesThroughTheHandlersAllocateNothing() {
        assumeTrue(THREADS.isThreadAllocatedMemorySupported() && THREADS.isThreadAllocatedMemoryEnabled());
        EmbeddedChannel bare = new EmbeddedChannel(new OutboundSink(), new InboundSink());
        EmbeddedChannel handled = new EmbeddedChannel(
                new OutboundSink(),
                SlowConsumerHandler.builder().build().newHandler(),
                HeartbeatHandler.builder()
                        .sendPings(
                                Duration.ofHours(1),
                                (c, id) -> "PING",
                                msg -> msg instanceof Pong,
                                msg -> ((Pong) msg).pingId())
                        .answerPings("PING"::equals, (c, ping) -> "PONG")
                        .pingLimits(PingLimits.of(Duration.ofMillis(1), 3))
                        .build()
                        .newHandler(),
                ConnectionDeadlineHandler.builder()
                        .firstMessageTimeout(Duration.ofHours(1))
                        .maxConnectionAge(MaxConnectionAge.of(Duration.ofHours(1)))
                        .build()
                        .newHandler(),
                new InboundSink());
        for (int warmUp = 0; warmUp < 3; warmUp++) {
            allocatedBy(bare);
            allocatedBy(handled);
        }
        long bareBytes = allocatedBy(bare);
        long handledBytes = allocatedBy(handled);
        // Allowance: 64 KiB over 3 million operations, for the measurement itself and stray JIT activity.
        assertTrue(
                handledBytes - bareBytes < 64 * 1024,
                "with the handlers " + handledBytes + " B, without " + bareBytes + " B for " + OPERATIONS + " rounds");
    }
}
