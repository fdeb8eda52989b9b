package io.wheelbeat.netty.http2;

import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBufUtil;
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
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpServerUpgradeHandler;
import io.netty.handler.codec.http2.CleartextHttp2ServerUpgradeHandler;
import io.netty.handler.codec.http2.DefaultHttp2DataFrame;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.DefaultHttp2HeadersFrame;
import io.netty.handler.codec.http2.Http2CodecUtil;
import io.netty.handler.codec.http2.Http2FrameCodec;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2HeadersFrame;
import io.netty.handler.codec.http2.Http2MultiplexHandler;
import io.netty.handler.codec.http2.Http2ServerUpgradeCodec;
import io.netty.util.AsciiString;
import io.netty.util.ReferenceCountUtil;
import io.wheelbeat.netty.deadline.ConnectionDeadlineHandler;
import io.wheelbeat.netty.deadline.MaxConnectionAge;
import io.wheelbeat.netty.heartbeat.HeartbeatFailedEvent;
import io.wheelbeat.netty.heartbeat.PingLimits;
import io.wheelbeat.netty.heartbeat.PongReceivedEvent;
import io.wheelbeat.netty.heartbeat.TooManyPingsEvent;
import io.wheelbeat.netty.http2.Http2Wire.Frame;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link Http2KeepAliveHandler} over real TCP on 127.0.0.1, in a Netty h2c server (upgrade and
 * prior knowledge) with {@code Http2MultiplexHandler}, against the JDK's own
 * {@code java.net.http.HttpClient} and raw sockets that write HTTP/2 frames byte by byte. Time
 * bounds are generous waits, never the verdict.
 */
class Http2KeepAliveSocketTest {

    private static final int WAIT_MILLIS = 20_000;

    private final EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final List<Object> serverEvents = new CopyOnWriteArrayList<>();
    private final AtomicInteger connections = new AtomicInteger();
    private final List<Socket> sockets = new ArrayList<>();
    private HttpClient jdk;

    @AfterEach
    void shutDown() throws Exception {
        for (Socket socket : sockets) {
            socket.close();
        }
        group.shutdownGracefully(0, 1, SECONDS).sync();
    }

    /** An h2c server answering every request with 200 "ok", the keepalive after the codec. */
    private int startServer(Http2KeepAliveHandler.Builder keepAlive) throws InterruptedException {
        return startServer(keepAlive, null);
    }

