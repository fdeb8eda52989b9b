package io.wheelbeat.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.wheelbeat.core.internal.ManualTicker;
import io.wheelbeat.core.internal.TimerWheelMetrics;
import io.wheelbeat.core.internal.WheelSettings;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class TimerWheelMetricsTest {

    private final VirtualExecutor executor = new VirtualExecutor();
    private final ExecutorDrivenWheel wheel =
            new ExecutorDrivenWheel(executor, new WheelSettings().ticker(executor.ticker));
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    TimerWheelMetricsTest() {
        new TimerWheelMetrics(wheel, Tags.of("wheel", "test")).bindTo(registry);
    }

    @Test
    void countersFollowTheWheel() {
        TimerNode cancelled = RunningNode.idle();
        wheel.schedule(cancelled, TimeUnit.MILLISECONDS.toNanos(1));
        wheel.schedule(RunningNode.idle(), TimeUnit.MILLISECONDS.toNanos(1));
        wheel.schedule(RunningNode.idle(), TimeUnit.HOURS.toNanos(1));
        wheel.cancel(cancelled);
        executor.advance(10, TimeUnit.MILLISECONDS);
        assertEquals(
                3,
                registry.get("wheelbeat.timer.scheduled")
                        .tag("wheel", "test")
                        .functionCounter()
                        .count());
        assertEquals(
                1, registry.get("wheelbeat.timer.cancelled").functionCounter().count());
        assertEquals(
                1, registry.get("wheelbeat.timer.expired").functionCounter().count());
        assertEquals(1, registry.get("wheelbeat.timer.pending").gauge().value());
    }

    @Test
    void latenessIsFireTimeMinusDeadline() {
        wheel.schedule(RunningNode.idle(), TimeUnit.MILLISECONDS.toNanos(5));
        executor.ticker.advance(8, TimeUnit.MILLISECONDS); // the executor runs the wheel 3 ms late
        executor.runDue();
        Timer lateness = registry.get("wheelbeat.timer.lateness").timer();
        assertEquals(1, lateness.count());
        assertEquals(3.0, lateness.totalTime(TimeUnit.MILLISECONDS), 1e-9);
    }

    @Test
    void failedCallbacksAreCounted() {
        wheel.schedule(
                new RunningNode(() -> {
                    throw new IllegalStateException("boom");
                }),
                TimeUnit.MILLISECONDS.toNanos(1));
        executor.advance(5, TimeUnit.MILLISECONDS);
        assertEquals(1, registry.get("wheelbeat.timer.failed").functionCounter().count());
    }
    /** Issue 21 item 10: the tasks of timeouts ({@code newTimeout}) that threw were not counted. */
    @Test
    void failedTimeoutTasksAreCounted() {
        wheel.newTimeout(
                timeout -> {
                    throw new IllegalStateException("boom");
                },
                TimeUnit.MILLISECONDS.toNanos(1));
        wheel.newTimeout(timeout -> {}, TimeUnit.MILLISECONDS.toNanos(2));
        executor.advance(5, TimeUnit.MILLISECONDS);
        assertEquals(1, wheel.failedCount());
        assertEquals(1, registry.get("wheelbeat.timer.failed").functionCounter().count());
        assertEquals(
                2, registry.get("wheelbeat.timer.expired").functionCounter().count());
    }

    @Test
    void failedTasksOfAWheelTimerAreCounted() throws InterruptedException {
        ManualTicker ticker = new ManualTicker();
        WheelTimer timer = VirtualTimers.wheelTimer(ticker, WheelTimer.builder());
        try {
            SimpleMeterRegistry timerRegistry = new SimpleMeterRegistry();
            new TimerWheelMetrics(timer, Tags.of("wheel", "timer")).bindTo(timerRegistry);
            CountDownLatch after = new CountDownLatch(1);
            timer.newTimeout(
                    timeout -> {
                        throw new IllegalStateException("boom");
                    },
                    TimeUnit.MILLISECONDS.toNanos(1));
            timer.newTimeout(timeout -> after.countDown(), TimeUnit.MILLISECONDS.toNanos(2));
            ticker.advance(5, TimeUnit.MILLISECONDS);
            assertTrue(after.await(30, TimeUnit.SECONDS), "the timer thread did not catch up");
            assertEquals(1, timer.failedCount());
            assertEquals(
                    1,
                    timerRegistry
                            .get("wheelbeat.timer.failed")
                            .functionCounter()
                            .count());
        } finally {
            timer.stop();
        }
    }
}
