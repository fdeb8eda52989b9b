package io.wheelbeat.core.ratelimit;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;

/**
 * Micrometer meters of one {@link KeyedRateLimiter}, tagged {@code limiter=<name>}, never by key:
 * {@code wheelbeat.ratelimit.admitted}, {@code .rejected} ({@code reason=rate|key_limit}),
 * {@code .keys}, {@code .evicted} ({@code cause=idle|room}); in cluster mode also
 * {@code wheelbeat.ratelimit.store.round.trips}, {@code .draws}, {@code .leased}, {@code .fallbacks}
 * ({@code cause=timeout|unavailable|error|key}), {@code .saturated}, {@code .exchanges},
 * {@code .latency} and {@code .latency.max}. Needs the optional {@code micrometer-core}.
 * Thread-safe; counts are snapshots.
 */
public final class KeyedRateLimiterMetrics implements MeterBinder {

    private final KeyedRateLimiter<?> limiter;
    private final Tags tags;

    /**
     * Meters tagged with the limiter's name only.
     *
     * @param limiter the limiter to measure
     */
    public KeyedRateLimiterMetrics(KeyedRateLimiter<?> limiter) {
        this(limiter, Tags.empty());
    }

    /**
     * Meters also tagged with {@code extraTags} (low cardinality only).
     *
     * @param limiter the limiter to measure
     * @param extraTags extra tags of every meter
     */
    public KeyedRateLimiterMetrics(KeyedRateLimiter<?> limiter, Tags extraTags) {
        this.limiter = Objects.requireNonNull(limiter, "limiter");
        this.tags = Objects.requireNonNull(extraTags, "extraTags").and("limiter", limiter.name());
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        counter(
                registry,
                "wheelbeat.ratelimit.admitted",
                Tags.empty(),
                "requests",
                "Requests admitted",
                KeyedRateLimiter::admittedCount);
        counter(
                registry,
                "wheelbeat.ratelimit.rejected",
                Tags.of("reason", "rate"),
                "requests",
                "Requests refused: over the key's limit",
                KeyedRateLimiter::rejectedCount);
        counter(
                registry,
                "wheelbeat.ratelimit.rejected",
                Tags.of("reason", "key_limit"),
                "requests",
                "Requests refused: a new key could not be tracked",
                KeyedRateLimiter::keyLimitRejectedCount);
        counter(
                registry,
                "wheelbeat.ratelimit.evicted",
                Tags.of("cause", "idle"),
                "keys",
                "Keys forgotten once idle",
                KeyedRateLimiter::evictedIdleCount);
        counter(
                registry,
                "wheelbeat.ratelimit.evicted",
                Tags.of("cause", "room"),
                "keys",
                "Keys forgotten early to make room for a new key",
                KeyedRateLimiter::evictedForRoomCount);
        Gauge.builder("wheelbeat.ratelimit.keys", limiter, KeyedRateLimiter::activeKeys)
                .description("Keys tracked")
                .baseUnit("keys")
                .tags(tags)
                .strongReference(true)
                .register(registry);
        Leases leases = limiter.leases();
        if (leases != null) {
            bindStore(registry, leases);
        }
    }

    private void bindStore(MeterRegistry registry, Leases leases) {
        counter(
                registry,
                "wheelbeat.ratelimit.store.round.trips",
                Tags.empty(),
                "requests",
                "Exchanges and probes sent to the lease store",
                l -> leases.roundTripCount());
        counter(
                registry,
                "wheelbeat.ratelimit.store.draws",
                Tags.empty(),
                "requests",
                "Exchanges that asked the lease store for a lease",
                l -> leases.drawCount());
        counter(
                registry,
                "wheelbeat.ratelimit.store.leased",
                Tags.empty(),
                "permits",
                "Permits granted in leases",
                l -> leases.permitsLeasedCount());
        for (Leases.FallbackCause cause : Leases.FallbackCause.values()) {
            counter(
                    registry,
                    "wheelbeat.ratelimit.store.fallbacks",
                    Tags.of("cause", cause.tag()),
                    "requests",
                    "Decisions left to the store failure policy",
                    l -> leases.fallbackCount(cause));
        }
        counter(
                registry,
                "wheelbeat.ratelimit.store.saturated",
                Tags.empty(),
                "requests",
                "Requests refused, or exchanges deferred, for want of room for another exchange",
                l -> leases.saturatedCount());
        Gauge.builder("wheelbeat.ratelimit.store.exchanges", leases, Leases::exchangesOut)
                .description("Exchanges with the lease store out now")
                .baseUnit("requests")
                .tags(tags)
                .strongReference(true)
                .register(registry);
        FunctionTimer.builder(
                        "wheelbeat.ratelimit.store.latency",
                        leases,
                        Leases::answeredCount,
                        Leases::latencySeconds,
                        TimeUnit.SECONDS)
                .description("Round trips to the lease store, answered or failed")
                .tags(tags)
                .register(registry);
        Gauge.builder("wheelbeat.ratelimit.store.latency.max", leases, Leases::maxLatencySeconds)
                .description("The longest round trip to the lease store")
                .baseUnit("seconds")
                .tags(tags)
                .strongReference(true)
                .register(registry);
    }

    private void counter(
            MeterRegistry registry,
            String name,
            Tags extra,
            String unit,
            String description,
            ToDoubleFunction<KeyedRateLimiter<?>> count) {
        FunctionCounter.builder(name, limiter, count)
                .description(description)
                .baseUnit(unit)
                .tags(tags.and(extra))
                .register(registry);
    }
}
