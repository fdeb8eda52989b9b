package io.wheelbeat.bench;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Workload 2, schedule-and-cancel of a fresh timer (a request timeout that the response beats):
 * one operation schedules a new timer {@code delayMs} ahead and cancels it, while {@code pending}
 * other timers wait about an hour ahead, spread over a wheel turn.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class ScheduleCancelBenchmark {

    private static final long BACKGROUND_NANOS = TimeUnit.HOURS.toNanos(1);

    @Param({"ours", "ours-wheeltimer", "netty-hwt", "netty-eventloop", "jdk-stpe", "agrona", "kafka"})
    public String contender;

    @Param({"1024", "524288"})
    public int pending;

    @Param({"1000"})
    public long delayMs;

    private TimerAdapter timers;
    private long delayNanos;
    private int sincePoll;

    @Setup(Level.Trial)
    public void setUp() {
        timers = Contender.of(contender).create(pending + 1, false);
        delayNanos = TimeUnit.MILLISECONDS.toNanos(delayMs);
        int[] order = Workloads.randomOrder(pending);
        long turn = TimerAdapter.TICK_NANOS * TimerAdapter.WHEEL_TICKS;
        for (int i = 0; i < pending; i++) {
            timers.schedule(i, BACKGROUND_NANOS + turn / pending * order[i]);
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        timers.close();
    }

    @Benchmark
    public void scheduleThenCancel() {
        timers.schedule(pending, delayNanos);
        timers.cancel(pending);
        if (++sincePoll == Workloads.POLL_EVERY) {
            sincePoll = 0;
            timers.poll();
        }
    }
}
