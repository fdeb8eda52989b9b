package io.wheelbeat.loadtest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ClassHistogramTest {

    private static final String TABLE = String.join(
            "\n",
            " num     #instances         #bytes  class name (module)",
            "-------------------------------------------------------",
            "   1:          1000          64000  io.netty.channel.DefaultChannelHandlerContext",
            "   2:           500          24000  [B (java.base@17.0.15)",
            "   3:    10     160  io.netty.handler.timeout.IdleStateHandler$$Lambda$210/0x00007f22980cb3",
            "   4:    20     320  io.netty.handler.timeout.IdleStateHandler$$Lambda$211/0x00007f22980cc0",
            "Total          1530          88480",
            "");

    @Test
    void readsBytesByClassAndSkipsHeaderAndTotal() {
        ClassHistogram h = ClassHistogram.parse(TABLE);
        assertEquals(64_000L, h.bytes().get("io.netty.channel.DefaultChannelHandlerContext"));
        assertEquals(24_000L, h.bytes().get("[B"));
        assertEquals(88_480L, h.totalBytes(), "the total line is not counted twice");
    }

    @Test
    void namesEveryLambdaClassOfACallSiteAlike() {
        // Hidden classes get new names in every JVM; the rounds' histograms must line up.
        ClassHistogram h = ClassHistogram.parse(TABLE);
        assertEquals(480L, h.bytes().get("io.netty.handler.timeout.IdleStateHandler$$Lambda"));
        assertEquals(3, h.bytes().size());
    }

    @Test
    void growthCoversClassesThatAppearedOrVanished() {
        ClassHistogram before = new ClassHistogram(Map.of("A", 100L, "Gone", 50L));
        ClassHistogram after = new ClassHistogram(Map.of("A", 400L, "New", 30L));
        assertEquals(Map.of("A", 300L, "Gone", -50L, "New", 30L), after.growthSince(before));
    }

    @Test
    void perConnectionKeepsWhatMovedEnoughLargestFirst() {
        Map<String, Double> shown = ClassHistogram.perConnection(
                Map.of("small", 40L, "large", 6_400L, "shrank", -200L, "middle", 1_000L), 100, 0.5);
        assertEquals(List.of("large", "middle", "shrank"), List.copyOf(shown.keySet()));
        assertEquals(64.0, shown.get("large"));
        assertEquals(-2.0, shown.get("shrank"));
        assertTrue(ClassHistogram.perConnection(Map.of("A", 5L), 0, 0.5).isEmpty(), "no connections");
    }

    /** A class only this test makes, so its bytes in this JVM's histogram are ours. */
    record Marker(long a, long b) {}

    @Test
    void takesThisJvmsLiveHeap() {
        List<Marker> held = new ArrayList<>();
        for (int i = 0; i < 10_000; i++) {
            held.add(new Marker(i, i));
        }
        ClassHistogram h = ClassHistogram.take();
        long markerBytes = h.bytes().getOrDefault(Marker.class.getName(), 0L);
        assertTrue(markerBytes >= 10_000L * 24, "each Marker holds two longs: " + markerBytes);
        assertTrue(h.totalBytes() > markerBytes);
        assertEquals(10_000, held.size());
    }
}
