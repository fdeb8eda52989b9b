package io.wheelbeat.loadtest;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Logs a progress line every few seconds: connections open and the open rate, heap in use
 * (garbage included), timer operations per second as {@link TimerAccounting} counts them, and
 * idle events so far; and keeps each as a sample for the report's time series.
 */
final class Progress implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(Progress.class);

    private final String label;
    private final IdleHandlerKind kind;
    private final LoadClient client;
    private final InstrumentedEventLoopGroup serverLoops;
    private final JvmStats jvm;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "loadtest-progress");
        t.setDaemon(true);
        return t;
    });
    private long lastNanos;
    private int lastOpened;
    private long lastLoopTasks;
    private TimerAccounting.Counts lastCounts = new TimerAccounting.Counts(0, 0, 0, 0, 0);
    private final List<RunResult.Sample> samples = new ArrayList<>();

    /** @param jvm whose clock the samples are timed on */
    Progress(String label, IdleHandlerKind kind, LoadClient client, InstrumentedEventLoopGroup serverLoops,
             JvmStats jvm, long everyNanos) {
        this.label = label;
        this.kind = kind;
        this.client = client;
        this.serverLoops = serverLoops;
        this.jvm = jvm;
        this.lastNanos = Clock.nanoTime();
        timer.scheduleAtFixedRate(this::report, everyNanos, everyNanos, TimeUnit.NANOSECONDS);
    }

    private void report() {
        try {
            LoopSnapshot loops = serverLoops.snapshot(kind == IdleHandlerKind.WHEEL, 5, TimeUnit.SECONDS);
            long now = Clock.nanoTime();
            double seconds = (now - lastNanos) / 1e9;
            int opened = client.opened();
            TimerAccounting.Counts c = TimerAccounting.counts(kind, loops);
            RunResult.Sample sample = new RunResult.Sample(jvm.secondsSinceStart(), opened,
                    JvmStats.usedHeap() >> 20, (loops.loopScheduledTasks() - lastLoopTasks) / seconds,
                    (c.reArms() - lastCounts.reArms()) / seconds, loops.firstIdleEvents() + loops.repeatIdleEvents());
            synchronized (samples) {
                samples.add(sample);
            }
            log.info(String.format(Locale.ROOT,
                    "[%s] %5.1fs open %,d (+%,.0f/s) failed %,d | heap %,d MiB | timer ops/s: schedule %,.0f "
                            + "cancel %,.0f re-arm %,.0f | loop tasks/s %,.0f | idle events %,d",
                    label, sample.atSeconds(), opened, (opened - lastOpened) / seconds, client.failed(),
                    sample.heapUsedMiB(), (c.schedules() - lastCounts.schedules()) / seconds,
                    (c.cancels() - lastCounts.cancels()) / seconds, sample.reArmsPerSecond(),
                    sample.loopScheduledTasksPerSecond(), sample.idleEvents()));
            lastNanos = now;
            lastOpened = opened;
            lastCounts = c;
            lastLoopTasks = loops.loopScheduledTasks();
        } catch (TimeoutException e) {
            log.info("[{}] server loops did not answer within 5 s (busy)", label);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            log.warn("[{}] progress failed", label, e);
        }
    }

    /** The samples taken so far. */
    List<RunResult.Sample> samples() {
        synchronized (samples) {
            return List.copyOf(samples);
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
