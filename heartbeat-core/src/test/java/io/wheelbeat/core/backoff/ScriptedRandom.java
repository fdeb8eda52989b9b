package io.wheelbeat.core.backoff;

import java.util.random.RandomGenerator;

/**
 * A random source that answers {@link #nextDouble()} from a script, so that expected delays can
 * be worked out by hand. Any other draw fails the test: policies promise to draw only
 * {@code nextDouble()}, and one per jittered delay.
 */
final class ScriptedRandom implements RandomGenerator {

    private final double[] script;
    private int draws;

    ScriptedRandom(double... script) {
        this.script = script.clone();
    }

    @Override
    public double nextDouble() {
        if (draws == script.length) {
            throw new AssertionError("drew more than the " + script.length + " scripted values");
        }
        return script[draws++];
    }

    @Override
    public long nextLong() {
        throw new AssertionError("a policy must draw only nextDouble()");
    }

    int draws() {
        return draws;
    }
}
