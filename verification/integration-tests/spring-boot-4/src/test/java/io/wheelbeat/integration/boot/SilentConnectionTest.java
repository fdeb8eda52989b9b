package io.wheelbeat.integration.boot;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.wheelbeat.integration.LoopbackClient;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
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
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Mono;

/**
 * The read timeouts on connections where nothing must succeed, so the timeouts can be short: a
 * server connection that never sends a request, and a WebClient call to a server that never
 * answers. Each is closed at its timeout and never before; how late is the machine's business,
 * bounded only by the wait (shorter than any other timer that could close it). Connections that
 * must carry requests are in {@link StarterTest}, with ample timeouts.
 */
@SpringBootTest(
        classes = StarterApplication.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "wheelbeat.server.read-timeout=400ms",
            "wheelbeat.client.read-timeout=300ms",
            "server.netty.idle-timeout=120s",
            "spring.reactor.netty.shutdown-quiet-period=0s"
        })
@Execution(ExecutionMode.CONCURRENT)
@ExtendWith(OutputCaptureExtension.class)
class SilentConnectionTest {

    /** Longer than any busy machine delays a close, shorter than server.netty.idle-timeout. */
    static final long WAIT_MILLIS = 60_000;
    /** Measuring slack: the client's clock readings bracket the server's. */
    private static final long EARLY_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    @Value("${local.server.port}")
    int port;

    @Autowired
    WebClient.Builder webClients;

    @Test
    void aConnectionThatNeverSendsARequestIsClosedAtTheReadTimeout(CapturedOutput output) throws IOException {
        try (LoopbackClient client = new LoopbackClient(port)) {
            assertClosedNotBefore(client.connectingAt(), Duration.ofMillis(400), client.awaitClose(WAIT_MILLIS));
        }
        // Closed quietly: Reactor Netty logs a fired ReadTimeoutException at ERROR with its trace.
        assertFalse(output.getAll().contains("ReadTimeoutException"), output::getAll);
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
            webClients
                    .build()
                    .get()
                    .uri("http://127.0.0.1:" + silent.getLocalPort() + "/")
                    .retrieve()
                    .bodyToMono(String.class)
                    .onErrorResume(e -> Mono.empty())
                    .block(Duration.ofMillis(WAIT_MILLIS));
            assertClosedNotBefore(called, Duration.ofMillis(300), closed.get(WAIT_MILLIS, TimeUnit.MILLISECONDS));
        }
    }

    /** Accepts one connection, reads its request, then waits for its end; returns the clock reading then. */
    private static long readRequestThenAwaitEof(ServerSocket server) {
        try (Socket socket = server.accept()) {
            socket.setSoTimeout((int) WAIT_MILLIS);
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

    /** Closed (not -1) and not before {@code timeout} after {@code from}. */
    static void assertClosedNotBefore(long from, Duration timeout, long closedAt) {
        assertTrue(closedAt != -1, "still open " + WAIT_MILLIS + " ms later");
        long after = closedAt - from;
        assertTrue(
                after >= timeout.toNanos() - EARLY_NANOS, "closed " + after / 1_000 + " us after, before the timeout");
    }
}
