package io.wheelbeat.netty;

import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.channel.embedded.EmbeddedChannel;
import io.wheelbeat.netty.idle.WheelIdleStateHandler;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Binding the per-loop wheels' meters, one {@code wheel=loop-N} tag per wheel. */
class EventLoopWheelsMetricsTest {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final EventLoopWheels wheels = new EventLoopWheels(Duration.ofMillis(1), 64);

    private EmbeddedChannel channelWithIdleHandler() {
        EmbeddedChannel ch = new EmbeddedChannel();
        ch.freezeTime();
        ch.pipeline()
                .addLast(WheelIdleStateHandler.builder()
                        .readerIdleTime(Duration.ofMillis(10))
                        .allIdleTime(Duration.ofMillis(20))
                        .wheels(wheels)
                        .build()
                        .newHandler());
        return ch;
    }

    @Test
    void eachNewWheelGetsItsOwnLoopTag() {
        new EventLoopWheelsMetrics(wheels).bindTo(registry);
        EmbeddedChannel first = channelWithIdleHandler();
        EmbeddedChannel second = channelWithIdleHandler();
        first.close();
        assertEquals(
                0,
                registry.get("wheelbeat.timer.pending")
                        .tag("wheel", "loop-0")
                        .gauge()
                        .value());
        assertEquals(
                2,
                registry.get("wheelbeat.timer.pending")
                        .tag("wheel", "loop-1")
                        .gauge()
                        .value());
        assertEquals(
                2,
                registry.get("wheelbeat.timer.cancelled")
                        .tag("wheel", "loop-0")
                        .functionCounter()
                        .count());
        second.finishAndReleaseAll();
    }

    @Test
    void timerLatenessIsRecordedAsTimersFire() {
        new EventLoopWheelsMetrics(wheels).bindTo(registry);
        EmbeddedChannel ch = channelWithIdleHandler();
        VirtualTime.advanceTo(ch, VirtualTime.now(ch) + MILLISECONDS.toNanos(25));
        long fired = (long) registry.get("wheelbeat.timer.expired")
                .tag("wheel", "loop-0")
                .functionCounter()
                .count();
        assertEquals(
                fired,
                registry.get("wheelbeat.timer.lateness")
                        .tag("wheel", "loop-0")
                        .timer()
                        .count());
        // The reader's timer at 10 ms, then the reader's and the all check's at 20 ms: each check's
        // timer fires, as each of Netty's idle tasks runs.
        assertEquals(3, fired);
        ch.finishAndReleaseAll();
    }

    @Test
    void wheelsMadeBeforeBindingAreNotBound() {
        EmbeddedChannel early = channelWithIdleHandler();
        new EventLoopWheelsMetrics(wheels).bindTo(registry);
        EmbeddedChannel late = channelWithIdleHandler();
        assertEquals(1, registry.find("wheelbeat.timer.pending").gauges().size());
        early.finishAndReleaseAll();
        late.finishAndReleaseAll();
    }

    @Test
    void nullArgumentsAreRejected() {
        assertThrows(NullPointerException.class, () -> new EventLoopWheelsMetrics(null));
        assertThrows(NullPointerException.class, () -> new EventLoopWheelsMetrics(wheels).bindTo(null));
    }
}
