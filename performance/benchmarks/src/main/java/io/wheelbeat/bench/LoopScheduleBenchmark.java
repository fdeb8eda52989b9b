package io.wheelbeat.bench;

import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.local.LocalIoHandler;
import io.netty.util.concurrent.ScheduledFuture;
import io.wheelbeat.netty.loop.WheelIoEventLoopGroup;
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
 * Netty's {@code loop.schedule(...)} / {@code future.cancel(false)} on a real event loop's own
 * thread: Netty's {@code MultiThreadIoEventLoopGroup} ({@code netty-loop}) against
 * {@link WheelIoEventLoopGroup} ({@code wheel-loop}), with {@code pending} other tasks waiting
 * about an hour ahead. One invocation hands the loop a batch of {@value #BATCH} operations (the hop
 * to the loop thread, the same for both, is spread over the batch), in a random order of slots:
 * <ul>
 *   <li>{@code scheduleCancel}: schedule a fresh task 1 s ahead and cancel it (a request timeout
 *       the response beats);</li>
 *   <li>{@code rearm}: cancel a pending task and schedule its replacement (an idle timeout moved
 *       by traffic, as {@code ReadTimeoutHandler} and {@code IdleStateHandler} do with a new task).</li>
 * </ul>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class LoopScheduleBenchmark {

    static final int BATCH = 1024;
    private static final long BACKGROUND_NANOS = TimeUnit.HOURS.toNanos(1);
    private static final long TURN_NANOS = TimeUnit.SECONDS.toNanos(4);
    private static final Runnable NOOP = () -> {};

    @Param({"netty-loop", "wheel-loop"})
    public String contender;

    @Param({"1024", "65536", "524288"})
    public int pending;

    private EventLoopGroup group;
    private EventLoop loop;
    private ScheduledFuture<?>[] futures;
    private int[] order;
    private int cursor;
    private final Runnable scheduleCancelBatch = this::scheduleCancelBatch;
    private final Runnable rearmBatch = this::rearmBatch;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        group = switch (contender) {
            case "netty-loop" -> new MultiThreadIoEventLoopGroup(1, LocalIoHandler.newFactory());
            case "wheel-loop" -> new WheelIoEventLoopGroup(1, LocalIoHandler.newFactory());
            default -> throw new IllegalArgumentException("unknown contender " + contender);
        };
        loop = group.next();
        futures = new ScheduledFuture<?>[pending];
        order = Workloads.randomOrder(pending);
        loop.submit(() -> {
                    for (int i = 0; i < pending; i++) {
                        futures[i] = loop.schedule(NOOP, backgroundDelay(order[i]), TimeUnit.NANOSECONDS);
                    }
                })
                .sync();
    }

    private long backgroundDelay(int slot) {
        return BACKGROUND_NANOS + TURN_NANOS / pending * slot;
    }

    @TearDown(Level.Trial)
    public void tearDown() throws InterruptedException {
        group.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS).sync();
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public void scheduleCancel() throws Exception {
        loop.submit(scheduleCancelBatch).sync();
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public void rearm() throws Exception {
        loop.submit(rearmBatch).sync();
    }

    private void scheduleCancelBatch() {
        for (int i = 0; i < BATCH; i++) {
            loop.schedule(NOOP, 1, TimeUnit.SECONDS).cancel(false);
        }
    }

    private void rearmBatch() {
        for (int i = 0; i < BATCH; i++) {
            int slot = order[cursor];
            cursor = cursor + 1 == pending ? 0 : cursor + 1;
            futures[slot].cancel(false);
            futures[slot] = loop.schedule(NOOP, backgroundDelay(slot), TimeUnit.NANOSECONDS);
        }
    }

    /**
     * Bytes of heap per pending scheduled task on each loop: heap in use after a full GC with
     * {@code args[0]} tasks pending, minus before, divided by the count. Run:
     * {@code java -cp benchmarks.jar io.wheelbeat.bench.LoopScheduleBenchmark 524288}.
     */
    public static void main(String[] args) throws Exception {
        int tasks = args.length > 0 ? Integer.parseInt(args[0]) : 524_288;
        for (String contender : new String[] {"netty-loop", "wheel-loop", "netty-loop", "wheel-loop"}) {
            LoopScheduleBenchmark bench = new LoopScheduleBenchmark();
            bench.contender = contender;
            bench.pending = 1;
            bench.setUp();
            long before = MemoryFootprint.usedAfterGc();
            ScheduledFuture<?>[] held = new ScheduledFuture<?>[tasks];
            bench.loop
                    .submit(() -> {
                        for (int i = 0; i < tasks; i++) {
                            held[i] = bench.loop.schedule(NOOP, BACKGROUND_NANOS + i, TimeUnit.NANOSECONDS);
                        }
                    })
                    .sync();
            long after = MemoryFootprint.usedAfterGc();
            // The array of futures the caller keeps (4 B per task with compressed references) is
            // the caller's, not the loop's: left out.
            long bytes = after - before - (16 + 4L * tasks);
            System.out.printf(
                    "%s: %d pending, %.1f bytes per pending scheduled task%n",
                    contender, tasks, (double) bytes / tasks);
            bench.tearDown();
        }
    }
}
