package io.wheelbeat.core;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class TimerWheelMetricsTest {

    private final ManualTicker ticker = new ManualTicker();
    private final TimerWheel wheel = TimerWheel.builder().ticker(ticker).build();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    TimerWheelMetricsTest() {
        new TimerWheelMetrics(wheel, Tags.of("wheel", "test")).bindTo(registry);
    }

    @Test
    void countersFollowTheWheel() {
        long cancelled = wheel.schedule(id -> { }, 1, TimeUnit.MILLISECONDS);
        wheel.schedule(id -> { }, 1, TimeUnit.MILLISECONDS);
        wheel.schedule(id -> { }, 1, TimeUnit.HOURS);
        wheel.cancel(cancelled);
        ticker.advance(10, TimeUnit.MILLISECONDS);
        wheel.advance(ticker.nanoTime());
        assertEquals(3, registry.get("wheelbeat.timer.scheduled").tag("wheel", "test").functionCounter().count());
        assertEquals(1, registry.get("wheelbeat.timer.cancelled").functionCounter().count());
        assertEquals(1, registry.get("wheelbeat.timer.expired").functionCounter().count());
        assertEquals(1, registry.get("wheelbeat.timer.pending").gauge().value());
    }

    @Test
    void latenessIsFireTimeMinusDeadline() {
        wheel.schedule(id -> { }, 5, TimeUnit.MILLISECONDS);
        ticker.advance(8, TimeUnit.MILLISECONDS);
        wheel.advance(ticker.nanoTime());
        Timer lateness = registry.get("wheelbeat.timer.lateness").timer();
        assertEquals(1, lateness.count());
        assertEquals(3.0, lateness.totalTime(TimeUnit.MILLISECONDS), 1e-9);
    }

    @Test
    void failedCallbacksAreCounted() {
        wheel.schedule(id -> {
            throw new IllegalStateException("boom");
        }, 1, TimeUnit.MILLISECONDS);
        ticker.advance(5, TimeUnit.MILLISECONDS);
        wheel.advance(ticker.nanoTime());
        assertEquals(1, registry.get("wheelbeat.timer.failed").functionCounter().count());
    }
}
