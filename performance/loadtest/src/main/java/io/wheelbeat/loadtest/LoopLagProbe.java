package io.wheelbeat.loadtest;

import io.netty.util.concurrent.EventExecutor;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Hands a task to every server loop every {@link #PERIOD_MILLIS} ms and keeps, per arm, how late
 * it ran: the loops' backlog over time, whatever caused it (a long turn of their own work,
 * other threads taking the cores, a GC pause). The same plain task on every arm's loops,
 * queued with {@code execute}, so that it schedules nothing on any loop.
 */
final class LoopLagProbe implements AutoCloseable {

    static final long PERIOD_MILLIS = 50;

    private final List<InstrumentedEventLoopGroup> groups;
    private final List<Lag> lags;
    private final JvmStats jvm;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "loadtest-loop-lag");
        t.setDaemon(true);
        return t;
    });

    /** @param groups each arm's server loops; {@code jvm} times the worst lag */
    LoopLagProbe(List<InstrumentedEventLoopGroup> groups, JvmStats jvm) {
        this.groups = List.copyOf(groups);
        this.lags = groups.stream().map(g -> new Lag()).toList();
        this.jvm = jvm;
        timer.scheduleAtFixedRate(this::probe, PERIOD_MILLIS, PERIOD_MILLIS, TimeUnit.MILLISECONDS);
    }

    private void probe() {
        for (int arm = 0; arm < groups.size(); arm++) {
            Lag lag = lags.get(arm);
            for (EventExecutor loop : groups.get(arm).loops()) {
                long handed = Clock.nanoTime();
                try {
                    loop.execute(() -> lag.record(Clock.nanoTime() - handed, jvm.secondsSinceStart()));
                } catch (RejectedExecutionException e) {
                    return; // shutting down
                }
            }
        }
    }

    /** Arm {@code arm}'s lags. */
    Lag lag(int arm) {
        return lags.get(arm);
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }

    /** One arm's lags; written by its loops, read by the run's threads. */
    static final class Lag {
        private long sinceRead;
        private long window;
        private long max;
        private double maxAt;

        synchronized void record(long lagNanos, double atSeconds) {
            sinceRead = Math.max(sinceRead, lagNanos);
            window = Math.max(window, lagNanos);
            if (lagNanos > max) {
                max = lagNanos;
                maxAt = atSeconds;
            }
        }

        /** The largest lag since the previous call, in ms. */
        synchronized double takeSinceRead() {
            double ms = sinceRead / 1e6;
            sinceRead = 0;
            return ms;
        }

        /** Starts a window of its own (the steady window). */
        synchronized void startWindow() {
            window = 0;
        }

        synchronized RunResult.LoopLag result(double windowMaxMs) {
            return new RunResult.LoopLag(windowMaxMs, max / 1e6, maxAt);
        }

        synchronized double windowMaxMs() {
            return window / 1e6;
        }
    }
}
