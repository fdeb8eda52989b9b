package io.wheelbeat.integration.boot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.wheelbeat.integration.LoopbackClient;
import io.wheelbeat.spring.boot.autoconfigure.ReactorNettyHandlers;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.Disposable;
import reactor.netty.http.HttpProtocol;

/**
 * The server's HTTP/2 (h2c) and WebSocket keepalive pings and WebClient's HTTP/2 keepalive pings
 * from the {@code wheelbeat.*} properties alone, against peers on loopback (the JDK's WebSocket
 * client; frame-level HTTP/2 and WebSocket peers where a peer must stop answering on purpose): a
 * peer that stops answering pings is closed, never before
 * the ping interval plus the pong timeout; a peer that answers stays open across several pings.
 * The pong timeout is ample (an answer only has to come within seconds on a busy machine); how
 * late a close comes is the machine's business, bounded only by the wait.
 */
@SpringBootTest(
        classes = StarterApplication.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "server.http2.enabled=true",
            "wheelbeat.server.http2.keep-alive-time=" + KeepAlivePingTest.PING_MILLIS + "ms",
            "wheelbeat.server.http2.keep-alive-timeout=" + KeepAlivePingTest.PONG_TIMEOUT_MILLIS + "ms",
            "wheelbeat.server.http2.keep-alive-without-calls=true",
            "wheelbeat.server.websocket.ping-interval=" + KeepAlivePingTest.PING_MILLIS + "ms",
            "wheelbeat.server.websocket.pong-timeout=" + KeepAlivePingTest.PONG_TIMEOUT_MILLIS + "ms",
            "wheelbeat.server.websocket.max-missed-pongs=1",
            "wheelbeat.client.http2.keep-alive-time=" + KeepAlivePingTest.PING_MILLIS + "ms",
            "wheelbeat.client.http2.keep-alive-timeout=" + KeepAlivePingTest.PONG_TIMEOUT_MILLIS + "ms",
            "wheelbeat.server.read-timeout=" + KeepAlivePingTest.READ_TIMEOUT_MILLIS + "ms",
            "server.netty.idle-timeout=120s",
            "spring.reactor.netty.shutdown-quiet-period=0s"
        })
@Execution(ExecutionMode.CONCURRENT)
class KeepAlivePingTest {

    /** Above every close by ping here, so that none of them can be the read timeout's. */
    static final long READ_TIMEOUT_MILLIS = 10_000;

    static final long PING_MILLIS = 300;
    static final long PONG_TIMEOUT_MILLIS = 3_000;
    private static final Duration PING_THEN_TIMEOUT = Duration.ofMillis(PING_MILLIS + PONG_TIMEOUT_MILLIS);
    /** How long an answering peer is watched: past one full timeout, across several pings. */
    private static final long ANSWERING_MILLIS = 2 * (PING_MILLIS + PONG_TIMEOUT_MILLIS);

    private static final byte[] H2_PREFACE = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
    private static final int SETTINGS = 4;
    private static final int PING = 6;
    private static final int GOAWAY = 7;

    @Value("${local.server.port}")
    int port;

    @Autowired
    ReactorNettyHandlers handlers;

    /**
     * An HTTP/1.1 connection to the h2c server (HTTP/1.1 with the h2c upgrade) that keeps sending
     * requests past the read timeout is kept: the read timeout sees its reads there too.
     */
    @Test
    void anHttp11ConnectionToTheH2cServerThatKeepsTalkingIsKept() throws IOException {
        try (LoopbackClient client = new LoopbackClient(port)) {
            for (long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(READ_TIMEOUT_MILLIS * 6 / 5);
                    System.nanoTime() - end < 0; ) {
                client.send("GET /ok HTTP/1.1\r\nHost: localhost\r\n\r\n");
                client.readUntil("\r\n\r\nok"); // fails if the server closed the connection
                assertEquals(-1, client.awaitClose(500), "closed while the client talks");
            }
        }
    }

    @Test
    void anHttp2ClientThatStopsAnsweringPingsIsClosed() throws IOException {
        try (Socket socket = h2c()) {
            long connected = System.nanoTime();
            Http2Frames frames = new Http2Frames(socket, false);
            long closedAt = frames.readUntilClosed(SilentConnectionTest.WAIT_MILLIS);
            SilentConnectionTest.assertClosedNotBefore(connected, PING_THEN_TIMEOUT, closedAt);
            assertTrue(frames.pings >= 1, "no PING came");
            assertEquals("ping_timeout", frames.goAwayDebugData);
        }
    }

