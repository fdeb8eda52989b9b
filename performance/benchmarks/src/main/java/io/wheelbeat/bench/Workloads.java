package io.wheelbeat.bench;

import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/** What the benchmarks share: a fixed-seed random order, and waiting for timers to fire. */
final class Workloads {

    /** Owner-thread timers are polled once per this many operations (about once a tick). */
    static final int POLL_EVERY = 1024;

    static final long SEED = 0x5EED_B3A7L;
    private static final long FIRE_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(120);

    private Workloads() {}

    /**
     * A fixed order in which timers are touched, pass after pass: {@code fixed-permutation}
     * ({@link #randomOrder}) or {@code creation} (0 to n - 1).
     *
     * @throws IllegalArgumentException for another name
     */
    static int[] order(String name, int n) {
        return switch (name) {
            case "fixed-permutation" -> randomOrder(n);
            case "creation" -> java.util.stream.IntStream.range(0, n).toArray();
            default ->
                throw new IllegalArgumentException(
                        "unknown fixed order '" + name + "'; known: fixed-permutation, creation");
        };
    }

    /**
     * A random permutation of 0 to n - 1, the same on every run: the order in which timers are
     * touched. Connections become active in no particular order, so no contender gets the cache
     * friendliness of touching its timers in the order they were created (timers are created in
     * index order, see {@link #scheduleSpread}).
     */
    static int[] randomOrder(int n) {
        int[] order = new int[n];
        for (int i = 0; i < n; i++) {
            order[i] = i;
        }
        SplittableRandom random = new SplittableRandom(SEED);
        for (int i = n - 1; i > 0; i--) {
            int j = random.nextInt(i + 1);
            int swap = order[i];
            order[i] = order[j];
            order[j] = swap;
        }
        return order;
    }

    /**
     * The delay of each timer {@code i} when timers are re-armed every {@code delayNanos} in
     * {@code order}: the k-th in order is due after (k + 1) / n of the delay, so deadlines are
     * spread evenly, as in a steady state, not piled into the few ticks the set-up takes.
     */
    static long[] steadyStateDelays(int[] order, long delayNanos) {
        int n = order.length;
        long[] delays = new long[n];
        for (int k = 0; k < n; k++) {
            delays[order[k]] = Math.max(1, delayNanos / n * (k + 1));
        }
        return delays;
    }

    /**
     * Schedules timers {@code 0..n-1} in index order (so a contender's storage follows the index,
     * and {@code order} reaches it at random) with {@link #steadyStateDelays}.
     */
    static void scheduleSpread(TimerAdapter timers, int[] order, long delayNanos) {
        long[] delays = steadyStateDelays(order, delayNanos);
        for (int i = 0; i < delays.length; i++) {
            timers.schedule(i, delays[i]);
        }
    }

    /**
     * Fires every timer up to a total of {@code target} fired: owner-thread timers by moving
     * virtual time {@code nanos} forward and polling; threaded ones by waiting (parked, not
     * spinning, so the wait costs the caller no CPU) for their thread to fire them.
     *
     * @throws IllegalStateException if the timers do not all fire: the benchmark would be wrong
     */
    static void fireAll(TimerAdapter timers, long nanos, long target) {
        if (timers.threaded()) {
            long deadline = System.nanoTime() + FIRE_TIMEOUT_NANOS;
            while (timers.fired() < target) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("only " + timers.fired() + " of " + target + " timers fired");
                }
                LockSupport.parkNanos(50_000);
            }
            return;
        }
        timers.advanceTime(nanos);
        timers.poll();
        if (timers.fired() != target) {
            throw new IllegalStateException(timers.fired() + " timers fired, expected " + target);
        }
    }
}
