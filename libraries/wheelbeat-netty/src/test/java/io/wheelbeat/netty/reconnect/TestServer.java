package io.wheelbeat.netty.reconnect;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/** A real TCP server on a loopback address that can be stopped and restarted on the same port. */
final class TestServer implements AutoCloseable {

    /** What the server does with a connection. */
    enum Mode {
        /** Echoes every byte: a client's ping comes back as its pong. */
        ECHO,
        /** Reads and discards: the connection stays up, but nothing proves it healthy. */
        SILENT,
        /** Closes each connection as soon as it is accepted. */
        CLOSE_ON_ACCEPT
    }

    private final EventLoopGroup group = new MultiThreadIoEventLoopGroup(2, NioIoHandler.newFactory());
    private final ChannelGroup children = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);
    private final AtomicInteger accepted = new AtomicInteger();
    private final InetAddress host;
    private final Mode mode;
    private int port;
    private Channel serverChannel;
    /** Set while stopped: a connection accepted just before the stop closes itself. */
    private volatile boolean stopped;

    private TestServer(InetAddress host, int port, Mode mode) {
        this.host = host;
        this.port = port;
        this.mode = mode;
    }

    static TestServer start(Mode mode) throws Exception {
        return start(InetAddress.getLoopbackAddress(), 0, mode);
    }

    static TestServer start(InetAddress host, int port, Mode mode) throws Exception {
        TestServer server = new TestServer(host, port, mode);
        server.restart();
        return server;
    }

    /** Binds the port it had (or a free one the first time) and accepts again. */
    void restart() throws InterruptedException {
        stopped = false;
        serverChannel = new ServerBootstrap()
                .group(group)
                .channel(NioServerSocketChannel.class)
                .option(ChannelOption.SO_REUSEADDR, true)
                .option(ChannelOption.SO_BACKLOG, 4096)
                .childHandler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        accepted.incrementAndGet();
                        children.add(ch);
                        // After the add: either stop() sees this child in the group, or it sees stopped.
                        if (stopped) {
                            ch.close();
                            return;
                        }
                        ch.pipeline().addLast(handler());
                    }
                })
                .bind(host, port)
                .sync()
                .channel();
        port = ((InetSocketAddress) serverChannel.localAddress()).getPort();
    }

    private ChannelHandler handler() {
        return new ChannelInboundHandlerAdapter() {
            @Override
            public void channelActive(ChannelHandlerContext ctx) {
                if (mode == Mode.CLOSE_ON_ACCEPT) {
                    ctx.close();
                }
            }

            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                if (mode == Mode.ECHO) {
                    ctx.writeAndFlush(msg);
                } else {
                    ReferenceCountUtil.release(msg);
                }
            }
        };
    }

    /** Stops listening and closes every connection: to its clients, the server is gone. */
    void stop() throws InterruptedException {
        stopped = true;
        serverChannel.close().sync();
        children.close().await(10, TimeUnit.SECONDS);
    }

    int port() {
        return port;
    }

    /** Connections accepted since the server was created. */
    int accepted() {
        return accepted.get();
    }

    /** Connections open now. */
    int openConnections() {
        return children.size();
    }

    @Override
    public void close() {
        try {
            if (serverChannel != null) {
                stop();
            }
            group.shutdownGracefully(0, 2, TimeUnit.SECONDS).await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while closing the server", e);
        }
    }
}