    /** As the other {@code startServer}, with {@code deadlines} (if not null) nearest the socket. */
    private int startServer(Http2KeepAliveHandler.Builder keepAlive, ConnectionDeadlineHandler.Builder deadlines)
            throws InterruptedException {
        Http2KeepAliveHandler.Factory handlers = keepAlive.metrics(registry).build();
        ConnectionDeadlineHandler.Factory ages =
                deadlines == null ? null : deadlines.metrics(registry).build();
        Supplier<ChannelHandler[]> http2 = () -> new ChannelHandler[] {
            Http2FrameCodecBuilder.forServer().build(),
            handlers.newHandler(),
            new Http2MultiplexHandler(new ChannelInitializer<Channel>() {
                @Override
                protected void initChannel(Channel stream) {
                    stream.pipeline().addLast(new Ok());
                }
            }),
            new EventRecorder()
        };
        Channel server = new ServerBootstrap()
                .group(group)
                .channel(NioServerSocketChannel.class)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        connections.incrementAndGet();
                        if (ages != null) {
                            ch.pipeline().addLast(ages.newHandler());
                        }
                        HttpServerCodec http1 = new HttpServerCodec();
                        HttpServerUpgradeHandler upgrade = new HttpServerUpgradeHandler(
                                http1,
                                protocol ->
                                        AsciiString.contentEquals(Http2CodecUtil.HTTP_UPGRADE_PROTOCOL_NAME, protocol)
                                                ? upgradeCodec(http2.get())
                                                : null);
                        ch.pipeline()
                                .addLast(new CleartextHttp2ServerUpgradeHandler(
                                        http1, upgrade, new ChannelInitializer<Channel>() {
                                            @Override
                                            protected void initChannel(Channel prior) {
                                                prior.pipeline().addLast(http2.get());
                                            }
                                        }));
                    }
                })
                .bind(new InetSocketAddress("127.0.0.1", 0))
                .sync()
                .channel();
        return ((InetSocketAddress) server.localAddress()).getPort();
    }

    private static Http2ServerUpgradeCodec upgradeCodec(ChannelHandler[] http2) {
        return new Http2ServerUpgradeCodec(
                (Http2FrameCodec) http2[0], java.util.Arrays.copyOfRange(http2, 1, http2.length));
    }

    /** Answers a request (HTTP/2 HEADERS, or the HTTP/1.1 request that upgraded) with 200 "ok". */
    private static final class Ok extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            boolean request =
                    msg instanceof FullHttpRequest || msg instanceof Http2HeadersFrame headers && headers.isEndStream();
            ReferenceCountUtil.release(msg);
            if (request) {
                ctx.write(new DefaultHttp2HeadersFrame(new DefaultHttp2Headers().status("200")));
                ctx.writeAndFlush(new DefaultHttp2DataFrame(ByteBufUtil.writeAscii(ctx.alloc(), "ok"), true));
            }
        }
    }

    private final class EventRecorder extends ChannelInboundHandlerAdapter {
        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            serverEvents.add(evt);
            ctx.fireUserEventTriggered(evt);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            serverEvents.add(cause); // the codec's errors on bad input: expected here, not logged
        }
    }

    private double closed(String reason) {
        return registry.get("wheelbeat.connection.closed")
                .tag("reason", reason)
                .counter()
                .count();
    }

    private HttpClient jdkClient() {
        jdk = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_2)
                .connectTimeout(Duration.ofMillis(WAIT_MILLIS))
                .build();
        return jdk;
    }

    private static HttpResponse<String> get(HttpClient client, int port) throws Exception {
        HttpResponse<String> response = client.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/"))
                        .timeout(Duration.ofMillis(WAIT_MILLIS))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, response.statusCode());
        assertEquals("ok", response.body());
        return response;
    }

    /** A raw socket that has sent the client preface (prior knowledge). */
    private Socket rawHttp2(int port) throws IOException {
        Socket socket = new Socket("127.0.0.1", port);
        socket.setSoTimeout(WAIT_MILLIS);
        sockets.add(socket);
        socket.getOutputStream().write(Http2Wire.clientPreface());
        return socket;
    }

    /** Reads frames until the server closes the connection. */
    private static List<Frame> readToClose(Socket socket) throws IOException {
        List<Frame> frames = new ArrayList<>();
        InputStream in = socket.getInputStream();
        try {
            Frame frame;
            while ((frame = Http2Wire.read(in)) != null) {
                frames.add(frame);
            }
        } catch (java.net.SocketException reset) {
            // a close with unread input becomes a reset here; the frames before it were read
        }
        return frames;
    }

    private static Frame goAway(List<Frame> frames) {
        return frames.stream()
                .filter(f -> f.type() == Http2Wire.GOAWAY)
                .findFirst()
                .orElseThrow(() -> new AssertionError("no GOAWAY in " + frames));
    }

    /**
     * The JDK's client (17 here) fails the requests in flight on any GOAWAY, the graceful one with
     * the largest stream id included, so this test ages connections out between requests; that
     * streams in flight finish under the drain is shown with Netty's codec in
     * {@code Http2KeepAliveHandlerTest.MaxAge}.
     */
    @Test
    void theJdkClientIsDrainedAtMaxConnectionAgeAndServedOnANewConnection() throws Exception {
        int port = startServer(
                Http2KeepAliveHandler.builder(),
                ConnectionDeadlineHandler.builder()
                        .maxConnectionAge(MaxConnectionAge.of(Duration.ofMillis(200))
                                .withJitter(0)
                                .withGrace(Duration.ofSeconds(5))));
        HttpClient client = jdkClient();
        for (int i = 0; i < 3; i++) {
            get(client, port);
            Thread.sleep(700); // past the age: GOAWAY, the drain PING and its ACK, second GOAWAY, close
        }
        get(client, port);
        // At least: a stalled machine may let a request in before an age timer fires.
        assertTrue(closed("max_connection_age") >= 2, "aged out: " + closed("max_connection_age"));
        assertTrue(connections.get() >= 3, "connections: " + connections.get());
        assertEquals(
                closed("max_connection_age"),
                serverEvents.stream()
                        .filter(io.wheelbeat.netty.deadline.MaxConnectionAgeEvent.class::isInstance)
                        .count());
    }

    @Test
    void aPeerThatPingsTooOftenGetsGoAwayEnhanceYourCalmWhileTheJdkClientIsServed() throws Exception {
        int port = startServer(Http2KeepAliveHandler.builder()
                .pingLimits(PingLimits.of(Duration.ofSeconds(1), 3))
                .permitKeepAliveWithoutCalls(true));
        HttpClient client = jdkClient();
        get(client, port);
        Socket pinger = rawHttp2(port);
        pinger.getOutputStream()
                .write(Http2Wire.concat(
                        Http2Wire.ping(1, false),
                        Http2Wire.ping(2, false),
                        Http2Wire.ping(3, false),
                        Http2Wire.ping(4, false)));

        Frame goAway = goAway(readToClose(pinger));
        assertEquals(Http2Wire.ENHANCE_YOUR_CALM, goAway.goAwayErrorCode());
        assertEquals("too_many_pings", goAway.goAwayDebugData());
        assertEquals(1, closed("too_many_pings"));
        assertTrue(serverEvents.stream().anyMatch(TooManyPingsEvent.class::isInstance));
        get(client, port);
    }

    @Test
    void pingsWithABadLengthCloseThatConnectionWithFrameSizeErrorAndNothingElse() throws Exception {
        int port = startServer(Http2KeepAliveHandler.builder().pingLimits(PingLimits.of(Duration.ofSeconds(1), 3)));
        HttpClient client = jdkClient();
        get(client, port);
        for (int length : new int[] {7, 9, 0}) {
            Socket bad = rawHttp2(port);
            bad.getOutputStream().write(Http2Wire.frame(Http2Wire.PING, 0, 0, new byte[length]));
            Frame goAway = goAway(readToClose(bad));
            assertEquals(Http2Wire.FRAME_SIZE_ERROR, goAway.goAwayErrorCode(), "length " + length);
        }
        get(client, port);
        Socket good = rawHttp2(port);
        good.getOutputStream().write(Http2Wire.ping(42, false));
        Frame ack;
        do {
            ack = Http2Wire.read(good.getInputStream());
        } while (ack != null && ack.type() != Http2Wire.PING);
        assertEquals(42, ack.pingContent(), "a well-formed PING on a new connection is still acknowledged");
        assertTrue(ack.has(Http2Wire.FLAG_ACK));
        assertNull(serverEvents.stream()
                .filter(TooManyPingsEvent.class::isInstance)
                .findAny()
                .orElse(null));
    }

    private long count(Class<?> type) {
        return serverEvents.stream().filter(type::isInstance).count();
    }

    @Test
    void theJdkClientAcknowledgesKeepAlivePingsAndItsConnectionStays() throws Exception {
        int port = startServer(Http2KeepAliveHandler.builder()
                .keepAliveTime(Duration.ofMillis(100))
                .keepAliveTimeout(Duration.ofSeconds(5))
                .keepAliveWithoutCalls(true));
        HttpClient client = jdkClient();
        get(client, port);
        long deadline = System.nanoTime() + MILLISECONDS.toNanos(WAIT_MILLIS);
        while (count(PongReceivedEvent.class) < 10 && System.nanoTime() - deadline < 0) {
            Thread.sleep(50);
        }
        get(client, port);
        assertTrue(count(PongReceivedEvent.class) >= 10, "acknowledged pings: " + count(PongReceivedEvent.class));
        assertEquals(1, connections.get(), "one connection all along");
        assertEquals(0, count(HeartbeatFailedEvent.class));
        assertEquals(0, closed("heartbeat_timeout"));
    }

    @Test
    void aPeerThatStopsAcknowledgingIsSentGoAwayPingTimeoutAndClosedNeverBeforeTheTimeout() throws Exception {
        int port = startServer(Http2KeepAliveHandler.builder()
                .keepAliveTime(Duration.ofMillis(100))
                .keepAliveTimeout(Duration.ofMillis(300))
                .keepAliveWithoutCalls(true));
        // The only connection until it closes: a client's connection beside it may miss a 300 ms ACK on a busy machine.
        long opened = System.nanoTime();
        Socket silent = rawHttp2(port);

        List<Frame> frames = readToClose(silent);
        long openMillis = MILLISECONDS.convert(System.nanoTime() - opened, java.util.concurrent.TimeUnit.NANOSECONDS);
        assertTrue(openMillis >= 400, "closed after " + openMillis + " ms, before keepalive + timeout");
        assertTrue(
                frames.stream().anyMatch(f -> f.type() == Http2Wire.PING && !f.has(Http2Wire.FLAG_ACK)),
                frames.toString());
        Frame goAway = goAway(frames);
        assertEquals(Http2Wire.NO_ERROR, goAway.goAwayErrorCode());
        assertEquals("ping_timeout", goAway.goAwayDebugData());
        assertEquals(1, closed("heartbeat_timeout"));
        assertEquals(1, count(HeartbeatFailedEvent.class));
        get(jdkClient(), port);
    }

    @Test
    void nettysClientWithTheKeepAliveIsAcknowledgedByARealHttp2Server() throws Exception {
        int port = startServer(Http2KeepAliveHandler.builder().maxConnectionIdle(Duration.ofHours(1)));
        List<Object> clientEvents = new CopyOnWriteArrayList<>();
        SimpleMeterRegistry clientRegistry = new SimpleMeterRegistry();
        Http2KeepAliveHandler.Factory keepAlive = Http2KeepAliveHandler.builder()
                .keepAliveTime(Duration.ofMillis(100))
                .keepAliveTimeout(Duration.ofSeconds(5))
                .keepAliveWithoutCalls(true)
                .keepAliveJitter(0.2)
                .metrics(clientRegistry)
                .build();
        Channel client = io.wheelbeat.netty.RecordingClient.connect(
                group, port, clientEvents, Http2FrameCodecBuilder.forClient().build(), keepAlive.newHandler());
        long deadline = System.nanoTime() + MILLISECONDS.toNanos(WAIT_MILLIS);
        while (clientEvents.stream().filter(PongReceivedEvent.class::isInstance).count() < 10
                && System.nanoTime() - deadline < 0) {
            Thread.sleep(50);
        }
        assertTrue(client.isActive());
        assertTrue(
                clientEvents.stream()
                                .filter(PongReceivedEvent.class::isInstance)
                                .count()
                        >= 10,
                clientEvents.toString());
        assertTrue(clientRegistry.get("wheelbeat.heartbeat.rtt").timer().count() >= 10);
        assertEquals(
                0,
                clientEvents.stream()
                        .filter(HeartbeatFailedEvent.class::isInstance)
                        .count());
        client.close().sync();
    }
}
