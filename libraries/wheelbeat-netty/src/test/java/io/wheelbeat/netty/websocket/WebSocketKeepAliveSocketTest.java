package io.wheelbeat.netty.websocket;

import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketClientProtocolConfig;
import io.netty.handler.codec.http.websocketx.WebSocketClientProtocolHandler;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.ReferenceCountUtil;
import io.wheelbeat.netty.heartbeat.HeartbeatFailedEvent;
import io.wheelbeat.netty.heartbeat.PongReceivedEvent;
import io.wheelbeat.netty.idle.WheelIdleStateHandler;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link WebSocketKeepAliveHandler} over real TCP on 127.0.0.1, behind Netty's WebSocket server,
 * against the JDK's own {@code java.net.http.WebSocket} client (which answers pings by itself)
 * and raw sockets that speak RFC 6455 byte by byte. Time bounds are generous waits, never the
 * verdict, except for floors the rules give: no close before the pongs could have been missed.
 */
class WebSocketKeepAliveSocketTest {

    private static final long WAIT_MILLIS = 20_000;

    private final EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final List<Object> serverEvents = new CopyOnWriteArrayList<>();
    private final List<AutoCloseable> closeables = new ArrayList<>();

    @AfterEach
    void shutDown() throws Exception {
        for (AutoCloseable closeable : closeables) {
            closeable.close();
        }
        group.shutdownGracefully(0, 1, SECONDS).sync();
    }

    private int startServer(WebSocketKeepAliveHandler.Builder keepAlive) throws InterruptedException {
        return startServer(keepAlive, Duration.ZERO);
    }

