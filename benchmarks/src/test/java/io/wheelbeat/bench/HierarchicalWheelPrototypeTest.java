package io.wheelbeat.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The benchmark-only hierarchical prototype must be a correct wheel, or the comparison is void. */
class HierarchicalWheelPrototypeTest {

    private static final long TICK = 1L << 20;
    private static final long ORIGIN = 1L << 40;

    private final List<Long> fired = new ArrayList<>();

    @ParameterizedTest
    @ValueSource(longs = {1, 255, 256, 300, 16_383, 16_384, 20_000, 1L << 20, (1L << 20) + 7, (1L << 26) + 5})
    void firesEachTimerInTheTickOfItsDeadlineOnAnyLevel(long ticksAhead) {
        HierarchicalWheelPrototype wheel = new HierarchicalWheelPrototype(ORIGIN, true, fired::add);
        long deadline = ORIGIN + ticksAhead * TICK - TICK / 2;
        long id = wheel.scheduleAt(deadline);

        wheel.advance(deadline - 1);
        assertTrue(fired.isEmpty(), "fired before its deadline");
        wheel.advance(ORIGIN + ticksAhead * TICK);
        assertEquals(List.of(id), fired);
        assertEquals(0, wheel.pending());
    }

    @Test
    void catchesUpOverALongJumpFiringEveryTimerOnceInDeadlineOrder() {
        HierarchicalWheelPrototype wheel = new HierarchicalWheelPrototype(ORIGIN, true, fired::add);
        long[] ticks = {70_000, 3, 300, 1L << 21, 20_000, 256};
        List<Long> idsByDeadline = new ArrayList<>();
        long[] ids = new long[ticks.length];
        for (int i = 0; i < ticks.length; i++) {
            ids[i] = wheel.scheduleAt(ORIGIN + ticks[i] * TICK);
        }
        for (int i : new int[] {1, 5, 2, 4, 0, 3}) {
            idsByDeadline.add(ids[i]);
        }

        wheel.advance(ORIGIN + (1L << 22) * TICK);

        assertEquals(idsByDeadline, fired);
    }

    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void aMovedTimerFiresAtItsNewDeadlineOnly(boolean shortcut) {
        HierarchicalWheelPrototype wheel = new HierarchicalWheelPrototype(ORIGIN, shortcut, fired::add);
        long id = wheel.scheduleAt(ORIGIN + 20_000 * TICK);
        // Same level-2 slot (20,000 and 20,100 ticks share 2^14-tick slot 1): the shortcut path.
        assertTrue(wheel.rescheduleAt(id, ORIGIN + 20_100 * TICK));

        wheel.advance(ORIGIN + 20_099 * TICK);
        assertTrue(fired.isEmpty(), "fired at the old deadline");
        wheel.advance(ORIGIN + 20_100 * TICK);
        assertEquals(List.of(id), fired);
    }

    @Test
    void aTimerMovedEarlierFiresEarlier() {
        HierarchicalWheelPrototype wheel = new HierarchicalWheelPrototype(ORIGIN, true, fired::add);
        long id = wheel.scheduleAt(ORIGIN + 50_000 * TICK);
        wheel.rescheduleAt(id, ORIGIN + 10 * TICK);

        wheel.advance(ORIGIN + 10 * TICK);

        assertEquals(List.of(id), fired);
    }

    @Test
    void aCancelledTimerNeverFiresAndItsIdGoesStale() {
        HierarchicalWheelPrototype wheel = new HierarchicalWheelPrototype(ORIGIN, true, fired::add);
        long id = wheel.scheduleAt(ORIGIN + 500 * TICK);

        assertTrue(wheel.cancel(id));
        wheel.advance(ORIGIN + 1000 * TICK);

        assertTrue(fired.isEmpty());
        assertFalse(wheel.isPending(id));
        assertFalse(wheel.rescheduleAt(id, ORIGIN + 2000 * TICK));
        assertFalse(wheel.cancel(id));
    }

    @Test
    void aReusedCellGetsANewIdSoTheOldOneIsRejected() {
        HierarchicalWheelPrototype wheel = new HierarchicalWheelPrototype(ORIGIN, true, fired::add);
        long first = wheel.scheduleAt(ORIGIN + 5 * TICK);
        wheel.advance(ORIGIN + 5 * TICK);
        long second = wheel.scheduleAt(ORIGIN + 50 * TICK);

        assertEquals((int) first, (int) second, "the cell is reused");
        assertFalse(wheel.cancel(first));
        assertTrue(wheel.isPending(second));
    }
}
