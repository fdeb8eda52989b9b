package io.wheelbeat.bench;

import io.netty.channel.EventLoop;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.HashedWheelTimer;
import io.wheelbeat.core.TimerNode;
import io.wheelbeat.core.TimerWheel;
import io.wheelbeat.core.WheelTimeout;
import io.wheelbeat.core.WheelTimer;
import io.wheelbeat.core.internal.WheelSettings;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.agrona.DeadlineTimerWheel;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.server.util.timer.SystemTimer;
import org.apache.kafka.server.util.timer.TimerTask;
import org.openjdk.jol.info.GraphLayout;

/**
 * Workload 6b, memory per pending timer: the heap a contender retains for {@code n} pending
 * timers, divided by {@code n}. Fixed costs (slot arrays, threads' heap objects) are spread over
 * the timers; what the caller keeps to cancel a timer (its handle array) is not counted, what the
 * contender needs per timer (a timeout object, a Kafka task) is. Deadlines are spread at random
 * over 1 s to 31 s, all callbacks share one object.
 *
 * <p>Method: heap used after full GCs, before and after building the structure (after building and
 * dropping a small one, so that class initialization is not counted), in a JVM of its
 * own running the Serial collector, whose used-after-full-GC is the exact live size (G1 would add
 * region slack). {@link #main} measures one contender and prints one line; the suite runs it once
 * per contender and size. For the contenders that are a single self-contained object (ours,
 * Agrona), JOL's {@link GraphLayout} of that object gives a second, exact figure.
 */
public final class MemoryFootprint {

    /** The contenders measured, in order. */
    static final String[] CONTENDERS = {
        "ours", "ours-wheeltimer", "netty-hwt", "netty-eventloop", "jdk-stpe", "agrona", "kafka"
    };

    private static final long MIN_DELAY_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final long DELAY_SPREAD_NANOS = TimeUnit.SECONDS.toNanos(30);
    /** Time for a threaded timer to take in what other threads handed it (well over 20 ticks). */
    private static final long SETTLE_MILLIS = 500;

    private MemoryFootprint() {}

    /** One measurement, as printed by {@link #main}. */
    record Measurement(String contender, int timers, double heapBytesPerTimer, double jolBytesPerTimer) {
        String line() {
            return String.format(
                    Locale.ROOT, "%s %d %.2f %.2f", contender, timers, heapBytesPerTimer, jolBytesPerTimer);
        }

        static Measurement parse(String line) {
            String[] f = line.trim().split(" ");
            if (f.length != 4) {
                throw new IllegalArgumentException("not a measurement line: '" + line + "'");
            }
            return new Measurement(f[0], Integer.parseInt(f[1]), Double.parseDouble(f[2]), Double.parseDouble(f[3]));
        }
    }

