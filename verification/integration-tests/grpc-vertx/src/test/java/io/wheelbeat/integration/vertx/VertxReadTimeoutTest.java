package io.wheelbeat.integration.vertx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.Vertx;
import io.vertx.core.net.NetServer;
import io.wheelbeat.integration.LoopbackClient;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The recipe of {@link VertxRecipes} on a real Vert.x 5 NetServer and a real client on loopback:
 * a client that talks is kept (and echoed), and is closed once it has been silent for the read
 * timeout, never before. Nothing else in the server closes a connection, so a close at all
 * (within a hang guard) is the handler's; how late it comes is the machine's speed, not a verdict.
 */
class VertxReadTimeoutTest {

    /** Ten times the client's pace, so a stalled test thread does not look silent. */
    /** Longer than this client's thread goes unscheduled on a busy machine, so a talking client stays heard. */
    private static final Duration READ_IDLE = Duration.ofSeconds(3);

    @Test
    void netServerKeepsAClientThatTalksAndClosesItOnceSilent() throws Exception {
        Vertx vertx = Vertx.vertx();
        try {
            NetServer server = VertxRecipes.echoServerClosingIdleConnections(vertx, READ_IDLE)
                    .toCompletionStage()
                    .toCompletableFuture()
                    .get(10, TimeUnit.SECONDS);
            try (LoopbackClient client = new LoopbackClient(server.actualPort())) {
                long lastSent = 0;
                for (int i = 0; i < 35; i++) { // 3.5 s, past the timeout, a message every 100 ms
                    lastSent = client.send("ping" + i);
                    assertEquals("ping" + i, client.readUntil("ping" + i), "echo");
                    assertEquals(-1, client.awaitClose(100), "closed while the client talks");
                }
                long closedAt = client.awaitClose(30_000); // a hang guard only
                assertTrue(closedAt != -1, "still open 30 s later");
                long after = closedAt - lastSent;
                assertTrue(
                        after >= READ_IDLE.toNanos() - TimeUnit.MILLISECONDS.toNanos(10),
                        "closed early: " + after + " ns");
            }
        } finally {
            vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        }
    }
}
