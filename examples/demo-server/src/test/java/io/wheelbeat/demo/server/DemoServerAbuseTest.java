package io.wheelbeat.demo.server;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.wheelbeat.demo.protocol.FrameType;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * Bad input and abuse over real sockets: each ends with that connection closed and the reason
 * counted, and the server still serves a well-behaved client afterwards. Real time with short
 * limits; waits are generous and never the verdict.
 */
class DemoServerAbuseTest {

    private DemoServer.Running server;
    private InetSocketAddress address;

    @BeforeEach
    void startServer() {
        DemoServer options = new DemoServer();
        new CommandLine(options)
                .parseArgs(
                        "--port",
                        "0",
                        "--metrics-port",
                        "0",
                        "--threads",
                        "2",
                        "--first-message-timeout-ms",
                        "300",
                        "--reader-idle-ms",
                        "5000",
                        "--min-ping-interval-ms",
                        "1000",
                        "--max-ping-strikes",
                        "3",
                        "--max-frame-bytes",
                        "1024",
                        "--connections-per-address",
                        "20");
        server = options.start();
        address = server.address();
    }

    @AfterEach
    void stopServer() {
        server.close();
    }

    private double closed(String reason) {
        return server.registry
                .get("wheelbeat.connection.closed")
                .tag("reason", reason)
                .counter()
                .count();
    }

    private void assertServerStillEchoes() throws IOException {
        try (RawClient healthy = new RawClient(address)) {
            byte[] payload = "still here".getBytes(StandardCharsets.UTF_8);
            healthy.send(FrameType.DATA, payload);
            RawClient.WireFrame echo = healthy.read();
            assertEquals(FrameType.DATA.code(), echo.type());
            assertArrayEquals(payload, echo.payload());
        }
    }

    @Test
    void dataFramesAreEchoed() throws IOException {
        assertServerStillEchoes();
    }

    @Test
    void pingIsAnsweredWithAPongCarryingItsTimestamp() throws IOException {
        try (RawClient client = new RawClient(address)) {
            client.ping(1234);
            RawClient.WireFrame pong = client.read();
            assertEquals(FrameType.PONG.code(), pong.type());
            assertEquals(1234, ByteBuffer.wrap(pong.payload()).getLong());
        }
    }

    @Test
    void malformedFrameClosesThatConnectionOnly() throws IOException {
        try (RawClient bad = new RawClient(address)) {
            bad.sendRaw(77, 0, new byte[0]);
            assertEquals("malformed_frame", bad.readUntilClosed());
        }
        assertEquals(1, closed("malformed_frame"));
        assertServerStillEchoes();
    }

    @Test
    void oversizedFrameIsRefusedFromItsHeader() throws IOException {
        try (RawClient bad = new RawClient(address)) {
            bad.sendRaw(FrameType.DATA.code(), 1_000_000, new byte[0]);
            assertEquals("oversized_frame", bad.readUntilClosed());
        }
        assertEquals(1, closed("oversized_frame"));
        assertServerStillEchoes();
    }

    @Test
    void connectionThatNeverSendsIsClosedAfterTheFirstMessageTimeout() throws IOException {
        try (RawClient silent = new RawClient(address)) {
            silent.readUntilClosed();
        }
        assertEquals(1, closed("first_message_timeout"));
        assertServerStillEchoes();
    }

    @Test
    void pingFloodIsClosedAfterTheStrikes() throws IOException {
        try (RawClient flooder = new RawClient(address)) {
            flooder.pingFlood(10);
            assertEquals("too many pings", flooder.readUntilClosed());
        }
        assertEquals(1, closed("too_many_pings"));
        assertServerStillEchoes();
    }

    @Test
    void connectionFloodFromOneAddressIsCutAtTheLimit() throws IOException, InterruptedException {
        List<RawClient> flood = new ArrayList<>();
        try {
            for (int i = 0; i < 60; i++) {
                flood.add(new RawClient(address));
            }
            double rejected = rejectedConnections();
            long deadline = System.nanoTime() + 30_000_000_000L;
            while (rejected < 40 && System.nanoTime() < deadline) {
                Thread.sleep(20);
                rejected = rejectedConnections();
            }
            assertTrue(rejected >= 40 - 20, "at most 20 per second admitted, rejected " + rejected);
        } finally {
            for (RawClient client : flood) {
                client.close();
            }
        }
        Thread.sleep(1_100); // the one-second window passes, so the healthy client is admitted
        assertServerStillEchoes();
    }

    private double rejectedConnections() {
        return server
                .registry
                .get("wheelbeat.ratelimit.rejected")
                .tag("limiter", "connections-per-address")
                .functionCounters()
                .stream()
                .mapToDouble(c -> c.count())
                .sum();
    }

    @Test
    void metricsEndpointServesThePrometheusTextFormatWithTheWheelMeters() throws Exception {
        assertServerStillEchoes();
        HttpResponse<String> response = HttpClient.newHttpClient()
                .send(
                        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.metricsPort() + "/metrics"))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
        assertEquals(200, response.statusCode());
        assertTrue(response.headers().firstValue("Content-Type").orElse("").startsWith("text/plain"));
        String body = response.body();
        assertTrue(body.contains("# TYPE wheelbeat_timer_pending_timers gauge"), body);
        assertTrue(body.contains("wheelbeat_timer_scheduled_timers_total{wheel=\"loop-"), body);
        assertTrue(body.contains("netty_eventexecutor_tasks_pending"), body);
        assertTrue(body.contains("netty_allocator_memory_used"), body);
    }
}
