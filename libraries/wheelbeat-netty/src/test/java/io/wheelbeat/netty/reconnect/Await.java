package io.wheelbeat.netty.reconnect;

import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/** Polls for a condition that real sockets make true eventually; the wait is generous. */
final class Await {

    private Await() {}

    static void until(BooleanSupplier condition, int seconds, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not within " + seconds + " s: " + what);
            }
            Thread.sleep(5);
        }
    }
}
