package io.wheelbeat.core;

import io.wheelbeat.core.internal.ManualTicker;
import io.wheelbeat.core.internal.WheelExecutor;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * A single-threaded executor in virtual time for tests: its owner is the thread that created it,
 * tasks run only when the test calls {@link #runDue()}, and scheduled tasks run once the
 * {@link ManualTicker} has reached their time. Records every delay it was asked to wait.
 */
public final class VirtualExecutor implements WheelExecutor {

    /** A scheduled task and when it is due. */
    private record Scheduled(long dueNanos, Runnable task, CompletableFuture<Void> future) {}

    final ManualTicker ticker;
    final List<Long> scheduledDelays = new ArrayList<>();
    private final Thread owner = Thread.currentThread();
    private final Queue<Runnable> immediate = new ArrayDeque<>();
    private final List<Scheduled> scheduled = new ArrayList<>();

    VirtualExecutor() {
        this(new ManualTicker(1_000_000_000L));
    }

    /** An executor whose scheduled tasks fall due on {@code ticker}. */
    public VirtualExecutor(ManualTicker ticker) {
        this.ticker = ticker;
    }

    @Override
    public boolean inOwnerThread() {
        return Thread.currentThread() == owner;
    }

    @Override
    public synchronized void execute(Runnable task) {
        immediate.add(task);
    }

    @Override
    public synchronized Future<?> schedule(Runnable task, long delayNanos) {
        scheduledDelays.add(delayNanos);
        CompletableFuture<Void> future = new CompletableFuture<>();
        scheduled.add(new Scheduled(ticker.nanoTime() + delayNanos, task, future));
        return future;
    }

    /** Returns the number of scheduled tasks neither run nor cancelled. */
    synchronized int pendingScheduled() {
        scheduled.removeIf(s -> s.future.isDone());
        return scheduled.size();
    }

    /** Advances virtual time, then runs everything due. */
    void advance(long amount, TimeUnit unit) {
        ticker.advance(amount, unit);
        runDue();
    }

    /** Runs immediate tasks and scheduled tasks that are due, until none is left. Owner thread. */
    public void runDue() {
        while (true) {
            Runnable next;
            synchronized (this) {
                next = immediate.poll();
                if (next == null) {
                    scheduled.removeIf(s -> s.future.isDone());
                    Scheduled due = scheduled.stream()
                            .filter(s -> s.dueNanos <= ticker.nanoTime())
                            .min((a, b) -> Long.compare(a.dueNanos, b.dueNanos))
                            .orElse(null);
                    if (due == null) {
                        return;
                    }
                    scheduled.remove(due);
                    due.future.complete(null);
                    next = due.task;
                }
            }
            next.run();
        }
    }
}
