package io.wheelbeat.netty;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.channel.ChannelHandler;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.timeout.IdleStateHandler;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * The heap one connection's idle machinery costs, started on a channel, against Netty's
 * {@link IdleStateHandler} with the same settings (its scheduled tasks included), as counted by
 * {@link RetainedHeap}: exact byte counts on this JVM, not timings. The shared wheel's own cost
 * per timer (its arrays, about 24 B) is not in these figures.
 */
class WheelIdleStateHandlerFootprintTest {

    private static RetainedHeap.Footprint startedFootprint(Supplier<ChannelHandler> handlers) {
        ChannelHandler measured = handlers.get();
        ChannelHandler elsewhere = handlers.get();
        EmbeddedChannel ch = VirtualTime.frozenChannel(measured);
        EmbeddedChannel other = VirtualTime.frozenChannel(elsewhere);
        RetainedHeap.Footprint footprint = RetainedHeap.of(measured, elsewhere);
        ch.finishAndReleaseAll();
        other.finishAndReleaseAll();
        return footprint;
    }

    private static void assertSmallerThanNettys(String settings, Supplier<ChannelHandler> ours,
                                                Supplier<ChannelHandler> nettys) {
        RetainedHeap.Footprint wheel = startedFootprint(ours);
        RetainedHeap.Footprint netty = startedFootprint(nettys);
        System.out.println("footprint " + settings + ": WheelIdleStateHandler " + wheel
                + "; IdleStateHandler " + netty);
        assertTrue(wheel.bytes() < netty.bytes(), settings + ": ours " + wheel + ", Netty's " + netty);
    }

    @Test
    void aReaderWriterAllIdleHandlerRetainsLessHeapThanNettys() {
        assertSmallerThanNettys("reader 20 s, writer 10 s, all 30 s", () -> new WheelIdleStateHandler(20, 10, 30, SECONDS),
                () -> new IdleStateHandler(20, 10, 30, SECONDS));
    }
}
