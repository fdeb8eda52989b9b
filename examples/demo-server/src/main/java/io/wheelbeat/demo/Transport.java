package io.wheelbeat.demo;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;

/** The socket transport of the demos: native epoll where it loads, NIO otherwise. */
public enum Transport {
    EPOLL(EpollServerSocketChannel.class, EpollSocketChannel.class),
    NIO(NioServerSocketChannel.class, NioSocketChannel.class);

    private final Class<? extends ServerChannel> serverChannel;
    private final Class<? extends SocketChannel> clientChannel;

    Transport(Class<? extends ServerChannel> serverChannel, Class<? extends SocketChannel> clientChannel) {
        this.serverChannel = serverChannel;
        this.clientChannel = clientChannel;
    }

    /** Returns epoll if its native library loads here, NIO otherwise. */
    public static Transport best() {
        return Epoll.isAvailable() ? EPOLL : NIO;
    }

    /** Creates an event loop group of {@code threads} threads (0: Netty's default). */
    public EventLoopGroup newGroup(int threads) {
        IoHandlerFactory factory = this == EPOLL ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
        return new MultiThreadIoEventLoopGroup(threads, factory);
    }

    public Class<? extends ServerChannel> serverChannel() {
        return serverChannel;
    }

    public Class<? extends SocketChannel> clientChannel() {
        return clientChannel;
    }
}