    /**
     * An echo server for text frames at ws://127.0.0.1:port/ws with the keepalive, and a reader-idle handler first
     * unless {@code readerIdle} is zero; returns the port.
     */
    private int startServer(WebSocketKeepAliveHandler.Builder keepAlive, Duration readerIdle)
            throws InterruptedException {
        WebSocketKeepAliveHandler.Factory handlers = keepAlive.metrics(registry).build();
        WheelIdleStateHandler.Factory idle = readerIdle.isZero()
                ? null
                : WheelIdleStateHandler.builder().readerIdleTime(readerIdle).build();
        Channel server = new ServerBootstrap()
                .group(group)
                .channel(NioServerSocketChannel.class)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        if (idle != null) {
                            ch.pipeline().addLast(idle.newHandler());
                        }
                        ch.pipeline()
                                .addLast(
                                        new HttpServerCodec(),
                                        new HttpObjectAggregator(65536),
                                        new WebSocketServerProtocolHandler(WebSocketWire.serverConfig()),
                                        handlers.newHandler(),
                                        new Echo(serverEvents));
                    }
                })
                .bind(new InetSocketAddress("127.0.0.1", 0))
                .sync()
                .channel();
        return ((InetSocketAddress) server.localAddress()).getPort();
    }

    private double counter(String name, String... tags) {
        return registry.find(name).tags(tags).counters().stream()
                .mapToDouble(c -> c.count())
                .sum();
    }

    private long serverEventsOf(Class<?> type) {
        return serverEvents.stream().filter(type::isInstance).count();
    }

    @Test
    void theJdkClientIsKeptAliveOverManyIntervalsWithoutSendingAnything() throws Exception {
        // Ping after 100 ms of quiet; generous pong timeout and reader idle, so only a dead client fails.
        int port = startServer(
                WebSocketKeepAliveHandler.builder()
                        .pingInterval(Duration.ofMillis(100))
                        .pongTimeout(Duration.ofSeconds(1)),
                Duration.ofSeconds(3));
        JdkWebSocketClient client = jdkClient(port);
        Thread.sleep(3_000); // 30 intervals, three reader-idle timeouts
        assertNull(client.closed.peek(), "the connection stays open");
        assertTrue(client.pings.get() >= 10, "pings the JDK client saw: " + client.pings.get());
        assertTrue(serverEventsOf(PongReceivedEvent.class) >= 10, serverEvents.toString());
        assertEquals(0, serverEventsOf(HeartbeatFailedEvent.class));
        assertEquals(0, serverEventsOf(IdleStateEvent.class));
        assertTrue(registry.get("wheelbeat.heartbeat.rtt").timer().count() >= 10);
        client.sendText("still here", WAIT_MILLIS);
        assertEquals("still here", client.texts.poll(WAIT_MILLIS, MILLISECONDS));
    }

    @Test
    void aClientThatStopsAnsweringAfterTheHandshakeIsClosedAfterTheMissedPongsWithACloseFrame() throws Exception {
        int port = startServer(WebSocketKeepAliveHandler.builder()
                .pingInterval(Duration.ofMillis(100))
                .pingIntervalJitter(0)
                .pongTimeout(Duration.ofMillis(100))
                .maxMissedPongs(3));
        // Timed from before the handshake request: the server's timers cannot start sooner, however
        // late this thread gets to run after the 101 arrives.
        long requested = System.nanoTime();
        RawWebSocketClient raw = rawClient(port);
        List<RawWebSocketClient.Frame> frames = raw.readUntilEof();
        long closedAfter = System.nanoTime() - requested;
        assertEquals(4, frames.size(), frames.toString());
        for (int i = 0; i < 3; i++) {
            assertEquals(RawWebSocketClient.PING, frames.get(i).opcode());
            assertEquals(frames.get(0).longPayload() + i, frames.get(i).longPayload(), "ping ids count up");
        }
        assertEquals(RawWebSocketClient.CLOSE, frames.get(3).opcode());
        assertEquals(1001, frames.get(3).closeStatus());
        assertEquals(WebSocketKeepAliveHandler.PING_TIMEOUT, frames.get(3).closeReason());
        // The first ping after 100 ms, then three pong timeouts of 100 ms: never sooner.
        assertTrue(closedAfter >= MILLISECONDS.toNanos(400), "closed after " + closedAfter + " ns");
        assertEquals(1, counter("wheelbeat.connection.closed", "reason", "heartbeat_timeout"));
        assertEquals(3, counter("wheelbeat.heartbeat.pongs.missed"));
    }

    @Test
    void aClientThatNeverReadsAndPongsWithGuessedIdsIsClosedAfterTheMissedPongs() throws Exception {
        int port = startServer(WebSocketKeepAliveHandler.builder()
                .pingInterval(Duration.ofMillis(100))
                .pingIntervalJitter(0)
                .pongTimeout(Duration.ofMillis(100))
                .maxMissedPongs(3));
        RawWebSocketClient blind = rawClient(port);
        long upgraded = System.nanoTime();
        // The blind peer: reads nothing, sends a pong every 20 ms with the id guessed from
        // the time elapsed (ping n would go out about n intervals after the handshake).
        try {
            while (counter("wheelbeat.connection.closed", "reason", "heartbeat_timeout") == 0
                    && System.nanoTime() - upgraded < SECONDS.toNanos(20)) {
                long guess = Math.max(1, (System.nanoTime() - upgraded) / MILLISECONDS.toNanos(100));
                blind.send(RawWebSocketClient.frame(
                        RawWebSocketClient.PONG,
                        java.nio.ByteBuffer.allocate(8).putLong(guess).array(),
                        true));
                Thread.sleep(20);
            }
        } catch (IOException closedByTheServer) {
            // the close came while a pong was being written
        }
        List<RawWebSocketClient.Frame> frames = blind.readUntilEof(); // read only now: what was sent meanwhile
        RawWebSocketClient.Frame close = frames.get(frames.size() - 1);
        assertEquals(1001, close.closeStatus(), frames.toString());
        assertEquals(WebSocketKeepAliveHandler.PING_TIMEOUT, close.closeReason());
        assertEquals(1, counter("wheelbeat.connection.closed", "reason", "heartbeat_timeout"));
        assertEquals(0, serverEventsOf(PongReceivedEvent.class), "no guessed pong passed for an answer");
    }

    @Test
    void aConnectionThatNeverSendsItsHandshakeIsClosedAfterTheReaderIdleTimeout() throws Exception {
        int port = startServer(
                WebSocketKeepAliveHandler.builder()
                        .pingInterval(Duration.ofMillis(100))
                        .pongTimeout(Duration.ofMillis(100)),
                Duration.ofMillis(500));
        long opened = System.nanoTime(); // before the connect: the server's timer cannot start sooner
        Socket socket = socket(port);
        assertEquals(-1, socket.getInputStream().read(), "closed without a byte");
        assertTrue(System.nanoTime() - opened >= MILLISECONDS.toNanos(500));
        assertEquals(1, serverEventsOf(IdleStateEvent.class));
    }

    @Test
    void malformedFramesCloseOnlyTheirConnectionWithTheProtocolsError() throws Exception {
        int port = startServer(WebSocketKeepAliveHandler.builder()
                .pingInterval(Duration.ofMillis(100))
                .pongTimeout(Duration.ofSeconds(1)));
        JdkWebSocketClient bystander = jdkClient(port);
        byte[] unmasked =
                RawWebSocketClient.frame(RawWebSocketClient.TEXT, "hi".getBytes(StandardCharsets.US_ASCII), false);
        assertClosedWith(1002, port, unmasked);
        assertClosedWith(1002, port, RawWebSocketClient.frame(0x3, new byte[0], true)); // reserved opcode
        assertClosedWith(1002, port, RawWebSocketClient.frame(RawWebSocketClient.PING, new byte[126], true)); // > 125
        byte[] notUtf8 = {(byte) 0xC3, 0x28};
        assertClosedWith(1007, port, RawWebSocketClient.frame(RawWebSocketClient.TEXT, notUtf8, true));
        assertClosedWith(1009, port, RawWebSocketClient.header(RawWebSocketClient.BINARY, 1 << 20)); // 64 KiB allowed
        // The server stays up and the bystander kept its connection, its pongs and its echo.
        Thread.sleep(300);
        assertNull(bystander.closed.peek());
        bystander.sendText("unharmed", WAIT_MILLIS);
        assertEquals("unharmed", bystander.texts.poll(WAIT_MILLIS, MILLISECONDS));
        assertTrue(bystander.pings.get() >= 2, "pings: " + bystander.pings.get());
        JdkWebSocketClient newcomer = jdkClient(port);
        newcomer.sendText("newcomer", WAIT_MILLIS);
        assertEquals("newcomer", newcomer.texts.poll(WAIT_MILLIS, MILLISECONDS));
    }

    @Test
    void nettysClientWithTheKeepaliveGetsPongsFromNettysServer() throws Exception {
        int port = startServer(WebSocketKeepAliveHandler.builder().pingInterval(Duration.ofSeconds(1)));
        List<Object> clientEvents = new CopyOnWriteArrayList<>();
        WebSocketKeepAliveHandler.Factory keepAlive = WebSocketKeepAliveHandler.builder()
                .pingInterval(Duration.ofMillis(100))
                .pongTimeout(Duration.ofSeconds(1))
                .build();
        WebSocketClientProtocolConfig config = WebSocketClientProtocolConfig.newBuilder()
                .webSocketUri("ws://127.0.0.1:" + port + WebSocketWire.PATH)
                .dropPongFrames(false)
                .build();
        Channel client = new Bootstrap()
                .group(group)
                .channel(NioSocketChannel.class)
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline()
                                .addLast(
                                        new HttpClientCodec(),
                                        new HttpObjectAggregator(65536),
                                        new WebSocketClientProtocolHandler(config),
                                        keepAlive.newHandler(),
                                        new Echo(clientEvents));
                    }
                })
                .connect("127.0.0.1", port)
                .sync()
                .channel();
        long deadline = System.nanoTime() + MILLISECONDS.toNanos(WAIT_MILLIS);
        while (clientEvents.stream().filter(PongReceivedEvent.class::isInstance).count() < 5
                && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        assertTrue(client.isActive());
        assertTrue(
                clientEvents.stream()
                                .filter(PongReceivedEvent.class::isInstance)
                                .count()
                        >= 5,
                clientEvents.toString());
        client.close().sync();
    }

    private void assertClosedWith(int status, int port, byte[] bytes) throws IOException {
        RawWebSocketClient raw = rawClient(port);
        raw.send(bytes);
        RawWebSocketClient.Frame close = raw.readUntilClosed();
        assertEquals(status, close.closeStatus(), close.closeReason());
    }

    private Socket socket(int port) throws IOException {
        Socket socket = new Socket("127.0.0.1", port);
        socket.setSoTimeout((int) WAIT_MILLIS);
        closeables.add(socket);
        return socket;
    }

    /** A raw client that has completed the opening handshake and then sends nothing unless told. */
    private RawWebSocketClient rawClient(int port) throws IOException {
        RawWebSocketClient raw =
                new RawWebSocketClient(new InetSocketAddress("127.0.0.1", port), WebSocketWire.PATH, (int) WAIT_MILLIS);
        closeables.add(raw);
        return raw;
    }

    private JdkWebSocketClient jdkClient(int port) throws Exception {
        JdkWebSocketClient client =
                new JdkWebSocketClient(URI.create("ws://127.0.0.1:" + port + WebSocketWire.PATH), WAIT_MILLIS);
        closeables.add(client);
        return client;
    }

    /** Echoes text frames, records user events, closes quietly on errors. */
    @ChannelHandler.Sharable
    private static final class Echo extends ChannelInboundHandlerAdapter {
        private final List<Object> events;

        Echo(List<Object> events) {
            this.events = events;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (msg instanceof TextWebSocketFrame text) {
                ctx.writeAndFlush(text);
            } else {
                ReferenceCountUtil.release(msg);
            }
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            events.add(evt);
            ctx.fireUserEventTriggered(evt);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }
}
