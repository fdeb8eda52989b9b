package io.wheelbeat.ratelimit.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.wheelbeat.core.WheelTimer;
import io.wheelbeat.core.ratelimit.KeyedRateLimiter;
import io.wheelbeat.core.ratelimit.KeyedRateLimiterMetrics;
import io.wheelbeat.core.ratelimit.RateLimit;
import io.wheelbeat.core.ratelimit.StoreFailurePolicy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Redis killed, restarted and slowed under three limiters in real time: they keep deciding by
 * their failure policy, never throw, never wait for Redis, count every fallback by cause, and go
 * back to shared decisions on their own. Waits are generous and never the verdict, and no check
 * depends on how much CPU the test gets.
 */
class StoreFailureTest {

    private final RedisProcess redis = new RedisProcess();
    private final List<AutoCloseable> closing = new ArrayList<>();

    /** One simulated process: a wheel with its own thread, a connection, a limiter, its meters. */
    private record Process(KeyedRateLimiter<String> limiter, MeterRegistry meters) {
        double fallbacks(String cause) {
            return meters.get("wheelbeat.ratelimit.store.fallbacks")
                    .tag("cause", cause)
                    .functionCounter()
                    .count();
        }

        double roundTrips() {
            return meters.get("wheelbeat.ratelimit.store.round.trips")
                    .functionCounter()
                    .count();
        }
    }

    @AfterEach
    void stopEverything() throws Exception {
        for (int i = closing.size() - 1; i >= 0; i--) {
            closing.get(i).close();
        }
        redis.close();
    }

    private Process process(RateLimit limit, StoreFailurePolicy policy) {
        return process(limit, policy, Duration.ofMillis(200));
    }

    private Process process(RateLimit limit, StoreFailurePolicy policy, Duration timeout) {
        WheelTimer wheel = WheelTimer.builder().build();
        closing.add(wheel::stop);
        RedisLeaseStore store =
                RedisLeaseStore.builder(redis.uri()).timeout(timeout).build();
        closing.add(store);
        KeyedRateLimiter<String> limiter = KeyedRateLimiter.builder(limit, wheel)
                .name("faults")
                .sharedThrough(store)
                .processes(3)
                .onStoreFailure(policy)
                .build();
        closing.add(limiter::close);
        MeterRegistry meters = new SimpleMeterRegistry();
        new KeyedRateLimiterMetrics(limiter).bindTo(meters);
        return new Process(limiter, meters);
    }

    /** Requests from one thread, round robin over the processes, timing every call. */
    private static final class Driver implements AutoCloseable {
        /** Calls that began and returned while Redis was busy: proof that none waits for it. */
        final AtomicLong decidedWhileBusy = new AtomicLong();

        volatile java.util.concurrent.Future<?> busy;
        final AtomicReference<Throwable> thrown = new AtomicReference<>();
        final AtomicLong[] admitted;
        private final Thread thread;
        private volatile boolean running = true;

        Driver(List<Process> processes, String key) {
            admitted = new AtomicLong[processes.size()];
            for (int i = 0; i < admitted.length; i++) {
                admitted[i] = new AtomicLong();
            }
            thread = new Thread(
                    () -> {
                        for (int i = 0; running; i = (i + 1) % processes.size()) {
                            java.util.concurrent.Future<?> busyNow = busy;
                            boolean busyBefore = busyNow != null && !busyNow.isDone();
                            try {
                                if (processes.get(i).limiter.tryAcquire(key) == KeyedRateLimiter.ADMITTED) {
                                    admitted[i].incrementAndGet();
                                }
                            } catch (Throwable t) {
                                thrown.compareAndSet(null, t);
                            }
                            if (busyBefore && !busyNow.isDone()) {
                                decidedWhileBusy.incrementAndGet();
                            }
                            if (i == 0) {
                                try {
                                    Thread.sleep(1);
                                } catch (InterruptedException e) {
                                    return;
                                }
                            }
                        }
                    },
                    "driver");
            thread.start();
        }

