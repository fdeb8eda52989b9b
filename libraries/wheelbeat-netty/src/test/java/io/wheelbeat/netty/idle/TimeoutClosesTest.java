package io.wheelbeat.netty.idle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.timeout.ReadTimeoutException;
import io.netty.handler.timeout.WriteTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The ways {@link TimeoutCloses} closes a channel whose read or write timed out: Netty's (the
 * exception fired, then the close) or quiet (the close alone), counted by reason when given a
 * registry. Real time on an embedded channel: the tests wait for the close, whenever it comes,
 * and assert what was fired and counted, never how fast.
 */
class TimeoutClosesTest {

    private static final Duration TIMEOUT = Duration.ofMillis(2);

    @Test
    void aQuietReadTimeoutClosesWithoutAnExceptionAndCountsTheClose() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        EmbeddedChannel channel = new EmbeddedChannel(
                new WheelReadTimeoutHandler(TIMEOUT, TimeoutCloses.quiet().withMetrics(registry)));
        awaitClose(channel);
        channel.checkException(); // nothing fired
        assertEquals(1.0, closed(registry, "read_timeout"));
        assertEquals(0.0, closed(registry, "write_timeout"));
    }

    @Test
    void byDefaultAReadTimeoutFiresNettysExceptionThenCloses() {
        EmbeddedChannel channel = new EmbeddedChannel(new WheelReadTimeoutHandler(TIMEOUT));
        awaitClose(channel);
        assertSame(ReadTimeoutException.INSTANCE, assertThrows(ReadTimeoutException.class, channel::checkException));
    }

    @Test
    void aQuietWriteTimeoutClosesWithoutAnExceptionAndCountsTheClose() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        HoldWrites held = new HoldWrites();
        EmbeddedChannel channel = new EmbeddedChannel(
                held,
                new WheelWriteTimeoutHandler(TIMEOUT, TimeoutCloses.quiet().withMetrics(registry)));
        channel.writeAndFlush("never completes");
        awaitClose(channel);
        channel.checkException();
        assertEquals(1, held.promises.size());
        assertEquals(1.0, closed(registry, "write_timeout"));
        assertEquals(0.0, closed(registry, "read_timeout"));
    }

    @Test
    void aCountedWriteTimeoutFiringTheExceptionCountsToo() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        TimeoutCloses closes = TimeoutCloses.firingException().withMetrics(registry);
        EmbeddedChannel channel = new EmbeddedChannel(new HoldWrites(), new WheelWriteTimeoutHandler(TIMEOUT, closes));
        channel.writeAndFlush("never completes");
        awaitClose(channel);
        assertThrows(WriteTimeoutException.class, channel::checkException);
        assertEquals(1.0, closed(registry, "write_timeout"));
    }

    @Test
    void durationConstructorsRefuseWhatTheyCannotMean() {
        assertThrows(NullPointerException.class, () -> new WheelReadTimeoutHandler((Duration) null));
        assertThrows(IllegalArgumentException.class, () -> new WheelReadTimeoutHandler(Duration.ofMillis(-1)));
        assertThrows(NullPointerException.class, () -> new WheelWriteTimeoutHandler(TIMEOUT, null));
        assertThrows(
                IllegalArgumentException.class, () -> new WheelWriteTimeoutHandler(Duration.ofSeconds(Long.MAX_VALUE)));
    }

    @Test
    void aZeroDurationDisablesTheReadTimeout() throws InterruptedException {
        EmbeddedChannel channel =
                new EmbeddedChannel(new WheelReadTimeoutHandler(Duration.ZERO, TimeoutCloses.quiet()));
        Thread.sleep(20);
        channel.runPendingTasks();
        channel.runScheduledPendingTasks();
        assertTrue(channel.isOpen());
    }

    private static double closed(SimpleMeterRegistry registry, String reason) {
        return registry.get("wheelbeat.connection.closed")
                .tag("reason", reason)
                .counter()
                .count();
    }

    /** Runs the channel's due tasks until it closes; fails after 10 s. */
    private static void awaitClose(EmbeddedChannel channel) {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (channel.isOpen()) {
            assertTrue(System.nanoTime() - deadline < 0, "still open after 10 s");
            channel.runPendingTasks();
            channel.runScheduledPendingTasks();
            Thread.onSpinWait();
        }
    }

    /** Nearest the head: keeps every write's promise pending, as a peer that reads nothing would. */
    private static final class HoldWrites extends ChannelOutboundHandlerAdapter {
        final List<ChannelPromise> promises = new ArrayList<>();

        @Override
        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
            promises.add(promise);
        }
    }
}
