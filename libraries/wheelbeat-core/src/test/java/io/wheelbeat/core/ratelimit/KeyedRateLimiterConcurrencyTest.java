package io.wheelbeat.core.ratelimit;

import static io.wheelbeat.core.ratelimit.VirtualWheel.MILLI;
import static io.wheelbeat.core.ratelimit.VirtualWheel.SECOND;
import static io.wheelbeat.core.ratelimit.VirtualWheel.takeAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Several threads hammering the same keys. Virtual time: the test thread owns the wheel and the
 * clock; pass or fail never depends on speed.
 */
class KeyedRateLimiterConcurrencyTest {

    private static final int THREADS = 4;
    private static final String[] KEYS = {"a", "b", "c", "d"};
    private static final RateLimit WINDOW = RateLimit.slidingWindow(300, Duration.ofSeconds(1));
    private static final RateLimit BUCKET = RateLimit.tokenBucket(300, Duration.ofSeconds(1), 100);

    @Test
    void slidingWindowAdmitsExactlyWhatOneThreadWouldWithTimeFrozen() throws Exception {
        admitsExactlyWhatOneThreadWould(WINDOW);
    }

    @Test
    void tokenBucketAdmitsExactlyWhatOneThreadWouldWithTimeFrozen() throws Exception {
        admitsExactlyWhatOneThreadWould(BUCKET);
    }

    @Test
    void slidingWindowNeverAdmitsMoreThanItsPermitsInAWindowWhileTimeMoves() throws Exception {
        long window = SECOND;
        List<long[]> admissions = hammerWhileTimeMoves(WINDOW, window / 20, 10 * window);
        for (int w = 0; w < 10; w++) {
            for (int key = 0; key < KEYS.length; key++) {
                long inWindow = countWithin(admissions, key, w * window, (w + 1) * window - 1);
                assertTrue(inWindow <= 300, "window " + w + " key " + KEYS[key] + " admitted " + inWindow);
            }
        }
        assertTrue(admissions.size() > 10 * 300, "the limit was actually reached: " + admissions.size());
    }

    @Test
    void tokenBucketNeverAdmitsMoreThanItsBurstPlusRefillWhileTimeMoves() throws Exception {
        long interval = SECOND / 300 + 1; // 1 s / 300, rounded up
        long span = 200 * MILLI;
        List<long[]> admissions = hammerWhileTimeMoves(BUCKET, SECOND / 20, 10 * SECOND);
        for (long from = 0; from < 10 * SECOND; from += SECOND / 100) {
            for (int key = 0; key < KEYS.length; key++) {
                long within = countWithin(admissions, key, from, from + span);
                assertTrue(within <= 100 + span / interval, "from " + from + " key " + KEYS[key] + ": " + within);
            }
        }
        assertTrue(admissions.size() > 10 * 300, "the limit was actually reached: " + admissions.size());
    }

    /**
     * With time frozen, threads race until every key's permits are gone: they must end with
     * exactly the permits a single thread gets from an identical limiter, no more (a lost
     * update) and no fewer (a spurious refusal). Time moves between rounds, evicting keys.
     */
    private static void admitsExactlyWhatOneThreadWould(RateLimit limit) throws Exception {
        VirtualWheel time = new VirtualWheel();
        VirtualWheel referenceTime = new VirtualWheel();
        KeyedRateLimiter<String> limiter = time.limiter(limit);
        KeyedRateLimiter<String> reference = referenceTime.limiter(limit);
        CyclicBarrier start = new CyclicBarrier(THREADS + 1);
        CyclicBarrier done = new CyclicBarrier(THREADS + 1);
        AtomicLong[] admitted = new AtomicLong[KEYS.length];
        for (int key = 0; key < KEYS.length; key++) {
            admitted[key] = new AtomicLong();
        }
        AtomicBoolean finished = new AtomicBoolean();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            int offset = t;
            threads.add(new Thread(
                    () -> {
                        try {
                            while (true) {
                                start.await();
                                if (finished.get()) {
                                    return;
                                }
                                for (int i = 0; i < 1_500 * KEYS.length; i++) {
                                    int key = (i + offset) % KEYS.length;
                                    if (limiter.tryAcquire(KEYS[key]) == KeyedRateLimiter.ADMITTED) {
                                        admitted[key].incrementAndGet();
                                    }
                                }
                                done.await();
                            }
                        } catch (Throwable e) {
                            failure.compareAndSet(null, e);
                        }
                    },
                    "hammer-" + t));
        }
        threads.forEach(Thread::start);
        Random random = new Random(7);
        long now = 0;
        try {
            for (int round = 0; round < 40; round++) {
                now += random.nextInt(3) == 0 ? random.nextLong(3 * SECOND) : random.nextLong(400 * MILLI);
                time.at(now);
                referenceTime.at(now);
                for (AtomicLong count : admitted) {
                    count.set(0);
                }
                start.await();
                done.await();
                for (int key = 0; key < KEYS.length; key++) {
                    assertEquals(
                            takeAll(reference, KEYS[key]),
                            admitted[key].get(),
                            limit + ": round " + round + " at " + now + ", key " + KEYS[key]);
                }
            }
        } finally {
            finished.set(true);
            start.await();
            for (Thread thread : threads) {
                thread.join();
            }
        }
        assertEquals(null, failure.get());
        assertTrue(limiter.evictedIdleCount() > 0, "keys were evicted and re-created between rounds");
    }

    /**
     * Threads hammer while the test thread moves time by {@code step} up to {@code until},
     * running the wheel as it goes, and waiting for some calls between steps. Returns the
     * admissions as {key, earliest time, latest time}: the clock read before and after the call.
     */
    private static List<long[]> hammerWhileTimeMoves(RateLimit limit, long step, long until) throws Exception {
        VirtualWheel time = new VirtualWheel();
        KeyedRateLimiter<String> limiter = time.limiter(limit);
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong calls = new AtomicLong();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<List<long[]>> perThread = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < THREADS - 1; t++) {
            List<long[]> mine = new ArrayList<>();
            perThread.add(mine);
            int offset = t;
            threads.add(new Thread(
                    () -> {
                        try {
                            for (int i = offset; !stop.get(); i++) {
                                int key = i % KEYS.length;
                                long before = time.now();
                                long result = limiter.tryAcquire(KEYS[key]);
                                long after = time.now();
                                calls.incrementAndGet();
                                if (result == KeyedRateLimiter.ADMITTED) {
                                    mine.add(new long[] {key, before, after});
                                }
                            }
                        } catch (Throwable e) {
                            failure.compareAndSet(null, e);
                        }
                    },
                    "hammer-" + t));
        }
        threads.forEach(Thread::start);
        try {
            for (long now = 0; now <= until; now += step) {
                time.at(now);
                long target = calls.get() + 500;
                while (calls.get() < target && failure.get() == null) {
                    Thread.yield(); // the hammers need the cores more than this loop
                }
            }
        } finally {
            stop.set(true);
            for (Thread thread : threads) {
                thread.join();
            }
        }
        assertEquals(null, failure.get());
        List<long[]> all = new ArrayList<>();
        perThread.forEach(all::addAll);
        return all;
    }

    /** Admissions of {@code key} certainly made within [from, to]. */
    private static long countWithin(List<long[]> admissions, int key, long from, long to) {
        return admissions.stream()
                .filter(a -> a[0] == key && a[1] >= from && a[2] <= to)
                .count();
    }
}
