package io.wheelbeat.integration.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.CallOptions;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.EventExecutor;
import io.wheelbeat.core.ExecutorDrivenWheel;
import io.wheelbeat.integration.LoopbackClient;
import io.wheelbeat.netty.EventLoopWheels;
import io.wheelbeat.netty.loop.WheelIoEventLoopGroup;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The recipes of {@link GrpcRecipes} on a real gRPC-java server, with a real gRPC client and a
 * raw HTTP/2 client on loopback: gRPC's own keepalive closes a client that does not answer pings
 * at keepAliveTime + keepAliveTimeout, its max connection idle ends a connection with no call,
 * and the wheel's read timeout, put in through the channel type, lets calls through and closes
 * connections that have sent nothing for the timeout. gRPC-java also runs unmodified on
 * {@link WheelIoEventLoopGroup}, its keepalive and idle timers on the loops' wheels. Each close is
 * checked to come, never before its timeout, and for its cause, not for how late it comes.
 */
class GrpcIdleTest {

    /** A hang guard only, past the timeout under test: when a close comes is the machine's speed, not a verdict. */
    private static final long CLOSE_WAIT_MILLIS = 30_000;

    private static final long EARLY_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    private static final InetSocketAddress ANY_PORT = new InetSocketAddress("127.0.0.1", 0);

    /** A unary echo of strings, without protobuf. */
    private static final MethodDescriptor<String, String> ECHO = MethodDescriptor.<String, String>newBuilder()
            .setType(MethodDescriptor.MethodType.UNARY)
            .setFullMethodName("wheelbeat.Echo/Echo")
            .setRequestMarshaller(new Utf8())
            .setResponseMarshaller(new Utf8())
            .build();

    private static final ServerServiceDefinition ECHO_SERVICE = ServerServiceDefinition.builder("wheelbeat.Echo")
            .addMethod(ECHO, ServerCalls.asyncUnaryCall((request, response) -> {
                response.onNext(request);
                response.onCompleted();
            }))
            .build();

    /** The client connection preface and an empty SETTINGS frame: an HTTP/2 client that then says nothing. */
    private static final byte[] HTTP2_PREFACE_AND_SETTINGS = concat(
            "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII),
            new byte[] {0, 0, 0, 4, 0, 0, 0, 0, 0});

