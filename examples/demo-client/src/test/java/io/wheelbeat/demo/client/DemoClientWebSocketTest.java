package io.wheelbeat.demo.client;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.EventLoopGroup;
import io.wheelbeat.demo.Transport;
import io.wheelbeat.demo.server.DemoServer;
import io.wheelbeat.netty.reconnect.ReconnectEvent;
import io.wheelbeat.netty.reconnect.ReconnectGroup;
import io.wheelbeat.netty.reconnect.ReconnectingClient;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * {@code demo-client --websocket} against the demo server's WebSocket endpoint, both in this JVM
 * over real sockets: every connection completes the handshake, gets pongs to its own pings (the
 * server pings too) and echoes of its text frames, and the server's graceful stop reaches each as
 * a close frame, counted as a goodbye. Waits are generous and never the verdict.
 */
class DemoClientWebSocketTest {

    private static final int CLIENTS = 10;
    private final ClientStats stats = new ClientStats(CLIENTS);

    private static final Pattern SUMMARY = Pattern.compile("(\\d+) pongs .*, (\\d+) goodbyes, (\\d+) echoes");

    @Test
    void webSocketClientsHeartbeatEchoAndSeeTheGracefulStop() throws Exception {
        DemoServer serverOptions = new DemoServer();
        new CommandLine(serverOptions)
                .parseArgs(
                        "--port",
                        "0",
                        "--websocket-port",
                        "0",
                        "--metrics-port",
                        "-1",
                        "--threads",
                        "2",
                        "--websocket-ping-interval-ms",
                        "300",
                        "--lame-duck-ms",
                        "200");
        DemoServer.Running server = serverOptions.start();
        DemoClient options = new DemoClient();
        // Data every 500 ms, pings after 200 ms without a write: both flow.
        new CommandLine(options)
                .parseArgs(
                        "--websocket",
                        "--port",
                        String.valueOf(server.webSocketAddress().getPort()),
                        "--ping-interval-ms",
                        "200",
                        "--pong-timeout-ms",
                        "2000",
                        "--data-interval-ms",
                        "500");
        AtomicInteger healthy = new AtomicInteger();
        EventLoopGroup loops = Transport.best().newGroup(2);
        List<ReconnectingClient> clients = new ArrayList<>();
        try {
            Bootstrap bootstrap = options.bootstrap(loops, stats);
            ReconnectGroup group = new ReconnectGroup(CLIENTS);
            for (int i = 0; i < CLIENTS; i++) {
                ReconnectingClient client = options.reconnecting(bootstrap, group, event -> {
                            stats.onEvent(event);
                            if (event instanceof ReconnectEvent.Healthy) {
                                healthy.incrementAndGet();
                            }
                        })
                        .build();
                clients.add(client);
                client.start();
            }
            await(() -> healthy.get() == CLIENTS, "every WebSocket client healthy");
            await(
                    () -> summary(stats, 1) >= 3L * CLIENTS && summary(stats, 3) >= 3L * CLIENTS,
                    "pongs and echoes on every connection");
            server.close();
            server = null;
            await(() -> summary(stats, 2) >= CLIENTS, "a close frame on every connection");
            String summary = stats.summary();
            System.out.println("demo-client --websocket: " + summary);
            assertTrue(summary.contains(CLIENTS + " goodbyes"), summary);
        } finally {
            CompletableFuture.allOf(
                            clients.stream().map(ReconnectingClient::close).toArray(CompletableFuture[]::new))
                    .get(30, TimeUnit.SECONDS);
            loops.shutdownGracefully(0, 2, TimeUnit.SECONDS).await(30, TimeUnit.SECONDS);
            if (server != null) {
                server.close();
            }
        }
    }

    /** Group {@code group} of the whole-run summary: 1 pongs, 2 goodbyes, 3 echoes. */
    private static long summary(ClientStats stats, int group) {
        Matcher m = SUMMARY.matcher(stats.summary());
        if (!m.find()) {
            throw new AssertionError("unexpected summary: " + stats.summary());
        }
        return Long.parseLong(m.group(group));
    }

    private void await(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("never happened: " + what + "; " + stats.summary());
            }
            Thread.sleep(20);
        }
    }
}
