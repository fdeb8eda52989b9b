package io.wheelbeat.bench;

import java.util.SplittableRandom;
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
 * {@code rescheduleAt}). Timers are created in index order and touched in {@code order}:
 * <ul>
 *   <li>{@code random}: each operation draws its timer at random, so the order differs on every
 *       pass and no contender meets its timers in the order it laid them out (a contender that
 *       allocates a new handle per re-arm would otherwise find the next pass touching its
 *       handles in allocation order, a locality no server sees). The target rows use it;</li>
 *   <li>{@code fixed-permutation}: one random permutation, replayed on every pass: flatters
 *       contenders that allocate a handle per re-arm; kept only to show by how much;</li>
 *   <li>{@code creation}: index order, the cache-friendly best case.</li>
 * </ul>
 * Every operation reads the clock once, inside the contender's API or its adapter. The delays are
 * one shorter and one longer than a 4096-tick turn (4.29 s).
 *
 * <p>A timer fires if it is not re-armed within the delay (in a fixed order when N x cost > T: at
 * 1M pending and T = 2 s, above 2 µs a re-arm; drawn at random, with a probability of about
 * e^(-T / (N x cost))); the operation then becomes expiry plus a fresh schedule. {@link Fired}
 * counts such timers per iteration so that a reader can tell.
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

    @Param({"random", "fixed-permutation", "creation"})
    public String order;

    private TimerAdapter timers;
    /** The fixed order, or null to draw each timer. */
    private int[] sequence;

    private final SplittableRandom random = new SplittableRandom(Workloads.SEED);
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
        sequence = order.equals("random") ? null : Workloads.order(order, pending);
        delayNanos = TimeUnit.MILLISECONDS.toNanos(delayMs);
        // Deadlines spread as in a steady state of the order (random draws: as a random permutation).
        Workloads.scheduleSpread(timers, sequence != null ? sequence : Workloads.randomOrder(pending), delayNanos);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        timers.close();
    }

    @Benchmark
    public void rearm(Fired fired) {
        int i;
        if (sequence == null) {
            i = random.nextInt(pending);
        } else {
            i = sequence[cursor];
            if (++cursor == pending) {
                cursor = 0;
            }
        }
        timers.rearm(i, delayNanos);
        if (++sincePoll == Workloads.POLL_EVERY) {
            sincePoll = 0;
            timers.poll();
            long now = timers.fired();
            fired.firedTimers += now - firedSeen;
            firedSeen = now;
        }
    }
}