    /**
     * Measures {@code args[0]} (a contender) with {@code args[1]} timers and prints one
     * {@link Measurement} line. Run it in a JVM of its own with {@code -XX:+UseSerialGC}.
     */
    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: MemoryFootprint <contender> <timers>");
            System.exit(2);
        }
        System.out.println(measure(args[0], Integer.parseInt(args[1])).line());
        System.exit(0);
    }

    static Measurement measure(String contender, int n) throws Exception {
        // A small one first, so that one-time class initialization (a logging framework's, say)
        // is not counted as memory per timer.
        build(contender, delays(16)).close.run();
        long[] delays = delays(n);
        long before = usedAfterGc();
        Structure structure = build(contender, delays);
        long after = usedAfterGc();
        double jol = structure.selfContained == null
                ? Double.NaN
                : GraphLayout.parseInstance(structure.selfContained).totalSize() / (double) n;
        java.lang.ref.Reference.reachabilityFence(structure.root);
        structure.close.run();
        return new Measurement(contender, n, (after - before) / (double) n, jol);
    }

    /** A built contender: what keeps it alive, the object JOL can walk (or null), how to stop it. */
    private record Structure(Object root, Object selfContained, Runnable close) {}

    private static Structure build(String contender, long[] delays) throws InterruptedException {
        int n = delays.length;
        switch (contender) {
            case "ours" -> {
                TimerWheel wheel = OursAdapter.engine(new WheelSettings(), System.nanoTime());
                long start = System.nanoTime();
                TimerNode[] nodes = new TimerNode[n];
                for (int i = 0; i < n; i++) {
                    nodes[i] = new TimerNode() {
                        @Override
                        protected void expire() {}
                    };
                    wheel.scheduleAt(nodes[i], start + delays[i]);
                }
                return new Structure(wheel, wheel, () -> {}); // the nodes hang on the wheel's links
            }
            case "ours-wheeltimer" -> {
                WheelTimer timer = WheelTimer.builder()
                        .threadFactory(WorkerThreads.factory(contender))
                        .build();
                Consumer<WheelTimeout> task = timeout -> {};
                for (long delay : delays) {
                    timer.newTimeout(task, delay);
                }
                // Timeouts from this (foreign) thread wait in a queue until the timer thread drains it.
                Thread.sleep(SETTLE_MILLIS);
                return new Structure(timer, null, timer::stop);
            }
            case "netty-hwt" -> {
                HashedWheelTimer timer = new HashedWheelTimer(
                        WorkerThreads.factory(contender),
                        TimerAdapter.TICK_NANOS,
                        TimeUnit.NANOSECONDS,
                        TimerAdapter.WHEEL_TICKS,
                        false,
                        -1);
                io.netty.util.TimerTask task = timeout -> {};
                for (long delay : delays) {
                    timer.newTimeout(task, delay, TimeUnit.NANOSECONDS);
                }
                // Timeouts wait in a queue until the worker moves them into buckets (100k per tick).
                Thread.sleep(SETTLE_MILLIS);
                return new Structure(timer, null, timer::stop);
            }
            case "netty-eventloop" -> {
                EmbeddedChannel channel = new EmbeddedChannel();
                EventLoop loop = channel.eventLoop();
                Runnable task = () -> {};
                for (long delay : delays) {
                    loop.schedule(task, delay, TimeUnit.NANOSECONDS);
                }
                return new Structure(channel, null, channel::finishAndReleaseAll);
            }
            case "jdk-stpe" -> {
                ScheduledThreadPoolExecutor executor =
                        new ScheduledThreadPoolExecutor(1, WorkerThreads.factory(contender));
                executor.setRemoveOnCancelPolicy(true);
                Runnable task = () -> {};
                for (long delay : delays) {
                    executor.schedule(task, delay, TimeUnit.NANOSECONDS);
                }
                return new Structure(executor, null, executor::shutdownNow);
            }
            case "agrona" -> {
                long start = System.nanoTime();
                DeadlineTimerWheel wheel = new DeadlineTimerWheel(
                        TimeUnit.NANOSECONDS, start, TimerAdapter.TICK_NANOS, TimerAdapter.WHEEL_TICKS);
                for (long delay : delays) {
                    wheel.scheduleTimer(start + delay);
                }
                return new Structure(wheel, wheel, () -> {});
            }
            case "kafka" -> {
                SystemTimer timer = new SystemTimer(
                        WorkerThreads.PREFIX + "kafka", 1, TimerAdapter.WHEEL_TICKS, Time.SYSTEM.hiResClockMs());
                for (long delay : delays) {
                    // One task per pending timer: a Kafka task belongs to at most one entry.
                    timer.add(new TimerTask(TimeUnit.NANOSECONDS.toMillis(delay)) {
                        @Override
                        public void run() {}
                    });
                }
                return new Structure(timer, null, timer::close);
            }
            default ->
                throw new IllegalArgumentException(
                        "unknown contender '" + contender + "'; known: " + String.join(", ", CONTENDERS));
        }
    }

    private static long[] delays(int n) {
        SplittableRandom random = new SplittableRandom(n);
        long[] delays = new long[n];
        for (int i = 0; i < n; i++) {
            delays[i] = MIN_DELAY_NANOS + random.nextLong(DELAY_SPREAD_NANOS);
        }
        return delays;
    }

    /**
     * Heap used after full GCs, repeated until it stops falling: the first collections still free
     * objects that need two cycles to die (reference processing), about 2 MB at start-up.
     */
    static long usedAfterGc() throws InterruptedException {
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        long used = Long.MAX_VALUE;
        for (int round = 0; round < 10; round++) {
            System.gc();
            Thread.sleep(20);
            long now = memory.getHeapMemoryUsage().getUsed();
            if (now >= used - 4096) {
                return Math.min(now, used);
            }
            used = now;
        }
        return used;
    }
}
