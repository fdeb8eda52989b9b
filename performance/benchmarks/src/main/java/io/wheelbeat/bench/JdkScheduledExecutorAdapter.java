package io.wheelbeat.bench;

import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The JDK's {@link ScheduledThreadPoolExecutor} with one thread. Cancelled tasks are removed from
 * its queue at once ({@code setRemoveOnCancelPolicy(true)}), so that N pending means N in the
 * queue, as for every other contender; without it each re-arm would leave a dead task behind
 * until its deadline.
 */
final class JdkScheduledExecutorAdapter extends ThreadedAdapter {

    private final ScheduledThreadPoolExecutor executor;
    private final ScheduledFuture<?>[] futures;
    private final Runnable task = this::onFired;

    JdkScheduledExecutorAdapter(int capacity) {
        super(capacity);
        this.executor = new ScheduledThreadPoolExecutor(1, WorkerThreads.factory("jdk-stpe"));
        executor.setRemoveOnCancelPolicy(true);
        this.futures = new ScheduledFuture<?>[capacity];
    }

    @Override
    void schedule(int i, long delayNanos) {
        futures[i] = executor.schedule(task, delayNanos, TimeUnit.NANOSECONDS);
    }

    @Override
    void cancel(int i) {
        futures[i].cancel(false);
    }

    @Override
    void stopThreads() {
        executor.shutdownNow();
    }
}
