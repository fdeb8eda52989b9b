package io.wheelbeat.netty;

import io.micrometer.core.instrument.MeterRegistry;
import java.util.Objects;

/**
 * The settings every builder of wheelbeat's handlers shares: the wheels and the meters. Extended
 * only by wheelbeat's builders. Not thread-safe; without a registry no Micrometer is needed.
 *
 * @param <B> the builder's own type, returned by every setter
 */
public abstract class HandlerBuilder<B extends HandlerBuilder<B>> {

    private EventLoopWheels wheels = EventLoopWheels.shared();
    private MeterRegistry registry;

    /** For wheelbeat's builders only. */
    protected HandlerBuilder() {}

    /**
     * Puts the timers on these per-event-loop wheels; {@link EventLoopWheels#shared()} by default.
     *
     * @param wheels the per-event-loop wheels
     * @return this builder
     * @throws NullPointerException if {@code wheels} is null
     */
    public final B wheels(EventLoopWheels wheels) {
        this.wheels = Objects.requireNonNull(wheels, "wheels");
        return self();
    }

    /**
     * Records the meters in {@code registry}, registered once when {@code build()} is called.
     * Without it, no meter exists and nothing is recorded.
     *
     * @param registry the meter registry
     * @return this builder
     * @throws NullPointerException if {@code registry} is null
     */
    public final B metrics(MeterRegistry registry) {
        this.registry = Objects.requireNonNull(registry, "registry");
        return self();
    }

    /**
     * The wheels chosen with {@link #wheels(EventLoopWheels)}, or the shared ones.
     *
     * @return the wheels to put the timers on
     */
    protected final EventLoopWheels wheels() {
        return wheels;
    }

    /**
     * The registry given to {@link #metrics(MeterRegistry)}.
     *
     * @return the registry, or null for no meters
     */
    protected final MeterRegistry registry() {
        return registry;
    }

    /** This builder as its own type: {@code B} is the subclass by the type parameter's contract. */
    @SuppressWarnings("unchecked")
    final B self() {
        return (B) this;
    }
}
