package io.wheelbeat.bench;

import io.wheelbeat.core.TimerNode;
import io.wheelbeat.core.TimerWheel;
import io.wheelbeat.core.internal.WheelSettings;
import java.util.SplittableRandom;
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

/**
 * What limits our re-arm (ours only, no peer): the parts of {@code RearmBenchmark}'s operation
 * measured apart, with {@code pending} timers due within {@code delayMs}.
 * <ul>
 *   <li>{@code clockRead}: one {@code System.nanoTime()}, which every re-arm pays once;</li>
 *   <li>{@code touchRandomTimer}: {@code isPending} of a timer drawn at random, the
 *       memory floor of reaching a random timer's node;</li>
 *   <li>{@code rearmInRandomOrder}: the full re-arm ({@code scheduleAt} of the pending node after
 *       one clock read each) of a timer drawn at random, as {@code RearmBenchmark} does through its
 *       adapter;</li>
 *   <li>{@code rearmInCreationOrder}: the full re-arm, timers touched in the order they were
 *       created (so their nodes mostly in memory order) instead of at random;</li>
 *   <li>{@code rearmAtClockPerBatch}: the full re-arm of a timer drawn at random,
 *       the clock read once per {@value #BATCH} re-arms (as a handler does once per read batch).</li>
 * </ul>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class RearmBreakdownBenchmark {

    static final int BATCH = 64;

    @Param({"1024", "524288"})
    public int pending;

    @Param({"2000"})
    public long delayMs;

    private TimerWheel wheel;
    private TimerNode[] nodes;
    private long delayNanos;
    private final SplittableRandom random = new SplittableRandom(Workloads.SEED);
    private int cursor;
    private int sincePoll;
    private long now;

    @Setup(Level.Trial)
    public void setUp() {
        wheel = OursAdapter.engine(new WheelSettings(), System.nanoTime());
        nodes = new TimerNode[pending];
        delayNanos = TimeUnit.MILLISECONDS.toNanos(delayMs);
        long[] delays = Workloads.steadyStateDelays(Workloads.randomOrder(pending), delayNanos);
        for (int i = 0; i < pending; i++) {
            nodes[i] = new TimerNode() {
                @Override
                protected void expire() {}
            };
            wheel.scheduleAt(nodes[i], System.nanoTime() + delays[i]);
        }
    }

    @Benchmark
    public long clockRead() {
        return System.nanoTime();
    }

    @Benchmark
    public boolean touchRandomTimer() {
        boolean pendingTimer = nodes[random.nextInt(pending)].isPending();
        next();
        return pendingTimer;
    }

    @Benchmark
    public void rearmInRandomOrder() {
        rearm(random.nextInt(pending), delayNanos);
        next();
    }

    @Benchmark
    public void rearmInCreationOrder() {
        rearm(cursor, delayNanos);
        next();
    }

    @Benchmark
    public void rearmAtClockPerBatch() {
        if ((cursor & (BATCH - 1)) == 0) {
            now = System.nanoTime();
        }
        int i = random.nextInt(pending);
        wheel.scheduleAt(nodes[i], now + delayNanos);
        next();
    }

    private void rearm(int i, long delay) {
        wheel.scheduleAt(nodes[i], System.nanoTime() + delay);
    }

    private void next() {
        if (++cursor == pending) {
            cursor = 0;
        }
        if (++sincePoll == Workloads.POLL_EVERY) {
            sincePoll = 0;
            wheel.poll(System.nanoTime());
        }
    }
}
