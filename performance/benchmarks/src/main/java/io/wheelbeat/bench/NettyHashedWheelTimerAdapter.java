package io.wheelbeat.bench;

import io.netty.util.HashedWheelTimer;
import io.netty.util.Timeout;
import io.netty.util.TimerTask;
import java.util.concurrent.TimeUnit;

/** Netty's {@link HashedWheelTimer} with our tick and span: 2^20 ns x 4096 ticks, unbounded. */
final class NettyHashedWheelTimerAdapter extends ThreadedAdapter {

    private final HashedWheelTimer timer;
    private final Timeout[] timeouts;
    private final TimerTask task = timeout -> onFired();

    NettyHashedWheelTimerAdapter(int capacity) {
        super(capacity);
        this.timer = new HashedWheelTimer(
                WorkerThreads.factory("netty-hwt"), TICK_NANOS, TimeUnit.NANOSECONDS, WHEEL_TICKS, false, -1);
        this.timeouts = new Timeout[capacity];
    }

    @Override
    void schedule(int i, long delayNanos) {
        timeouts[i] = timer.newTimeout(task, delayNanos, TimeUnit.NANOSECONDS);
    }

    @Override
    void cancel(int i) {
        timeouts[i].cancel();
    }

    @Override
    void stopThreads() {
        timer.stop();
    }
}
