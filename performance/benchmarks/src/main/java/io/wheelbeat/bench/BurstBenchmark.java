package io.wheelbeat.bench;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Workload 4, burst: {@value #TIMERS} timers all due in the same tick (700k clients pinging at
 * once, Netty issue #973) are scheduled and then all fire; the score is per timer.
 *
 * <p>Owner-thread contenders run on virtual time, so every timer gets the same deadline. Threaded
 * contenders run in real time and take relative delays, so each timer's delay is computed from
 * one shared deadline {@value #REAL_TIME_DEADLINE_MS} ms after the burst starts (one clock read
 * per timer, for every threaded contender alike); compare them by caller plus worker CPU.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class BurstBenchmark {

    static final int TIMERS = 32768;
    static final long REAL_TIME_DEADLINE_MS = 50;

    @Param({"ours", "netty-eventloop", "agrona", "ours-wheeltimer", "netty-hwt", "jdk-stpe", "kafka"})
    public String contender;

    private TimerAdapter timers;

    @Setup(Level.Trial)
    public void setUp() {
        Contender which = Contender.of(contender);
        timers = which.create(TIMERS, !which.threaded);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        timers.close();
    }

    @Benchmark
    @OperationsPerInvocation(TIMERS)
    public void burst() {
        long target = timers.fired() + TIMERS;
        if (timers.threaded()) {
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(REAL_TIME_DEADLINE_MS);
            for (int i = 0; i < TIMERS; i++) {
                timers.schedule(i, deadline - System.nanoTime());
            }
        } else {
            for (int i = 0; i < TIMERS; i++) {
                timers.schedule(i, TimerAdapter.TICK_NANOS);
            }
        }
        Workloads.fireAll(timers, 2 * TimerAdapter.TICK_NANOS, target);
    }
}
