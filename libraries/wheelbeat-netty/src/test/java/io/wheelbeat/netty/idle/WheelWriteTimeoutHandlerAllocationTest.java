package io.wheelbeat.netty.idle;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.timeout.WriteTimeoutHandler;
import io.wheelbeat.netty.VirtualTime;
import java.lang.management.ManagementFactory;
import org.junit.jupiter.api.Test;

/**
 * Writes through {@link WheelWriteTimeoutHandler} allocate nothing and schedule nothing per write:
 * the same writes and flushes through a pipeline with and without it allocate the same number of
 * bytes on this thread, and its one wheel timer is all it keeps pending. Netty's
 * {@link WriteTimeoutHandler} is measured alongside, as the reference that does allocate.
 */
class WheelWriteTimeoutHandlerAllocationTest {

    private static final int ROUNDS = 50_000;
    private static final int WRITES_PER_FLUSH = 8;

    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    /** A socket at the head that takes a flush's writes whole: their promises complete on flush. */
    private static final class CompletingSink extends ChannelOutboundHandlerAdapter {
        private final ChannelPromise[] pending = new ChannelPromise[WRITES_PER_FLUSH];
        private int count;

        @Override
        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
            pending[count++] = promise;
        }

        @Override
        public void flush(ChannelHandlerContext ctx) {
            for (int i = 0; i < count; i++) {
                pending[i].setSuccess();
                pending[i] = null;
            }
            count = 0;
        }
    }

    private static long allocatedBy(EmbeddedChannel ch) {
        long before = THREADS.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < ROUNDS; i++) {
            for (int w = 0; w < WRITES_PER_FLUSH; w++) {
                ch.pipeline().write("data");
            }
            ch.pipeline().flush();
        }
        return THREADS.getCurrentThreadAllocatedBytes() - before;
    }

    private static EmbeddedChannel channel(ChannelHandler... handlers) {
        EmbeddedChannel ch = new EmbeddedChannel(new CompletingSink());
        ch.freezeTime(); // the timer never fires: only the writes' own cost is measured
        ch.pipeline().addLast(handlers);
        return ch;
    }

    @Test
    void writesThroughTheHandlerAllocateNothingAndKeepOneTimer() {
        assumeTrue(THREADS.isThreadAllocatedMemorySupported() && THREADS.isThreadAllocatedMemoryEnabled());
        EmbeddedChannel bare = channel();
        EmbeddedChannel wheel = channel(new WheelWriteTimeoutHandler(30, SECONDS));
        EmbeddedChannel netty = channel(new WriteTimeoutHandler(30, SECONDS));
        for (int warmUp = 0; warmUp < 3; warmUp++) {
            allocatedBy(bare);
            allocatedBy(wheel);
            allocatedBy(netty);
        }
        long bareBytes = allocatedBy(bare);
        long wheelBytes = allocatedBy(wheel);
        long nettyBytes = allocatedBy(netty);
        int writes = ROUNDS * WRITES_PER_FLUSH;
        System.out.printf(
                "bytes allocated per write beyond the bare pipeline: wheel %.2f, Netty's WriteTimeoutHandler %.2f%n",
                (wheelBytes - bareBytes) / (double) writes, (nettyBytes - bareBytes) / (double) writes);
        // Allowance: 64 KiB over 400,000 writes, for the measurement itself and stray JIT activity.
        assertTrue(
                wheelBytes - bareBytes < 64 * 1024,
                "with the handler " + wheelBytes + " B, without " + bareBytes + " B for " + writes + " writes");
        // The reference does allocate per write: the comparison can tell.
        assertTrue(
                nettyBytes - bareBytes > 16L * writes,
                "Netty's handler: " + nettyBytes + " B, bare " + bareBytes + " B");
        assertEquals(1, VirtualTime.pendingTimers(wheel), "one timer for every write of the channel");
        wheel.finishAndReleaseAll();
        assertEquals(0, VirtualTime.pendingTimers(wheel), "the timer is cancelled when the channel goes");
    }

    /** As Netty's: zero or less disables the handler (a void promise stays void, no timer), and a null unit is refused. */
    @Test
    void aTimeoutOfZeroOrLessDisablesTheHandlerAndANullUnitIsRefused() {
        for (long timeout : new long[] {0, -1, Long.MIN_VALUE}) {
            ChannelPromise[] seen = new ChannelPromise[1];
            EmbeddedChannel ch = new EmbeddedChannel(
                    new ChannelOutboundHandlerAdapter() {
                        @Override
                        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
                            seen[0] = promise;
                        }
                    },
                    new WheelWriteTimeoutHandler(timeout, SECONDS),
                    new WheelReadTimeoutHandler(timeout, SECONDS));
            ch.pipeline().write("data", ch.voidPromise());
            assertTrue(seen[0].isVoid(), "timeout " + timeout);
            assertEquals(0, VirtualTime.pendingTimers(ch), "timeout " + timeout);
            ch.finishAndReleaseAll();
        }
        assertThrows(NullPointerException.class, () -> new WheelWriteTimeoutHandler(1, null));
        assertThrows(NullPointerException.class, () -> new WheelReadTimeoutHandler(1, null));
    }
}
