package io.wheelbeat.loadtest;

/**
 * Which connections go silent and when, as pure functions of the seed and the connection index:
 * the client side (which stops sending) and the server side (which checks the idle events) agree
 * on the plan without exchanging it, even in separate processes.
 *
 * @param seed the scenario's seed
 * @param fraction the share of connections that go silent, 0 to 1
 */
record SilencePlan(long seed, double fraction) {

    private static final long GOLDEN = 0x9E3779B97F4A7C15L;

    /** Whether connection {@code index} goes silent. */
    boolean isSilent(int index) {
        return unit(mix(seed ^ (index * GOLDEN))) < fraction;
    }

    /**
     * Where in the silence window connection {@code index} goes silent, 0 (at the start) to just
     * below 1 (at the end).
     */
    double offset(int index) {
        return unit(mix(~seed + (index + 1L) * GOLDEN));
    }

    /** How many of the first {@code connections} indices go silent. */
    int silentCount(int connections) {
        int count = 0;
        for (int i = 0; i < connections; i++) {
            if (isSilent(i)) {
                count++;
            }
        }
        return count;
    }

    /** SplitMix64's finaliser: spreads neighbouring inputs over the whole range. */
    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    private static double unit(long bits) {
        return (bits >>> 11) * 0x1.0p-53;
    }
}