    @Test
    void anHttp2ClientThatAnswersPingsStaysOpen() throws IOException {
        try (Socket socket = h2c()) {
            Http2Frames frames = new Http2Frames(socket, true);
            assertEquals(-1, frames.readUntilClosed(ANSWERING_MILLIS), "closed though it answered every PING");
            assertTrue(frames.pings >= 2, frames.pings + " PINGs");
            assertEquals(null, frames.goAwayDebugData);
        }
    }

    @Test
    void aWebSocketClientThatStopsAnsweringPingsIsClosed() throws IOException {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
            long requested = System.nanoTime();
            OutputStream out = socket.getOutputStream();
            out.write(("GET /ws HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            DataInputStream in = new DataInputStream(socket.getInputStream());
            socket.setSoTimeout((int) SilentConnectionTest.WAIT_MILLIS);
            StringBuilder head = new StringBuilder();
            while (!head.toString().endsWith("\r\n\r\n")) {
                head.append((char) in.readUnsignedByte());
            }
            assertTrue(head.toString().startsWith("HTTP/1.1 101"), head.toString());
            int pings = 0;
            long closedAt;
            try {
                while (true) { // server frames: unmasked, payloads under 126 bytes (pings, close)
                    int opcode = in.readUnsignedByte() & 0x0F;
                    in.skipNBytes(in.readUnsignedByte() & 0x7F);
                    pings += opcode == 0x9 ? 1 : 0;
                }
            } catch (EOFException | SocketTimeoutException end) {
                closedAt = end instanceof EOFException ? System.nanoTime() : -1;
            } catch (IOException reset) {
                closedAt = System.nanoTime();
            }
            SilentConnectionTest.assertClosedNotBefore(requested, PING_THEN_TIMEOUT, closedAt);
            assertTrue(pings >= 1, "no ping came");
        }
    }

    /** The JDK's WebSocket client, which answers every ping with a pong echoing its data. */
    @Test
    void aWebSocketClientThatAnswersPingsStaysOpen() throws Exception {
        AtomicInteger pings = new AtomicInteger();
        AtomicInteger closes = new AtomicInteger();
        WebSocket webSocket = HttpClient.newHttpClient()
                .newWebSocketBuilder()
                .buildAsync(URI.create("ws://127.0.0.1:" + port + "/ws"), new WebSocket.Listener() {
                    @Override
                    public CompletionStage<?> onPing(WebSocket ws, ByteBuffer message) {
                        pings.incrementAndGet();
                        ws.request(1);
                        return null;
                    }

                    @Override
                    public CompletionStage<?> onClose(WebSocket ws, int statusCode, String reason) {
                        closes.incrementAndGet();
                        return null;
                    }

                    @Override
                    public void onError(WebSocket ws, Throwable error) {
                        closes.incrementAndGet();
                    }
                })
                .get(SilentConnectionTest.WAIT_MILLIS, TimeUnit.MILLISECONDS);
        try {
            Thread.sleep(ANSWERING_MILLIS);
            assertEquals(0, closes.get(), "closed though it answered every ping");
            assertFalse(webSocket.isInputClosed());
            assertTrue(pings.get() >= 2, pings.get() + " pings");
        } finally {
            webSocket.abort();
        }
    }

    /**
     * WebClient on HTTP/2 (h2c with prior knowledge) to a server that takes the request, never
     * answers it and stops answering PINGs: WebClient's keepalive closes the connection.
     */
    @Test
    void webClientClosesAnHttp2ConnectionWhoseServerStopsAnsweringPings() throws Exception {
        try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            long called = System.nanoTime();
            Disposable call = h2cWebClientCall(server.getLocalPort());
            try (Socket socket = acceptH2c(server)) {
                Http2Frames frames = new Http2Frames(socket, false);
                long closedAt = frames.readUntilClosed(SilentConnectionTest.WAIT_MILLIS);
                SilentConnectionTest.assertClosedNotBefore(called, PING_THEN_TIMEOUT, closedAt);
                assertTrue(frames.pings >= 1, "no PING came");
                assertEquals("ping_timeout", frames.goAwayDebugData);
            } finally {
                call.dispose();
            }
        }
    }

