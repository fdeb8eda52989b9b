package io.wheelbeat.integration.reactor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.util.Version;
import io.wheelbeat.integration.LoopbackClient;
import io.wheelbeat.integration.NettyLine;
import io.wheelbeat.netty.idle.WheelReadTimeoutHandler;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/**
 * The recipes of {@link ReactorNettyRecipes} on a real Reactor Netty server and real clients on
 * loopback: a connection is closed when its client has sent nothing for the read timeout, never
 * before; a client that keeps talking is kept. Nothing else in these servers closes a connection,
 * so a close at all (within a hang guard) is the handler's; how late it comes is the machine's
 * speed, not a verdict. The same tests run on Reactor Netty 1.3 / Netty 4.2 and 1.2 / Netty 4.1.
 */
class ReactorNettyReadTimeoutTest {

    private static final Duration READ_IDLE = Duration.ofMillis(400);
    private static final long READ_IDLE_NANOS = READ_IDLE.toNanos();
    /** For clients that pause 100 or 200 ms between sends: far longer, so a stalled test thread is not silence. */
    private static final Duration LONG_READ_IDLE = Duration.ofSeconds(1);
    /** A hang guard only: the close is due at the timeout. */
    private static final long CLOSE_WAIT_MILLIS = 30_000;
    /** Measuring slack: the client's and the server's clock readings bracket the server's own. */
    private static final long EARLY_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    private static final String REQUEST = "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n";

    @Test
    void runsOnTheNettyLineOfItsModule() {
        NettyLine.assertIsTheModulesLine(Version.identify().get("netty-common").artifactVersion());
    }

    @Test
    void tcpServerClosesAConnectionThatSendsNothing() throws Exception {
        DisposableServer server = ReactorNettyRecipes.tcpServerClosingIdleConnections(READ_IDLE)
                .host("127.0.0.1")
                .port(0)
                .handle((in, out) -> out.send(in.receive().retain()))
                .bindNow();
        try (LoopbackClient client = new LoopbackClient(server.port())) {
            assertClosedAtTheTimeout(client.connectingAt(), client.awaitClose(CLOSE_WAIT_MILLIS));
        } finally {
            server.disposeNow();
        }
    }

    @Test
    void tcpServerKeepsAClientThatTalksAndClosesItOnceSilent() throws Exception {
        DisposableServer server = ReactorNettyRecipes.tcpServerClosingIdleConnections(LONG_READ_IDLE)
                .host("127.0.0.1")
                .port(0)
                .handle((in, out) -> out.send(in.receive().retain()))
                .bindNow();
        try (LoopbackClient client = new LoopbackClient(server.port())) {
            long lastSent = 0;
            for (int i = 0; i < 15; i++) { // 1.5 s, past the timeout, one byte every 100 ms
                lastSent = client.send("x");
                assertEquals(-1, client.awaitClose(100), "closed while the client talks");
            }
            assertClosedAfter(LONG_READ_IDLE, lastSent, client.awaitClose(CLOSE_WAIT_MILLIS));
        } finally {
            server.disposeNow();
        }
    }

    @Test
    void httpServerClosesAConnectionThatNeverSendsARequest() throws Exception {
        DisposableServer server = okServer(ReactorNettyRecipes.httpServerClosingIdleConnections(READ_IDLE));
        try (LoopbackClient client = new LoopbackClient(server.port())) {
            assertClosedAtTheTimeout(client.connectingAt(), client.awaitClose(CLOSE_WAIT_MILLIS));
        } finally {
            server.disposeNow();
        }
    }

    /** The handler outlives the requests: still there after the second one, it closes the silent connection. */
    @Test
    void httpServerClosesAKeepAliveConnectionThatGoesSilentAfterItsRequests() throws Exception {
        DisposableServer server = okServer(ReactorNettyRecipes.httpServerClosingIdleConnections(LONG_READ_IDLE));
        try (LoopbackClient client = new LoopbackClient(server.port())) {
            client.send(REQUEST);
            client.readUntil("\r\n\r\nok");
            assertEquals(-1, client.awaitClose(200), "closed before the timeout");
            long lastSent = client.send(REQUEST);
            client.readUntil("\r\n\r\nok");
            assertClosedAfter(LONG_READ_IDLE, lastSent, client.awaitClose(CLOSE_WAIT_MILLIS));
        } finally {
            server.disposeNow();
        }
    }

    /**
     * Why the recipe uses doOnChannelInit: the same handler added in doOnConnection watches
     * nothing. Reactor Netty calls doOnConnection per request and removes the handlers added there
     * when the request ends, so a connection that never sends a request, and one that goes silent
     * after a request, both stay open long past the timeout.
     */
    @Test
    void theSameHandlerAddedInDoOnConnectionClosesNeitherConnection() throws Exception {
        DisposableServer server = okServer(HttpServer.create()
                .doOnConnection(connection -> connection.addHandlerLast(
                        "wheelbeat.readTimeout", new WheelReadTimeoutHandler(READ_IDLE_NANOS, TimeUnit.NANOSECONDS))));
        try (LoopbackClient silent = new LoopbackClient(server.port());
                LoopbackClient afterOneRequest = new LoopbackClient(server.port())) {
            afterOneRequest.send(REQUEST);
            afterOneRequest.readUntil("\r\n\r\nok");
            long waitMillis = 3 * READ_IDLE.toMillis();
            assertEquals(-1, afterOneRequest.awaitClose(waitMillis), "closed after a request");
            assertEquals(-1, silent.awaitClose(1), "closed without a request");
        } finally {
            server.disposeNow();
        }
    }

    private static DisposableServer okServer(HttpServer server) {
        return server.host("127.0.0.1")
                .port(0)
                .handle((request, response) -> response.sendString(Mono.just("ok")))
                .bindNow();
    }

    private static void assertClosedAtTheTimeout(long from, long closedAt) {
        assertClosedAfter(READ_IDLE, from, closedAt);
    }

    private static void assertClosedAfter(Duration readIdle, long from, long closedAt) {
        assertTrue(closedAt != -1, "still open " + CLOSE_WAIT_MILLIS + " ms later");
        long after = closedAt - from;
        assertTrue(
                after >= readIdle.toNanos() - EARLY_NANOS, "closed " + after / 1_000 + " us after, before the timeout");
    }
}
