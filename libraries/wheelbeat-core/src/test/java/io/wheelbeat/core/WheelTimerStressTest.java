package io.wheelbeat.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Four threads schedule and cancel against a running {@link WheelTimer} in real time, racing
 * cancels against expiry. Afterwards every timeout either ran exactly once and was not cancelled,
 * or was cancelled (cancel returned true) and never ran; and nothing is left pending. The wait
 * for the timer to drain is generous and is never the verdict.
 */
class WheelTimerStressTest {

    private static final int THREADS = 4;
    private static final int TIMEOUTS_PER_THREAD = 25_000;

    /** One timeout's record: its handle, how often its task ran, whether cancel won. */
    private static final class Tracked {
        final AtomicInteger runs = new AtomicInteger();
        volatile WheelTimeout timeout;
        volatile boolean cancelWon;
    }

    @Test
    void everyTimeoutFiresExactlyOnceOrIsCancelledNeverBothNeverNeither() throws Exception {
        WheelTimer timer = WheelTimer.builder()
                .tick(Duration.of(100, java.time.temporal.ChronoUnit.MICROS))
                .slots(1024)
                .build();
        List<Tracked> all = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        CountDownLatch start = new CountDownLatch(1);
        for (int t = 0; t < THREADS; t++) {
            List<Tracked> mine = new ArrayList<>();
            for (int i = 0; i < TIMEOUTS_PER_THREAD; i++) {
                mine.add(new Tracked());
            }
            all.addAll(mine);
            long seed = t;
            Thread thread = new Thread(() -> hammer(timer, mine, new SplittableRandom(seed), start), "stress-" + t);
            threads.add(thread);
            thread.start();
        }
        start.countDown();
        for (Thread thread : threads) {
            thread.join(TimeUnit.MINUTES.toMillis(2));
        }
        long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (timer.pendingTimers() > 0 && System.nanoTime() < giveUp) {
            Thread.sleep(10);
        }
        assertEquals(0, timer.pendingTimers(), "timers left pending");
        assertTrue(timer.stop().isEmpty());

        int fired = 0;
        int cancelled = 0;
        for (Tracked tracked : all) {
            int runs = tracked.runs.get();
            if (tracked.cancelWon) {
                assertEquals(0, runs, "a cancelled timeout ran");
                assertTrue(tracked.timeout.isCancelled());
                cancelled++;
            } else {
                assertEquals(1, runs, "a timeout that was not cancelled must run exactly once");
                assertTrue(tracked.timeout.isExpired());
                fired++;
            }
        }
        assertEquals(THREADS * TIMEOUTS_PER_THREAD, fired + cancelled);
        assertTrue(fired > 0 && cancelled > 0, "both outcomes exercised: fired " + fired + ", cancelled " + cancelled);
    }

    private static void hammer(WheelTimer timer, List<Tracked> mine, SplittableRandom random, CountDownLatch start) {
        try {
            start.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        }
        int cancelCursor = 0;
        for (int i = 0; i < mine.size(); i++) {
            Tracked tracked = mine.get(i);
            tracked.timeout =
                    timer.newTimeout(t -> tracked.runs.incrementAndGet(), random.nextLong(-100_000, 3_000_000));
            if (random.nextInt(4) == 0) {
                tracked.cancelWon = tracked.timeout.cancel();
            }
            // Cancel older timeouts too, which are racing their expiry on the timer thread.
            if (random.nextInt(3) == 0 && cancelCursor < i) {
                Tracked older = mine.get(cancelCursor + random.nextInt(i - cancelCursor));
                if (older.timeout.cancel()) {
                    older.cancelWon = true;
                }
                cancelCursor++;
            }
        }
    }
}