    @Test
    void webClientKeepsAnHttp2ConnectionWhoseServerAnswersPings() throws Exception {
        try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            Disposable call = h2cWebClientCall(server.getLocalPort());
            try (Socket socket = acceptH2c(server)) {
                Http2Frames frames = new Http2Frames(socket, true);
                assertEquals(-1, frames.readUntilClosed(ANSWERING_MILLIS), "closed though the server answered");
                assertTrue(frames.pings >= 2, frames.pings + " PINGs");
            } finally {
                call.dispose();
            }
        }
    }

    /** A call that stays open while the server says nothing, on the starter's client handlers. */
    private Disposable h2cWebClientCall(int port) {
        reactor.netty.http.client.HttpClient h2c =
                reactor.netty.http.client.HttpClient.create().protocol(HttpProtocol.H2C);
        WebClient webClient = WebClient.builder()
                .clientConnector(new ReactorClientHttpConnector(handlers.customize(h2c)))
                .build();
        return webClient
                .get()
                .uri("http://127.0.0.1:" + port + "/")
                .retrieve()
                .bodyToMono(String.class)
                .subscribe(body -> {}, error -> {});
    }

    /** Accepts the client's connection, reads its preface and sends the server's (empty) SETTINGS. */
    private static Socket acceptH2c(ServerSocket server) throws IOException {
        server.setSoTimeout((int) SilentConnectionTest.WAIT_MILLIS);
        Socket socket = server.accept();
        socket.setTcpNoDelay(true);
        socket.setSoTimeout((int) SilentConnectionTest.WAIT_MILLIS);
        byte[] preface = new DataInputStream(socket.getInputStream()).readNBytes(H2_PREFACE.length);
        assertEquals(new String(H2_PREFACE, StandardCharsets.US_ASCII), new String(preface, StandardCharsets.US_ASCII));
        socket.getOutputStream().write(new byte[] {0, 0, 0, 4, 0, 0, 0, 0, 0});
        socket.getOutputStream().flush();
        return socket;
    }

    private Socket h2c() throws IOException {
        Socket socket = new Socket();
        socket.setTcpNoDelay(true);
        socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
        OutputStream out = socket.getOutputStream();
        out.write(H2_PREFACE);
        out.write(new byte[] {0, 0, 0, 4, 0, 0, 0, 0, 0}); // empty SETTINGS
        out.flush();
        return socket;
    }

    /**
     * Reads the peer's HTTP/2 frames: counts its PINGs and answers them if told to, acknowledges its
     * SETTINGS, keeps GOAWAY's debug data.
     */
    private static final class Http2Frames {
        private final Socket socket;
        private final boolean answer;
        int pings;
        String goAwayDebugData;

        Http2Frames(Socket socket, boolean answer) {
            this.socket = socket;
            this.answer = answer;
        }

        /** Reads until the server closes (returns the clock reading then) or {@code millis} pass (returns -1). */
        long readUntilClosed(long millis) throws IOException {
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
            DataInputStream in = new DataInputStream(socket.getInputStream());
            try {
                while (true) {
                    long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
                    if (left <= 0) {
                        return -1;
                    }
                    socket.setSoTimeout((int) left);
                    int length = in.readUnsignedShort() << 8 | in.readUnsignedByte();
                    int type = in.readUnsignedByte();
                    int flags = in.readUnsignedByte();
                    in.readInt(); // stream id
                    byte[] payload = in.readNBytes(length);
                    if (type == PING && (flags & 1) == 0) {
                        pings++;
                        if (answer) {
                            OutputStream out = socket.getOutputStream();
                            out.write(new byte[] {0, 0, 8, PING, 1, 0, 0, 0, 0});
                            out.write(payload);
                            out.flush();
                        }
                    } else if (type == SETTINGS && (flags & 1) == 0) {
                        socket.getOutputStream().write(new byte[] {0, 0, 0, SETTINGS, 1, 0, 0, 0, 0});
                        socket.getOutputStream().flush();
                    } else if (type == GOAWAY) {
                        goAwayDebugData = new String(payload, 8, length - 8, StandardCharsets.US_ASCII);
                    }
                }
            } catch (SocketTimeoutException quiet) {
                return -1;
            } catch (IOException closed) { // end of stream or reset
                return System.nanoTime();
            }
        }
    }
}
