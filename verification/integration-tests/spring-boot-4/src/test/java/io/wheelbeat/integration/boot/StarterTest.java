package io.wheelbeat.integration.boot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.channel.EventLoopGroup;
import io.netty.util.Version;
import io.wheelbeat.integration.LoopbackClient;
import io.wheelbeat.integration.NettyLine;
import io.wheelbeat.netty.loop.LoopWheelOwner;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.http.client.ReactorResourceFactory;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Mono;
import reactor.netty.resources.LoopResources;

/**
 * The starter in a real Boot WebFlux application on a random port, with real sockets on loopback:
 * the server's connections get the wheel's read timeout from the {@code wheelbeat.*} properties
 * alone (a silent connection and one silent after its requests are closed at the timeout, never
 * before; one that keeps talking is kept), WebClient's connections get the client's, Actuator
 * lists the meters, and {@code wheelbeat.loop.enabled} puts Reactor Netty on the wheel loop group
 * on Netty 4.2 (on 4.1 the application runs on Reactor Netty's loops). One context for the class;
 * the same tests run on Boot 4 (Netty 4.2) and Boot 3 (Netty 4.1). The tests wait on sockets,
 * side by side.
 */
@SpringBootTest(classes = StarterApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
                "wheelbeat.server.read-timeout=400ms",
                "wheelbeat.server.first-request-timeout=30s",
                "wheelbeat.server.slow-consumer.enabled=true",
                "wheelbeat.server.tcp-keep-alive.enabled=true",
                "wheelbeat.server.tcp-keep-alive.idle=7s",
                "wheelbeat.client.read-timeout=300ms",
                "wheelbeat.loop.enabled=true",
                "server.netty.idle-timeout=30s",
                "spring.reactor.netty.shutdown-quiet-period=0s",
                "management.endpoints.web.exposure.include=metrics,health"})
@Execution(ExecutionMode.CONCURRENT)
@ExtendWith(OutputCaptureExtension.class)
class StarterTest {

    private static final long READ_TIMEOUT_NANOS = TimeUnit.MILLISECONDS.toNanos(400);
    private static final long CLIENT_READ_TIMEOUT_NANOS = TimeUnit.MILLISECONDS.toNanos(300);
    /** How late a close may come on a loaded machine. */
    private static final long LATE_NANOS = TimeUnit.SECONDS.toNanos(3);
    /** Measuring slack: the client's clock readings bracket the server's. */
    private static final long EARLY_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    private static final String REQUEST = "GET /ok HTTP/1.1\r\nHost: localhost\r\n\r\n";

    @Value("${local.server.port}")
    int port;

    @Autowired
    WebClient.Builder webClients;

    @Autowired
    ReactorResourceFactory resources;

    @Test
    void runsOnTheNettyLineOfItsModule() {
        NettyLine.assertIsTheModulesLine(Version.identify().get("netty-common").artifactVersion());
    }

    @Test
    void aConnectionThatNeverSendsARequestIsClosedAtTheReadTimeout(CapturedOutput output) throws IOException {
        try (LoopbackClient client = new LoopbackClient(port)) {
            assertClosedAt(client.connectedAt(), READ_TIMEOUT_NANOS, client.awaitClose(10_000));
        }
        // Closed quietly: Reactor Netty logs a fired ReadTimeoutException at ERROR with its trace.
        assertFalse(output.getAll().contains("ReadTimeoutException"), output::getAll);
    }

    @Test
    void aKeepAliveConnectionSilentAfterItsRequestsIsClosedAtTheReadTimeout() throws IOException {
        try (LoopbackClient client = new LoopbackClient(port)) {
            client.send(REQUEST);
            client.readUntil("\r\n\r\nok");
            long lastSent = client.send(REQUEST);
            client.readUntil("\r\n\r\nok");
            assertClosedAt(lastSent, READ_TIMEOUT_NANOS, client.awaitClose(10_000));
        }
    }

    /** A request every 100 ms for 1.2 s, three timeouts: kept while it talks, closed once silent. */
    @Test
    void aConnectionThatKeepsSendingRequestsIsKept() throws IOException {
        try (LoopbackClient client = new LoopbackClient(port)) {
            long lastSent = 0;
            for (int i = 0; i < 12; i++) {
                lastSent = client.send(REQUEST);
                client.readUntil("\r\n\r\nok"); // fails if the server closed the connection
                assertEquals(-1, client.awaitClose(100), "closed while the client talks");
            }
            assertClosedAt(lastSent, READ_TIMEOUT_NANOS, client.awaitClose(10_000));
        }
    }

