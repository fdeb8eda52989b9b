package io.wheelbeat.loadtest;

import io.netty.util.concurrent.Ticker;

/**
 * The one clock of the load test: Netty's system ticker, which the event loops, and through them
 * both idle handlers, read. Arrival stamps, idle events and the driver's plans are therefore
 * directly comparable.
 */
final class Clock {

    private static final Ticker TICKER = Ticker.systemTicker();

    private Clock() {}

    static long nanoTime() {
        return TICKER.nanoTime();
    }
}
