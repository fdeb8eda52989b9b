package io.wheelbeat.netty.loop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.channel.EventLoop;
import io.netty.channel.nio.NioIoHandler;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.Test;

/**
 * Cancels from several threads at once, racing each other, the loop and the tasks' own runs, on
 * the system clock: whatever the interleaving, each task ends exactly once, either run or
 * cancelled, exactly one {@code cancel} call answers {@code true} for a cancelled task and none
 * for a run one, each listener is told once, and the wheels hold nothing afterwards.
 */
class WheelScheduledFutureStressTest {

    private static final int THREADS = 4;
    private static final int TASKS_PER_THREAD = 5_000;
    private static final int PERIODIC = 64;

    @Test
    void cancelsFromAnyThreadEndEachTaskOnce() throws Exception {
        WheelIoEventLoopGroup group = new WheelIoEventLoopGroup(2, NioIoHandler.newFactory());
        try {
            int tasks = THREADS * TASKS_PER_THREAD;
            AtomicIntegerArray runs = new AtomicIntegerArray(tasks);
            AtomicIntegerArray cancelAnswers = new AtomicIntegerArray(tasks);
            AtomicIntegerArray notified = new AtomicIntegerArray(tasks);
            ScheduledFuture<?>[] futures = new ScheduledFuture<?>[tasks];
            CountDownLatch allNotified = new CountDownLatch(tasks);
            // Half scheduled from the loops themselves, half from the threads that will cancel.
            List<Thread> schedulers = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                int first = t * TASKS_PER_THREAD;
                schedulers.add(new Thread(() -> {
                    ThreadLocalRandom random = ThreadLocalRandom.current();
                    for (int i = first; i < first + TASKS_PER_THREAD; i++) {
                        int id = i;
                        EventLoop loop = group.next();
                        Runnable task = () -> runs.incrementAndGet(id);
                        // Every fourth an hour ahead, so that some are surely still pending when the
                        // cancels come, however slow a busy machine is; the rest race their runs.
                        long delayMicros = id % 4 == 3 ? TimeUnit.HOURS.toMicros(1) : random.nextInt(20_000);
                        futures[id] = i % 2 == 0
                                ? loop.schedule(task, delayMicros, TimeUnit.MICROSECONDS)
                                : loop.submit(() -> loop.schedule(task, delayMicros, TimeUnit.MICROSECONDS))
                                        .syncUninterruptibly()
                                        .getNow();
                        futures[id].addListener(f -> {
                            notified.incrementAndGet(id);
                            allNotified.countDown();
                        });
                    }
                }));
            }
            runAll(schedulers);
            // Every thread cancels every task it can, in its own random order: the threads race
            // each other for the same futures, and the loops race them by running the tasks.
            List<Thread> cancellers = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                cancellers.add(new Thread(() -> {
                    ThreadLocalRandom random = ThreadLocalRandom.current();
                    int start = random.nextInt(tasks);
                    int stride = 1 + 2 * random.nextInt(1_000);
                    for (int k = 0; k < tasks; k++) {
                        int id = (int) ((start + (long) k * stride) % tasks);
                        if (random.nextInt(3) != 0 && futures[id].cancel(false)) {
                            cancelAnswers.incrementAndGet(id);
                        }
                    }
                }));
            }
            AtomicInteger periodicRuns = new AtomicInteger();
            List<ScheduledFuture<?>> periodic = new ArrayList<>();
            for (int i = 0; i < PERIODIC; i++) {
                periodic.add(
                        i % 2 == 0
                                ? group.next()
                                        .scheduleAtFixedRate(periodicRuns::incrementAndGet, 0, 1, TimeUnit.MILLISECONDS)
                                : group.next()
                                        .scheduleWithFixedDelay(
                                                periodicRuns::incrementAndGet, 0, 1, TimeUnit.MILLISECONDS));
            }
            AtomicIntegerArray periodicCancels = new AtomicIntegerArray(PERIODIC);
            for (int t = 0; t < THREADS; t++) {
                cancellers.add(new Thread(() -> {
                    for (int i = 0; i < PERIODIC; i++) {
                        if (periodic.get(i).cancel(false)) {
                            periodicCancels.incrementAndGet(i);
                        }
                    }
                }));
            }
            runAll(cancellers);
            // What no thread happened to try: cancelled here, so that every task ends.
            for (int id = 0; id < tasks; id++) {
                if (futures[id].cancel(false)) {
                    cancelAnswers.incrementAndGet(id);
                }
            }
            assertTrue(allNotified.await(60, TimeUnit.SECONDS), "listeners still waiting: " + allNotified.getCount());
            int cancelled = 0;
            for (int id = 0; id < tasks; id++) {
                ScheduledFuture<?> future = futures[id];
                assertTrue(future.isDone(), "task " + id);
                if (future.isCancelled()) {
                    cancelled++;
                    assertEquals(0, runs.get(id), "cancelled task " + id + " ran");
                    assertEquals(1, cancelAnswers.get(id), "cancel answered true for task " + id);
                } else {
                    assertTrue(future.isSuccess(), "task " + id);
                    assertEquals(1, runs.get(id), "runs of task " + id);
                    assertEquals(0, cancelAnswers.get(id), "cancel answered true for run task " + id);
                }
                assertEquals(1, notified.get(id), "listener calls of task " + id);
            }
            for (int i = 0; i < PERIODIC; i++) {
                assertTrue(periodic.get(i).isCancelled(), "periodic " + i);
                assertEquals(1, periodicCancels.get(i), "cancel answered true for periodic " + i);
            }
            assertTrue(cancelled >= tasks / 4, "cancelled " + cancelled + " of " + tasks);
            // The cancels' hand-overs reach the loops with the next task they run.
            for (io.netty.util.concurrent.EventExecutor loop : group) {
                loop.submit(() -> {}).sync();
            }
            int runsAfterCancel = periodicRuns.get();
            for (io.netty.util.concurrent.EventExecutor loop : group) {
                loop.submit(() -> {}).sync();
            }
            assertEquals(runsAfterCancel, periodicRuns.get(), "a cancelled periodic task ran on");
            assertEquals(0, group.pendingTimers());
        } finally {
            group.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS).sync();
        }
    }

    private static void runAll(List<Thread> threads) throws InterruptedException {
        threads.forEach(Thread::start);
        for (Thread thread : threads) {
            thread.join(TimeUnit.SECONDS.toMillis(60));
            assertTrue(!thread.isAlive(), thread + " still running");
        }
    }
}
