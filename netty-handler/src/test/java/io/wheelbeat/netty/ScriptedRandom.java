package io.wheelbeat.netty;

import java.util.random.RandomGenerator;

/**
 * A random generator whose {@link #nextDouble()} returns the given draws in order, so that a
 * jittered duration is known exactly. Fails loudly when asked for more draws than scripted.
 */
public final class ScriptedRandom implements RandomGenerator {

    private final double[] draws;
    private int used;

    /** @param draws values in [0, 1), returned by {@link #nextDouble()} in this order */
    public ScriptedRandom(double... draws) {
        this.draws = draws.clone();
    }

    @Override
    public long nextLong() {
        if (used == draws.length) {
            throw new IllegalStateException("only " + draws.length + " draws were scripted");
        }
        // nextDouble() is (nextLong() >>> 11) * 2^-53: invert it.
        return ((long) (draws[used++] * 0x1.0p53)) << 11;
    }

    /** Returns how many draws have been taken. */
    public int used() {
        return used;
    }
}
