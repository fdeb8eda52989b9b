package io.wheelbeat.core;

import java.util.random.RandomGenerator;

/**
 * A random source that answers {@link #nextDouble()} from a script, so that a jittered delay is
 * known exactly. Any other draw fails the test (the code under test promises to draw only
 * {@code nextDouble()}), and so does a draw beyond the script.
 */
public final class ScriptedRandom implements RandomGenerator {

    private final double[] script;
    private int draws;

    /** @param script values in [0, 1), returned by {@link #nextDouble()} in this order */
    public ScriptedRandom(double... script) {
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
        throw new AssertionError("only nextDouble() may be drawn");
    }

    /** Returns how many scripted values have been drawn. */
    public int draws() {
        return draws;
    }
}
