package io.wheelbeat.demo.server;

import io.micrometer.core.instrument.MeterRegistry;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.group.ChannelGroup;
import io.wheelbeat.core.ratelimit.KeyedRateLimiter;
import io.wheelbeat.demo.protocol.Frame;
import io.wheelbeat.demo.protocol.FrameDecoder;
import io.wheelbeat.demo.protocol.FrameEncoder;
import io.wheelbeat.demo.protocol.FrameType;
import io.wheelbeat.netty.EventLoopWheels;
import io.wheelbeat.netty.deadline.ConnectionDeadlineHandler;
import io.wheelbeat.netty.deadline.MaxConnectionAge;
import io.wheelbeat.netty.guard.ClosePacer;
import io.wheelbeat.netty.guard.SlowConsumerHandler;
import io.wheelbeat.netty.heartbeat.HeartbeatHandler;
import io.wheelbeat.netty.heartbeat.PingLimits;
import io.wheelbeat.netty.idle.WheelIdleStateHandler;
import io.wheelbeat.netty.ratelimit.RateLimitHandler;
import java.time.Duration;

/**
 * The server pipeline, in order: the slow-consumer guard (water marks, no reading while
 * unwritable, a cap on pending bytes, an unwritable deadline), connection-rate limit per source
 * address, frame codec,
 * first-message timeout and maximum age, reader-idle detection, heartbeat answering with
 * ping-flood enforcement, message-rate limit per connection, echo, and the close-reason tail
 * (which closes idle connections through the close pacer).
 */
final class ServerPipeline extends ChannelInitializer<Channel> {

    private final DemoServer options;
    final SlowConsumerHandler.Factory slowConsumers;
    final ChannelGroup connections;
    final ConnectionDeadlineHandler.Factory deadlines;
    private final HeartbeatHandler.Factory heartbeats;
    private final RateLimitHandler messageRate;
    /** Configured once; build() only reads, so every event loop may call it. */
    final WheelIdleStateHandler.Factory readerIdle;

    final KeyedRateLimiter<Object> connectionLimiter;
    private final CloseReasons closeReasons;

    ServerPipeline(
            DemoServer options,
            EventLoopWheels wheels,
            MeterRegistry registry,
            ChannelGroup connections,
            KeyedRateLimiter<Object> connectionLimiter,
            KeyedRateLimiter<Object> messageLimiter,
            ClosePacer closePacer) {
        this.options = options;
        this.slowConsumers = SlowConsumerHandler.builder()
                .wheels(wheels)
                .maxPendingBytes(options.maxPendingBytes)
                .unwritableTimeout(Duration.ofMillis(options.slowConsumerMillis))
                .metrics(registry)
                .build();
        this.connections = connections;
        this.connectionLimiter = connectionLimiter;
        this.deadlines = ConnectionDeadlineHandler.builder()
                .wheels(wheels)
                .firstMessageTimeout(Duration.ofMillis(options.firstMessageMillis))
                .maxConnectionAge(MaxConnectionAge.of(Duration.ofMillis(options.maxAgeMillis))
                        .withGrace(Duration.ofMillis(Math.max(1, options.maxAgeGraceMillis))))
                .metrics(registry)
                .build();
        this.heartbeats = HeartbeatHandler.builder()
                .wheels(wheels)
                .answerPings(
                        msg -> msg instanceof Frame frame && frame.is(FrameType.PING),
                        (channel, ping) -> new Frame(
                                FrameType.PONG, ((Frame) ping).content().retain()))
                .pingLimits(PingLimits.of(Duration.ofMillis(options.minPingIntervalMillis), options.maxPingStrikes))
                .goodbye(channel -> Frame.goodbye(Frame.TOO_MANY_PINGS))
                .metrics(registry)
                .build();
        // Keyed by the channel itself: one window per connection, forgotten when it goes quiet.
        this.messageRate = RateLimitHandler.builder(
                        messageLimiter,
                        (channel, msg) -> msg instanceof Frame frame && frame.is(FrameType.DATA) ? channel : null)
                .dropWhenOver()
                .build();
        this.readerIdle = WheelIdleStateHandler.builder()
                .wheels(wheels)
                .readerIdleTime(Duration.ofMillis(options.readerIdleMillis))
                .metrics(registry)
                .build();
        this.closeReasons = new CloseReasons(registry, closePacer, Frame::goodbye);
    }

    @Override
    protected void initChannel(Channel channel) {
        connections.add(channel);
        ChannelPipeline pipeline = channel.pipeline();
        pipeline.addLast("slow-consumer", slowConsumers.newHandler());
        pipeline.addLast(
                "connection-rate",
                RateLimitHandler.builder(connectionLimiter).perConnection().build());
        pipeline.addLast("frame-decoder", new FrameDecoder(options.maxFrameBytes));
        pipeline.addLast("frame-encoder", FrameEncoder.INSTANCE);
        pipeline.addLast("deadlines", deadlines.newHandler());
        pipeline.addLast("reader-idle", readerIdle.newHandler());
        pipeline.addLast("heartbeat", heartbeats.newHandler());
        pipeline.addLast("message-rate", messageRate);
        pipeline.addLast("echo", EchoHandler.INSTANCE);
        pipeline.addLast("close-reasons", closeReasons);
    }
}
