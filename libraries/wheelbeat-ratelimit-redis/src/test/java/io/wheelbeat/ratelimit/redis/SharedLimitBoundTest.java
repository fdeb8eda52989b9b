package io.wheelbeat.ratelimit.redis;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.wheelbeat.core.ExecutorDrivenWheel;
import io.wheelbeat.core.VirtualExecutor;
import io.wheelbeat.core.WheelTimer;
import io.wheelbeat.core.internal.Drivers;
import io.wheelbeat.core.internal.ManualTicker;
import io.wheelbeat.core.internal.WheelSettings;
import io.wheelbeat.core.ratelimit.KeyedRateLimiter;
import io.wheelbeat.core.ratelimit.RateLimit;
import io.wheelbeat.core.ratelimit.StoreFailurePolicy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Three limiters on three wheels, each with its own connection, as three processes would be,
 * share keys through one real Redis. Virtual time, shared by the three and by the Redis scripts
 * (the store's shared clock), so windows are exact; the replies come back in real time, so a
 * lease is sometimes in flight across a window's edge, as in a real cluster.
 */
class SharedLimitBoundTest {

    private static final long SECOND = TimeUnit.SECONDS.toNanos(1);
    private static final long MILLI = TimeUnit.MILLISECONDS.toNanos(1);
    private static final int PROCESSES = 3;
    /**
     * The stores' command timeout: long, so that a slow answer on a busy machine never turns into
     * a decision by the failure policy, whose admissions come on top of the bound.
     */
    private static final Duration PATIENT = Duration.ofSeconds(10);
    /** The longest step of virtual time, well within the limiters' patience for an answer (25 ms). */
    private static final long MAX_STEP = 10 * MILLI;

    private static RedisProcess redis;
    /**
     * Starts near the end of the long range, which every difference here survives. (Not across
     * it: the wheel's TimerWheel.relative reads a reading past the wrap as before its origin.)
     */
    private final ManualTicker clock = new ManualTicker(Long.MAX_VALUE - 100 * SECOND);
    /** The cluster's windows count from here: a whole second before the first request. */
    private final long origin = clock.nanoTime() - SECOND;

    private final List<Process> processes = new ArrayList<>();

    /** One simulated process: its wheel, its connection, its limiter. */
    private record Process(
            VirtualExecutor executor, RedisLeaseStore store, KeyedRateLimiter<String> limiter, Meters meters) {}

    @BeforeAll
    static void startRedis() {
        redis = new RedisProcess();
    }

    @AfterAll
    static void stopRedis() {
        redis.close();
    }

    @BeforeEach
    void flush() {
        redis.flushAll();
        redis.seedEpoch();
    }

    @AfterEach
    void stopProcesses() {
        for (Process p : processes) {
            p.limiter.close();
            p.store.close();
        }
    }

    private void startProcesses(RateLimit limit, long maxUnconfirmed) {
        startProcesses(limit, maxUnconfirmed, StoreFailurePolicy.FAIL_LOCAL);
    }

    private void startProcesses(RateLimit limit, long maxUnconfirmed, StoreFailurePolicy policy) {
        for (int i = 0; i < PROCESSES; i++) {
            VirtualExecutor executor = new VirtualExecutor(clock);
            ExecutorDrivenWheel wheel = Drivers.executorDriven(executor, new WheelSettings().ticker(clock));
            RedisLeaseStore store = RedisLeaseStore.builder(redis.uri())
                    .timeout(PATIENT)
                    .sharedClock(clock, origin)
                    .build();
            KeyedRateLimiter<String> limiter = KeyedRateLimiter.builder(limit, wheel)
                    .name("bound")
                    .sharedThrough(store)
                    .processes(PROCESSES)
                    .maxUnconfirmed(maxUnconfirmed)
                    .onStoreFailure(policy)
                    .build();
            processes.add(new Process(executor, store, limiter, Meters.of(limiter)));
        }
    }

    /** Every decision was shared: none fell to the failure policy, whose admissions are not bounded here. */
    private void assertNoFallbacks() {
        for (Process p : processes) {
            assertTrue(p.meters.allFallbacks() == 0, "fallbacks " + p.meters.allFallbacks());
        }
    }

    /** Moves virtual time forward and runs every wheel's due timers. */
    private void advance(long nanos) {
        clock.advance(nanos, TimeUnit.NANOSECONDS);
        processes.forEach(p -> p.executor.runDue());
    }

    /**
     * Random arrivals on four keys from the three processes, with demand above the limit, for
     * {@code seconds} of virtual time; returns the virtual time of every admitted request, per key.
     * Answers come back in real time: some are awaited before time moves on, others stay in flight
     * across one step (so a lease is sometimes in flight across a window's edge), never longer, so
     * that however slow the machine, no answer is late in virtual time.
     */
    private Map<String, List<Long>> run(int seconds, long seed) throws InterruptedException {
        Random random = new Random(seed);
        Map<String, List<Long>> admitted = new HashMap<>();
        long end = clock.nanoTime() + seconds * SECOND; // compared by difference: the clock wraps
        boolean inFlight = false;
        while (clock.nanoTime() - end < 0) {
            if (inFlight || random.nextInt(4) != 0) {
                for (Process p : processes) {
                    p.meters.awaitAnswered();
                }
                inFlight = false;
            } else {
                inFlight = true;
            }
            advance(Math.min(MAX_STEP, (long) (-Math.log(1 - random.nextDouble()) * 4 * MILLI)));
            for (int r = random.nextInt(8); r > 0; r--) {
                Process p = processes.get(random.nextInt(PROCESSES));
                String key = "key-" + random.nextInt(4);
                if (p.limiter.tryAcquire(key) == KeyedRateLimiter.ADMITTED) {
                    admitted.computeIfAbsent(key, k -> new ArrayList<>()).add(clock.nanoTime() - origin);
                }
            }
        }
        return admitted;
    }

    @Test
    void slidingWindowAdmitsAtMostTheLimitPlusTheUnconfirmedBoundPerProcessInEveryWindow() throws InterruptedException {
        long permits = 40;
        long credit = 2;
        startProcesses(RateLimit.slidingWindow(permits, Duration.ofSeconds(1)), credit);
        Map<String, List<Long>> admitted = run(30, 42);
        assertNoFallbacks();

        long bound = permits + PROCESSES * credit;
        int windowsNearTheLimit = 0;
        for (Map.Entry<String, List<Long>> key : admitted.entrySet()) {
            Map<Long, Integer> perWindow = new HashMap<>();
            for (long at : key.getValue()) {
                perWindow.merge(Math.floorDiv(-Math.floorDiv(-at, 1000), 1_000_000), 1, Integer::sum);
            }
            for (Map.Entry<Long, Integer> window : perWindow.entrySet()) {
                assertTrue(
                        window.getValue() <= bound,
                        key.getKey() + " window " + window.getKey() + " admitted " + window.getValue() + " > " + bound);
                if (window.getValue() >= permits * 3 / 4) {
                    windowsNearTheLimit++;
                }
            }
        }
        // Demand is about 125 per key per second: the cluster serves the limit, not a third of it.
        assertTrue(windowsNearTheLimit >= 4 * 25, "windows served near the limit: " + windowsNearTheLimit);
    }

    @Test
    void tokenBucketAdmitsAtMostItsBoundPlusTheUnconfirmedBoundPerProcessInEverySpan() throws InterruptedException {
        long permits = 50;
        long burst = 20;
        long credit = 1;
        startProcesses(RateLimit.tokenBucket(permits, Duration.ofSeconds(1), burst), credit);
        Map<String, List<Long>> admitted = run(30, 7);
        assertNoFallbacks();

        // Any span t admits at most burst + permits x (t + lease horizon) / period + processes x credit.
        long horizon = 100 * MILLI;
        for (long span : new long[] {50 * MILLI, 250 * MILLI, SECOND, 3 * SECOND}) {
            long bound = burst + permits * (span + horizon) / SECOND + PROCESSES * credit;
            for (Map.Entry<String, List<Long>> key : admitted.entrySet()) {
                List<Long> times = key.getValue();
                for (int first = 0, last = 0; last < times.size(); last++) {
                    while (times.get(last) - times.get(first) >= span) {
                        first++;
                    }
                    int inSpan = last - first + 1;
                    assertTrue(
                            inSpan <= bound,
                            key.getKey() + ": " + inSpan + " admitted within " + span / MILLI + " ms > " + bound);
                }
            }
        }
        // Over the whole run the cluster admits the rate, not three times it.
        for (List<Long> times : admitted.values()) {
            assertTrue(times.size() <= burst + permits * 30 + PROCESSES * credit * 30, "run total " + times.size());
            assertTrue(times.size() >= permits * 30 * 3 / 4, "the cluster served too little: " + times.size());
        }
    }

    /**
     * Steady demand of 300 a second on one key, two requests from each process every 20 ms of
     * virtual time, until {@code untilNanos} after the origin; every exchange is answered before
     * time moves on. Counts the admitted per window of {@code window} on the scripts' clock.
     */
    private void demand(long untilNanos, Duration window, Map<Long, Integer> perWindow) throws InterruptedException {
        long windowMicros = window.toNanos() / 1000;
        while (clock.nanoTime() - origin < untilNanos) {
            advance(20 * MILLI);
            for (Process p : processes) {
                for (int i = 0; i < 2; i++) {
                    if (p.limiter.tryAcquire("k") == KeyedRateLimiter.ADMITTED) {
                        long micros = -Math.floorDiv(-(clock.nanoTime() - origin), 1000);
                        perWindow.merge(Math.floorDiv(micros, windowMicros), 1, Integer::sum);
                    }
                }
            }
            for (Process p : processes) {
                p.meters.awaitAnswered();
            }
        }
    }

    private static void assertWindowsWithin(Map<Long, Integer> perWindow, long bound, String what) {
        for (Map.Entry<Long, Integer> window : perWindow.entrySet()) {
            assertTrue(
                    window.getValue() <= bound,
                    what + ": window " + window.getKey() + " admitted " + window.getValue() + " > " + bound + " "
                            + perWindow);
        }
    }

    /**
     * FLUSHALL in the middle of a window, in steady state (the window fills as the previous one's
     * weight fades, so the processes keep drawing leases): the next exchange finds a new epoch,
     * and the key is taken as full for the rest of that window, so no window admits more than
     * permits + N x D. The window after serves the limit again.
     */
    @Test
    void aFlushMidWindowKeepsEveryWindowWithinTheBound() throws InterruptedException {
        Duration window = Duration.ofSeconds(4);
        startProcesses(RateLimit.slidingWindow(100, window), 1);
        Map<Long, Integer> perWindow = new HashMap<>();
        demand(10 * SECOND, window, perWindow);
        RedisClient client = RedisClient.create(redis.uri());
        try (StatefulRedisConnection<String, String> connection = client.connect()) {
            connection.sync().flushall();
        } finally {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
        demand(16 * SECOND, window, perWindow);
        assertWindowsWithin(perWindow, 100 + PROCESSES, "flushed 2 s into window 2");
        assertTrue(perWindow.getOrDefault(3L, 0) >= 75, "serves the limit again: " + perWindow);
    }

    /**
     * redis-server stopped (SIGTERM) and started again on its port, empty (no persistence), in
     * the middle of a window in steady state, with REFUSE_ALL while it is gone: back on Redis, the
     * limiters find a new epoch and the lost count is not granted again.
     */
    @Test
    void anEmptyRestartMidWindowKeepsEveryWindowWithinTheBound() throws InterruptedException {
        Duration window = Duration.ofSeconds(4);
        startProcesses(RateLimit.slidingWindow(100, window), 1, StoreFailurePolicy.REFUSE_ALL);
        Map<Long, Integer> perWindow = new HashMap<>();
        demand(10 * SECOND, window, perWindow);
        redis.kill();
        redis.start();
        awaitClients(PROCESSES);
        // The stores are connected again before the next exchange: with time frozen meanwhile, no
        // request fell into the window of the outage; under load, one may, and is refused.
        demand(11 * SECOND + SECOND / 2, window, perWindow);
        double fallbacks =
                processes.stream().mapToDouble(p -> p.meters.allFallbacks()).sum();
        demand(16 * SECOND, window, perWindow);
        assertTrue(
                processes.stream().mapToDouble(p -> p.meters.allFallbacks()).sum() == fallbacks,
                "back on Redis within the window of the restart");
        assertWindowsWithin(perWindow, 100 + PROCESSES, "restarted 2 s into window 2");
        assertTrue(perWindow.getOrDefault(3L, 0) >= 75, "serves the limit again: " + perWindow);
    }

    /** Waits until the restarted server has the stores' connections back (Lettuce reconnects). */
    private static void awaitClients(int stores) throws InterruptedException {
        RedisClient client = RedisClient.create(redis.uri());
        try (StatefulRedisConnection<String, String> connection = client.connect()) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (connection.sync().clientList().lines().count() < stores + 1) {
                assertTrue(
                        System.nanoTime() - deadline < 0,
                        "stores not reconnected: " + connection.sync().clientList());
                Thread.sleep(20);
            }
        } finally {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }

    /**
     * One process, one key, a request every 30 ms on the Redis server's clock (real time): the
     * lease's refills add to what is left of it, so the process admits the whole limit, and at
     * most the limit plus its credit. Each request waits until the exchanges out are answered, so
     * the count never depends on how fast Redis answers.
     */
    @Test
    void aSingleProcessAdmitsItsWholeLimitWithinOneWindow() throws InterruptedException {
        long[] limits = {20, 10, 5};
        WheelTimer wheel = WheelTimer.builder().build();
        try (RedisLeaseStore store =
                RedisLeaseStore.builder(redis.uri()).timeout(PATIENT).build()) {
            awaitWindowRoom(Duration.ofSeconds(10), Duration.ofSeconds(6));
            for (long permits : limits) {
                KeyedRateLimiter<String> limiter = KeyedRateLimiter.builder(
                                RateLimit.slidingWindow(permits, Duration.ofSeconds(10)), wheel)
                        .name("single-" + permits)
                        .sharedThrough(store)
                        .processes(1)
                        .build();
                Meters meters = Meters.of(limiter);
                int admitted = 0;
                int firstRefused = -1;
                for (int i = 0; i < permits + 5; i++) {
                    if (limiter.tryAcquire("k") == KeyedRateLimiter.ADMITTED) {
                        admitted++;
                    } else if (firstRefused < 0) {
                        firstRefused = i;
                    }
                    meters.awaitAnswered();
                    Thread.sleep(30);
                }
                assertTrue(
                        firstRefused < 0 || firstRefused >= permits,
                        "limit " + permits + ": request " + firstRefused + " refused, admitted " + admitted);
                assertTrue(
                        admitted >= permits && admitted <= permits + 1,
                        "limit " + permits + ": admitted " + admitted + " of " + (permits + 5));
                limiter.close();
            }
        } finally {
            wheel.stop();
        }
    }

    /** Sleeps into the next window of Redis's clock unless this one has {@code room} left. */
    private static void awaitWindowRoom(Duration window, Duration room) throws InterruptedException {
        RedisClient client = RedisClient.create(redis.uri());
        try (StatefulRedisConnection<String, String> connection = client.connect()) {
            List<String> time = connection.sync().time();
            long micros = Long.parseLong(time.get(0)) * 1_000_000 + Long.parseLong(time.get(1));
            long left = window.toNanos() / 1000 - micros % (window.toNanos() / 1000);
            if (left < room.toNanos() / 1000) {
                Thread.sleep(left / 1000 + 50);
            }
        } finally {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }

    @Test
    void keyExhaustedOnOneProcessIsRefusedOnTheOthers() throws InterruptedException {
        startProcesses(RateLimit.slidingWindow(10, Duration.ofSeconds(1)), 0);
        advance(SECOND / 10);
        KeyedRateLimiter<String> first = processes.get(0).limiter;
        int taken = 0;
        for (long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10); taken < 10; ) {
            long result = first.tryAcquire("alice");
            if (result == KeyedRateLimiter.ADMITTED) {
                taken++;
            } else {
                assertTrue(System.nanoTime() - deadline < 0, "the first process never got 10 permits: " + taken);
                Thread.sleep(1); // its lease is in flight
            }
        }
        for (Process other : processes.subList(1, PROCESSES)) {
            long result;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            // Without credit, the first refusal only waits for the answer; the answer is "full".
            while ((result = other.limiter.tryAcquire("alice")) < 100 * MILLI) {
                assertTrue(result != KeyedRateLimiter.ADMITTED, "admitted a permit the first process took");
                assertTrue(System.nanoTime() - deadline < 0, "no answer from Redis");
                Thread.sleep(1);
            }
            // Full: in the next window the 10 taken weigh (1 - elapsed) x 10, so one more fits
            // a tenth of a window in: 1.1 s after this window's start at 1.1 s (virtual 0.1 s),
            // minus the tick of the lease clock.
            long expected = SECOND;
            assertTrue(Math.abs(result - expected) < 20 * MILLI, "retry after " + result);
        }
        // Another key is free meanwhile (without credit, once its lease arrives).
        KeyedRateLimiter<String> second = processes.get(1).limiter;
        long result;
        for (long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                (result = second.tryAcquire("bob")) != KeyedRateLimiter.ADMITTED;
                Thread.sleep(1)) {
            assertTrue(result < 100 * MILLI && System.nanoTime() - deadline < 0, "bob refused: " + result);
        }
    }
}
