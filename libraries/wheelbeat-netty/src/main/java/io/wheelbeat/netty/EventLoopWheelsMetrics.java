package io.wheelbeat.netty;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.wheelbeat.core.internal.TimerWheelMetrics;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Binds the timer meters ({@code wheelbeat.timer.*}) of every wheel that an {@link EventLoopWheels}
 * creates from now on, each tagged {@code wheel} = {@code loop-0}, {@code loop-1}, ... in creation order:
 * <pre>{@code
 * new EventLoopWheelsMetrics(EventLoopWheels.shared()).bindTo(registry);
 * }</pre>
 * Bind before the first channel is registered: wheels created earlier are not bound. Meant for
 * long-lived event loops; the registry keeps each bound wheel's meters (and so the wheel) for as
 * long as it lives. A wheel records timer lateness into one registry only: bind each
 * {@code EventLoopWheels} once.
 *
 * <p>Thread-safe.
 */
public final class EventLoopWheelsMetrics implements MeterBinder {

    private final EventLoopWheels wheels;

    /**
     * Meters for the wheels of {@code wheels}.
     *
     * @param wheels the per-event-loop wheels
     */
    public EventLoopWheelsMetrics(EventLoopWheels wheels) {
        this.wheels = Objects.requireNonNull(wheels, "wheels");
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        Objects.requireNonNull(registry, "registry");
        AtomicInteger number = new AtomicInteger();
        wheels.onNewWheel((loop, wheel) ->
                new TimerWheelMetrics(wheel, Tags.of("wheel", "loop-" + number.getAndIncrement())).bindTo(registry));
    }
}
