package io.wheelbeat.netty.mqtt;

import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.mqtt.MqttConnectReturnCode;
import io.netty.handler.codec.mqtt.MqttDecoder;
import io.netty.handler.codec.mqtt.MqttEncoder;
import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageBuilders;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.util.ReferenceCountUtil;
import io.wheelbeat.netty.deadline.ConnectionDeadlineHandler;
import io.wheelbeat.netty.heartbeat.PingLimits;
import io.wheelbeat.netty.heartbeat.TooManyPingsEvent;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.eclipse.paho.client.mqttv3.MqttClient;
import org.eclipse.paho.client.mqttv3.MqttConnectOptions;
import org.eclipse.paho.client.mqttv3.persist.MemoryPersistence;
import org.eclipse.paho.mqttv5.client.MqttConnectionOptions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link MqttServerKeepAliveHandler} over real TCP on 127.0.0.1, against Eclipse Paho (MQTT 3.1.1
 * and 5) and raw sockets that speak MQTT byte by byte. Time bounds are generous waits, never the
 * verdict, except where the protocol gives a floor: a silent client cannot be closed before 1.5
 * times its keep-alive has passed since it sent CONNECT, whatever the machine's speed.
 */
class MqttKeepAliveSocketTest {

    private static final int WAIT_MILLIS = 20_000;
    private static final byte[] PINGREQ = {(byte) 0xC0, 0};
    private static final byte[] PINGRESP = {(byte) 0xD0, 0};

    private final EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final List<Object> serverEvents = new CopyOnWriteArrayList<>();
    private final List<AutoCloseable> clients = new CopyOnWriteArrayList<>();
    /** The server's accepted channels, in order. */
    private final List<Channel> accepted = new CopyOnWriteArrayList<>();

    private volatile int serverKeepAliveToldToPaho5;

    @AfterEach
    void shutDown() throws Exception {
        for (AutoCloseable client : clients) {
            client.close();
        }
        group.shutdownGracefully(0, 1, SECONDS).sync();
    }

