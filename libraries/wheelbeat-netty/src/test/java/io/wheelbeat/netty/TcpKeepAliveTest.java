package io.wheelbeat.netty;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollChannelOption;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.ServerSocketChannel;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioChannelOption;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.function.Consumer;
import jdk.net.ExtendedSocketOptions;
import org.junit.jupiter.api.Test;

/**
 * {@link TcpKeepAlive} on real sockets on loopback, read back from the kernel through the
 * transport's own options: NIO (the JDK's extended options, where the OS has them) and epoll
 * (where it is available); a channel without TCP is left alone; bad settings are refused.
 */
class TcpKeepAliveTest {

    private static final TcpKeepAlive SETTINGS = TcpKeepAlive.of(Duration.ofSeconds(7), Duration.ofMillis(4_500), 4)
            .withUserTimeout(Duration.ofMillis(2_500));

    @Test
    void setsTheJdksExtendedOptionsOnNio() throws Exception {
        assumeTrue(
                new NioSocketChannel()
                        .config().getOptions().keySet().stream()
                                .anyMatch(option -> option.name().equals("TCP_KEEPIDLE")),
                "this OS's JDK has no TCP_KEEPIDLE");
        onConnectedClient(NioIoHandler.newFactory(), NioServerSocketChannel.class, NioSocketChannel.class, client -> {
            assertTrue(SETTINGS.applyTo(client));
            assertEquals(Boolean.TRUE, client.config().getOption(ChannelOption.SO_KEEPALIVE));
            assertEquals(7, client.config().getOption(NioChannelOption.of(ExtendedSocketOptions.TCP_KEEPIDLE)));
            assertEquals(5, client.config().getOption(NioChannelOption.of(ExtendedSocketOptions.TCP_KEEPINTERVAL)));
            assertEquals(4, client.config().getOption(NioChannelOption.of(ExtendedSocketOptions.TCP_KEEPCOUNT)));
        });
    }

    @Test
    void setsTheKernelsOptionsAndTheUserTimeoutOnEpoll() throws Exception {
        assumeTrue(Epoll.isAvailable(), "no epoll here");
        onConnectedClient(
                EpollIoHandler.newFactory(), EpollServerSocketChannel.class, EpollSocketChannel.class, client -> {
                    assertTrue(SETTINGS.applyTo(client));
                    assertEquals(Boolean.TRUE, client.config().getOption(ChannelOption.SO_KEEPALIVE));
                    assertEquals(7, client.config().getOption(EpollChannelOption.TCP_KEEPIDLE));
                    assertEquals(5, client.config().getOption(EpollChannelOption.TCP_KEEPINTVL));
                    assertEquals(4, client.config().getOption(EpollChannelOption.TCP_KEEPCNT));
                    assertEquals(2_500, client.config().getOption(EpollChannelOption.TCP_USER_TIMEOUT));
                });
    }

    @Test
    void theDefaultIsLettucesThirteenSecondsThreeProbes() throws Exception {
        assumeTrue(Epoll.isAvailable(), "no epoll here");
        onConnectedClient(
                EpollIoHandler.newFactory(), EpollServerSocketChannel.class, EpollSocketChannel.class, client -> {
                    assertTrue(TcpKeepAlive.DEFAULT.applyTo(client));
                    assertEquals(13, client.config().getOption(EpollChannelOption.TCP_KEEPIDLE));
                    assertEquals(13, client.config().getOption(EpollChannelOption.TCP_KEEPINTVL));
                    assertEquals(3, client.config().getOption(EpollChannelOption.TCP_KEEPCNT));
                    assertEquals(
                            0, client.config().getOption(EpollChannelOption.TCP_USER_TIMEOUT)); // the kernel's default
                });
    }

    @Test
    void aChannelWithoutTcpIsLeftAlone() {
        assertFalse(SETTINGS.applyTo(new EmbeddedChannel()));
    }

    @Test
    void badSettingsAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> TcpKeepAlive.of(Duration.ZERO, Duration.ofSeconds(1), 3));
        assertThrows(
                IllegalArgumentException.class,
                () -> TcpKeepAlive.of(Duration.ofSeconds(1), Duration.ofSeconds(-1), 3));
        assertThrows(
                IllegalArgumentException.class, () -> TcpKeepAlive.of(Duration.ofSeconds(1), Duration.ofSeconds(1), 0));
        assertThrows(
                IllegalArgumentException.class,
                () -> TcpKeepAlive.of(Duration.ofSeconds(1L + Integer.MAX_VALUE), Duration.ofSeconds(1), 1));
        assertThrows(NullPointerException.class, () -> TcpKeepAlive.of(null, Duration.ofSeconds(1), 1));
        assertThrows(IllegalArgumentException.class, () -> TcpKeepAlive.DEFAULT.withUserTimeout(Duration.ZERO));
    }

    /** Connects a client of {@code clientType} to a server on loopback and runs {@code check} on it. */
    private static void onConnectedClient(
            IoHandlerFactory transport,
            Class<? extends ServerSocketChannel> serverType,
            Class<? extends SocketChannel> clientType,
            Consumer<Channel> check)
            throws Exception {
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, transport);
        try {
            Channel server = new ServerBootstrap()
                    .group(group)
                    .channel(serverType)
                    .childHandler(new ChannelInboundHandlerAdapter())
                    .bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
                    .sync()
                    .channel();
            Channel client = new Bootstrap()
                    .group(group)
                    .channel(clientType)
                    .handler(new ChannelInboundHandlerAdapter())
                    .connect(server.localAddress())
                    .sync()
                    .channel();
            check.accept(client);
            client.close().sync();
            server.close().sync();
        } finally {
            group.shutdownGracefully(0, 0, java.util.concurrent.TimeUnit.MILLISECONDS)
                    .sync();
        }
    }
}
