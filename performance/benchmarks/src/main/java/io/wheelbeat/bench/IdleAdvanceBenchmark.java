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
 *
 * <p>The fastest contender moves virtual time by over 1e18 ns a second here, which would soon reach
 * the timers and then overflow a 64-bit nanosecond clock. So between iterations, once virtual
 * time has moved {@value #REBUILD_AFTER_NANOS} ns, the contender is built afresh (new clock, same
 * timers); only a contender that fast pays for it, about 1% of its iteration.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class IdleAdvanceBenchmark {

    static final int TIMERS = 65536;
    /** About 146 years of virtual time ahead. */
    private static final long FAR_NANOS = 1L << 62;
    /** Rebuild between iterations once virtual time has moved this far since the build. */
    static final long REBUILD_AFTER_NANOS = 1L << 60;

    @Param({"ours", "netty-eventloop", "agrona"})
    public String contender;

    @Param({"10000"})
    public long gapMs;

    private TimerAdapter timers;
    private long gapNanos;
    private long movedSincePlaced;

    @Setup(Level.Trial)
    public void setUp() {
        gapNanos = TimeUnit.MILLISECONDS.toNanos(gapMs);
        build();
    }

    @Setup(Level.Iteration)
    public void rebuildIfTimeRanFar() {
        if (movedSincePlaced > REBUILD_AFTER_NANOS) {
            timers.close();
            build();
        }
    }

    private void build() {
        timers = Contender.of(contender).create(TIMERS, true);
        for (int i = 0; i < TIMERS; i++) {
            timers.schedule(i, FAR_NANOS + (i % TimerAdapter.WHEEL_TICKS) * TimerAdapter.TICK_NANOS);
        }
        movedSincePlaced = 0;
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        timers.close();
    }

    @Benchmark
    public int idleAdvance() {
        timers.advanceTime(gapNanos);
        movedSincePlaced += gapNanos;
        int fired = timers.poll();
        if (fired != 0) {
            throw new IllegalStateException(fired + " far-future timers fired");
        }
        return fired;
    }
}
