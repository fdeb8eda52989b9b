package io.wheelbeat.bench;

import io.wheelbeat.core.ManualTicker;
import io.wheelbeat.core.Ticker;
import io.wheelbeat.core.TimerCallback;
import io.wheelbeat.core.WheelSettings;
import io.wheelbeat.core.internal.TimerWheel;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.LongConsumer;
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

/**
 * Design record: the overflow schemes measured against each other, {@value #TIMERS} timers, same
 * 2^20 ns tick, on the cases where the scheme matters:
 * <ul>
 *   <li>{@code rearm}: re-arm at now + {@code delayMs} (30 s, beyond one 4.29 s turn of 4096
 *       ticks), in an order drawn at random for every operation, clock read once per operation,
 *       all polled every {@value Workloads#POLL_EVERY} operations on the system clock;</li>
 *   <li>{@code expireBeyondTurn}: timers due 30 s to 30 s + {@code spreadMs} ahead (one turn of
 *       4096 ticks or many turns mixed in each slot) are scheduled and all fire, on virtual time;
 *       score per timer.</li>
 * </ul>
 * {@code scheme}: {@code ours} ({@link TimerWheel}: hierarchical, lazy cascading, exact expiry),
 * {@code rounds} (wheelbeat's wheel before v2, {@link RoundsWheelPrototype}, 4096 slots),
 * {@code rounds-65536} (the same with a much longer turn: 65,536 slots, 68.7 s),
 * {@code hierarchical} and {@code hierarchical-noshortcut} ({@link HierarchicalWheelPrototype},
 * the first prototype of a hierarchy, with and without its same-slot shortcut).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class OverflowSchemeBenchmark {

    static final int TIMERS = 524288;
    private static final long FAR_NANOS = TimeUnit.SECONDS.toNanos(30);

    @Param({"ours", "rounds", "rounds-65536", "hierarchical", "hierarchical-noshortcut"})
    public String scheme;

    private int sincePoll;

    /** The schemes behind the same three calls; ids as each wheel issues them. */
    private abstract static class Scheme {
        final Ticker clock;
        final long[] ids = new long[TIMERS];
        long fired;

        Scheme(Ticker clock) {
            this.clock = clock;
        }

        abstract long scheduleAt(long deadlineNanos);

        abstract boolean rescheduleAt(long id, long deadlineNanos);

        abstract void advance(long nowNanos);
    }

    private static final class Ours extends Scheme {
        private final TimerWheel wheel;
        private final TimerCallback callback = id -> fired++;

        Ours(Ticker clock) {
            super(clock);
            wheel = OursAdapter.engine(new WheelSettings(), clock.nanoTime());
        }

        @Override
        long scheduleAt(long deadlineNanos) {
            return wheel.scheduleAt(callback, deadlineNanos);
        }

        @Override
        boolean rescheduleAt(long id, long deadlineNanos) {
            return wheel.rescheduleAt(id, deadlineNanos);
        }

        @Override
        void advance(long nowNanos) {
            wheel.poll(nowNanos);
        }
    }

    /** A benchmark-only prototype, built around the callback that counts its expiries. */
    private static final class Prototype extends Scheme {
        private final PrototypeWheel wheel;

        Prototype(Ticker clock, Function<LongConsumer, PrototypeWheel> build) {
            super(clock);
            wheel = build.apply(id -> fired++);
        }

        @Override
        long scheduleAt(long deadlineNanos) {
            return wheel.scheduleAt(deadlineNanos);
        }

        @Override
        boolean rescheduleAt(long id, long deadlineNanos) {
            return wheel.rescheduleAt(id, deadlineNanos);
        }

        @Override
        void advance(long nowNanos) {
            wheel.advance(nowNanos);
        }
    }

    static Scheme create(String scheme, Ticker clock) {
        return switch (scheme) {
            case "ours" -> new Ours(clock);
            case "rounds" -> new Prototype(clock,
                    onExpiry -> new RoundsWheelPrototype(clock.nanoTime(), TimerAdapter.WHEEL_TICKS, onExpiry));
            case "rounds-65536" -> new Prototype(clock,
                    onExpiry -> new RoundsWheelPrototype(clock.nanoTime(), 65536, onExpiry));
            case "hierarchical" -> new Prototype(clock,
                    onExpiry -> new HierarchicalWheelPrototype(clock.nanoTime(), true, onExpiry));
            case "hierarchical-noshortcut" -> new Prototype(clock,
                    onExpiry -> new HierarchicalWheelPrototype(clock.nanoTime(), false, onExpiry));
            default -> throw new IllegalArgumentException("unknown scheme '" + scheme
                    + "'; known: ours, rounds, rounds-65536, hierarchical, hierarchical-noshortcut");
        };
    }

    /** State of {@code rearm}: {@value #TIMERS} timers on the system clock. */
    @State(Scope.Thread)
    public static class RealTime {
        @Param({"30000"})
        public long delayMs;

        Scheme wheel;
        long delayNanos;
        final SplittableRandom random = new SplittableRandom(Workloads.SEED);

        @Setup(Level.Trial)
        public void setUp(OverflowSchemeBenchmark params) {
            wheel = create(params.scheme, Ticker.system());
            int[] order = Workloads.randomOrder(TIMERS);
            delayNanos = TimeUnit.MILLISECONDS.toNanos(delayMs);
            long now = wheel.clock.nanoTime();
            long[] delays = Workloads.steadyStateDelays(order, delayNanos);
            for (int i = 0; i < TIMERS; i++) {
                wheel.ids[i] = wheel.scheduleAt(now + delays[i]);
            }
        }
    }

    /** State of {@code expireBeyondTurn}: a wheel on virtual time and the timers' delays. */
    @State(Scope.Thread)
    public static class VirtualTime {
        @Param({"4000", "60000"})
        public long spreadMs;

        Scheme wheel;
        ManualTicker clock;
        long[] delays;
        long spreadNanos;

        @Setup(Level.Trial)
        public void setUp(OverflowSchemeBenchmark params) {
            clock = new ManualTicker(1L << 40);
            wheel = create(params.scheme, clock);
            spreadNanos = TimeUnit.MILLISECONDS.toNanos(spreadMs);
            int[] order = Workloads.randomOrder(TIMERS);
            delays = new long[TIMERS];
            for (int i = 0; i < TIMERS; i++) {
                delays[i] = FAR_NANOS + spreadNanos / TIMERS * order[i];
            }
        }
    }

    @Benchmark
    public void rearm(RealTime state) {
        Scheme w = state.wheel;
        int i = state.random.nextInt(TIMERS);
        long deadline = w.clock.nanoTime() + state.delayNanos;
        if (!w.rescheduleAt(w.ids[i], deadline)) {
            w.ids[i] = w.scheduleAt(deadline);
        }
        if (++sincePoll == Workloads.POLL_EVERY) {
            sincePoll = 0;
            w.advance(w.clock.nanoTime());
        }
    }

    @Benchmark
    @OperationsPerInvocation(TIMERS)
    public void expireBeyondTurn(VirtualTime state) {
        Scheme w = state.wheel;
        long target = w.fired + TIMERS;
        long now = state.clock.nanoTime();
        for (int i = 0; i < TIMERS; i++) {
            w.scheduleAt(now + state.delays[i]);
        }
        long end = state.clock.advance(FAR_NANOS + state.spreadNanos + 2 * TimerAdapter.TICK_NANOS, TimeUnit.NANOSECONDS);
        w.advance(end);
        if (w.fired != target) {
            throw new IllegalStateException(w.fired + " timers fired, expected " + target);
        }
    }
}