    /**
     * gRPC's keepalive: the server pings a connection that has been silent for keepAliveTime and
     * closes it when the ping is not answered within keepAliveTimeout. gRPC-java 1.85 raises a
     * keepAliveTime below 10 s to 10 s, so this test takes that long.
     */
    @Test
    void grpcKeepaliveClosesAClientThatDoesNotAnswerPings() throws Exception {
        Duration keepAliveTime = Duration.ofSeconds(10);
        Duration keepAliveTimeout = Duration.ofMillis(300);
        Server server = GrpcRecipes.serverWithGrpcKeepalive(
                        ANY_PORT,
                        ECHO_SERVICE,
                        keepAliveTime,
                        keepAliveTimeout,
                        Duration.ofHours(1),
                        Duration.ofMinutes(5))
                .start();
        try (LoopbackClient client = new LoopbackClient(server.getPort())) {
            long sent = client.send(HTTP2_PREFACE_AND_SETTINGS);
            // It reads (the server's SETTINGS and PING frames are skipped) but never answers.
            assertClosedAfter(keepAliveTime.plus(keepAliveTimeout), sent, client.awaitClose(CLOSE_WAIT_MILLIS));
        } finally {
            server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    /**
     * gRPC's max connection idle: the server ends a connection that has had no call for that long
     * (GOAWAY, then close), and the client's channel leaves READY. gRPC-java 1.85 raises a value
     * below 1 s to 1 s.
     */
    @Test
    void grpcMaxConnectionIdleEndsAConnectionWithoutCalls() throws Exception {
        Duration maxConnectionIdle = Duration.ofSeconds(1);
        Server server = GrpcRecipes.serverWithGrpcKeepalive(
                        ANY_PORT,
                        ECHO_SERVICE,
                        Duration.ofHours(2),
                        Duration.ofSeconds(20),
                        maxConnectionIdle,
                        Duration.ofMinutes(5))
                .start();
        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", server.getPort())
                .usePlaintext()
                .build();
        try {
            assertClosedAfterTwoCalls(channel, maxConnectionIdle);
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    /**
     * gRPC-java, unmodified, with every event loop a {@link WheelIoEventLoopGroup} loop: the
     * server's keepalive closes a connection that does not answer its ping at keepAliveTime +
     * keepAliveTimeout; a gRPC client that answers (and pings within permitKeepAliveTime) outlives
     * that moment and is idled out at maxConnectionIdle after its last call. Their timers are on
     * the loops' wheels, and gone from them when the connections are. One 15 s wait for both.
     */
    @Test
    void onWheelIoEventLoopGroupGrpcKeepsAnAnsweringClientAliveAndIdlesItOutOnTime() throws Exception {
        Duration keepAliveTime = Duration.ofSeconds(10);
        // Room for the answering client's loop to answer the ping while it is starved of CPU on a busy machine.
        Duration keepAliveTimeout = Duration.ofSeconds(2);
        // Later than the silent connection's close by keepalive at 12 s, so the two cannot be confused.
        Duration maxConnectionIdle = Duration.ofSeconds(15);
        EventLoopGroup serverLoops = new WheelIoEventLoopGroup(1, NioIoHandler.newFactory());
        EventLoopGroup clientLoops = new WheelIoEventLoopGroup(1, NioIoHandler.newFactory());
        Server server = NettyServerBuilder.forAddress(ANY_PORT)
                .bossEventLoopGroup(serverLoops)
                .workerEventLoopGroup(serverLoops)
                .channelType(NioServerSocketChannel.class)
                .addService(ECHO_SERVICE)
                .keepAliveTime(keepAliveTime.toNanos(), TimeUnit.NANOSECONDS)
                .keepAliveTimeout(keepAliveTimeout.toNanos(), TimeUnit.NANOSECONDS)
                .permitKeepAliveTime(5, TimeUnit.SECONDS)
                .permitKeepAliveWithoutCalls(true)
                .maxConnectionIdle(maxConnectionIdle.toNanos(), TimeUnit.NANOSECONDS)
                .build()
                .start();
        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", server.getPort())
                .usePlaintext()
                .eventLoopGroup(clientLoops)
                .channelType(NioSocketChannel.class)
                .keepAliveTime(10, TimeUnit.SECONDS)
                .keepAliveWithoutCalls(true)
                .build();
        EventExecutor serverLoop = serverLoops.next();
        ExecutorDrivenWheel serverWheel = EventLoopWheels.shared().wheelFor(serverLoop);
        ExecutorDrivenWheel clientWheel = EventLoopWheels.shared().wheelFor(clientLoops.next());
        try {
            int pendingBefore = pending(serverLoop, serverWheel);
            long scheduledBefore = serverWheel.scheduledCount();
            try (LoopbackClient silent = new LoopbackClient(server.getPort())) {
                long sent = silent.send(HTTP2_PREFACE_AND_SETTINGS);
                long lastCall = twoCalls(channel);
                // Per connection, gRPC's keepalive ping timer and its max-idle timer.
                int pendingOpen = pending(serverLoop, serverWheel);
                assertTrue(
                        pendingOpen >= pendingBefore + 4,
                        "gRPC's server timers on the loop's wheel: " + pendingBefore + " before the connections, "
                                + pendingOpen + " with both open");
                assertTrue(
                        pending(clientLoops.next(), clientWheel) >= 1,
                        "the client's keepalive timer on its loop's wheel");

                long silentClosedAt = silent.awaitClose(CLOSE_WAIT_MILLIS);
                assertClosedAfter(keepAliveTime.plus(keepAliveTimeout), sent, silentClosedAt);
                assertTrue(
                        silentClosedAt - sent < maxConnectionIdle.toNanos(),
                        "the silent connection was closed by max connection idle, not by keepalive");
                assertEquals(
                        ConnectivityState.READY,
                        channel.getState(false),
                        "the answering client outlives the silent one");
                assertLeavesReadyAfter(channel, maxConnectionIdle, lastCall);
            }
            assertTrue(serverWheel.scheduledCount() - scheduledBefore >= 4, "gRPC scheduled on the loop's wheel");
            long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (pending(serverLoop, serverWheel) != pendingBefore && System.nanoTime() < giveUp) {
                Thread.sleep(10);
            }
            assertEquals(pendingBefore, pending(serverLoop, serverWheel), "gRPC's timers leave with its connections");
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            serverLoops.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            clientLoops.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
    }

    @Test
    void theWheelReadTimeoutThroughTheChannelTypeLetsCallsThroughAndClosesSilentConnections() throws Exception {
        Duration readIdle = Duration.ofMillis(500);
        EventLoopGroup boss = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        EventLoopGroup workers = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        Server server = GrpcRecipes.serverClosingSilentConnections(ANY_PORT, ECHO_SERVICE, readIdle, boss, workers)
                .start();
        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", server.getPort())
                .usePlaintext()
                .build();
        try {
            // The client sends nothing after its calls (no keepalive): its connection is closed at the timeout.
            assertClosedAfterTwoCalls(channel, readIdle);

            try (LoopbackClient silent = new LoopbackClient(server.getPort())) {
                assertClosedAfter(readIdle, silent.connectingAt(), silent.awaitClose(CLOSE_WAIT_MILLIS));
            }
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            boss.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            workers.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
    }

    /**
     * Makes two calls on {@code channel} (the first also connects and warms gRPC up), then checks
     * that the channel leaves READY (its connection ended) {@code timeout} after the second began.
     */
    private static void assertClosedAfterTwoCalls(ManagedChannel channel, Duration timeout) throws Exception {
        assertLeavesReadyAfter(channel, timeout, twoCalls(channel));
    }

    /** Makes two calls on {@code channel} (the first also connects) and returns when the second began. */
    private static long twoCalls(ManagedChannel channel) {
        assertEquals("hello", ClientCalls.blockingUnaryCall(channel, ECHO, CallOptions.DEFAULT, "hello"));
        long lastCall = System.nanoTime();
        assertEquals("again", ClientCalls.blockingUnaryCall(channel, ECHO, CallOptions.DEFAULT, "again"));
        return lastCall;
    }

    /** Checks that {@code channel}, READY now, leaves READY {@code timeout} after {@code from}. */
    private static void assertLeavesReadyAfter(ManagedChannel channel, Duration timeout, long from) throws Exception {
        CompletableFuture<Long> leftReady = new CompletableFuture<>();
        channel.notifyWhenStateChanged(ConnectivityState.READY, () -> leftReady.complete(System.nanoTime()));
        assertClosedAfter(timeout, from, leftReady.get(timeout.toMillis() + CLOSE_WAIT_MILLIS, TimeUnit.MILLISECONDS));
    }

    /** The wheel's pending timers, read on its loop. */
    private static int pending(EventExecutor loop, ExecutorDrivenWheel wheel) throws Exception {
        return loop.submit(wheel::pendingTimers).get(5, TimeUnit.SECONDS);
    }

    private static void assertClosedAfter(Duration timeout, long from, long closedAt) {
        assertTrue(closedAt != -1, "still open " + CLOSE_WAIT_MILLIS + " ms after " + timeout);
        long after = closedAt - from;
        assertTrue(
                after >= timeout.toNanos() - EARLY_NANOS, "closed " + after / 1_000 + " us after, before " + timeout);
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] both = new byte[a.length + b.length];
        System.arraycopy(a, 0, both, 0, a.length);
        System.arraycopy(b, 0, both, a.length, b.length);
        return both;
    }

    private static final class Utf8 implements MethodDescriptor.Marshaller<String> {
        @Override
        public InputStream stream(String value) {
            return new ByteArrayInputStream(value.getBytes(StandardCharsets.UTF_8));
        }

        @Override
        public String parse(InputStream stream) {
            try {
                return new String(stream.readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
