package io.wheelbeat.bench;

import io.wheelbeat.core.WheelTimeout;
import io.wheelbeat.core.WheelTimer;
import java.util.function.Consumer;

/**
 * Ours through the thread-safe {@link WheelTimer}, called from the benchmark thread (not the
 * timer's own): every operation is handed to the timer thread through its lock-free queue.
 */
final class OursWheelTimerAdapter extends ThreadedAdapter {

    private final WheelTimer timer;
    private final WheelTimeout[] timeouts;
    private final Consumer<WheelTimeout> task = timeout -> onFired();

    OursWheelTimerAdapter(int capacity) {
        super(capacity);
        this.timer = WheelTimer.builder()
                .threadFactory(WorkerThreads.factory("ours-wheeltimer"))
                .build();
        this.timeouts = new WheelTimeout[capacity];
    }

    @Override
    void schedule(int i, long delayNanos) {
        timeouts[i] = timer.newTimeout(task, delayNanos);
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
