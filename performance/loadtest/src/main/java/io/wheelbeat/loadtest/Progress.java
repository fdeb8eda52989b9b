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
 * (garbage included), and per arm the loop tasks, re-arms and expirations per second and the
 * timers pending as {@link TimerAccounting} counts them, idle events so far and the worst loop
 * lag; and keeps each
 * arm's figures as samples for the report's time series.
 */
final class Progress implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(Progress.class);

    private final String label;
    private final LoadClient client;
    private final List<ScenarioRun.ArmServer> arms;
    private final LoopLagProbe lags;
    private final JvmStats jvm;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "loadtest-progress");
        t.setDaemon(true);
        return t;
    });
    private long lastNanos;
    private int lastOpened;
    private final long[] lastLoopTasks;
    private final long[] lastReArms;
    private final long[] lastExpirations;
    private final List<List<RunResult.Sample>> samples = new ArrayList<>();

    /** @param jvm whose clock the samples are timed on */
    Progress(
            String label,
            LoadClient client,
            List<ScenarioRun.ArmServer> arms,
            LoopLagProbe lags,
            JvmStats jvm,
            long everyNanos) {
        this.label = label;
        this.client = client;
        this.arms = List.copyOf(arms);
        this.lags = lags;
        this.jvm = jvm;
        this.lastLoopTasks = new long[arms.size()];
        this.lastReArms = new long[arms.size()];
        this.lastExpirations = new long[arms.size()];
        arms.forEach(a -> samples.add(new ArrayList<>()));
        this.lastNanos = Clock.nanoTime();
        timer.scheduleAtFixedRate(this::report, everyNanos, everyNanos, TimeUnit.NANOSECONDS);
    }

    private void report() {
        try {
            long now = Clock.nanoTime();
            double seconds = (now - lastNanos) / 1e9;
            int opened = client.opened();
            long heapMiB = JvmStats.usedHeap() >> 20;
            StringBuilder line = new StringBuilder(String.format(
                    Locale.ROOT,
                    "[%s] %5.1fs open %,d (+%,.0f/s) failed %,d | heap %,d MiB",
                    label,
                    jvm.secondsSinceStart(),
                    opened,
                    (opened - lastOpened) / seconds,
                    client.failed(),
                    heapMiB));
            for (int i = 0; i < arms.size(); i++) {
                ScenarioRun.ArmServer arm = arms.get(i);
                IdleHandlerKind kind = arm.arm().handler();
                LoopSnapshot loops = arm.loops().snapshot(kind == IdleHandlerKind.WHEEL, 5, TimeUnit.SECONDS);
                TimerAccounting.Counts c = TimerAccounting.counts(kind, loops);
                RunResult.Sample sample = new RunResult.Sample(
                        jvm.secondsSinceStart(),
                        opened,
                        heapMiB,
                        (loops.loopScheduledTasks() - lastLoopTasks[i]) / seconds,
                        (c.reArms() - lastReArms[i]) / seconds,
                        (c.expirations() - lastExpirations[i]) / seconds,
                        loops.firstIdleEvents() + loops.repeatIdleEvents(),
                        lags.lag(i).takeSinceRead(),
                        kind.hasHandler() ? c.pending() : -1);
                synchronized (samples) {
                    samples.get(i).add(sample);
                }
                line.append(String.format(
                        Locale.ROOT,
                        " | %s: loop tasks/s %,.0f re-arm/s %,.0f expired/s %,.0f pending %,d idle %,d lag %,.0f ms",
                        arm.arm().id(),
                        sample.loopScheduledTasksPerSecond(),
                        sample.reArmsPerSecond(),
                        sample.expirationsPerSecond(),
                        sample.pendingTimers(),
                        sample.idleEvents(),
                        sample.maxLoopLagMs()));
                lastLoopTasks[i] = loops.loopScheduledTasks();
                lastReArms[i] = c.reArms();
                lastExpirations[i] = c.expirations();
            }
            log.info(line.toString());
            lastNanos = now;
            lastOpened = opened;
        } catch (TimeoutException e) {
            log.info("[{}] server loops did not answer within 5 s (busy)", label);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            log.warn("[{}] progress failed", label, e);
        }
    }

    /** Arm {@code arm}'s samples so far. */
    List<RunResult.Sample> samples(int arm) {
        synchronized (samples) {
            return List.copyOf(samples.get(arm));
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
