package io.wheelbeat.core.internal;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.wheelbeat.core.ExecutorDrivenWheel;
import io.wheelbeat.core.TimerWheel;
import io.wheelbeat.core.WheelTimeout;
import io.wheelbeat.core.WheelTimer;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;

/**
 * Micrometer meters of one timing wheel:
 * <ul>
 *   <li>{@code wheelbeat.timer.pending} (gauge, timers): scheduled, not yet fired or cancelled;</li>
 *   <li>{@code wheelbeat.timer.scheduled}, {@code .cancelled}, {@code .expired},
 *       {@code .failed} (counters, timers): totals; failed counts timer callbacks and
 *       timeout tasks ({@link WheelTimeout}) that threw;</li>
 *   <li>{@code wheelbeat.timer.lateness} (timer, seconds, with a percentile histogram): how long
 *       after its deadline each timer fired.</li>
 * </ul>
 * Give each wheel its own low-cardinality tags (for instance {@code wheel=loop-3}); never tag by
 * connection.
 *
 * <p>Micrometer is an optional dependency of heartbeat-core: add {@code io.micrometer:micrometer-core}
 * to use this binder; nothing else in the core needs it.
 *
 * <p>Thread-safe. Counts are read from the wheel as racy snapshots; lateness is recorded by the
 * wheel's owner thread as timers fire.
 */
public final class TimerWheelMetrics implements MeterBinder {

    private final HandoverScheduler driver;
    private final TimerWheel wheel;
    private final Tags tags;

    /**
     * Meters for the wheel of a {@link WheelTimer}.
     *
     * @param timer the timer whose wheel is measured
     * @param tags extra tags of every meter (low cardinality only)
     */
    public TimerWheelMetrics(WheelTimer timer, Tags tags) {
        this(Drivers.timers(timer), tags);
    }

    /**
     * Meters for the wheel of an {@link ExecutorDrivenWheel}.
     *
     * @param driven the driver whose wheel is measured
     * @param tags extra tags of every meter (low cardinality only)
     */
    public TimerWheelMetrics(ExecutorDrivenWheel driven, Tags tags) {
        this(Drivers.timers(driven), tags);
    }

    private TimerWheelMetrics(HandoverScheduler driver, Tags tags) {
        this.driver = Objects.requireNonNull(driver, "driver");
        this.wheel = driver.wheel;
        this.tags = Objects.requireNonNull(tags, "tags");
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        Gauge.builder("wheelbeat.timer.pending", driver, HandoverScheduler::placed)
                .description("Timers scheduled and neither fired nor cancelled")
                .baseUnit("timers")
                .tags(tags)
                .strongReference(true)
                .register(registry);
        counter(registry, "wheelbeat.timer.scheduled", "Timers scheduled", HandoverScheduler::scheduledCount);
        counter(registry, "wheelbeat.timer.cancelled", "Pending timers cancelled", HandoverScheduler::cancelledCount);
        counter(registry, "wheelbeat.timer.expired", "Timers that fired", HandoverScheduler::expiredCount);
        FunctionCounter.builder("wheelbeat.timer.failed", driver, HandoverScheduler::failedCount)
                .description("Timer callbacks and timeout tasks that threw")
                .baseUnit("timers")
                .tags(tags)
                .register(registry);
        Timer lateness = Timer.builder("wheelbeat.timer.lateness")
                .description("Fire time minus deadline of each expired timer")
                .tags(tags)
                .publishPercentileHistogram()
                .minimumExpectedValue(Duration.ofNanos(wheel.tickNanos() / 16))
                .maximumExpectedValue(Duration.ofSeconds(10))
                .register(registry);
        driver.lateness(nanos -> lateness.record(nanos, TimeUnit.NANOSECONDS));
    }

    private void counter(
            MeterRegistry registry, String name, String description, ToDoubleFunction<HandoverScheduler> count) {
        FunctionCounter.builder(name, driver, count)
                .description(description)
                .baseUnit("timers")
                .tags(tags)
                .register(registry);
    }
}