    /**
     * A minimal broker: accepts every CONNECT, closes on DISCONNECT, drops everything else; 10 s for the
     * CONNECT, as docs/keepalive.md builds it.
     */
    private int startServer(MqttServerKeepAliveHandler.Builder keepAlive) throws InterruptedException {
        MqttServerKeepAliveHandler.Factory handlers =
                keepAlive.metrics(registry).build();
        ConnectionDeadlineHandler.Factory connectTimeout = ConnectionDeadlineHandler.builder()
                .firstMessageTimeout(Duration.ofSeconds(10))
                .metrics(registry)
                .build();
        Channel server = new ServerBootstrap()
                .group(group)
                .channel(NioServerSocketChannel.class)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        accepted.add(ch);
                        ch.pipeline()
                                .addLast(
                                        new MqttDecoder(),
                                        MqttEncoder.INSTANCE,
                                        connectTimeout.newHandler(),
                                        handlers.newHandler(),
                                        new Broker());
                    }
                })
                .bind(new InetSocketAddress("127.0.0.1", 0))
                .sync()
                .channel();
        return ((InetSocketAddress) server.localAddress()).getPort();
    }

    private final class Broker extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            MqttMessageType type = ((MqttMessage) msg).fixedHeader().messageType();
            ReferenceCountUtil.release(msg);
            if (type == MqttMessageType.CONNECT) {
                ctx.writeAndFlush(MqttMessageBuilders.connAck()
                        .returnCode(MqttConnectReturnCode.CONNECTION_ACCEPTED)
                        .build());
            } else if (type == MqttMessageType.DISCONNECT) {
                ctx.close();
            }
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            serverEvents.add(evt);
        }
    }

    private double closed(String reason) {
        return registry.get("wheelbeat.connection.closed")
                .tag("reason", reason)
                .counter()
                .count();
    }

    private double pingsAnswered() {
        return registry.get("wheelbeat.heartbeat.pings.answered").counter().count();
    }

    private MqttClient paho3(int port, int keepAliveSeconds) throws Exception {
        MqttClient client =
                new MqttClient("tcp://127.0.0.1:" + port, "paho3-" + System.nanoTime(), new MemoryPersistence());
        MqttConnectOptions options = new MqttConnectOptions();
        options.setKeepAliveInterval(keepAliveSeconds);
        options.setCleanSession(true);
        options.setAutomaticReconnect(false);
        client.connect(options);
        clients.add(() -> {
            if (client.isConnected()) {
                client.disconnectForcibly(0, 1000);
            }
            client.close();
        });
        return client;
    }

    private org.eclipse.paho.mqttv5.client.MqttClient paho5(int port, int keepAliveSeconds) throws Exception {
        org.eclipse.paho.mqttv5.client.MqttClient client = new org.eclipse.paho.mqttv5.client.MqttClient(
                "tcp://127.0.0.1:" + port,
                "paho5-" + System.nanoTime(),
                new org.eclipse.paho.mqttv5.client.persist.MemoryPersistence());
        MqttConnectionOptions options = new MqttConnectionOptions();
        options.setKeepAliveInterval(keepAliveSeconds);
        options.setCleanStart(true);
        options.setAutomaticReconnect(false);
        Integer serverKeepAlive =
                client.connectWithResult(options).getResponseProperties().getServerKeepAlive();
        serverKeepAliveToldToPaho5 = serverKeepAlive == null ? -1 : serverKeepAlive;
        clients.add(() -> {
            if (client.isConnected()) {
                client.disconnectForcibly(0, 1000, false);
            }
            client.close();
        });
        return client;
    }

    /** A raw socket; closed after the test. */
    private Socket rawSocket(int port) throws IOException {
        Socket socket = new Socket("127.0.0.1", port);
        socket.setSoTimeout(WAIT_MILLIS);
        clients.add(socket);
        return socket;
    }

    /** An MQTT 3.1.1 CONNECT with a clean session and {@code keepAliveSeconds}. */
    private static byte[] connect(int keepAliveSeconds) {
        byte[] id = "raw".getBytes(StandardCharsets.US_ASCII);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(0x10);
        out.write(10 + 2 + id.length);
        out.writeBytes(new byte[] {0, 4, 'M', 'Q', 'T', 'T', 4, 0x02});
        out.write(keepAliveSeconds >> 8);
        out.write(keepAliveSeconds & 0xFF);
        out.write(0);
        out.write(id.length);
        out.writeBytes(id);
        return out.toByteArray();
    }

    private static byte[] readExactly(InputStream in, int n) throws IOException {
        byte[] bytes = in.readNBytes(n);
        assertEquals(n, bytes.length, "the server closed early");
        return bytes;
    }

    /** Reads until the server closes the connection; returns the bytes read meanwhile. */
    private static byte[] readToEnd(Socket socket) throws IOException {
        return socket.getInputStream().readAllBytes();
    }

    @Test
    void pahoClientsAreKeptAliveForManyKeepAlivePeriods() throws Exception {
        MqttClient v311 = paho3(startServer(MqttServerKeepAliveHandler.builder()), 1);
        // Asks for 1 s; the server's minimum is 2 s, which it tells the client as Server Keep Alive.
        // (Paho 5 schedules its first PINGREQ by its own value even when told a shorter one, so a
        // lower server value would be a test of Paho's bug rather than of this handler.)
        org.eclipse.paho.mqttv5.client.MqttClient v5 =
                paho5(startServer(MqttServerKeepAliveHandler.builder().minKeepAlive(2)), 1);

        Thread.sleep(4_000); // four periods of the 1 s keep-alive, two of the 2 s one

        assertTrue(v311.isConnected(), "MQTT 3.1.1 client; server events " + serverEvents);
        assertTrue(v5.isConnected(), "MQTT 5 client; server events " + serverEvents);
        assertEquals(2, serverKeepAliveToldToPaho5);
        assertTrue(serverEvents.isEmpty(), serverEvents.toString());
        assertTrue(pingsAnswered() >= 4, "PINGREQs answered: " + pingsAnswered());
        assertEquals(0, closed("reader_idle"));
    }

    @Test
    void aClientThatFallsSilentAfterConnectIsClosedAtOneAndAHalfTimesItsKeepAliveNeverBefore() throws Exception {
        int port = startServer(MqttServerKeepAliveHandler.builder());
        Socket silent = rawSocket(port);
        long sent = System.nanoTime();
        silent.getOutputStream().write(connect(1));
        assertArrayEquals(new byte[] {0x20, 2, 0, 0}, readExactly(silent.getInputStream(), 4));

        assertEquals(0, readToEnd(silent).length, "nothing after CONNACK, then the close");
        long closedAfterMillis = (System.nanoTime() - sent) / 1_000_000;

        assertTrue(closedAfterMillis >= 1_500, "closed after " + closedAfterMillis + " ms");
        assertEquals(1, closed("reader_idle"));
        assertTrue(
                serverEvents.stream()
                        .anyMatch(e -> e instanceof MqttKeepAliveTimeoutEvent k && k.keepAliveSeconds() == 1),
                serverEvents.toString());
    }

    /** The bytes waiting in {@code channel}'s outbound buffer, flushed or not, read on its event loop. */
    private static long pendingOutboundBytes(Channel channel) throws Exception {
        return channel.eventLoop()
                .submit(() -> {
                    io.netty.channel.ChannelOutboundBuffer buffer =
                            channel.unsafe().outboundBuffer();
                    return buffer == null ? 0L : buffer.totalPendingWriteBytes();
                })
                .get();
    }

    /**
     * The flooder against a broker built with {@code keepAlive}: a raw socket sends CONNECT,
     * then PINGREQs as fast as it can from another thread, and never reads. Meanwhile a Paho
     * client connects and a raw client that reads pings and is answered. Watches the flooder's
     * channel for {@code watchMillis} or until it closes, failing at once if its pending outbound
     * bytes pass {@code maxPendingBytes}; returns whether the server closed it.
     */
    private boolean floodWithoutReading(
            MqttServerKeepAliveHandler.Builder keepAlive, long maxPendingBytes, long watchMillis) throws Exception {
        int port = startServer(keepAlive);
        // A small receive window, as a hostile client may choose, so that the socket buffers fill within seconds.
        Socket flooder = new Socket();
        flooder.setReceiveBufferSize(4096);
        flooder.connect(new InetSocketAddress("127.0.0.1", port));
        flooder.setSoTimeout(WAIT_MILLIS);
        clients.add(flooder);
        flooder.getOutputStream().write(connect(30));
        readExactly(flooder.getInputStream(), 4);
        Channel flooderChannel = accepted.get(0);
        byte[] chunk = new byte[64 * 1024];
        for (int i = 0; i < chunk.length; i += 2) {
            System.arraycopy(PINGREQ, 0, chunk, i, 2);
        }
        Thread writer = new Thread(
                () -> {
                    try {
                        while (!flooder.isClosed()) {
                            flooder.getOutputStream().write(chunk);
                        }
                    } catch (IOException closed) {
                        // the server closed it, or the test did
                    }
                },
                "pingreq-flooder");
        writer.start();
        try {
            MqttClient paho = paho3(port, 30); // the documented broker allows 10 to 600 s
            Socket wellBehaved = rawSocket(port);
            wellBehaved.getOutputStream().write(connect(30));
            readExactly(wellBehaved.getInputStream(), 4);
            long maxPending = 0;
            long deadline = System.nanoTime() + MILLISECONDS.toNanos(watchMillis);
            while (System.nanoTime() < deadline && flooderChannel.isActive()) {
                long pending = pendingOutboundBytes(flooderChannel);
                maxPending = Math.max(maxPending, pending);
                assertTrue(pending <= maxPendingBytes, "the flooder's pending outbound bytes: " + pending);
                wellBehaved.getOutputStream().write(PINGREQ);
                assertArrayEquals(PINGRESP, readExactly(wellBehaved.getInputStream(), 2), "a reading client is served");
                Thread.sleep(50);
            }
            assertTrue(paho.isConnected(), "Paho stays connected; server events " + serverEvents);
            assertTrue(accepted.stream().skip(1).allMatch(Channel::isActive), "only the flooder may be closed");
            System.out.printf(
                    "flooder: max pending outbound %d bytes, %.0f PINGREQs answered in all, closed by the "
                            + "server: %s%n",
                    maxPending, pingsAnswered(), !flooderChannel.isActive());
            return !flooderChannel.isActive();
        } finally {
            flooder.close();
            writer.join(WAIT_MILLIS);
        }
    }

    @Test
    void theDocumentedBrokerClosesAPingreqFlooderThatNeverReadsAsTooManyPingsAndServesTheOthers() throws Exception {
        // Exactly as docs/keepalive.md builds it (the registry comes from startServer).
        MqttServerKeepAliveHandler.Builder keepAlive =
                MqttServerKeepAliveHandler.builder().minKeepAlive(10).maxKeepAlive(600);
        assertTrue(floodWithoutReading(keepAlive, 1 << 20, 10_000), "the flooder is closed");
        assertEquals(1, closed("too_many_pings"));
        assertTrue(serverEvents.stream().anyMatch(TooManyPingsEvent.class::isInstance));
    }

    @Test
    void withEnforcementOffAPingreqFlooderThatNeverReadsCostsAboutTheHighWaterMarkAndTheOthersAreServed()
            throws Exception {
        MqttServerKeepAliveHandler.Builder keepAlive =
                MqttServerKeepAliveHandler.builder().pingLimits(PingLimits.OFF);
        // Netty's default high water mark is 64 KiB; 1 MiB leaves room for what one write adds past it.
        // The bound is the pending outbound bytes, checked every 50 ms by floodWithoutReading; how
        // many answers fit first depends on the kernel's loopback buffers, not on us.
        assertTrue(!floodWithoutReading(keepAlive, 1 << 20, 3_000), "not closed: it is within the rules");
    }

    @Test
    void aPingreqFloodFromAClientThatReadsIsAnsweredWithoutEnforcement() throws Exception {
        int port = startServer(MqttServerKeepAliveHandler.builder().pingLimits(PingLimits.OFF));
        Socket flooder = rawSocket(port);
        int pings = 50_000;
        byte[] flood = new byte[pings * 2];
        for (int i = 0; i < flood.length; i += 2) {
            System.arraycopy(PINGREQ, 0, flood, i, 2);
        }
        flooder.getOutputStream().write(connect(30));
        readExactly(flooder.getInputStream(), 4);
        java.util.concurrent.atomic.AtomicLong answersRead = new java.util.concurrent.atomic.AtomicLong();
        java.util.concurrent.atomic.AtomicBoolean allPingresp = new java.util.concurrent.atomic.AtomicBoolean(true);
        Thread reader = new Thread(() -> {
            try {
                InputStream in = flooder.getInputStream();
                for (int first; (first = in.read()) >= 0; ) {
                    if (first != (PINGRESP[0] & 0xFF) || in.read() != PINGRESP[1]) {
                        allPingresp.set(false);
                    }
                    answersRead.incrementAndGet();
                }
            } catch (IOException closed) {
                // the test closes the socket
            }
        });
        reader.start();
        flooder.getOutputStream().write(flood);
        // Done when every answer the server counted has been read and no more come for 500 ms.
        long deadline = System.nanoTime() + MILLISECONDS.toNanos(WAIT_MILLIS);
        long seen = -1;
        while (System.nanoTime() < deadline && (answersRead.get() != pingsAnswered() || answersRead.get() != seen)) {
            seen = answersRead.get();
            Thread.sleep(500);
        }
        assertTrue(allPingresp.get(), "every answer a PINGRESP");
        assertTrue(answersRead.get() >= 1, "answered");
        // Each PINGREQ is answered, except that those which came while the channel was over its
        // high water mark share one PINGRESP.
        assertEquals(answersRead.get(), pingsAnswered());
        assertTrue(answersRead.get() <= pings);
        assertTrue(accepted.get(0).isActive());
        flooder.close();
        reader.join(WAIT_MILLIS);
    }

    @Test
    void aPingreqFloodIsClosedForTooManyPingsWhileAWellBehavedClientStays() throws Exception {
        int port =
                startServer(MqttServerKeepAliveHandler.builder().pingLimits(PingLimits.of(Duration.ofMillis(500), 3)));
        MqttClient wellBehaved = paho3(port, 1);
        Socket flooder = rawSocket(port);
        flooder.getOutputStream().write(connect(30));
        readExactly(flooder.getInputStream(), 4);
        byte[] flood = new byte[2 * 1000];
        for (int i = 0; i < flood.length; i += 2) {
            System.arraycopy(PINGREQ, 0, flood, i, 2);
        }
        try {
            flooder.getOutputStream().write(flood);
        } catch (IOException closedMeanwhile) {
            // the server may close before the whole flood is written
        }

        byte[] answered = readToEnd(flooder);
        assertTrue(answered.length <= 2 * 3, "at most the pings before the third strike: " + answered.length);
        assertEquals(1, closed("too_many_pings"));
        assertTrue(serverEvents.stream().anyMatch(TooManyPingsEvent.class::isInstance));
        Thread.sleep(2_000); // two of the well-behaved client's keep-alive periods
        assertTrue(wellBehaved.isConnected());
    }

    @Test
    void badInputClosesOnlyThatConnectionWithTheProtocolsError() throws Exception {
        int port =
                startServer(MqttServerKeepAliveHandler.builder().minKeepAlive(5).maxKeepAlive(300));
        MqttClient bystander = paho3(port, 5);

        Socket tooLong = rawSocket(port);
        tooLong.getOutputStream().write(connect(301));
        assertArrayEquals(new byte[] {0x20, 2, 0, 2}, readToEnd(tooLong), "CONNACK identifier rejected, then close");

        Socket tooShort = rawSocket(port);
        tooShort.getOutputStream().write(connect(1));
        assertArrayEquals(new byte[] {0x20, 2, 0, 2}, readToEnd(tooShort));

        Socket pingFirst = rawSocket(port);
        pingFirst.getOutputStream().write(PINGREQ);
        assertEquals(0, readToEnd(pingFirst).length, "closed without an answer");

        assertEquals(2, closed("keepalive_out_of_range"));
        assertEquals(1, closed("protocol_error"));
        assertTrue(bystander.isConnected());
        MqttClient newcomer = paho3(port, 5);
        assertTrue(newcomer.isConnected(), "the server still takes connections");
    }

    /** Netty's MQTT client with {@link MqttClientKeepAliveHandler}, CONNECT sent with {@code keepAliveSeconds}. */
    private Channel nettyClient(
            int port, int keepAliveSeconds, MqttClientKeepAliveHandler.Builder keepAlive, List<Object> events)
            throws InterruptedException {
        MqttClientKeepAliveHandler.Factory handlers = keepAlive.build();
        Channel client = io.wheelbeat.netty.RecordingClient.connect(
                group, port, events, new MqttDecoder(), MqttEncoder.INSTANCE, handlers.newHandler());
        client.writeAndFlush(MqttMessageBuilders.connect()
                        .clientId("netty-" + System.nanoTime())
                        .protocolVersion(io.netty.handler.codec.mqtt.MqttVersion.MQTT_3_1_1)
                        .cleanSession(true)
                        .keepAlive(keepAliveSeconds)
                        .build())
                .sync();
        clients.add(() -> client.close().sync());
        return client;
    }

    private static long count(List<Object> events, Class<?> type) {
        return events.stream().filter(type::isInstance).count();
    }

    @Test
    void nettysClientWithTheClientKeepAliveIsKeptAliveByABrokerForManyKeepAlivePeriods() throws Exception {
        int port = startServer(MqttServerKeepAliveHandler.builder());
        List<Object> clientEvents = new CopyOnWriteArrayList<>();
        SimpleMeterRegistry clientRegistry = new SimpleMeterRegistry();
        Channel client =
                nettyClient(port, 1, MqttClientKeepAliveHandler.builder().metrics(clientRegistry), clientEvents);

        long deadline = System.nanoTime() + MILLISECONDS.toNanos(WAIT_MILLIS);
        while (count(clientEvents, io.wheelbeat.netty.heartbeat.PongReceivedEvent.class) < 3
                && System.nanoTime() - deadline < 0) {
            Thread.sleep(100);
        }
        assertTrue(client.isActive(), "client events " + clientEvents + ", server events " + serverEvents);
        assertTrue(
                count(clientEvents, io.wheelbeat.netty.heartbeat.PongReceivedEvent.class) >= 3,
                clientEvents.toString());
        assertEquals(0, count(clientEvents, io.wheelbeat.netty.heartbeat.HeartbeatFailedEvent.class));
        assertTrue(
                serverEvents.isEmpty(), "the broker saw a control packet within 1.5 x 1 s each time: " + serverEvents);
        assertTrue(pingsAnswered() >= 3, "PINGREQs answered by the broker: " + pingsAnswered());
        assertTrue(clientRegistry.get("wheelbeat.heartbeat.rtt").timer().count() >= 3);
    }

    @Test
    void aBrokerThatStopsAnsweringPingreqIsLeftByTheClientAfterThePingrespTimeoutNeverBefore() throws Exception {
        try (java.net.ServerSocket deaf = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            deaf.setSoTimeout(WAIT_MILLIS);
            List<Object> clientEvents = new CopyOnWriteArrayList<>();
            long connecting = System.nanoTime();
            Channel client = nettyClient(
                    deaf.getLocalPort(),
                    1,
                    MqttClientKeepAliveHandler.builder().pingRespTimeout(Duration.ofMillis(500)),
                    clientEvents);
            try (Socket broker = deaf.accept()) {
                broker.setSoTimeout(WAIT_MILLIS);
                InputStream in = broker.getInputStream();
                byte[] connectHeader = readExactly(in, 2); // CONNECT, short enough for one length byte
                readExactly(in, connectHeader[1] & 0xFF);
                broker.getOutputStream().write(new byte[] {0x20, 2, 0, 0}); // CONNACK accepted
                byte[] pingreq = readExactly(in, 2);
                assertArrayEquals(PINGREQ, pingreq, "the client's PINGREQ after 1 s of silence");
                assertEquals(-1, in.read(), "the client closes the connection");
            }
            long closedMillis =
                    MILLISECONDS.convert(System.nanoTime() - connecting, java.util.concurrent.TimeUnit.NANOSECONDS);
            client.closeFuture().await(WAIT_MILLIS);
            assertTrue(closedMillis >= 1_500, "closed after " + closedMillis + " ms: before keep-alive + timeout");
            assertEquals(
                    1,
                    count(clientEvents, io.wheelbeat.netty.heartbeat.HeartbeatFailedEvent.class),
                    clientEvents.toString());
            assertEquals(0, count(clientEvents, io.wheelbeat.netty.heartbeat.PongReceivedEvent.class));
        }
    }
}
