package io.wheelbeat.netty.reconnect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ConnectTimeoutException;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.wheelbeat.core.backoff.BackoffPolicy;
import io.wheelbeat.netty.EventLoopWheels;
import io.wheelbeat.netty.reconnect.EventLog.Entry;
import io.wheelbeat.netty.reconnect.ReconnectEvent.AttemptScheduled;
import io.wheelbeat.netty.reconnect.ReconnectEvent.Connected;
import io.wheelbeat.netty.reconnect.ReconnectEvent.Connecting;
import io.wheelbeat.netty.reconnect.ReconnectEvent.Disconnected;
import io.wheelbeat.netty.reconnect.ReconnectEvent.GaveUp;
import io.wheelbeat.netty.reconnect.ReconnectEvent.Healthy;
import io.wheelbeat.netty.reconnect.TestServer.Mode;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The reconnecting client against real TCP servers on loopback, with delays scaled down to tens
 * of milliseconds. Timing checks are one-sided ("not before the policy allows") and every wait is
 * generous, so a slow machine can make a test slower, never make it fail.
 */
@Timeout(60)
class ReconnectingClientTest {

    private static final long MS = 1_000_000L;
    /** 50 ms doubling up to 400 ms, no jitter: the expected delays are exact. */
    private static final BackoffPolicy FAST = BackoffPolicy.exponential(Duration.ofMillis(50), Duration.ofMillis(400))
            .build();

    private static final long[] FAST_DELAYS = {50 * MS, 100 * MS, 200 * MS, 400 * MS, 400 * MS, 400 * MS, 400 * MS};

    private final EventLoopGroup clientLoops = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    private final Deque<AutoCloseable> cleanup = new ArrayDeque<>();
    private final EventLog events = new EventLog();

    @AfterEach
    void tearDown() throws Exception {
        while (!cleanup.isEmpty()) {
            cleanup.pop().close();
        }
        clientLoops.shutdownGracefully(0, 2, TimeUnit.SECONDS).await(10, TimeUnit.SECONDS);
    }

    /** A no-op user handler that may sit in many pipelines. */
    @ChannelHandler.Sharable
    private static final class Quiet extends ChannelInboundHandlerAdapter {}

    private Bootstrap bootstrap(ChannelHandler handler) {
        return new Bootstrap()
                .group(clientLoops)
                .channel(NioSocketChannel.class)
                .handler(handler);
    }

    private ReconnectingClient.Builder clientTo(int port, ChannelHandler handler) {
        return ReconnectingClient.builder(bootstrap(handler), "127.0.0.1", port)
                .backoff(FAST)
                .listener(events);
    }

    private TestServer server(Mode mode) throws Exception {
        return remember(TestServer.start(mode));
    }

    private TestServer server(InetAddress host, int port, Mode mode) throws Exception {
        return remember(TestServer.start(host, port, mode));
    }

    private TestServer remember(TestServer server) {
        cleanup.push(server);
        return server;
    }

    private ReconnectingClient remember(ReconnectingClient client) {
        cleanup.push(() -> client.close().get(10, TimeUnit.SECONDS));
        return client;
    }

    private static int pendingTimers(ReconnectingClient client) throws Exception {
        return pendingTimers(client, EventLoopWheels.shared());
    }

    private static int pendingTimers(ReconnectingClient client, EventLoopWheels wheels) throws Exception {
        return client.eventLoop()
                .submit(() -> wheels.wheelFor(client.eventLoop()).pendingTimers())
                .get(10, TimeUnit.SECONDS);
    }

