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
import io.netty.util.ReferenceCountUtil;
import io.wheelbeat.netty.heartbeat.HeartbeatFailedEvent;
import io.wheelbeat.netty.heartbeat.PongReceivedEvent;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicInteger;
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
    private static final int PING = 0x9;
    private static final int CLOSE = 0x8;

    private final EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final List<Object> serverEvents = new CopyOnWriteArrayList<>();
    private final List<Socket> sockets = new ArrayList<>();
    private final List<WebSocket> webSockets = new ArrayList<>();

    @AfterEach
    void shutDown() throws Exception {
        for (WebSocket ws : webSockets) {
            ws.abort();
        }
        for (Socket socket : sockets) {
            socket.close();
        }
        group.shutdownGracefully(0, 1, SECONDS).sync();
    }

    /** An echo server for text frames at ws://127.0.0.1:port/ws with the keepalive; returns the port. */
    private int startServer(WebSocketKeepAliveHandler.Builder keepAlive) throws InterruptedException {
        WebSocketKeepAliveHandler.Factory handlers = keepAlive.metrics(registry).build();
        Channel server = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(new HttpServerCodec(), new HttpObjectAggregator(65536),
                                new WebSocketServerProtocolHandler(WebSocketWire.serverConfig()),
                                handlers.newHandler(), new Echo(serverEvents));
                    }
                }).bind(new InetSocketAddress("127.0.0.1", 0)).sync().channel();
        return ((InetSocketAddress) server.localAddress()).getPort();
    }

    private double counter(String name, String... tags) {
        return registry.find(name).tags(tags).counters().stream().mapToDouble(c -> c.count()).sum();
    }

    private long serverEventsOf(Class<?> type) {
        return serverEvents.stream().filter(type::isInstance).count();
    }

    @Test
    void theJdkClientIsKeptAliveOverManyIntervalsWithoutSendingAnything() throws Exception {
        // Ping after 100 ms of quiet; generous pong timeout and reader idle, so only a dead client fails.
        int port = startServer(WebSocketKeepAliveHandler.builder().pingInterval(100, MILLISECONDS)
                .pongTimeout(1, SECONDS).readerIdleTimeout(3, SECONDS));
        JdkClient client = new JdkClient();
        WebSocket ws = client.connect(port);
        Thread.sleep(3_000); // 30 intervals, three reader-idle timeouts
        assertNull(client.closed.peek(), "the connection stays open");
        assertTrue(client.pings.get() >= 10, "pings the JDK client saw: " + client.pings.get());
        assertTrue(serverEventsOf(PongReceivedEvent.class) >= 10, serverEvents.toString());
        assertEquals(0, serverEventsOf(HeartbeatFailedEvent.class));
        assertEquals(0, serverEventsOf(WebSocketReaderIdleEvent.class));
        assertTrue(registry.get("wheelbeat.heartbeat.rtt").timer().count() >= 10);
        ws.sendText("still here", true).get(WAIT_MILLIS, MILLISECONDS);
        assertEquals("still here", client.texts.poll(WAIT_MILLIS, MILLISECONDS));
    }

    @Test
    void aClientThatStopsAnsweringAfterTheHandshakeIsClosedAfterTheMissedPongsWithACloseFrame() throws Exception {
        int port = startServer(WebSocketKeepAliveHandler.builder().pingInterval(100, MILLISECONDS)
                .pingIntervalJitter(0).pongTimeout(100, MILLISECONDS).maxMissedPongs(3));
        RawClient raw = rawClient(port);
        long upgraded = System.nanoTime();
        List<Frame> frames = raw.readUntilEof();
        long closedAfter = System.nanoTime() - upgraded;
        assertEquals(4, frames.size(), frames.toString());
        for (int i = 0; i < 3; i++) {
            assertEquals(PING, frames.get(i).opcode());
            assertEquals(i + 1, frames.get(i).longPayload(), "ping ids count up");
        }
        assertEquals(CLOSE, frames.get(3).opcode());
        assertEquals(1001, frames.get(3).closeStatus());
        assertEquals(WebSocketKeepAliveHandler.PING_TIMEOUT, frames.get(3).closeReason());
        // The first ping after 100 ms, then three pong timeouts of 100 ms: never sooner.
        assertTrue(closedAfter >= MILLISECONDS.toNanos(400), "closed after " + closedAfter + " ns");
        assertEquals(1, counter("wheelbeat.connection.closed", "reason", "heartbeat_timeout"));
        assertEquals(3, counter("wheelbeat.heartbeat.pongs.missed"));
    }

    @Test
    void aConnectionThatNeverSendsItsHandshakeIsClosedAfterTheReaderIdleTimeout() throws Exception {
        int port = startServer(WebSocketKeepAliveHandler.builder().pingInterval(100, MILLISECONDS)
                .pongTimeout(100, MILLISECONDS).readerIdleTimeout(500, MILLISECONDS));
        Socket socket = socket(port);
        long opened = System.nanoTime();
        assertEquals(-1, socket.getInputStream().read(), "closed without a byte");
        assertTrue(System.nanoTime() - opened >= MILLISECONDS.toNanos(500));
        assertEquals(1, counter("wheelbeat.connection.closed", "reason", "reader_idle"));
    }

    @Test
    void malformedFramesCloseOnlyTheirConnectionWithTheProtocolsError() throws Exception {
        int port = startServer(WebSocketKeepAliveHandler.builder().pingInterval(100, MILLISECONDS)
                .pongTimeout(1, SECONDS));
        JdkClient bystander = new JdkClient();
        WebSocket ws = bystander.connect(port);
        byte[] invalidUtf8 = {(byte) 0xC3, 0x28};
        assertClosedWith(1002, port, RawClient.frame(0x1, "not masked".getBytes(StandardCharsets.US_ASCII), false));
        assertClosedWith(1002, port, RawClient.frame(0x3, new byte[0], true));      // reserved opcode
        assertClosedWith(1002, port, RawClient.frame(PING, new byte[126], true));   // control frame > 125 bytes
        assertClosedWith(1007, port, RawClient.frame(0x1, invalidUtf8, true));     // text that is not UTF-8
        assertClosedWith(1009, port, RawClient.header(0x2, 1 << 20));              // 1 MiB announced, 64 KiB allowed
        // The server stays up and the bystander kept its connection, its pongs and its echo.
        Thread.sleep(300);
        assertNull(bystander.closed.peek());
        ws.sendText("unharmed", true).get(WAIT_MILLIS, MILLISECONDS);
        assertEquals("unharmed", bystander.texts.poll(WAIT_MILLIS, MILLISECONDS));
        assertTrue(bystander.pings.get() >= 2, "pings: " + bystander.pings.get());
        new JdkClient().connect(port).sendText("newcomer", true).get(WAIT_MILLIS, MILLISECONDS);
    }

    @Test
    void nettysClientWithTheKeepaliveGetsPongsFromNettysServer() throws Exception {
        int port = startServer(WebSocketKeepAliveHandler.builder().pingInterval(1, SECONDS));
        List<Object> clientEvents = new CopyOnWriteArrayList<>();
        WebSocketKeepAliveHandler.Factory keepAlive = WebSocketKeepAliveHandler.builder()
                .pingInterval(100, MILLISECONDS).pongTimeout(1, SECONDS).build();
        WebSocketClientProtocolConfig config = WebSocketClientProtocolConfig.newBuilder()
                .webSocketUri("ws://127.0.0.1:" + port + WebSocketWire.PATH).dropPongFrames(false).build();
        Channel client = new Bootstrap().group(group).channel(NioSocketChannel.class)
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(new HttpClientCodec(), new HttpObjectAggregator(65536),
                                new WebSocketClientProtocolHandler(config), keepAlive.newHandler(),
                                new Echo(clientEvents));
                    }
                }).connect("127.0.0.1", port).sync().channel();
        long deadline = System.nanoTime() + MILLISECONDS.toNanos(WAIT_MILLIS);
        while (clientEvents.stream().filter(PongReceivedEvent.class::isInstance).count() < 5
                && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        assertTrue(client.isActive());
        assertTrue(clientEvents.stream().filter(PongReceivedEvent.class::isInstance).count() >= 5,
                clientEvents.toString());
        client.close().sync();
    }

    private void assertClosedWith(int status, int port, byte[] bytes) throws IOException {
        RawClient raw = rawClient(port);
        raw.out.write(bytes);
        raw.out.flush();
        List<Frame> frames = raw.readUntilEof();
        Frame close = frames.stream().filter(f -> f.opcode() == CLOSE).findFirst()
                .orElseThrow(() -> new AssertionError("no close frame: " + frames));
        assertEquals(status, close.closeStatus(), close.closeReason());
    }

    private Socket socket(int port) throws IOException {
        Socket socket = new Socket("127.0.0.1", port);
        socket.setSoTimeout((int) WAIT_MILLIS);
        sockets.add(socket);
        return socket;
    }

    /** A raw socket that has completed the opening handshake and then sends nothing unless told. */
    private RawClient rawClient(int port) throws IOException {
        RawClient raw = new RawClient(socket(port));
        raw.out.write(("GET " + WebSocketWire.PATH + " HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
                + "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                + "Sec-WebSocket-Version: 13\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        raw.out.flush();
        String head = raw.readResponseHead();
        assertTrue(head.startsWith("HTTP/1.1 101"), head);
        return raw;
    }

    /** One frame from the server (never masked). */
    record Frame(int opcode, byte[] payload) {
        long longPayload() {
            assertEquals(8, payload.length);
            return ByteBuffer.wrap(payload).getLong();
        }

        int closeStatus() {
            return (payload[0] & 0xFF) << 8 | payload[1] & 0xFF;
        }

        String closeReason() {
            return new String(payload, 2, payload.length - 2, StandardCharsets.UTF_8);
        }

        @Override
        public String toString() {
            return opcode == CLOSE ? "close(" + closeStatus() + ", " + closeReason() + ")" : "frame(" + opcode + ")";
        }
    }

    /** RFC 6455 by hand: the bytes of a client's frames, and the server's frames read back. */
    private static final class RawClient {
        private static final byte[] MASK = {0x11, 0x22, 0x33, 0x44};
        private final DataInputStream in;
        private final java.io.OutputStream out;

        RawClient(Socket socket) throws IOException {
            this.in = new DataInputStream(socket.getInputStream());
            this.out = socket.getOutputStream();
        }

        /** A final frame of {@code opcode} carrying {@code payload} (under 64 KiB), masked or not. */
        static byte[] frame(int opcode, byte[] payload, boolean masked) {
            ByteArrayOutputStream frame = new ByteArrayOutputStream();
            frame.write(0x80 | opcode);
            int maskBit = masked ? 0x80 : 0;
            if (payload.length < 126) {
                frame.write(maskBit | payload.length);
            } else {
                frame.write(maskBit | 126);
                frame.write(payload.length >>> 8);
                frame.write(payload.length);
            }
            if (masked) {
                frame.writeBytes(MASK);
            }
            for (int i = 0; i < payload.length; i++) {
                frame.write(masked ? payload[i] ^ MASK[i % 4] : payload[i]);
            }
            return frame.toByteArray();
        }

        /** Only the masked header of a final frame announcing {@code length} payload bytes. */
        static byte[] header(int opcode, long length) {
            ByteBuffer header = ByteBuffer.allocate(14);
            header.put((byte) (0x80 | opcode)).put((byte) (0x80 | 127)).putLong(length).put(MASK);
            return header.array();
        }

        String readResponseHead() throws IOException {
            StringBuilder head = new StringBuilder();
            while (head.indexOf("\r\n\r\n") < 0) {
                head.append((char) in.readUnsignedByte());
            }
            return head.toString();
        }

        /** Every frame the server sends until it closes the connection. */
        List<Frame> readUntilEof() throws IOException {
            List<Frame> frames = new ArrayList<>();
            while (true) {
                int first = in.read();
                if (first < 0) {
                    return frames;
                }
                try {
                    int second = in.readUnsignedByte();
                    long length = second & 0x7F;
                    if (length == 126) {
                        length = in.readUnsignedShort();
                    } else if (length == 127) {
                        length = in.readLong();
                    }
                    byte[] payload = new byte[(int) length];
                    in.readFully(payload);
                    frames.add(new Frame(first & 0x0F, payload));
                } catch (EOFException e) {
                    throw new AssertionError("the connection ended inside a frame after " + frames, e);
                }
            }
        }
    }

    /** The JDK's WebSocket client; it answers pings by itself. */
    private final class JdkClient implements WebSocket.Listener {
        final AtomicInteger pings = new AtomicInteger();
        final BlockingQueue<String> texts = new LinkedBlockingQueue<>();
        final BlockingQueue<Integer> closed = new LinkedBlockingQueue<>();
        private final StringBuilder text = new StringBuilder();

        WebSocket connect(int port) throws Exception {
            WebSocket ws = HttpClient.newHttpClient().newWebSocketBuilder()
                    .buildAsync(URI.create("ws://127.0.0.1:" + port + WebSocketWire.PATH), this)
                    .get(WAIT_MILLIS, MILLISECONDS);
            webSockets.add(ws);
            return ws;
        }

        @Override
        public CompletionStage<?> onPing(WebSocket webSocket, ByteBuffer message) {
            pings.incrementAndGet();
            webSocket.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
            text.append(data);
            if (last) {
                texts.add(text.toString());
                text.setLength(0);
            }
            webSocket.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onClose(WebSocket webSocket, int statusCode, String reason) {
            closed.add(statusCode);
            return null;
        }
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
