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
 * Workload 3b, idle advance across a long gap: {@value #TIMERS} timers wait in the far future,
 * one per tick of a turn (every slot of a wheel is occupied), and one operation moves virtual
 * time {@code gapMs} forward and polls; nothing is due. Owner-thread contenders only: threaded
 * timers have no caller-driven advance (their threads' idle cost shows in the other workloads).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class IdleAdvanceBenchmark {

    static final int TIMERS = 65536;
    /** About 73 years: far enough that no run of this benchmark reaches it in virtual time. */
    private static final long FAR_NANOS = 1L << 61;

    @Param({"ours", "netty-eventloop", "agrona"})
    public String contender;

    @Param({"10000"})
    public long gapMs;

    private TimerAdapter timers;
    private long gapNanos;

    @Setup(Level.Trial)
    public void setUp() {
        timers = Contender.of(contender).create(TIMERS, true);
        gapNanos = TimeUnit.MILLISECONDS.toNanos(gapMs);
        for (int i = 0; i < TIMERS; i++) {
            timers.schedule(i, FAR_NANOS + (i % TimerAdapter.WHEEL_TICKS) * TimerAdapter.TICK_NANOS);
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        timers.close();
    }

    @Benchmark
    public int idleAdvance() {
        timers.advanceTime(gapNanos);
        int fired = timers.poll();
        if (fired != 0) {
            throw new IllegalStateException(fired + " far-future timers fired");
        }
        return fired;
    }
}
