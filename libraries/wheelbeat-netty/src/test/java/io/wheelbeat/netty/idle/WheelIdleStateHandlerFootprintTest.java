package io.wheelbeat.netty.idle;

import static java.util.concurrent.TimeUnit.NANOSECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.channel.ChannelHandler;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.timeout.IdleStateHandler;
import io.wheelbeat.core.WheelTimer;
import io.wheelbeat.netty.VirtualTime;
import java.time.Duration;
import java.util.function.Supplier;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.openjdk.jol.vm.VM;

/**
 * The heap one connection's idle machinery costs, started on a channel, against Netty's
 * {@link IdleStateHandler} with the same settings (its scheduled tasks included), as counted by
 * {@link RetainedHeap}: exact byte counts, not timings, on a 64-bit JVM with 12-byte headers and
 * compressed references (the default below 32 GB of heap). The handler is its reader check's
 * timer node; a reader-only handler on the shared wheels is that node, its context and its flags
 * (the reader idle time among them), and the last read's time: 48 B. Anything more (the writer and
 * all checks, nodes of their own, meters, other wheels, a shared timer) hangs off one holder.
 */
class WheelIdleStateHandlerFootprintTest {

    @BeforeAll
    static void compressedReferences() {
        assumeTrue(
                VM.current().objectHeaderSize() == 12 && VM.current().arrayIndexScale("java.lang.Object") == 4,
                "byte counts stated for 12-byte headers and 4-byte references");
    }

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

    /** Ours retains exactly {@code bytes}, and at most {@code share} of what Netty's does with the same settings. */
    private static void assertRetains(
            long bytes, double share, String settings, Supplier<ChannelHandler> ours, Supplier<ChannelHandler> nettys) {
        RetainedHeap.Footprint wheel = startedFootprint(ours);
        RetainedHeap.Footprint netty = startedFootprint(nettys);
        System.out.println(
                "footprint " + settings + ": WheelIdleStateHandler " + wheel + "; IdleStateHandler " + netty);
        assertEquals(bytes, wheel.bytes(), settings + ": ours " + wheel);
        assertTrue(wheel.bytes() <= share * netty.bytes(), settings + ": ours " + wheel + ", Netty's " + netty);
    }

    @Test
    void aReaderIdleHandlerRetains48BytesAQuarterOfNettys() {
        assertRetains(
                48,
                0.25,
                "reader 20 s",
                () -> new WheelIdleStateHandler(20, 0, 0, SECONDS),
                () -> new IdleStateHandler(20, 0, 0, SECONDS));
    }

    /**
     * The flags hold a reader idle time of up to 2^22 - 1 whole nanoseconds, microseconds,
     * milliseconds or seconds; any other time goes to the holder, with the extras (32 + 24 B).
     */
    @Test
    void aReaderIdleTimeTheFlagsCannotHoldCostsAHolder() {
        long nanos = SECONDS.toNanos(20) + 1;
        assertRetains(
                104,
                0.5,
                "reader 20 s + 1 ns",
                () -> new WheelIdleStateHandler(nanos, 0, 0, NANOSECONDS),
                () -> new IdleStateHandler(nanos, 0, 0, NANOSECONDS));
    }

    @Test
    void aReaderIdleHandlerWithMetersRetains80Bytes() {
        WheelIdleStateHandler.Factory factory = WheelIdleStateHandler.builder()
                .readerIdleTime(Duration.ofSeconds(20))
                .metrics(new SimpleMeterRegistry())
                .build();
        assertRetains(
                80, 0.4, "reader 20 s, meters", factory::newHandler, () -> new IdleStateHandler(20, 0, 0, SECONDS));
    }

    /** The handler (48), the holder (32), the all check (48) and the write listener's check (56). */
    @Test
    void aReaderWriterAllIdleHandlerRetains184Bytes() {
        assertRetains(
                184,
                0.5,
                "reader 20 s, writer 10 s, all 30 s",
                () -> new WheelIdleStateHandler(20, 10, 30, SECONDS),
                () -> new IdleStateHandler(20, 10, 30, SECONDS));
    }

    /**
     * On a shared timer each check also holds a timeout handle (56 B) and the holder this
     * handler's timeouts (40 B): 176 B for a reader check (0.81x Netty's), 392 B for three (1.0x).
     */
    @Test
    void aHandlerOnASharedTimerRetainsAtMostWhatNettysDoes() {
        WheelTimer timer = WheelTimer.builder().build();
        try {
            WheelIdleStateHandler.Builder builder =
                    WheelIdleStateHandler.builder().timer(timer).readerIdleTime(Duration.ofSeconds(20));
            assertRetains(
                    176,
                    1.0,
                    "reader 20 s, shared timer",
                    builder.build()::newHandler,
                    () -> new IdleStateHandler(20, 0, 0, SECONDS));
            builder.writerIdleTime(Duration.ofSeconds(10)).allIdleTime(Duration.ofSeconds(30));
            assertRetains(
                    392,
                    1.0,
                    "reader 20 s, writer 10 s, all 30 s, shared timer",
                    builder.build()::newHandler,
                    () -> new IdleStateHandler(20, 10, 30, SECONDS));
        } finally {
            timer.stop();
        }
    }
}
