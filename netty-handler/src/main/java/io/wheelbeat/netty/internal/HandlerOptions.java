package io.wheelbeat.netty.internal;

import io.micrometer.core.instrument.MeterRegistry;
import io.wheelbeat.netty.EventLoopWheels;
import java.util.Objects;
import java.util.random.RandomGenerator;

/**
 * The options the handlers' builders share: where the timers go, where the jitter comes from
 * (builders whose handler draws jitter), and where the meters go. A public builder holds one
 * and forwards its setters to it, so that no internal type is in a builder's hierarchy and the
 * checks and defaults live here once.
 *
 * <p>Internal: not part of wheelbeat's API. Not thread-safe, as the builders.
 */
public final class HandlerOptions {

    private EventLoopWheels wheels = EventLoopWheels.shared();
    private RandomGenerator random = Jitter.THREAD_LOCAL_RANDOM;
    private MeterRegistry registry;

    /** The wheels to put timers on; {@link EventLoopWheels#shared()} by default. */
    public void wheels(EventLoopWheels wheels) {
        this.wheels = Objects.requireNonNull(wheels, "wheels");
    }

    /** The source of the jitter; the calling event loop's {@code ThreadLocalRandom} by default. */
    public void random(RandomGenerator random) {
        this.random = Objects.requireNonNull(random, "random");
    }

    /** Where to register the handler's meters; none by default. */
    public void metrics(MeterRegistry registry) {
        this.registry = Objects.requireNonNull(registry, "registry");
    }

    /** The chosen wheels. */
    public EventLoopWheels wheels() {
        return wheels;
    }

    /** The chosen source of jitter. */
    public RandomGenerator random() {
        return random;
    }

    /** The chosen registry, or null for no meters. */
    public MeterRegistry registry() {
        return registry;
    }
}
