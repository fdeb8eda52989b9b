package io.wheelbeat.bench;

import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.timeout.IdleStateHandler;
import io.wheelbeat.netty.WheelIdleStateHandler;
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
 * <p>The 30 s timer never fires during a run: this measures the per-read hot path, which is where
 * a busy connection spends its idle-detection cost.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class HandlerReadBatchBenchmark {

    private static final Object MESSAGE = new Object();
    private static final int READER_IDLE_SECONDS = 30;

    /** {@code netty}: Netty's IdleStateHandler; {@code wheel}: ours, WheelIdleStateHandler. */
    @Param({"netty", "wheel"})
    public String handler;

    private EmbeddedChannel channel;
    private ChannelPipeline pipeline;

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
        channel = new EmbeddedChannel(newHandler(handler, READER_IDLE_SECONDS, 0, 0), new Sink());
        pipeline = channel.pipeline();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        channel.finishAndReleaseAll();
    }

    @Benchmark
    public void readBatch() {
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