    private static int unusedPort() throws Exception {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    private static List<Long> delaysNanos(List<AttemptScheduled> scheduled) {
        List<Long> delays = new ArrayList<>();
        for (AttemptScheduled s : scheduled) {
            delays.add(s.delay().toNanos());
        }
        return delays;
    }

    private static List<Long> fastDelays(int from, int count) {
        List<Long> delays = new ArrayList<>();
        for (int i = from; i < from + count; i++) {
            delays.add(FAST_DELAYS[i]);
        }
        return delays;
    }

    private static void assertNotBefore(long earliest, long actual, String what) {
        assertTrue(actual >= earliest, what + " came " + (earliest - actual) / 1e6 + " ms before the policy allows");
    }

    // ---------------------------------------------------------------- connecting

    @Test
    void startCompletesWithTheFirstConnection() throws Exception {
        TestServer server = server(Mode.ECHO);
        ReconnectingClient client =
                remember(clientTo(server.port(), new Quiet()).build());
        Channel channel = client.start().get(20, TimeUnit.SECONDS);
        assertTrue(channel.isActive());
        assertSame(channel, client.channel());
        assertEquals(server.port(), ((InetSocketAddress) channel.remoteAddress()).getPort());
        assertEquals(
                new Connecting(1, client.remoteAddress()),
                events.events(Connecting.class).get(0));
        assertEquals(new Connected(channel, 1), events.await(Connected.class, 1).event());
    }

    @Test
    void everyConnectionRunsOnTheClientsOneEventLoop() throws Exception {
        EventLoopGroup twoLoops = new MultiThreadIoEventLoopGroup(2, NioIoHandler.newFactory());
        cleanup.push(() -> twoLoops.shutdownGracefully(0, 2, TimeUnit.SECONDS).await(10, TimeUnit.SECONDS));
        TestServer server = server(Mode.CLOSE_ON_ACCEPT);
        ReconnectingClient client = remember(ReconnectingClient.builder(
                        new Bootstrap()
                                .group(twoLoops)
                                .channel(NioSocketChannel.class)
                                .handler(new Quiet()),
                        "127.0.0.1",
                        server.port())
                .backoff(FAST)
                .listener(events)
                .build());
        client.start();
        events.await(Connected.class, 3);
        for (Connected connected : events.events(Connected.class)) {
            assertSame(client.eventLoop(), connected.channel().eventLoop());
        }
    }

    // ---------------------------------------------------------------- backoff while the server is down

    @Test
    void lostHealthyConnectionWaitsTheFirstDelayFromTheLoss() throws Exception {
        TestServer server = server(Mode.ECHO);
        ReconnectingClient client = remember(
                clientTo(server.port(), new PingPong()).healthyOnlyOnPong().build());
        client.start().get(20, TimeUnit.SECONDS);
        events.await(Healthy.class, 1);
        server.stop();
        Entry lost = events.await(Disconnected.class, 1);
        assertTrue(((Disconnected) lost.event()).wasHealthy());
        AttemptScheduled first =
                (AttemptScheduled) events.await(AttemptScheduled.class, 1).event();
        assertEquals(new AttemptScheduled(2, Duration.ofMillis(50), null), first);
        assertNotBefore(
                lost.nanos() + 50 * MS, events.await(Connecting.class, 2).nanos(), "first retry");
    }

    @Test
    void toldToSpreadItsReconnectTheClientDrawsTheFirstRetryFromTheWindowThenFollowsThePolicy() throws Exception {
        TestServer server = server(Mode.ECHO);
        // nextDouble() is 0.5 for this generator: the draw is half the window. FAST draws no jitter.
        ReconnectingClient client = remember(clientTo(server.port(), new PingPong())
                .healthyOnlyOnPong()
                .random(() -> Long.MIN_VALUE)
                .build());
        Channel channel = client.start().get(20, TimeUnit.SECONDS);
        events.await(Healthy.class, 1);
        assertSame(client, ReconnectingClient.of(channel), "a handler of the connection finds its client");
        client.spreadReconnectOver(Duration.ofMillis(600));
        server.stop();
        Entry lost = events.await(Disconnected.class, 1);
        assertEquals(
                new AttemptScheduled(2, Duration.ofMillis(300), null),
                events.await(AttemptScheduled.class, 1).event());
        assertNotBefore(
                lost.nanos() + 300 * MS, events.await(Connecting.class, 2).nanos(), "the spread retry");
        AttemptScheduled next =
                (AttemptScheduled) events.await(AttemptScheduled.class, 2).event();
        assertEquals(3, next.attempt());
        assertEquals(Duration.ofMillis(100), next.delay(), "the next retry follows the policy: its second delay");
    }

    @Test
    void aChannelNoClientMadeHasNoClient() {
        assertNull(ReconnectingClient.of(new io.netty.channel.embedded.EmbeddedChannel()));
    }

    @Test
    void rejectsANegativeSpreadWindow() {
        ReconnectingClient client = clientTo(1, new Quiet()).build();
        assertThrows(IllegalArgumentException.class, () -> client.spreadReconnectOver(Duration.ofMillis(-1)));
    }

    @Test
    void retriesWhileTheServerIsDownFollowThePolicy() throws Exception {
        TestServer server = server(Mode.ECHO);
        ReconnectingClient client = remember(
                clientTo(server.port(), new PingPong()).healthyOnlyOnPong().build());
        client.start().get(20, TimeUnit.SECONDS);
        events.await(Healthy.class, 1);
        server.stop();
        events.await(Connecting.class, 6);

        List<AttemptScheduled> scheduled = events.events(AttemptScheduled.class).subList(0, 5);
        assertEquals(
                List.of(2, 3, 4, 5, 6),
                scheduled.stream().map(AttemptScheduled::attempt).toList());
        assertEquals(fastDelays(0, 5), delaysNanos(scheduled));
        assertInstanceOf(ConnectException.class, scheduled.get(1).cause(), "refused");
        // Each retry starts no sooner than the delay after the start of the attempt that failed.
        List<Entry> connecting = events.entries(Connecting.class);
        for (int k = 1; k < 5; k++) {
            assertNotBefore(
                    connecting.get(k).nanos() + FAST_DELAYS[k],
                    connecting.get(k + 1).nanos(),
                    "attempt " + (k + 2));
        }
    }

    @Test
    void reconnectsOnceTheServerIsBackOnTheSamePort() throws Exception {
        TestServer server = server(Mode.ECHO);
        ReconnectingClient client = remember(
                clientTo(server.port(), new PingPong()).healthyOnlyOnPong().build());
        Channel first = client.start().get(20, TimeUnit.SECONDS);
        events.await(Healthy.class, 1);
        server.stop();
        events.await(AttemptScheduled.class, 3); // two refused attempts
        server.restart();

        Connected back = (Connected) events.await(Connected.class, 2).event();
        assertTrue(back.attempt() >= 3, "came back on attempt " + back.attempt());
        assertTrue(back.channel() != first && back.channel().isActive());
        assertEquals(server.port(), ((InetSocketAddress) back.channel().remoteAddress()).getPort());
        assertEquals(
                new Healthy(back.channel(), true),
                events.await(Healthy.class, 2).event());
        assertSame(back.channel(), client.channel());
    }

    // ---------------------------------------------------------------- what resets the backoff

    @Test
    void firstPongResetsTheBackoff() throws Exception {
        int port = unusedPort();
        ReconnectingClient client =
                remember(clientTo(port, new PingPong()).healthyOnlyOnPong().build());
        client.start();
        events.await(AttemptScheduled.class, 3); // delays 50, 100, 200 ms: the run has grown
        TestServer server = server(InetAddress.getLoopbackAddress(), port, Mode.ECHO);
        Healthy healthy = (Healthy) events.await(Healthy.class, 1).event();
        assertTrue(healthy.byPong());
        int scheduledBefore = events.events(AttemptScheduled.class).size();

        server.stop();
        events.await(AttemptScheduled.class, scheduledBefore + 1);
        assertEquals(
                new AttemptScheduled(2, Duration.ofMillis(50), null),
                events.events(AttemptScheduled.class).get(scheduledBefore));
    }

    @Test
    void pongFiredByAHandlerFromTheUsersInitializerReachesTheClient() throws Exception {
        TestServer server = server(Mode.ECHO);
        ChannelInitializer<Channel> usersInitializer = new ChannelInitializer<>() {
            @Override
            protected void initChannel(Channel ch) {
                ch.pipeline().addLast(new PingPong(), new Quiet()); // as a heartbeat handler and an app handler
            }
        };
        ReconnectingClient client = remember(
                clientTo(server.port(), usersInitializer).healthyOnlyOnPong().build());
        Channel channel = client.start().get(20, TimeUnit.SECONDS);
        assertEquals(new Healthy(channel, true), events.await(Healthy.class, 1).event());
    }

    @Test
    void stayingConnectedForHealthyAfterResetsTheBackoff() throws Exception {
        TestServer server = server(Mode.SILENT);
        ReconnectingClient client = remember(clientTo(server.port(), new Quiet())
                .healthyAfter(Duration.ofMillis(300))
                .build());
        client.start();
        Entry connected = events.await(Connected.class, 1);
        Entry healthy = events.await(Healthy.class, 1);
        assertEquals(new Healthy(((Connected) connected.event()).channel(), false), healthy.event());
        assertNotBefore(connected.nanos() + 300 * MS, healthy.nanos(), "health by uptime");

        server.stop();
        assertEquals(
                new AttemptScheduled(2, Duration.ofMillis(50), null),
                events.await(AttemptScheduled.class, 1).event());
    }

    @Test
    void tcpConnectAloneDoesNotResetTheBackoff() throws Exception {
        TestServer server = server(Mode.CLOSE_ON_ACCEPT);
        ReconnectingClient client =
                remember(clientTo(server.port(), new Quiet()).build());
        client.start();
        events.await(AttemptScheduled.class, 5);

        assertTrue(events.events(Connected.class).size() >= 4, "the server accepted each attempt");
        assertTrue(events.events(Healthy.class).isEmpty());
        List<AttemptScheduled> scheduled = events.events(AttemptScheduled.class).subList(0, 5);
        assertEquals(
                List.of(2, 3, 4, 5, 6),
                scheduled.stream().map(AttemptScheduled::attempt).toList());
        assertEquals(fastDelays(0, 5), delaysNanos(scheduled));
    }

    /**
     * A server that accepts and closes at once must not cause a tight loop: attempt n + 1 cannot
     * start before the sum of the first n delays has passed since attempt 1, so within a window
     * the number of accepted attempts is bounded by the policy.
     */
    @Test
    void serverThatAcceptsAndClosesGetsAttemptsBoundedByThePolicy() throws Exception {
        TestServer server = server(Mode.CLOSE_ON_ACCEPT);
        ReconnectingClient client =
                remember(clientTo(server.port(), new Quiet()).build());
        client.start();
        long firstAttempt = events.await(Connecting.class, 1).nanos();
        events.await(Connecting.class, 3);
        Thread.sleep(1_000);
        int accepted = server.accepted(); // read before the clock: every accept counted is before `end`
        long window = System.nanoTime() - firstAttempt;

        int allowed = 1;
        long sum = 0;
        while (sum + FAST_DELAYS[Math.min(allowed - 1, FAST_DELAYS.length - 1)] <= window) {
            sum += FAST_DELAYS[Math.min(allowed - 1, FAST_DELAYS.length - 1)];
            allowed++;
        }
        System.out.printf(
                "accept-and-close server: %d attempts accepted in %.0f ms; the policy allows at most %d%n",
                accepted, window / 1e6, allowed);
        assertTrue(accepted >= 3, "it retried: " + accepted);
        assertTrue(
                accepted <= allowed,
                accepted + " attempts in " + window / 1e6 + " ms; at most " + allowed + " allowed");
    }

    // ---------------------------------------------------------------- each attempt

    @Test
    void connectTimeoutEndsAnAttemptThatHangs() throws Exception {
        TestResolver resolver = new TestResolver();
        resolver.hold(); // a DNS server that never answers
        ReconnectingClient client =
                remember(ReconnectingClient.builder(bootstrap(new Quiet()).resolver(resolver), "svc.test", unusedPort())
                        .backoff(FAST)
                        .connectTimeout(Duration.ofMillis(100))
                        .listener(events)
                        .build());
        client.start();

        Entry attempt = events.await(Connecting.class, 1);
        Entry failed = events.await(AttemptScheduled.class, 1);
        assertInstanceOf(ConnectTimeoutException.class, ((AttemptScheduled) failed.event()).cause());
        assertNotBefore(attempt.nanos() + 100 * MS, failed.nanos(), "the timeout");
        events.await(Connecting.class, 2);
        Await.until(() -> resolver.lookups() == 2, 20, "the second attempt looks the name up again");
    }

    @Test
    void remoteIsResolvedAgainOnEveryAttempt() throws Exception {
        InetAddress first = InetAddress.getByName("127.0.0.2");
        InetAddress second = InetAddress.getByName("127.0.0.3");
        TestServer oldServer = server(first, 0, Mode.ECHO);
        TestServer newServer = server(second, oldServer.port(), Mode.ECHO);
        TestResolver resolver = new TestResolver();
        resolver.map("svc.test", first);
        ReconnectingClient client = remember(
                ReconnectingClient.builder(bootstrap(new Quiet()).resolver(resolver), "svc.test", oldServer.port())
                        .backoff(FAST)
                        .listener(events)
                        .build());
        Channel before = client.start().get(20, TimeUnit.SECONDS);
        assertEquals(first, ((InetSocketAddress) before.remoteAddress()).getAddress());

        resolver.map("svc.test", second); // the service moved; DNS says so
        oldServer.stop();
        Connected after = (Connected) events.await(Connected.class, 2).event();
        assertEquals(
                new InetSocketAddress(second, newServer.port()), after.channel().remoteAddress());
        assertTrue(resolver.lookups() >= 2);
    }

    // ---------------------------------------------------------------- closing

    @Test
    void closeDuringBackoffCancelsThePendingAttempt() throws Exception {
        ReconnectingClient client = remember(clientTo(unusedPort(), new Quiet())
                .backoff(BackoffPolicy.exponential(Duration.ofSeconds(10), Duration.ofSeconds(10))
                        .build())
                .build());
        CompletableFuture<Channel> started = client.start();
        assertEquals(
                Duration.ofSeconds(10),
                ((AttemptScheduled) events.await(AttemptScheduled.class, 1).event()).delay());
        assertEquals(1, pendingTimers(client), "the retry waits on the wheel");

        client.close().get(10, TimeUnit.SECONDS);
        assertEquals(0, pendingTimers(client));
        assertTrue(client.isClosed());
        ExecutionException e = assertThrows(ExecutionException.class, () -> started.get(10, TimeUnit.SECONDS));
        assertInstanceOf(IllegalStateException.class, e.getCause());
        assertEquals(1, events.events(Connecting.class).size());
    }

    @Test
    void theClientsTimersGoOnTheWheelsItWasGiven() throws Exception {
        EventLoopWheels own = new EventLoopWheels(Duration.ofMillis(1), 64);
        ReconnectingClient client = remember(clientTo(unusedPort(), new Quiet())
                .wheels(own)
                .backoff(BackoffPolicy.exponential(Duration.ofSeconds(10), Duration.ofSeconds(10))
                        .build())
                .build());
        client.start();
        events.await(AttemptScheduled.class, 1);
        assertEquals(1, pendingTimers(client, own), "the retry waits on the given wheels");
        assertEquals(0, pendingTimers(client), "and not on the shared ones");

        client.close().get(10, TimeUnit.SECONDS);
        assertEquals(0, pendingTimers(client, own));
    }

    @Test
    void closeWhileConnectedClosesTheConnectionAndNeverReconnects() throws Exception {
        TestServer server = server(Mode.ECHO);
        ReconnectingClient client =
                remember(clientTo(server.port(), new PingPong()).build());
        Channel channel = client.start().get(20, TimeUnit.SECONDS);
        events.await(Healthy.class, 1);

        client.close().get(10, TimeUnit.SECONDS);
        assertFalse(channel.isOpen());
        assertNull(client.channel());
        assertEquals(0, pendingTimers(client));
        events.await(Disconnected.class, 1);
        assertTrue(events.events(AttemptScheduled.class).isEmpty());
        Await.until(() -> server.openConnections() == 0, 20, "the server sees the connection closed");
    }

    @Test
    void closeDuringAnAttemptAbandonsItAndReturnsThePermit() throws Exception {
        TestResolver resolver = new TestResolver();
        resolver.hold();
        ReconnectGroup group = new ReconnectGroup(1);
        ReconnectingClient client =
                remember(ReconnectingClient.builder(bootstrap(new Quiet()).resolver(resolver), "svc.test", unusedPort())
                        .backoff(FAST)
                        .group(group)
                        .listener(events)
                        .build());
        client.start();
        Await.until(() -> resolver.heldLookups() == 1, 20, "the attempt is resolving");
        assertEquals(1, group.attemptsInProgress());

        client.close().get(10, TimeUnit.SECONDS);
        assertEquals(0, group.attemptsInProgress());
        assertEquals(0, pendingTimers(client), "the connect timeout is cancelled too");
        assertTrue(events.events(AttemptScheduled.class).isEmpty());
    }

    @Test
    void closeFromTheListenerAsAnAttemptBeginsReturnsThePermit() throws Exception {
        ReconnectGroup group = new ReconnectGroup(1);
        ReconnectingClient[] self = new ReconnectingClient[1];
        ReconnectingClient client = remember(clientTo(unusedPort(), new Quiet())
                .group(group)
                .listener(event -> {
                    events.onEvent(event);
                    if (event instanceof Connecting) {
                        self[0].close();
                    }
                })
                .build());
        self[0] = client;
        client.start();
        events.await(Connecting.class, 1);
        client.close().get(10, TimeUnit.SECONDS);
        assertEquals(0, group.attemptsInProgress());
        assertEquals(0, pendingTimers(client));
        assertEquals(1, events.all().size(), "nothing after the attempt that was closed: " + events.all());
    }

    @Test
    void startTwiceIsRejected() throws Exception {
        ReconnectingClient client = remember(clientTo(unusedPort(), new Quiet()).build());
        client.start();
        assertThrows(IllegalStateException.class, client::start);
    }

    @Test
    void startAfterCloseIsRejected() throws Exception {
        ReconnectingClient client = clientTo(unusedPort(), new Quiet()).build();
        client.close().get(10, TimeUnit.SECONDS);
        assertThrows(IllegalStateException.class, client::start);
    }

    // ---------------------------------------------------------------- giving up, listener, metrics

    @Test
    void givesUpWhenTheAttemptsAreUsedUp() throws Exception {
        ReconnectingClient client = remember(clientTo(unusedPort(), new Quiet())
                .backoff(BackoffPolicy.exponential(Duration.ofMillis(20), Duration.ofMillis(20))
                        .maxAttempts(3)
                        .build())
                .build());
        CompletableFuture<Channel> started = client.start();

        GaveUp gaveUp = (GaveUp) events.await(GaveUp.class, 1).event();
        assertEquals(3, gaveUp.attempts());
        assertInstanceOf(ConnectException.class, gaveUp.lastCause());
        assertEquals(3, events.events(Connecting.class).size());
        assertEquals(2, events.events(AttemptScheduled.class).size());
        ExecutionException e = assertThrows(ExecutionException.class, () -> started.get(10, TimeUnit.SECONDS));
        assertInstanceOf(ConnectException.class, e.getCause());
        assertEquals(0, pendingTimers(client));
    }

    @Test
    void listenerThatThrowsDoesNotStopTheClient() throws Exception {
        TestServer server = server(Mode.CLOSE_ON_ACCEPT);
        ReconnectingClient client =
                remember(ReconnectingClient.builder(bootstrap(new Quiet()), "127.0.0.1", server.port())
                        .backoff(FAST)
                        .listener(event -> {
                            events.onEvent(event);
                            throw new IllegalStateException("listener bug");
                        })
                        .build());
        client.start().get(20, TimeUnit.SECONDS);
        events.await(Connected.class, 3);
    }

    @Test
    void metricsCountAttemptsSuccessesFailuresAndTheCurrentBackoff() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        ReconnectMetrics metrics = new ReconnectMetrics(registry, Tags.of("client", "test"));
        int port = unusedPort();
        List<Double> backoffGauge = new ArrayList<>();
        List<Double> clientsGauge = new ArrayList<>();
        ReconnectingClient client = remember(clientTo(port, new PingPong())
                .healthyOnlyOnPong()
                .metrics(metrics)
                .listener(event -> {
                    if (event instanceof AttemptScheduled) { // read on the loop, as the retry is scheduled
                        backoffGauge.add(registry.get("wheelbeat.reconnect.backoff")
                                .gauge()
                                .value());
                        clientsGauge.add(registry.get("wheelbeat.reconnect.backoff.clients")
                                .gauge()
                                .value());
                    }
                    events.onEvent(event);
                })
                .build());
        client.start();
        events.await(AttemptScheduled.class, 2); // two refused attempts
        assertEquals(List.of(0.05, 0.1), backoffGauge.subList(0, 2));
        assertEquals(List.of(1.0, 1.0), clientsGauge.subList(0, 2));

        server(InetAddress.getLoopbackAddress(), port, Mode.ECHO);
        events.await(Healthy.class, 1);
        int attempts = events.events(Connecting.class).size();
        assertEquals(
                attempts, registry.get("wheelbeat.reconnect.attempts").counter().count());
        assertEquals(1, registry.get("wheelbeat.reconnect.successes").counter().count());
        assertEquals(
                attempts - 1,
                registry.get("wheelbeat.reconnect.failures").counter().count());
        assertEquals(0, registry.get("wheelbeat.reconnect.backoff").gauge().value(), "reset once healthy");
        assertEquals(
                0, registry.get("wheelbeat.reconnect.backoff.clients").gauge().value());
        assertEquals(0, registry.get("wheelbeat.reconnect.gave.up").counter().count());
    }

