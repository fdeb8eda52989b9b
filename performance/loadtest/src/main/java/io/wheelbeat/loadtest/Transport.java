package io.wheelbeat.loadtest;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.local.LocalAddress;
import io.netty.channel.local.LocalChannel;
import io.netty.channel.local.LocalIoHandler;
import io.netty.channel.local.LocalServerChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;
import java.util.function.Supplier;

/**
 * The channel types, I/O handlers and addresses of one tier: Netty's local transport, or TCP
 * over loopback with epoll where its native library loads and NIO otherwise.
 */
enum Transport {
    LOCAL("local", LocalIoHandler::newFactory, LocalServerChannel.class, LocalChannel.class),
    EPOLL("epoll", EpollIoHandler::newFactory, EpollServerSocketChannel.class, EpollSocketChannel.class),
    NIO("nio", NioIoHandler::newFactory, NioServerSocketChannel.class, NioSocketChannel.class);

    private static final AtomicInteger CLIENT_RUNS = new AtomicInteger();

    private final String id;
    private final Supplier<IoHandlerFactory> ioHandlers;
    private final Class<? extends ServerChannel> serverChannel;
    private final Class<? extends Channel> clientChannel;

    Transport(
            String id,
            Supplier<IoHandlerFactory> ioHandlers,
            Class<? extends ServerChannel> serverChannel,
            Class<? extends Channel> clientChannel) {
        this.id = id;
        this.ioHandlers = ioHandlers;
        this.serverChannel = serverChannel;
        this.clientChannel = clientChannel;
    }

    /** The transport of {@code tier} on this machine. */
    static Transport of(Tier tier) {
        if (tier == Tier.LOCAL) {
            return LOCAL;
        }
        return Epoll.isAvailable() ? EPOLL : NIO;
    }

    String id() {
        return id;
    }

    /** Server event loops of {@code kind}, threads named after {@code name}, that count what the load test reports. */
    InstrumentedEventLoopGroup newServerGroup(EventLoopKind kind, int threads, String name) {
        return new InstrumentedEventLoopGroup(kind, threads, name, ioHandlers.get());
    }

    /** Plain client event loops whose CPU time {@code threads} keeps. */
    EventLoopGroup newClientGroup(int threads, LoopThreads loopThreads) {
        return new MultiThreadIoEventLoopGroup(threads, loopThreads, ioHandlers.get());
    }

    /** Binds a server on a fresh local address, or on an ephemeral loopback port. */
    Channel bind(InstrumentedEventLoopGroup group, ChannelHandler childHandler) throws InterruptedException {
        ServerBootstrap b = new ServerBootstrap()
                .group(group.loops())
                .channel(serverChannel)
                .childHandler(childHandler);
        if (this == LOCAL) {
            return b.bind(new LocalAddress("wheelbeat-loadtest-" + UUID.randomUUID()))
                    .sync()
                    .channel();
        }
        return b.option(ChannelOption.SO_BACKLOG, 4096)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .bind(new InetSocketAddress("127.0.0.1", 0))
                .sync()
                .channel();
    }

    Bootstrap clientBootstrap(EventLoopGroup group, ChannelHandler handler) {
        Bootstrap b = new Bootstrap().group(group).channel(clientChannel).handler(handler);
        if (this != LOCAL) {
            b.option(ChannelOption.TCP_NODELAY, true).option(ChannelOption.SO_REUSEADDR, true);
        }
        return b;
    }

    /**
     * The client address of connection {@code i}. Local clients each get their own address
     * (an automatic one collides about once in 100,000 connects); TCP clients rotate over
     * {@code sources} loopback addresses from 127.0.0.2, so the 64k ports of one address pair
     * are not the limit.
     */
    IntFunction<SocketAddress> clientAddresses(int sources) {
        if (this == LOCAL) {
            // Short names: every address lives as long as its connection.
            String prefix = "c" + CLIENT_RUNS.incrementAndGet() + ".";
            return i -> new LocalAddress(prefix + i);
        }
        return i -> new InetSocketAddress("127.0.0." + (2 + i % sources), 0);
    }
}
