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
 * Micrometer meters of one {@link KeyedRateLimiter}, tagged {@code limiter=<name>} and never by
 * key:
 * <ul>
 *   <li>{@code wheelbeat.ratelimit.admitted} (counter, requests): requests admitted;</li>
 *   <li>{@code wheelbeat.ratelimit.rejected} (counter, requests), tagged {@code reason=rate}
 *       (over the key's limit) or {@code reason=key_limit} (a new key that could not be
 *       tracked);</li>
 *   <li>{@code wheelbeat.ratelimit.keys} (gauge, keys): keys tracked now;</li>
 *   <li>{@code wheelbeat.ratelimit.evicted} (counter, keys), tagged {@code cause=idle} (forgotten
 *       once idle) or {@code cause=room} (forgotten early to make room for a new key).</li>
 * </ul>
 * and in cluster mode ({@link KeyedRateLimiter.Builder#sharedThrough(LeaseStore)}):
 * <ul>
 *   <li>{@code wheelbeat.ratelimit.store.round.trips} (counter, requests): exchanges and probes
 *       sent to the store;</li>
 *   <li>{@code wheelbeat.ratelimit.store.draws} (counter, requests): exchanges that asked for a
 *       lease;</li>
 *   <li>{@code wheelbeat.ratelimit.store.leased} (counter, permits): permits granted in
 *       leases;</li>
 *   <li>{@code wheelbeat.ratelimit.store.fallbacks} (counter, requests), tagged
 *       {@code cause=timeout}, {@code unavailable}, {@code error} (the store failing) or
 *       {@code key} (a key the store cannot hold): decisions left to the
 *       {@link StoreFailurePolicy};</li>
 *   <li>{@code wheelbeat.ratelimit.store.saturated} (counter, requests): requests refused because
 *       their key needed an exchange and the limiter had no room for one (at most 1,024
 *       exchanges out, 64 of them for keys never granted a lease), plus exchanges the store
 *       deferred as {@link LeaseStore.Failure#BUSY};</li>
 *   <li>{@code wheelbeat.ratelimit.store.exchanges} (gauge, requests): exchanges out now;</li>
 *   <li>{@code wheelbeat.ratelimit.store.latency} (function timer) and
 *       {@code wheelbeat.ratelimit.store.latency.max} (gauge, seconds): the round trips answered,
 *       failures included.</li>
 * </ul>
 *
 * <p>Micrometer is an optional dependency of heartbeat-core: add {@code io.micrometer:micrometer-core}
 * to use this binder; nothing else in the core needs it.
 *
 * <p>Thread-safe. Counts are read from the limiter as snapshots.
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
     * Meters tagged with the limiter's name and {@code extraTags} (low cardinality only).
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
        counter(registry, "wheelbeat.ratelimit.admitted", Tags.empty(), "requests",
                "Requests admitted", KeyedRateLimiter::admittedCount);
        counter(registry, "wheelbeat.ratelimit.rejected", Tags.of("reason", "rate"), "requests",
                "Requests refused: over the key's limit", KeyedRateLimiter::rejectedCount);
        counter(registry, "wheelbeat.ratelimit.rejected", Tags.of("reason", "key_limit"), "requests",
                "Requests refused: a new key could not be tracked", KeyedRateLimiter::keyLimitRejectedCount);
        counter(registry, "wheelbeat.ratelimit.evicted", Tags.of("cause", "idle"), "keys",
                "Keys forgotten once idle", KeyedRateLimiter::evictedIdleCount);
        counter(registry, "wheelbeat.ratelimit.evicted", Tags.of("cause", "room"), "keys",
                "Keys forgotten early to make room for a new key", KeyedRateLimiter::evictedForRoomCount);
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
        counter(registry, "wheelbeat.ratelimit.store.round.trips", Tags.empty(), "requests",
                "Exchanges and probes sent to the lease store", l -> leases.roundTripCount());
        counter(registry, "wheelbeat.ratelimit.store.draws", Tags.empty(), "requests",
                "Exchanges that asked the lease store for a lease", l -> leases.drawCount());
        counter(registry, "wheelbeat.ratelimit.store.leased", Tags.empty(), "permits",
                "Permits granted in leases", l -> leases.permitsLeasedCount());
        for (Leases.FallbackCause cause : Leases.FallbackCause.values()) {
            counter(registry, "wheelbeat.ratelimit.store.fallbacks", Tags.of("cause", cause.tag()), "requests",
                    "Decisions left to the store failure policy", l -> leases.fallbackCount(cause));
        }
        counter(registry, "wheelbeat.ratelimit.store.saturated", Tags.empty(), "requests",
                "Requests refused, or exchanges deferred, for want of room for another exchange",
                l -> leases.saturatedCount());
        Gauge.builder("wheelbeat.ratelimit.store.exchanges", leases, Leases::exchangesOut)
                .description("Exchanges with the lease store out now")
                .baseUnit("requests")
                .tags(tags)
                .strongReference(true)
                .register(registry);
        FunctionTimer.builder("wheelbeat.ratelimit.store.latency", leases, Leases::answeredCount,
                        Leases::latencySeconds, TimeUnit.SECONDS)
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

    private void counter(MeterRegistry registry, String name, Tags extra, String unit, String description,
                         ToDoubleFunction<KeyedRateLimiter<?>> count) {
        FunctionCounter.builder(name, limiter, count)
                .description(description)
                .baseUnit(unit)
                .tags(tags.and(extra))
                .register(registry);
    }
}
