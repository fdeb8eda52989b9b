package io.wheelbeat.netty.guard;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class CloseSlotsTest {

    @ParameterizedTest(name = "clock at {0}")
    @ValueSource(longs = {0, -1, Long.MAX_VALUE - 25, Long.MIN_VALUE, Long.MIN_VALUE + 5, Long.MAX_VALUE})
    void aBurstTakesSlotsOneSpacingApartAcrossAnyClockOrigin(long now) {
        CloseSlots slots = new CloseSlots(10);
        List<Long> offsets = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            offsets.add(slots.reserve(now) - now);
        }
        assertEquals(List.of(0L, 10L, 20L, 30L, 40L), offsets);
    }

    @ParameterizedTest(name = "clock at {0}")
    @ValueSource(longs = {0, Long.MAX_VALUE - 15, Long.MIN_VALUE})
    void onceTheBacklogHasPassedTheNextSlotIsNow(long start) {
        CloseSlots slots = new CloseSlots(10);
        slots.reserve(start);
        slots.reserve(start); // start + 10
        assertEquals(start + 20, slots.reserve(start + 15), "inside the backlog: the next free slot");
        long later = start + 1_000;
        assertEquals(later, slots.reserve(later));
    }

    @Test
    void threadsRacingForSlotsEachGetADifferentOne() throws Exception {
        CloseSlots slots = new CloseSlots(1);
        Set<Long> taken = ConcurrentHashMap.newKeySet();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            Thread thread = new Thread(() -> {
                for (int i = 0; i < 10_000; i++) {
                    taken.add(slots.reserve(0));
                }
            });
            threads.add(thread);
            thread.start();
        }
        for (Thread thread : threads) {
            thread.join();
        }
        assertEquals(40_000, taken.size());
    }
}
