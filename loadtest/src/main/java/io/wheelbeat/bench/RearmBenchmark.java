package io.wheelbeat.bench;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.AuxCounters;
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
 * Workload 1, re-arm: with {@code pending} timers pending, push one of them to fire
 * {@code delayMs} from now: cancel then schedule again, or the contender's own re-arm (ours:
 * {@code reschedule}). Timers are created in index order and touched in {@code order}:
 * {@code random} (a fixed random permutation: connections become active in no particular order,
 * so each re-arm reaches memory far from the last) or {@code creation} (index order, the
 * cache-friendly best case). Every operation reads the clock once, inside the contender's
 * API (or, for Agrona, whose API takes a deadline, in the adapter). The delays are one shorter and
 * one longer than a wheel turn (4.29 s).
 *
 * <p>A timer fires if its whole cycle of re-arms takes longer than the delay (N x cost > T: at 1M
 * pending and T = 2 s, above 2 µs a re-arm); the operation then becomes expiry plus a fresh
 * schedule. {@link Fired} counts such timers per iteration so that a reader can tell.
 *
 * <p>Owner-thread contenders are polled every {@value Workloads#POLL_EVERY} operations, as their
 * event loop would drive them, and that cost is in their score; threaded contenders' own threads
 * are charged by {@link ThreadCpuProfiler}. A timer that fires before it is re-armed is scheduled
 * anew.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class RearmBenchmark {

    @Param({"ours", "ours-wheeltimer", "netty-hwt", "netty-eventloop", "jdk-stpe", "agrona", "kafka"})
    public String contender;

    @Param({"1024", "65536", "524288", "1048576"})
    public int pending;

    @Param({"2000", "30000"})
    public long delayMs;

    @Param({"random", "creation"})
    public String order;

    private TimerAdapter timers;
    private int[] sequence;
    private long delayNanos;
    private int cursor;
    private int sincePoll;
    private long firedSeen;

    /** Timers that fired during an iteration instead of being re-armed in time (ideally 0). */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class Fired {
        public long firedTimers;

        @Setup(Level.Iteration)
        public void reset() {
            firedTimers = 0;
        }
    }

    @Setup(Level.Trial)
    public void setUp() {
        timers = Contender.of(contender).create(pending, false);
        sequence = Workloads.order(order, pending);
        delayNanos = TimeUnit.MILLISECONDS.toNanos(delayMs);
        Workloads.scheduleSpread(timers, sequence, delayNanos);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        timers.close();
    }

    @Benchmark
    public void rearm(Fired fired) {
        timers.rearm(sequence[cursor], delayNanos);
        if (++cursor == pending) {
            cursor = 0;
        }
        if (++sincePoll == Workloads.POLL_EVERY) {
            sincePoll = 0;
            timers.poll();
            long now = timers.fired();
            fired.firedTimers += now - firedSeen;
            firedSeen = now;
        }
    }
}
