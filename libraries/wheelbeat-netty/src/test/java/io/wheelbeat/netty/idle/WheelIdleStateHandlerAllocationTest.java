package io.wheelbeat.netty.idle;

import static java.util.concurrent.TimeUnit.MICROSECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.channel.embedded.EmbeddedChannel;
import io.wheelbeat.netty.VirtualTime;
import java.lang.management.ManagementFactory;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The per-message paths allocate nothing: read batches and write completions only stamp the time,
 * and writes reuse one listener. Measured with the JVM's per-thread allocation
 * counter, after a warm-up, against the same pipeline without the handler.
 */
class WheelIdleStateHandlerAllocationTest {

    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    private static final int MESSAGES = 100_000;
    private static final Object MESSAGE = "message";

    /** Ends reads here and completes writes at once, so the channel allocates nothing per message. */
    private static final class Sink extends ChannelDuplexHandler {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {}

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {}

        @Override
        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
            promise.setSuccess();
        }
    }

    /** Bytes allocated by this thread per read batch (a read and its completion), time moving on. */
    private static double bytesPerReadBatch(EmbeddedChannel ch) {
        readBatches(ch, MESSAGES); // warm-up: class loading, JIT
        long before = THREADS.getCurrentThreadAllocatedBytes();
        readBatches(ch, MESSAGES);
        return (THREADS.getCurrentThreadAllocatedBytes() - before) / (double) MESSAGES;
    }

    private static void readBatches(EmbeddedChannel ch, int count) {
        for (int i = 0; i < count; i++) {
            ch.advanceTimeBy(1, MICROSECONDS); // so that every batch really moves the deadlines
            ch.pipeline().fireChannelRead(MESSAGE);
            ch.pipeline().fireChannelReadComplete();
        }
    }

    /** Bytes allocated by this thread per write and flush, time moving on. */
    private static double bytesPerWrite(EmbeddedChannel ch) {
        writes(ch, MESSAGES);
        long before = THREADS.getCurrentThreadAllocatedBytes();
        writes(ch, MESSAGES);
        return (THREADS.getCurrentThreadAllocatedBytes() - before) / (double) MESSAGES;
    }

    private static void writes(EmbeddedChannel ch, int count) {
        for (int i = 0; i < count; i++) {
            ch.advanceTimeBy(1, MICROSECONDS);
            ch.pipeline().writeAndFlush(MESSAGE);
        }
    }

    @BeforeEach
    void allocationCounterAvailable() {
        assumeTrue(THREADS.isThreadAllocatedMemorySupported() && THREADS.isThreadAllocatedMemoryEnabled());
    }

    @Test
    void readBatchesAllocateNothing() {
        EmbeddedChannel ch = VirtualTime.frozenChannel(new WheelIdleStateHandler(1, 1, 1, SECONDS), new Sink());
        double withHandler = bytesPerReadBatch(ch);
        double without = bytesPerReadBatch(VirtualTime.frozenChannel(new Sink()));
        assertTrue(
                withHandler - without < 1, withHandler + " bytes per read batch, " + without + " without the handler");
        assertEquals(3, VirtualTime.pendingTimers(ch));
        ch.finishAndReleaseAll();
    }

    @Test
    void writesAllocateNothingBeyondTheirPromise() {
        // The promise (DefaultChannelPromise) is the caller's, with or without the handler.
        EmbeddedChannel ch = VirtualTime.frozenChannel(new Sink(), new WheelIdleStateHandler(1, 1, 1, SECONDS));
        double withHandler = bytesPerWrite(ch);
        double without = bytesPerWrite(VirtualTime.frozenChannel(new Sink()));
        assertTrue(withHandler - without < 1, withHandler + " bytes per write, " + without + " without the handler");
        ch.finishAndReleaseAll();
    }
}
