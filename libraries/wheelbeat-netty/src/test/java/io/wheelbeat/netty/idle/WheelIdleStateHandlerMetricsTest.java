package io.wheelbeat.netty.idle;

import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Metrics;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.wheelbeat.netty.SlowDrainChannel;
import io.wheelbeat.netty.VirtualTime;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The idle event counter: {@code wheelbeat.idle.events}, tagged by state only. */
class WheelIdleStateHandlerMetricsTest {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    private static void runFor(EmbeddedChannel ch, long nanos) {
        VirtualTime.advanceTo(ch, VirtualTime.now(ch) + nanos);
    }

    private double count(String state) {
        return registry.get(IdleEventCounters.NAME)
                .tag("state", state)
                .counter()
                .count();
    }

    @Test
    void countsEachIdleEventUnderItsState() {
        EmbeddedChannel ch = VirtualTime.frozenChannel();
        ch.pipeline()
                .addLast(WheelIdleStateHandler.builder()
                        .metrics(registry)
                        .readerIdleTime(Duration.ofMillis(10))
                        .writerIdleTime(Duration.ofMillis(20))
                        .allIdleTime(Duration.ofMillis(40))
                        .build()
                        .newHandler());
        runFor(ch, MILLISECONDS.toNanos(40));
        assertEquals(4, count("reader"));
        assertEquals(2, count("writer"));
        assertEquals(1, count("all"));
        ch.finishAndReleaseAll();
    }

    @Test
    void theOnlyTagIsTheStateWithThreeValues() {
        EmbeddedChannel ch = VirtualTime.frozenChannel();
        ch.pipeline()
                .addLast(WheelIdleStateHandler.builder()
                        .metrics(registry)
                        .readerIdleTime(Duration.ofMillis(10))
                        .build()
                        .newHandler());
        runFor(ch, MILLISECONDS.toNanos(30));
        List<Meter> meters = List.copyOf(registry.find(IdleEventCounters.NAME).meters());
        Set<List<Tag>> tags = meters.stream().map(m -> m.getId().getTags()).collect(Collectors.toSet());
        assertEquals(
                Set.of(
                        List.of(Tag.of("state", "reader")),
                        List.of(Tag.of("state", "writer")),
                        List.of(Tag.of("state", "all"))),
                tags);
        assertEquals("events", meters.get(0).getId().getBaseUnit());
        ch.finishAndReleaseAll();
    }

    @Test
    void eventsSkippedForOutputProgressAreNotCounted() {
        SlowDrainChannel ch = new SlowDrainChannel();
        ch.freezeTime();
        IdleEventRecorder recorder = new IdleEventRecorder();
        ch.pipeline()
                .addLast(
                        WheelIdleStateHandler.builder()
                                .metrics(registry)
                                .observeOutput(true)
                                .writerIdleTime(Duration.ofMillis(10))
                                .build()
                                .newHandler(),
                        recorder);
        ch.drainBudget(1);
        ch.writeAndFlush(Unpooled.buffer().writeZero(100));
        for (int period = 1; period <= 5; period++) {
            runFor(ch, MILLISECONDS.toNanos(10));
            ch.flush(); // a byte more leaves each period: progress
        }
        assertEquals(1, recorder.fired.size());
        assertEquals(1, count("writer"));
        ch.finishAndReleaseAll();
    }

    @Test
    void handlersOfOneFactoryAddToTheSameCounters() {
        WheelIdleStateHandler.Factory factory = WheelIdleStateHandler.builder()
                .metrics(registry)
                .readerIdleTime(Duration.ofMillis(10))
                .build();
        EmbeddedChannel first = VirtualTime.frozenChannel();
        EmbeddedChannel second = VirtualTime.frozenChannel();
        first.pipeline().addLast(factory.newHandler());
        second.pipeline().addLast(factory.newHandler());
        runFor(first, MILLISECONDS.toNanos(10));
        runFor(second, MILLISECONDS.toNanos(20));
        assertEquals(3, count("reader"));
        first.finishAndReleaseAll();
        second.finishAndReleaseAll();
    }

    @Test
    void withoutARegistryNothingIsRegisteredAnywhere() {
        EmbeddedChannel ch = VirtualTime.frozenChannel();
        ch.pipeline().addLast(new WheelIdleStateHandler(10, 10, 10, MILLISECONDS));
        runFor(ch, MILLISECONDS.toNanos(50));
        assertTrue(Metrics.globalRegistry.find(IdleEventCounters.NAME).meters().isEmpty());
        ch.finishAndReleaseAll();
    }
}
