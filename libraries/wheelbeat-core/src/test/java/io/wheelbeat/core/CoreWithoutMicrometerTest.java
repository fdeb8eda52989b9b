package io.wheelbeat.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.wheelbeat.core.backoff.BackoffPolicy;
import io.wheelbeat.core.internal.WheelSettings;
import io.wheelbeat.core.ratelimit.KeyedRateLimiter;
import io.wheelbeat.core.ratelimit.RateLimit;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Micrometer is an optional dependency of the core: this test runs in its own surefire execution
 * with Micrometer's jars removed from the class path (see the module's pom) and uses the wheel,
 * its executor-driven facade, the rate limiter and the backoff policies as a user without
 * Micrometer would.
 */
class CoreWithoutMicrometerTest {

    @Test
    void micrometerIsNotOnTheClassPathOfThisRun() {
        assertThrows(ClassNotFoundException.class, () -> Class.forName("io.micrometer.core.instrument.MeterRegistry"));
    }

    @Test
    void theWheelTheLimiterAndTheBackoffRunWithoutMicrometer() {
        VirtualExecutor executor = new VirtualExecutor();
        ExecutorDrivenWheel wheel = new ExecutorDrivenWheel(executor, new WheelSettings().ticker(executor.ticker));
        List<Long> fired = new ArrayList<>();
        wheel.schedule(new RunningNode(() -> fired.add(1L)), TimeUnit.MILLISECONDS.toNanos(10));

        KeyedRateLimiter<String> limiter = KeyedRateLimiter.builder(
                        RateLimit.slidingWindow(1, Duration.ofSeconds(1)), wheel)
                .build();
        assertEquals(KeyedRateLimiter.ADMITTED, limiter.tryAcquire("a"));
        assertTrue(limiter.tryAcquire("a") > 0, "the second permit in the window waits");

        executor.advance(20, TimeUnit.MILLISECONDS);
        assertEquals(1, fired.size(), "the timer fired");
        assertTrue(BackoffPolicy.grpc().delayNanos(1, 0, new Random(1)) > 0, "a backoff delay");
    }
}
