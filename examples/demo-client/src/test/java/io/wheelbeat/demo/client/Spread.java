package io.wheelbeat.demo.client;

/** How events spread over time, for the storm tests. */
final class Spread {

    private Spread() {}

    /** The most of the sorted timestamps {@code sorted} that fall in any window of {@code windowNanos}. */
    static int busiestWindow(long[] sorted, long windowNanos) {
        int most = 0;
        for (int start = 0, end = 0; start < sorted.length; start++) {
            while (end < sorted.length && sorted[end] - sorted[start] < windowNanos) {
                end++;
            }
            most = Math.max(most, end - start);
        }
        return most;
    }
}
