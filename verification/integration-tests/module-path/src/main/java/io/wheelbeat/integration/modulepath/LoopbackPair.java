package io.wheelbeat.integration.modulepath;

import io.micrometer.core.instrument.MeterRegistry;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.local.LocalAddress;
import io.netty.channel.local.LocalChannel;
import io.netty.channel.local.LocalIoHandler;
import io.netty.channel.local.LocalServerChannel;
import io.wheelbeat.netty.heartbeat.HeartbeatHandler;
import io.wheelbeat.netty.idle.WheelIdleStateHandler;
import io.wheelbeat.netty.loop.WheelIoEventLoopGroup;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * What a module user writes: a server and a client over Netty's local transport on one
 * {@link WheelIoEventLoopGroup} loop. The server's pipeline has a {@link WheelIdleStateHandler}
 * (reader idle) and answers {@link #PING} with {@link #PONG}; the client's has a
 * {@link HeartbeatHandler} that pings and counts on the given meter registry. Each side records the
 * user events its pipeline fires.
 * Not thread-safe: one test drives it.
 */
public final class LoopbackPair implements AutoCloseable {

    /** The client's ping. */
    public static final String PING = "PING";
    /** The server's answer. */
    public static final String PONG = "PONG";

    private static final String HEARTBEAT = "heartbeat";

    private final EventLoopGroup group = new WheelIoEventLoopGroup(1, LocalIoHandler.newFactory());
    private final BlockingQueue<Object> serverEvents = new LinkedBlockingQueue<>();
    private final BlockingQueue<Object> clientEvents = new LinkedBlockingQueue<>();
    private final Channel server;
    private final Channel client;

    /**
     * Binds the server and connects the client.
     *
     * @param readerIdle the server's reader idle time
     * @param pingInterval the client's ping interval
     * @param meters where the client's heartbeat counts
     * @throws InterruptedException if interrupted while binding or connecting
     */
    public LoopbackPair(Duration readerIdle, Duration pingInterval, MeterRegistry meters) throws InterruptedException {
        WheelIdleStateHandler.Factory idle =
                WheelIdleStateHandler.builder().readerIdleTime(readerIdle).build();
        HeartbeatHandler.Factory heartbeats = HeartbeatHandler.builder()
                .sendPings(pingInterval, channel -> PING, PONG::equals)
                .metrics(meters)
                .build();
        LocalAddress address = new LocalAddress("module-path-" + UUID.randomUUID());
        server = new ServerBootstrap()
                .group(group)
                .channel(LocalServerChannel.class)
                .childHandler(new ChannelInitializer<LocalChannel>() {
                    @Override
                    protected void initChannel(LocalChannel ch) {
                        ch.pipeline().addLast(idle.newHandler(), new Answer(), recorder(serverEvents));
                    }
                })
                .bind(address)
                .sync()
                .channel();
        client = new Bootstrap()
                .group(group)
                .channel(LocalChannel.class)
                .handler(new ChannelInitializer<LocalChannel>() {
                    @Override
                    protected void initChannel(LocalChannel ch) {
                        ch.pipeline().addLast(HEARTBEAT, heartbeats.newHandler());
                        ch.pipeline().addLast(recorder(clientEvents));
                    }
                })
                .connect(address)
                .sync()
                .channel();
    }

    /** The user events the server's pipeline fired, in order. */
    public BlockingQueue<Object> serverEvents() {
        return serverEvents;
    }

    /** The user events the client's pipeline fired, in order. */
    public BlockingQueue<Object> clientEvents() {
        return clientEvents;
    }

    /** The client's channel. */
    public Channel client() {
        return client;
    }

    /** Takes the heartbeat out of the client's pipeline: from now on the client sends nothing. */
    public void stopPinging() {
        client.pipeline().remove(HEARTBEAT);
    }

    @Override
    public void close() throws InterruptedException {
        client.close().sync();
        server.close().sync();
        group.shutdownGracefully(0, 5, TimeUnit.SECONDS).sync();
    }

    /** Answers each ping with a pong. */
    private static final class Answer extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (PING.equals(msg)) {
                ctx.writeAndFlush(PONG);
            } else {
                ctx.fireChannelRead(msg);
            }
        }
    }

    /** A handler that records every user event into {@code events}. */
    private static ChannelInboundHandlerAdapter recorder(BlockingQueue<Object> events) {
        return new ChannelInboundHandlerAdapter() {
            @Override
            public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
                events.add(evt);
            }
        };
    }
}
