package io.wheelbeat.netty;

import io.netty.util.concurrent.Ticker;
import java.util.concurrent.TimeUnit;

/**
 * A Netty {@link Ticker} for tests: it reads {@code origin} first and moves only when the test
 * advances it, wrapping past {@code Long.MAX_VALUE} as {@code System.nanoTime()} may. Give it to
 * {@code EmbeddedChannel.builder().ticker(...)} to run several channels on one clock, or on a clock
 * that starts anywhere. Not thread-safe.
 */
public final class VirtualTicker implements Ticker {

    private final long origin;
    private long now;

    public VirtualTicker(long origin) {
        this.origin = origin;
        this.now = origin;
    }

    /** Moves the clock forward {@code nanos}. */
    public void advance(long nanos) {
        now += nanos;
    }

    @Override
    public long initialNanoTime() {
        return origin;
    }

    @Override
    public long nanoTime() {
        return now;
    }

    @Override
    public void sleep(long delay, TimeUnit unit) {
        throw new UnsupportedOperationException("virtual time");
    }
}
