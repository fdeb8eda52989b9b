package io.wheelbeat.core;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.management.ManagementFactory;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Schedule, cancel and reschedule allocate nothing in steady state, counted by the JVM's
 * per-thread allocation counter (bytes, not time). Any allocation per operation would show as
 * at least 16 bytes times 300,000 operations.
 */
class TimerWheelAllocationTest {

    private static final int TIMERS = 10_000;
    private static final int OPERATIONS = 300_000;

    @Test
    void scheduleCancelAndRescheduleAllocateNothingInSteadyState() {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        assumeTrue(threads.isThreadAllocatedMemorySupported() && threads.isThreadAllocatedMemoryEnabled());
        ManualTicker ticker = new ManualTicker();
        TimerWheel wheel = TimerWheel.builder().ticker(ticker).initialCapacity(TIMERS).build();
        TimerCallback callback = id -> { };
        long[] ids = new long[TIMERS];
        for (int i = 0; i < TIMERS; i++) {
            ids[i] = wheel.schedule(callback, i, TimeUnit.MILLISECONDS);
        }
        SplittableRandom random = new SplittableRandom(7);
        churn(wheel, ticker, callback, ids, random); // grows nothing, warms the code up
        long thread = Thread.currentThread().getId();
        long before = threads.getThreadAllocatedBytes(thread);
        churn(wheel, ticker, callback, ids, random);
        long allocated = threads.getThreadAllocatedBytes(thread) - before;
        assertTrue(allocated < 4096, "allocated " + allocated + " bytes over " + OPERATIONS + " operations");
    }

    private static void churn(TimerWheel wheel, ManualTicker ticker, TimerCallback callback, long[] ids,
                              SplittableRandom random) {
        for (int op = 0; op < OPERATIONS; op++) {
            int i = random.nextInt(ids.length);
            switch (op % 4) {
                case 0 -> wheel.reschedule(ids[i], random.nextInt(60_000), TimeUnit.MILLISECONDS);
                case 1 -> wheel.rescheduleAt(ids[i], ticker.nanoTime() + random.nextInt(1_000_000_000));
                case 2 -> {
                    wheel.cancel(ids[i]);
                    ids[i] = wheel.schedule(callback, random.nextInt(60_000), TimeUnit.MILLISECONDS);
                }
                default -> {
                    if (op % 1000 == 3) {
                        ticker.advance(1, TimeUnit.MILLISECONDS);
                        wheel.advance(ticker.nanoTime());
                    }
                }
            }
        }
    }
}
