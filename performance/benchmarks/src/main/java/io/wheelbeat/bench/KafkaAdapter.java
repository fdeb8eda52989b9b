package io.wheelbeat.bench;

import org.apache.kafka.common.utils.Time;
import org.apache.kafka.server.util.timer.SystemTimer;
import org.apache.kafka.server.util.timer.SystemTimerReaper;
import org.apache.kafka.server.util.timer.TimerTask;

/**
 * Kafka's {@link SystemTimer} (hierarchical timing wheels, a {@code DelayQueue} of buckets) with
 * the reaper thread Kafka runs it with ({@link SystemTimerReaper}), a 1 ms tick (its API counts in
 * milliseconds; ours is 1.048576 ms) and 4096 ticks per wheel. Expired tasks run on the timer's
 * own executor thread.
 *
 * <p>Kafka's tasks carry their delay, fixed at construction, and a task can be added again after
 * it is cancelled. The adapter keeps one task per handle and reuses it whenever the delay is the
 * same (always, in the re-arm workload): it allocates only what Kafka itself allocates per add.
 */
final class KafkaAdapter extends ThreadedAdapter {

    private final SystemTimerReaper timer;
    private final Task[] tasks;

    KafkaAdapter(int capacity) {
        super(capacity);
        String name = WorkerThreads.PREFIX + "kafka";
        this.timer = new SystemTimerReaper(
                name + "-reaper", new SystemTimer(name, 1, WHEEL_TICKS, Time.SYSTEM.hiResClockMs()));
        this.tasks = new Task[capacity];
    }

    @Override
    void schedule(int i, long delayNanos) {
        long delayMs = (delayNanos + 999_999) / 1_000_000;
        Task task = tasks[i];
        if (task == null || task.delayMs != delayMs) {
            task = new Task(delayMs);
            tasks[i] = task;
        }
        timer.add(task);
    }

    @Override
    void cancel(int i) {
        tasks[i].cancel();
    }

    @Override
    void stopThreads() {
        try {
            timer.close();
        } catch (Exception e) {
            throw new IllegalStateException("Kafka timer did not close", e);
        }
    }

    private final class Task extends TimerTask {
        Task(long delayMs) {
            super(delayMs);
        }

        @Override
        public void run() {
            onFired();
        }
    }
}
