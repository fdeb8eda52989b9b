package io.wheelbeat.netty.internal;

import io.micrometer.core.instrument.MeterRegistry;
import io.wheelbeat.netty.EventLoopWheels;
import java.util.Objects;
import java.util.random.RandomGenerator;

/**
 * The settings every wheelbeat handler builder has: where its timers go, where its jitter comes
 * from, and where its meters go.
 *
 * <p>Internal: the public builders extend it; use them. Not thread-safe.
 *
 * @param <B> the concrete builder, returned by every setter
 */
public abstract class HandlerBuilder<B extends HandlerBuilder<B>> {

    private EventLoopWheels wheels = EventLoopWheels.shared();
    private RandomGenerator random = Jitter.THREAD_LOCAL_RANDOM;
    private MeterRegistry registry;

    protected HandlerBuilder() {
    }

    /** The wheels to put timers on; {@link EventLoopWheels#shared()} by default. */
    public final B wheels(EventLoopWheels wheels) {
        this.wheels = Objects.requireNonNull(wheels, "wheels");
        return self();
    }

    /**
     * The source of the jitter; the calling event loop's {@code ThreadLocalRandom} by default.
     * It is called on every channel's event loop, so it must be thread-safe if the handlers serve
     * several loops. A seeded or scripted generator makes tests exact.
     */
    public final B random(RandomGenerator random) {
        this.random = Objects.requireNonNull(random, "random");
        return self();
    }

    /**
     * Records the handler's meters in {@code registry}, registered once when the factory is
     * built. Without it, no meter exists and nothing is recorded.
     */
    public final B metrics(MeterRegistry registry) {
        this.registry = Objects.requireNonNull(registry, "registry");
        return self();
    }

    /** The chosen wheels. */
    protected final EventLoopWheels chosenWheels() {
        return wheels;
    }

    /** The chosen source of jitter. */
    protected final RandomGenerator chosenRandom() {
        return random;
    }

    /** The chosen registry, or null for no meters. */
    protected final MeterRegistry chosenRegistry() {
        return registry;
    }

    /** This builder, as its concrete type. */
    @SuppressWarnings("unchecked")
    protected final B self() {
        return (B) this;
    }
}
