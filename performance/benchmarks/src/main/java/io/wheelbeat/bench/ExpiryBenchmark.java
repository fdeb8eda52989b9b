package io.wheelbeat.bench;

import java.util.SplittableRandom;
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
 * Workload 3, expiry throughput: {@value #TIMERS} timers spread evenly (in random order) over
 * {@code spreadTicks} ticks are scheduled and then all fire; the score is per timer (schedule plus
 * expiry), so timers fired per second is 1e9 / score.
 *
 * <p>Owner-thread contenders run on virtual time: one jump past the last deadline, one poll.
 * Threaded contenders run in real time: the caller schedules, then parks until their thread has
 * fired everything, so their score includes the spread itself (a floor of spreadTicks x 1.05 ms /
 * {@value #TIMERS}); compare them by {@link ThreadCpuProfiler}'s caller plus worker CPU instead.
 *
 * <p>{@code deadlines}: {@code aligned} puts every deadline on a tick boundary, so a tick's timers
 * share one deadline and arrive in scheduling order; {@code jittered} adds a random offset within
 * the tick, so an exact-order wheel must sort each tick while a per-tick wheel (Agrona) need not.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class ExpiryBenchmark {

    static final int TIMERS = 524288;

    @Param({"ours", "netty-eventloop", "agrona", "ours-wheeltimer", "netty-hwt", "jdk-stpe", "kafka"})
    public String contender;

    @Param({"64", "4096"})
    public int spreadTicks;

    @Param({"aligned"})
    public String deadlines;

    private TimerAdapter timers;
    private long[] delays;

    @Setup(Level.Trial)
    public void setUp() {
        Contender which = Contender.of(contender);
        timers = which.create(TIMERS, !which.threaded);
        int[] order = Workloads.randomOrder(TIMERS);
        boolean jittered = switch (deadlines) {
            case "aligned" -> false;
            case "jittered" -> true;
            default -> throw new IllegalArgumentException("deadlines: aligned or jittered, not " + deadlines);
        };
        SplittableRandom random = new SplittableRandom(Workloads.SEED);
        delays = new long[TIMERS];
        for (int i = 0; i < TIMERS; i++) {
            long offset = jittered ? random.nextLong(TimerAdapter.TICK_NANOS) : 0;
            delays[i] = (1 + order[i] % spreadTicks) * TimerAdapter.TICK_NANOS + offset;
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        timers.close();
    }

    @Benchmark
    @OperationsPerInvocation(TIMERS)
    public void expire() {
        long target = timers.fired() + TIMERS;
        for (int i = 0; i < TIMERS; i++) {
            timers.schedule(i, delays[i]);
        }
        Workloads.fireAll(timers, (spreadTicks + 2) * TimerAdapter.TICK_NANOS, target);
    }
}