    /** The server's socket has the keepalive the properties say, on whichever transport Reactor Netty runs. */
    @Test
    void theServersConnectionsHaveTcpKeepAlive() {
        String keepAlive = webClients.build().get().uri("http://127.0.0.1:" + port + "/keepalive").retrieve()
                .bodyToMono(String.class).block(Duration.ofSeconds(10));
        assertEquals("SO_KEEPALIVE=true TCP_KEEPIDLE=7", keepAlive);
    }

    @Test
    void webClientCallsTheServer() {
        String body = webClients.build().get().uri("http://127.0.0.1:" + port + "/ok").retrieve().bodyToMono(String.class)
                .block(Duration.ofSeconds(10));
        assertEquals("ok", body);
    }

    /**
     * A server that takes the request and never answers nor closes: only WebClient's own read
     * timeout can close the connection, at the client's timeout after it connected (measured from
     * just before the call, which is earlier).
     */
    @Test
    void webClientClosesAConnectionWhoseServerSaysNothingAtItsReadTimeout() throws Exception {
        try (ServerSocket silent = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            CompletableFuture<Long> closed = CompletableFuture.supplyAsync(() -> readRequestThenAwaitEof(silent));
            long called = System.nanoTime();
            webClients.build().get().uri("http://127.0.0.1:" + silent.getLocalPort() + "/").retrieve()
                    .bodyToMono(String.class).onErrorResume(e -> Mono.empty())
                    .block(Duration.ofSeconds(10));
            assertClosedAt(called, CLIENT_READ_TIMEOUT_NANOS, closed.get(10, TimeUnit.SECONDS));
        }
    }

    @Test
    void actuatorListsTheWheelHandlerAndLimiterMeters() throws Exception {
        try (LoopbackClient client = new LoopbackClient(port)) { // a connection, so that a loop's wheel exists
            client.send(REQUEST);
            client.readUntil("\r\n\r\nok");
        }
        HttpResponse<String> metrics = HttpClient.newHttpClient().send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/actuator/metrics")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, metrics.statusCode());
        for (String meter : new String[] {"wheelbeat.connection.closed", "wheelbeat.timer.pending",
                "wheelbeat.timer.scheduled", "wheelbeat.ratelimit.admitted", "wheelbeat.slow.consumer.read.pauses"}) {
            assertTrue(metrics.body().contains('"' + meter + '"'), meter + " missing from " + metrics.body());
        }
    }

    /**
     * On Netty 4.2 the server's and WebClient's loops are wheel loops, on the transport Reactor
     * Netty would pick itself; on Netty 4.1 they are Reactor Netty's own (a warning says why).
     */
    @Test
    void theLoopsAreWheelLoopsOnNetty42Only() throws ReflectiveOperationException {
        EventLoopGroup loops = resources.getLoopResources().onServer(true);
        boolean netty42 = Version.identify().get("netty-common").artifactVersion().startsWith("4.2");
        assertEquals(netty42, loops.next() instanceof LoopWheelOwner, loops.toString());
        if (netty42) {
            EventLoopGroup reactors = LoopResources.create("transport-check", 1, true).onServer(LoopResources.DEFAULT_NATIVE);
            try {
                assertEquals(TransportOf.of(reactors), TransportOf.of(loops));
            } finally {
                reactors.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
            }
        }
    }

    /** Accepts one connection, reads its request, then waits for its end; returns the clock reading then. */
    private static long readRequestThenAwaitEof(ServerSocket server) {
        try (Socket socket = server.accept()) {
            socket.setSoTimeout(10_000);
            InputStream in = socket.getInputStream();
            StringBuilder request = new StringBuilder();
            while (!request.toString().endsWith("\r\n\r\n")) {
                int b = in.read();
                assertFalse(b < 0, "closed before the request ended");
                request.append((char) b);
            }
            try {
                while (in.read() >= 0) {
                    // the client sends nothing more; wait for its close
                }
            } catch (IOException reset) {
                // a reset is a close too
            }
            return System.nanoTime();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void assertClosedAt(long from, long timeoutNanos, long closedAt) {
        assertTrue(closedAt != -1, "still open 10 s later");
        long after = closedAt - from;
        assertTrue(after >= timeoutNanos - EARLY_NANOS, "closed " + after / 1_000 + " us after, before the timeout");
        assertTrue(after <= timeoutNanos + LATE_NANOS, "closed " + after / 1_000 + " us after");
    }
}
