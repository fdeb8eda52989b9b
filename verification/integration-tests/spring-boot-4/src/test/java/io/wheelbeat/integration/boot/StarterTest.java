package io.wheelbeat.integration.boot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.channel.EventLoopGroup;
import io.netty.util.Version;
import io.wheelbeat.integration.LoopbackClient;
import io.wheelbeat.integration.NettyLine;
import io.wheelbeat.netty.loop.LoopWheelOwner;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.http.client.ReactorResourceFactory;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.netty.resources.LoopResources;

/**
 * The starter in a real Boot WebFlux application on a random port, with real sockets on loopback:
 * the server's connections get the wheel's read timeout from the {@code wheelbeat.*} properties
 * alone (one silent after its requests is closed at the timeout, never before; one that keeps
 * talking is kept), WebClient calls the server, Actuator lists the meters, and
 * {@code wheelbeat.loop.enabled} puts Reactor Netty on the wheel loop group on Netty 4.2 (on 4.1
 * the application runs on Reactor Netty's loops). Every request here must succeed, so every
 * timeout is far above what a busy machine takes to answer; the short timeouts are in
 * {@link SilentConnectionTest}. One context for the class; the same tests run on Boot 4 (Netty
 * 4.2) and Boot 3 (Netty 4.1). The tests wait on sockets, side by side.
 */
@SpringBootTest(
        classes = StarterApplication.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "wheelbeat.server.read-timeout=" + StarterTest.READ_TIMEOUT_MILLIS + "ms",
            "wheelbeat.server.first-request-timeout=30s",
            "wheelbeat.server.slow-consumer.enabled=true",
            "wheelbeat.server.tcp-keep-alive.enabled=true",
            "wheelbeat.server.tcp-keep-alive.idle=7s",
            "wheelbeat.client.read-timeout=30s",
            "wheelbeat.loop.enabled=true",
            "server.netty.idle-timeout=120s",
            "spring.reactor.netty.shutdown-quiet-period=0s",
            "management.endpoints.web.exposure.include=metrics,health"
        })
@Execution(ExecutionMode.CONCURRENT)
class StarterTest {

    /** Ample for any exchange on a busy machine; the tests that wait for it run side by side. */
    static final long READ_TIMEOUT_MILLIS = 3_000;

    private static final Duration READ_TIMEOUT = Duration.ofMillis(READ_TIMEOUT_MILLIS);
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
    void aKeepAliveConnectionSilentAfterItsRequestsIsClosedAtTheReadTimeout() throws IOException {
        try (LoopbackClient client = new LoopbackClient(port)) {
            client.send(REQUEST);
            client.readUntil("\r\n\r\nok");
            long lastSent = client.send(REQUEST);
            client.readUntil("\r\n\r\nok");
            SilentConnectionTest.assertClosedNotBefore(
                    lastSent, READ_TIMEOUT, client.awaitClose(SilentConnectionTest.WAIT_MILLIS));
        }
    }

    /** A request every half second for one and a half timeouts: kept while it talks, closed once silent. */
    @Test
    void aConnectionThatKeepsSendingRequestsIsKept() throws IOException {
        try (LoopbackClient client = new LoopbackClient(port)) {
            long lastSent = 0;
            for (int i = 0; i < 3 * READ_TIMEOUT_MILLIS / 1_000; i++) {
                lastSent = client.send(REQUEST);
                client.readUntil("\r\n\r\nok"); // fails if the server closed the connection
                assertEquals(-1, client.awaitClose(500), "closed while the client talks");
            }
            SilentConnectionTest.assertClosedNotBefore(
                    lastSent, READ_TIMEOUT, client.awaitClose(SilentConnectionTest.WAIT_MILLIS));
        }
    }

    /** The server's socket has the keepalive the properties say, on whichever transport Reactor Netty runs. */
    @Test
    void theServersConnectionsHaveTcpKeepAlive() {
        String keepAlive = webClients
                .build()
                .get()
                .uri("http://127.0.0.1:" + port + "/keepalive")
                .retrieve()
                .bodyToMono(String.class)
                .block(Duration.ofSeconds(60));
        assertEquals("SO_KEEPALIVE=true TCP_KEEPIDLE=7", keepAlive);
    }

    @Test
    void webClientCallsTheServer() {
        String body = webClients
                .build()
                .get()
                .uri("http://127.0.0.1:" + port + "/ok")
                .retrieve()
                .bodyToMono(String.class)
                .block(Duration.ofSeconds(60));
        assertEquals("ok", body);
    }

    @Test
    void actuatorListsTheWheelHandlerAndLimiterMeters() throws Exception {
        try (LoopbackClient client = new LoopbackClient(port)) { // a connection, so that a loop's wheel exists
            client.send(REQUEST);
            client.readUntil("\r\n\r\nok");
        }
        HttpResponse<String> metrics = HttpClient.newHttpClient()
                .send(
                        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/actuator/metrics"))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
        assertEquals(200, metrics.statusCode());
        for (String meter : new String[] {
            "wheelbeat.connection.closed",
            "wheelbeat.timer.pending",
            "wheelbeat.timer.scheduled",
            "wheelbeat.ratelimit.admitted",
            "wheelbeat.slow.consumer.read.pauses"
        }) {
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
        boolean netty42 =
                Version.identify().get("netty-common").artifactVersion().startsWith("4.2");
        assertEquals(netty42, loops.next() instanceof LoopWheelOwner, loops.toString());
        if (netty42) {
            EventLoopGroup reactors =
                    LoopResources.create("transport-check", 1, true).onServer(LoopResources.DEFAULT_NATIVE);
            try {
                assertEquals(TransportOf.of(reactors), TransportOf.of(loops));
            } finally {
                reactors.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
            }
        }
    }
}
