package io.wheelbeat.core.ratelimit;

import io.wheelbeat.core.ManualTicker;
import io.wheelbeat.core.WheelExecutor;
import java.util.PriorityQueue;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * A deterministic {@link WheelExecutor} for tests: the thread that creates it is the owner, and
 * tasks run only when that thread calls {@link #runDue()}, against a {@link ManualTicker}. Other
 * threads may hand it tasks at any time.
 */
final class ManualWheelExecutor implements WheelExecutor {

    private final ManualTicker ticker;
    private final Thread owner = Thread.currentThread();
    private final Queue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private final PriorityQueue<Scheduled> scheduled = new PriorityQueue<>();
    private long sequence;

    ManualWheelExecutor(ManualTicker ticker) {
        this.ticker = ticker;
    }

    @Override
    public boolean inOwnerThread() {
        return Thread.currentThread() == owner;
    }

    @Override
    public void execute(Runnable task) {
        tasks.add(task);
    }

    @Override
    public synchronized Future<?> schedule(Runnable task, long delayNanos) {
        Scheduled entry = new Scheduled(task, ticker.nanoTime() + Math.max(0, delayNanos), sequence++);
        scheduled.add(entry);
        return entry;
    }

    /** Runs every task handed over and every scheduled task now due, on the owner thread. */
    void runDue() {
        if (!inOwnerThread()) {
            throw new IllegalStateException("runDue() is for the owner thread");
        }
        for (;;) {
            Runnable task = tasks.poll();
            if (task == null) {
                task = pollDue();
            }
            if (task == null) {
                return;
            }
            task.run();
        }
    }

    private synchronized Runnable pollDue() {
        for (;;) {
            Scheduled head = scheduled.peek();
            if (head == null || head.deadline > ticker.nanoTime()) {
                return null;
            }
            scheduled.poll();
            if (!head.cancelled) {
                return head.task;
            }
        }
    }

    private static final class Scheduled implements Future<Void>, Comparable<Scheduled> {
        final Runnable task;
        final long deadline;
        final long order;
        volatile boolean cancelled;

        Scheduled(Runnable task, long deadline, long order) {
            this.task = task;
            this.deadline = deadline;
            this.order = order;
        }

        @Override
        public int compareTo(Scheduled other) {
            int byDeadline = Long.compare(deadline, other.deadline);
            return byDeadline != 0 ? byDeadline : Long.compare(order, other.order);
        }

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            cancelled = true;
            return true;
        }

        @Override
        public boolean isCancelled() {
            return cancelled;
        }

        @Override
        public boolean isDone() {
            return cancelled;
        }

        @Override
        public Void get() {
            throw new UnsupportedOperationException("not needed by the wheel");
        }

        @Override
        public Void get(long timeout, TimeUnit unit) {
            throw new UnsupportedOperationException("not needed by the wheel");
        }
    }
}