    // ---------------------------------------------------------------- bad input

    @Test
    void bootstrapWithoutAHandlerIsRejected() {
        Bootstrap noHandler = new Bootstrap().group(clientLoops).channel(NioSocketChannel.class);
        assertThrows(IllegalStateException.class, () -> ReconnectingClient.builder(noHandler, "localhost", 80));
    }

    @Test
    void nullArgumentsAreRejected() {
        assertThrows(NullPointerException.class, () -> ReconnectingClient.builder(null, "localhost", 80));
        assertThrows(NullPointerException.class, () -> ReconnectingClient.builder(bootstrap(new Quiet()), null, 80));
        assertThrows(
                NullPointerException.class,
                () -> ReconnectingClient.builder(bootstrap(new Quiet()), (InetSocketAddress) null));
        ReconnectingClient.Builder builder = clientTo(80, new Quiet());
        assertThrows(NullPointerException.class, () -> builder.backoff(null));
        assertThrows(NullPointerException.class, () -> builder.listener(null));
        assertThrows(NullPointerException.class, () -> builder.group(null));
        assertThrows(NullPointerException.class, () -> builder.metrics(null));
        assertThrows(NullPointerException.class, () -> builder.random(null));
        assertThrows(NullPointerException.class, () -> builder.connectTimeout(null));
    }

    @Test
    void portOutOfRangeIsRejected() {
        assertThrows(
                IllegalArgumentException.class,
                () -> ReconnectingClient.builder(bootstrap(new Quiet()), "localhost", 65536));
        assertThrows(
                IllegalArgumentException.class,
                () -> ReconnectingClient.builder(bootstrap(new Quiet()), "localhost", -1));
    }

    @Test
    void nonPositiveOrHugeDurationsAreRejected() {
        ReconnectingClient.Builder builder = clientTo(80, new Quiet());
        assertThrows(IllegalArgumentException.class, () -> builder.connectTimeout(Duration.ZERO));
        assertThrows(IllegalArgumentException.class, () -> builder.connectTimeout(Duration.ofMillis(-1)));
        assertThrows(IllegalArgumentException.class, () -> builder.healthyAfter(Duration.ZERO));
        assertThrows(IllegalArgumentException.class, () -> builder.healthyAfter(Duration.ofDays(365L * 1000)));
    }
}
