package io.wheelbeat.demo.server;

import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.Counter;
import io.wheelbeat.netty.websocket.JdkWebSocketClient;
import io.wheelbeat.netty.websocket.RawWebSocketClient;
import io.wheelbeat.netty.websocket.WebSocketKeepAliveHandler;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * The demo server's WebSocket endpoint over real sockets, with the JDK's WebSocket client and a
 * raw RFC 6455 client: echo, the server's keepalive, bad input closed with the protocol's status
 * and counted under the TCP port's reasons, and the graceful shutdown's close frame. Waits are
 * generous and never the verdict.
 */
class DemoServerWebSocketTest {

    private static final long WAIT_MILLIS = 20_000;

    private DemoServer.Running server;
    private InetSocketAddress address;
    private URI uri;
    private final List<AutoCloseable> clients = new ArrayList<>();

    @BeforeEach
    void startServer() {
        DemoServer options = new DemoServer();
        new CommandLine(options)
                .parseArgs(
                        "--port",
                        "0",
                        "--websocket-port",
                        "0",
                        "--metrics-port",
                        "-1",
                        "--threads",
                        "2",
                        "--reader-idle-ms",
                        "3000",
                        "--websocket-ping-interval-ms",
                        "200",
                        "--websocket-pong-timeout-ms",
                        "300",
                        "--websocket-max-missed-pongs",
                        "2",
                        "--max-frame-bytes",
                        "1024",
                        "--lame-duck-ms",
                        "200");
        server = options.start();
        address = server.webSocketAddress();
        uri = URI.create("ws://127.0.0.1:" + address.getPort() + DemoServer.WEBSOCKET_PATH);
    }

    @AfterEach
    void stopServer() throws Exception {
        for (AutoCloseable client : clients) {
            client.close();
        }
        if (server != null) {
            server.close();
        }
    }

    private JdkWebSocketClient jdkClient() throws Exception {
        JdkWebSocketClient client = new JdkWebSocketClient(uri, WAIT_MILLIS);
        clients.add(client);
        return client;
    }

    private RawWebSocketClient rawClient() throws Exception {
        RawWebSocketClient client = new RawWebSocketClient(address, DemoServer.WEBSOCKET_PATH, (int) WAIT_MILLIS);
        clients.add(client);
        return client;
    }

    /** Waits until the close counter for {@code reason} reaches {@code count}; returns its value. */
    private double awaitClosed(String reason, double count) throws InterruptedException {
        Counter closed = server.registry
                .get("wheelbeat.connection.closed")
                .tag("reason", reason)
                .counter();
        long deadline = System.nanoTime() + MILLISECONDS.toNanos(WAIT_MILLIS);
        while (closed.count() < count && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        return closed.count();
    }

    @Test
    void echoesTextAndKeepsAQuietJdkClientAliveWithItsPings() throws Exception {
        JdkWebSocketClient client = jdkClient();
        client.sendText("hello", WAIT_MILLIS);
        assertEquals("hello", client.texts.poll(WAIT_MILLIS, MILLISECONDS));
        Thread.sleep(1_500); // about 7 ping intervals
        assertNull(client.closed.peek());
        assertTrue(client.pings.get() >= 3, "pings: " + client.pings.get());
        assertTrue(server.registry.get("wheelbeat.heartbeat.rtt").timer().count() >= 3);
        client.sendText("still here", WAIT_MILLIS);
        assertEquals("still here", client.texts.poll(WAIT_MILLIS, MILLISECONDS));
    }

    @Test
    void aClientSilentAfterTheHandshakeIsClosedWithPingTimeoutAndCounted() throws Exception {
        RawWebSocketClient.Frame close = rawClient().readUntilClosed();
        assertEquals(1001, close.closeStatus());
        assertEquals(WebSocketKeepAliveHandler.PING_TIMEOUT, close.closeReason());
        assertEquals(1, awaitClosed("heartbeat_timeout", 1));
    }

    @Test
    void malformedAndOversizedFramesCloseThatConnectionWithTheProtocolsStatusAndAreCounted() throws Exception {
        JdkWebSocketClient bystander = jdkClient();
        RawWebSocketClient unmasked = rawClient();
        unmasked.send(
                RawWebSocketClient.frame(RawWebSocketClient.TEXT, "hi".getBytes(StandardCharsets.US_ASCII), false));
        assertEquals(1002, unmasked.readUntilClosed().closeStatus());
        assertEquals(1, awaitClosed("malformed_frame", 1));
        RawWebSocketClient oversized = rawClient();
        oversized.send(RawWebSocketClient.header(RawWebSocketClient.BINARY, 2048)); // --max-frame-bytes 1024
        assertEquals(1009, oversized.readUntilClosed().closeStatus());
        assertEquals(1, awaitClosed("oversized_frame", 1));
        bystander.sendText("unharmed", WAIT_MILLIS);
        assertEquals("unharmed", bystander.texts.poll(WAIT_MILLIS, MILLISECONDS));
        assertNull(bystander.closed.peek());
    }

    @Test
    void aMalformedControlFrameIsAnsweredByExactlyOneCloseFrame1002() throws Exception {
        byte[][] malformed = {
            RawWebSocketClient.frame(RawWebSocketClient.PING, new byte[126], true), // control frame over 125 bytes
            RawWebSocketClient.frame(RawWebSocketClient.PING, new byte[4], false), // unmasked
        };
        for (byte[] frame : malformed) {
            RawWebSocketClient client = rawClient();
            client.send(frame);
            List<Integer> closes = client.readUntilEof().stream()
                    .filter(f -> f.opcode() == RawWebSocketClient.CLOSE)
                    .map(RawWebSocketClient.Frame::closeStatus)
                    .toList();
            assertEquals(List.of(1002), closes);
        }
        assertEquals(2, awaitClosed("malformed_frame", 2));
    }

    @Test
    void otherPathsAreNotFound() throws Exception {
        HttpResponse<String> response = HttpClient.newHttpClient()
                .send(
                        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + address.getPort() + "/other"))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
        assertEquals(404, response.statusCode());
    }

    @Test
    void aGracefulShutdownSaysGoingAwayToWebSocketClients() throws Exception {
        JdkWebSocketClient client = jdkClient();
        server.close();
        server = null;
        assertEquals(1001, client.closed.poll(WAIT_MILLIS, MILLISECONDS));
        assertEquals("server shutting down", client.closeReasons.poll(WAIT_MILLIS, MILLISECONDS));
    }
}
