package io.wheelbeat.netty;

import java.util.ArrayList;
import java.util.List;

/** What real-time idle tests assert: how long no read had come before each event. */
public final class Silences {

    private Silences() {}

    /**
     * Per event, the time since the last read at or before it.
     *
     * @param reads the times of the reads (the start counts as one), in System.nanoTime
     * @param events the times of the events, on the same clock
     * @return one silence per event, in ns
     */
    public static List<Long> beforeEach(List<Long> reads, List<Long> events) {
        List<Long> silences = new ArrayList<>();
        for (long event : events) {
            long lastRead = reads.stream()
                    .filter(read -> read <= event)
                    .max(Long::compare)
                    .orElseThrow();
            silences.add(event - lastRead);
        }
        return silences;
    }
}
