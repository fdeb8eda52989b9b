package io.wheelbeat.core;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.wheelbeat.core.internal.ManualTicker;
import io.wheelbeat.core.internal.WheelSettings;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@link ExecutorDrivenWheel#rescheduleAt} keeps a node's place among equal deadlines (Netty's
 * periodic task keeps its id), where {@link ExecutorDrivenWheel#scheduleAt} gives it a new one:
 * for a node that fired and for one still pending, at clock origins near both ends of the range
 * (this test executor compares readings without wrapping).
 */
class RescheduleKeepsOrderTest {

    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

    private static List<String> run(long origin, boolean pendingWhenMoved, boolean keepOrder) {
        VirtualExecutor executor = new VirtualExecutor(new ManualTicker(origin));
        ExecutorDrivenWheel wheel = new ExecutorDrivenWheel(executor, new WheelSettings().ticker(executor.ticker));
        List<String> fired = new ArrayList<>();
        TimerNode first = new RunningNode(() -> fired.add("first"));
        TimerNode second = new RunningNode(() -> fired.add("second"));
        wheel.scheduleAt(first, origin + 10 * MS);
        wheel.scheduleAt(second, origin + 20 * MS);
        if (!pendingWhenMoved) {
            executor.advance(10, TimeUnit.MILLISECONDS);
            assertEquals(List.of("first"), fired);
            fired.clear();
        }
        if (keepOrder) {
            wheel.rescheduleAt(first, origin + 20 * MS);
        } else {
            wheel.scheduleAt(first, origin + 20 * MS);
        }
        executor.advance(pendingWhenMoved ? 20 : 10, TimeUnit.MILLISECONDS);
        return fired;
    }

    @Test
    void aRescheduledNodeKeepsItsPlaceAmongEqualDeadlines() {
        for (long origin : new long[] {0, Long.MAX_VALUE - 1000 * MS, Long.MIN_VALUE}) {
            for (boolean pending : new boolean[] {true, false}) {
                String at = "origin " + origin + (pending ? ", moved while pending" : ", moved after it fired");
                assertEquals(List.of("first", "second"), run(origin, pending, true), at);
                assertEquals(List.of("second", "first"), run(origin, pending, false), at);
            }
        }
    }
}
