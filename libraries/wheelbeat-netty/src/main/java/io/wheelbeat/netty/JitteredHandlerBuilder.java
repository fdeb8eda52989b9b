package io.wheelbeat.netty;

import io.wheelbeat.netty.internal.Jitter;
import java.util.Objects;
import java.util.random.RandomGenerator;

/**
 * A {@link HandlerBuilder} whose handlers draw jitter, and so take its source. Extended only by
 * wheelbeat's builders. Not thread-safe.
 *
 * @param <B> the builder's own type, returned by every setter
 */
public abstract class JitteredHandlerBuilder<B extends JitteredHandlerBuilder<B>> extends HandlerBuilder<B> {

    private RandomGenerator random = Jitter.THREAD_LOCAL_RANDOM;

    /** For wheelbeat's builders only. */
    protected JitteredHandlerBuilder() {}

    /**
     * The source of the jitter; the calling event loop's {@code ThreadLocalRandom} by default.
     * It is called on every channel's event loop, so it must be thread-safe if the handlers
     * serve several loops. A seeded or scripted generator makes tests exact.
     *
     * @param random the source of the jitter; thread-safe
     * @return this builder
     * @throws NullPointerException if {@code random} is null
     */
    public final B random(RandomGenerator random) {
        this.random = Objects.requireNonNull(random, "random");
        return self();
    }

    /**
     * The source given to {@link #random(RandomGenerator)}, or the thread-local one.
     *
     * @return the source of the jitter
     */
    protected final RandomGenerator random() {
        return random;
    }
}
