package io.wheelbeat.core;

import static io.wheelbeat.core.Allocations.steadyBytesAllocatedBy;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.wheelbeat.core.internal.WheelSettings;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Schedule, cancel, re-arm and poll allocate nothing in steady state, counted by the JVM's
 * per-thread allocation counter (bytes, not time): on the wheel itself, and through the owner
 * thread API of {@link ExecutorDrivenWheel} when the driving task stays where it is.
 */
class TimerWheelAllocationTest {

    private static final int TIMERS = 10_000;
    private static final int OPERATIONS = 100_000;
    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

    private final SplittableRandom random = new SplittableRandom(7);

    private static TimerNode[] nodes() {
        TimerNode[] nodes = new TimerNode[TIMERS];
        for (int i = 0; i < TIMERS; i++) {
            nodes[i] = new TimerNode() {
                @Override
                protected void expire() {}
            };
        }
        return nodes;
    }

    @Test
    void scheduleCancelReschedulePollOnTheWheelAllocateNothing() {
        long[] now = {1L << 40};
        TimerWheel wheel = new TimerWheel(now[0], 1L << 20, 4096);
        TimerNode[] ids = nodes();
        for (int i = 0; i < TIMERS; i++) {
            wheel.scheduleAt(ids[i], now[0] + i * MS);
        }
        assertEquals(0, steadyBytesAllocatedBy(() -> {
            for (int op = 0; op < OPERATIONS; op++) {
                int i = random.nextInt(TIMERS);
                long deadline = now[0] + random.nextLong(60_000 * MS);
                switch (op % 4) {
                    case 0, 1 -> wheel.scheduleAt(ids[i], deadline);
                    case 2 -> {
                        wheel.cancel(ids[i]);
                        wheel.scheduleAt(ids[i], deadline);
                    }
                    default -> {
                        if (op % 100 == 3) {
                            now[0] += random.nextLong(2 * MS);
                            wheel.poll(now[0]);
                        }
                    }
                }
            }
        }));
    }

    @Test
    void ownerThreadApiOfTheDriverAllocatesNothingWhileTheDrivingTaskStays() {
        VirtualExecutor executor = new VirtualExecutor();
        ExecutorDrivenWheel driven = new ExecutorDrivenWheel(executor, new WheelSettings().ticker(executor.ticker));
        driven.schedule(nodes()[0], TimeUnit.SECONDS.toNanos(1)); // the driving task waits for this one
        TimerNode[] ids = nodes();
        for (int i = 0; i < TIMERS; i++) {
            driven.schedule(ids[i], TimeUnit.SECONDS.toNanos(2 + i));
        }
        assertEquals(0, steadyBytesAllocatedBy(() -> {
            for (int op = 0; op < OPERATIONS; op++) {
                int i = random.nextInt(TIMERS);
                long delay = 2_000 + random.nextInt(60_000);
                switch (op % 3) {
                    case 0 -> driven.schedule(ids[i], TimeUnit.MILLISECONDS.toNanos(delay));
                    case 1 -> driven.scheduleAt(ids[i], executor.ticker.nanoTime() + delay * MS);
                    default -> {
                        driven.cancel(ids[i]);
                        driven.schedule(ids[i], TimeUnit.MILLISECONDS.toNanos(delay));
                    }
                }
            }
        }));
    }
}
