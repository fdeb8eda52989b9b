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
 * Workload 4b, a burst polled by a punctual driver: {@code timers} timers with distinct deadlines
 * inside one tick (1,024 or 32,768, scheduled in random order) and a driver that, like an event loop aimed at the
 * next deadline, moves virtual time exactly to each next deadline and polls, once per timer. The
 * score is per timer (schedule plus its poll). A wheel that re-walked the tick's whole slot at each
 * poll would cost O(timers) per timer, so the score would grow with the burst; ours sorts the
 * slot once when a poll first lands inside the tick. Owner-thread contenders that tell their next
 * deadline: ours and the Netty event loop (Agrona's wheel does not).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class PunctualBurstBenchmark {

    @Param({"ours", "netty-eventloop"})
    public String contender;

    static final int SMALL = 1024;
    static final int LARGE = 32768;

    private OwnerThreadAdapter wheel;
    private long[] small;
    private long[] large;

    @Setup(Level.Trial)
    public void setUp() {
        wheel = (OwnerThreadAdapter) Contender.of(contender).create(LARGE, true);
        small = offsets(SMALL);
        large = offsets(LARGE);
    }

    /** Distinct deadlines inside the fourth tick from now, in random order. */
    private static long[] offsets(int timers) {
        int[] order = Workloads.randomOrder(timers);
        long[] offsets = new long[timers];
        long spacing = TimerAdapter.TICK_NANOS / timers;
        for (int i = 0; i < timers; i++) {
            offsets[i] = 3 * TimerAdapter.TICK_NANOS + spacing * order[i] + 1;
        }
        return offsets;
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        wheel.close();
    }

    @Benchmark
    @OperationsPerInvocation(SMALL)
    public void burst1k() {
        burst(small);
    }

    @Benchmark
    @OperationsPerInvocation(LARGE)
    public void burst32k() {
        burst(large);
    }

    private void burst(long[] offsets) {
        int timers = offsets.length;
        long target = wheel.fired() + timers;
        for (int i = 0; i < timers; i++) {
            wheel.schedule(i, offsets[i]);
        }
        // Land in the tick before the first deadline, as a driver that woke for something else.
        wheel.advanceTime(3 * TimerAdapter.TICK_NANOS);
        wheel.poll();
        long wait;
        while ((wait = wheel.untilNextDeadline()) >= 0) {
            wheel.advanceTime(wait);
            wheel.poll();
        }
        if (wheel.fired() != target) {
            throw new IllegalStateException(wheel.fired() + " timers fired, expected " + target);
        }
        wheel.advanceTime(TimerAdapter.TICK_NANOS); // the next invocation starts in a fresh tick
    }
}