        @Override
        public void close() throws InterruptedException {
            running = false;
            thread.join();
        }
    }

    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!condition.getAsBoolean()) {
            assertTrue(System.nanoTime() - deadline < 0, "never: " + what);
            Thread.sleep(10);
        }
    }

    /** True once no process has fallen back for a while although requests keep coming. */
    private static boolean sharedAgain(List<Process> processes) throws InterruptedException {
        double before = processes.stream()
                .mapToDouble(p -> p.fallbacks("unavailable") + p.fallbacks("timeout"))
                .sum();
        Thread.sleep(300);
        return processes.stream()
                        .mapToDouble(p -> p.fallbacks("unavailable") + p.fallbacks("timeout"))
                        .sum()
                == before;
    }

    @Test
    void failLocalDecidesThroughAKillAndASlowdownAndResumesSharedDecisionsOnItsOwn() throws Exception {
        List<Process> processes = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            processes.add(process(RateLimit.slidingWindow(30, Duration.ofSeconds(1)), StoreFailurePolicy.FAIL_LOCAL));
        }
        Driver driver = new Driver(processes, "k");
        try {
            Thread.sleep(500);
            for (Process p : processes) {
                assertTrue(p.roundTrips() > 0, "shared decisions while Redis is up");
                // (A slow answer on a busy machine may be decided by the policy: "timeout".)
                assertEquals(0, p.fallbacks("unavailable") + p.fallbacks("error"));
            }

            redis.kill();
            await("every process falls back", () -> processes.stream().allMatch(p -> p.fallbacks("unavailable") > 0));
            long[] before = snapshot(driver);
            long start = System.nanoTime();
            Thread.sleep(1200);
            long[] during = delta(driver, before);
            // However long the sleep took: each keeps deciding with its share, 10 a window, in
            // every window the span touched (plus the window before, whose weight fades), and a
            // lease left.
            long windows = (System.nanoTime() - start) / TimeUnit.SECONDS.toNanos(1) + 2;
            for (int i = 0; i < 3; i++) {
                assertTrue(
                        during[i] > 0 && during[i] <= windows * 10 + 5,
                        "process " + i + " admitted " + during[i] + " in " + windows + " windows");
            }

            redis.start();
            await("shared decisions resume after the restart", () -> uncheckedSharedAgain(processes));

            try (Slowdown slowdown = new Slowdown(redis.uri(), 1500)) {
                driver.busy = slowdown.running.toCompletableFuture();
                await("the slowdown times out", () -> processes.stream().allMatch(p -> p.fallbacks("timeout") > 0));
            }
            await("shared decisions resume after the slowdown", () -> uncheckedSharedAgain(processes));
        } finally {
            driver.close();
        }
        assertNull(driver.thrown.get(), "an exception reached the caller");
        assertTrue(driver.decidedWhileBusy.get() > 0, "no call returned while Redis was busy");
        // The latency meter saw the round trips, failures included.
        Process first = processes.get(0);
        assertTrue(first.meters
                        .get("wheelbeat.ratelimit.store.latency")
                        .functionTimer()
                        .count()
                > 0);
        assertTrue(
                first.meters
                                .get("wheelbeat.ratelimit.store.latency.max")
                                .gauge()
                                .value()
                        >= 0.15,
                "a timed-out round trip is the longest");
    }

    @Test
    void admitAllAndRefuseAllApplyWhileRedisIsDownAndStopWhenItIsBack() throws Exception {
        RateLimit limit = RateLimit.tokenBucket(5, Duration.ofSeconds(1));
        // No timeout on a busy machine: here only the kill puts the limiters on their policies.
        Process admitAll = process(limit, StoreFailurePolicy.ADMIT_ALL, Duration.ofSeconds(10));
        Process refuseAll = process(limit, StoreFailurePolicy.REFUSE_ALL, Duration.ofSeconds(10));
        redis.kill();
        await("both notice", () -> {
            admitAll.limiter.tryAcquire("probe");
            refuseAll.limiter.tryAcquire("probe");
            return admitAll.fallbacks("unavailable") > 0 && refuseAll.fallbacks("unavailable") > 0;
        });
        for (int i = 0; i < 100; i++) {
            assertEquals(KeyedRateLimiter.ADMITTED, admitAll.limiter.tryAcquire("k"));
            assertTrue(refuseAll.limiter.tryAcquire("k") > 0);
        }
        redis.start();
        await("both resume", () -> uncheckedSharedAgain(List.of(admitAll, refuseAll), "fresh"));
        // Shared again: the bucket of 5 holds across both, whatever their policies.
        int admitted = 0;
        long start = System.nanoTime();
        // Each answer is awaited: however slow the machine, no answer is late, so the policies stay out.
        Meters admitAllMeters = new Meters(admitAll.meters);
        Meters refuseAllMeters = new Meters(refuseAll.meters);
        for (int i = 0; i < 40; i++) {
            admitted += admitAll.limiter.tryAcquire("after") == KeyedRateLimiter.ADMITTED ? 1 : 0;
            admitAllMeters.awaitAnswered();
            admitted += refuseAll.limiter.tryAcquire("after") == KeyedRateLimiter.ADMITTED ? 1 : 0;
            refuseAllMeters.awaitAnswered();
            Thread.sleep(5);
        }
        // The bucket, its refill over the time taken and a lease's life, and a credit each.
        long refill =
                (System.nanoTime() - start + TimeUnit.MILLISECONDS.toNanos(100)) * 5 / TimeUnit.SECONDS.toNanos(1) + 1;
        assertTrue(
                admitted <= 5 + refill + 2,
                "admitted " + admitted + " of a bucket of 5 (+" + refill + " refill, +1 credit each)");
    }

    private static boolean uncheckedSharedAgain(List<Process> processes) {
        try {
            return sharedAgain(processes);
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    /** Keeps asking for fresh keys (no lease can cover them) and reports whether any fell back. */
    private static boolean uncheckedSharedAgain(List<Process> processes, String prefix) {
        double before =
                processes.stream().mapToDouble(p -> p.fallbacks("unavailable")).sum();
        for (int i = 0; i < 20; i++) {
            for (Process p : processes) {
                p.limiter.tryAcquire(prefix + System.nanoTime());
            }
        }
        return processes.stream().mapToDouble(p -> p.fallbacks("unavailable")).sum() == before;
    }

    private static long[] snapshot(Driver driver) {
        long[] counts = new long[driver.admitted.length];
        for (int i = 0; i < counts.length; i++) {
            counts[i] = driver.admitted[i].get();
        }
        return counts;
    }

    private static long[] delta(Driver driver, long[] before) {
        long[] now = snapshot(driver);
        for (int i = 0; i < now.length; i++) {
            now[i] -= before[i];
        }
        return now;
    }

    /** A Lua script that busies the Redis server for a while: nothing else is served meanwhile. */
    private static final class Slowdown implements AutoCloseable {
        private final RedisClient client;
        private final StatefulRedisConnection<String, String> connection;
        private final java.util.concurrent.CompletionStage<Object> running;

        Slowdown(String uri, long millis) {
            client = RedisClient.create(uri);
            connection = client.connect();
            running = connection
                    .async()
                    .eval(
                            "local t = redis.call('TIME') "
                                    + "local stop = t[1] * 1000000 + t[2] + tonumber(ARGV[1]) * 1000 "
                                    + "repeat t = redis.call('TIME') until t[1] * 1000000 + t[2] >= stop return 1",
                            ScriptOutputType.INTEGER,
                            new String[0],
                            Long.toString(millis));
        }

        @Override
        public void close() throws Exception {
            running.toCompletableFuture().get(30, TimeUnit.SECONDS);
            connection.close();
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }
}
