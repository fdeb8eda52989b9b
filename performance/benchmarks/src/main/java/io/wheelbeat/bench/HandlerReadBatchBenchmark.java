package io.wheelbeat.bench;

import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.EventLoop;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.timeout.IdleStateHandler;
import io.wheelbeat.netty.idle.WheelIdleStateHandler;
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
 * Workload 5, the idle handler's cost per read batch: one {@code channelRead} and one
 * {@code channelReadComplete} through an {@link EmbeddedChannel} holding the idle handler (reader
 * idle 30 s) and a sink that swallows both, so nothing piles up in the channel. The handler is
 * built by {@link #newHandler}, the one place that knows each kind.
 *
 * <p>With {@code channels} above 1, that many channels, each with its own handler, are registered
 * on one shared event loop (as a server's connections share their loop, its scheduled-task queue
 * and its wheel), and every operation reads on a channel drawn at random, so handler state and
 * timers are as cold as on a busy server; no access order is replayed. Both handlers get the same
 * channels, the same draw and the same batch.
 *
 * <p>The 30 s timers never fire during a run (the shared loop's tasks are never run): this
 * measures the per-read hot path, which is where a busy connection spends its idle-detection cost.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class HandlerReadBatchBenchmark {

    private static final Object MESSAGE = new Object();
    private static final int READER_IDLE_SECONDS = 30;

    /**
     * {@code netty}: Netty's IdleStateHandler; {@code wheel}: ours, WheelIdleStateHandler;
     * {@code none}: the same pipeline without an idle handler, the harness's own cost.
     */
    @Param({"netty", "wheel", "none"})
    public String handler;

    /** How many channels share the event loop; a power of two (1 = one channel, in cache). */
    @Param({"1"})
    public int channels;

    private EmbeddedChannel[] all;
    private ChannelPipeline[] pipelines;
    private int mask;
    private long draw = 0x9E3779B97F4A7C15L;

    /**
     * Builds the idle handler of {@code kind} with the same constructor arguments for both.
     *
     * @throws IllegalArgumentException for an unknown kind
     */
    static ChannelHandler newHandler(String kind, int readerIdleSeconds, int writerIdleSeconds, int allIdleSeconds) {
        return switch (kind) {
            case "netty" -> new IdleStateHandler(readerIdleSeconds, writerIdleSeconds, allIdleSeconds);
            case "wheel" -> new WheelIdleStateHandler(readerIdleSeconds, writerIdleSeconds, allIdleSeconds);
            default -> throw new IllegalArgumentException("unknown handler '" + kind + "'; known: netty, wheel");
        };
    }

    @Setup(Level.Trial)
    public void setUp() {
        if (Integer.bitCount(channels) != 1) {
            throw new IllegalArgumentException("channels must be a power of two, was " + channels);
        }
        all = new EmbeddedChannel[channels];
        pipelines = new ChannelPipeline[channels];
        mask = channels - 1;
        all[0] = new EmbeddedChannel(handlers());
        EventLoop shared = all[0].eventLoop();
        for (int i = 1; i < channels; i++) {
            all[i] = EmbeddedChannel.builder()
                    .register(false)
                    .handlers(handlers())
                    .build();
            shared.register(all[i]).syncUninterruptibly();
        }
        for (int i = 0; i < channels; i++) {
            if (!all[i].isActive() || all[i].eventLoop() != shared) {
                throw new IllegalStateException("channel " + i + " is not active on the shared loop");
            }
            pipelines[i] = all[i].pipeline();
        }
    }

    private ChannelHandler[] handlers() {
        return handler.equals("none")
                ? new ChannelHandler[] {new Sink()}
                : new ChannelHandler[] {newHandler(handler, READER_IDLE_SECONDS, 0, 0), new Sink()};
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        for (EmbeddedChannel channel : all) {
            channel.finishAndReleaseAll();
        }
    }

    @Benchmark
    public void readBatch() {
        // xorshift64: a fresh draw per operation, so no contender's layout is replayed.
        long x = draw;
        x ^= x << 13;
        x ^= x >>> 7;
        x ^= x << 17;
        draw = x;
        ChannelPipeline pipeline = pipelines[(int) x & mask];
        pipeline.fireChannelRead(MESSAGE);
        pipeline.fireChannelReadComplete();
    }

    /** Ends the pipeline: swallows reads and read-completes so nothing accumulates. */
    private static final class Sink extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            // Swallowed: the message is a shared constant with nothing to release.
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            // Swallowed.
        }
    }
}
