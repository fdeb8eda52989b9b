package io.wheelbeat.ratelimit.redis;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.wheelbeat.core.ratelimit.KeyedRateLimiter;
import io.wheelbeat.core.ratelimit.KeyedRateLimiterMetrics;
import java.util.concurrent.TimeUnit;

/** A limiter's meters, read by the tests: counts, and waiting for its exchanges to be answered. */
record Meters(MeterRegistry registry) {

    static Meters of(KeyedRateLimiter<?> limiter) {
        MeterRegistry registry = new SimpleMeterRegistry();
        new KeyedRateLimiterMetrics(limiter).bindTo(registry);
        return new Meters(registry);
    }

    double fallbacks(String cause) {
        return registry.get("wheelbeat.ratelimit.store.fallbacks")
                .tag("cause", cause)
                .functionCounter()
                .count();
    }

    double allFallbacks() {
        return fallbacks("timeout") + fallbacks("unavailable") + fallbacks("error") + fallbacks("key");
    }

    double saturated() {
        return registry.get("wheelbeat.ratelimit.store.saturated")
                .functionCounter()
                .count();
    }

    double exchangesOut() {
        return registry.get("wheelbeat.ratelimit.store.exchanges").gauge().value();
    }

    /** Waits (generously, in real time) until no exchange of the limiter is out. */
    void awaitAnswered() throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (exchangesOut() > 0) {
            assertTrue(System.nanoTime() - deadline < 0, "exchanges never answered: " + exchangesOut());
            Thread.sleep(0, 100_000);
        }
    }
}
