package io.wheelbeat.demo.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;

/**
 * Issue 13, item 4, over real sockets: the demo server, stopped gracefully with 2,000 demo
 * clients connected, says GOODBYE to them one after another over its 3 s lame-duck window,
 * telling each to spread its reconnect over that window; a new server takes the port, and the
 * clients come back spread out instead of in one herd. Servers and clients share this JVM: 4,000
 * sockets, well within the open-file limit.
 *
 * <p>Bounds: every client is told the window and comes back; the delays the clients draw for
 * their first reconnect after the stop are within the window, no 100 ms window of delays holds
 * more than 20% of them (an even spread over the 3 s window puts about 3% in one; a herd puts
 * them all within 100 ms, the clients' first backoff delay being 100 to 200 ms), and the middle
 * 90% of them span at least half the window. The bounds are on the delays drawn, which no CPU
 * shortage changes; when the attempts then happen also depends on how soon this JVM's loops run
 * them (bunched when it is short of CPU), so their spread is printed as a figure.
 */
@Timeout(180)
class LameDuckReconnectTest {

    private static final int CLIENTS = 2_000;
    private static final long LAME_DUCK_MS = 3_000;

    @Test
    void aGracefulStopSpreadsTheClientsReconnectsOverTheLameDuckWindow() throws Exception {
        DemoServer.Running first = server(0);
        int port = first.address().getPort();
        DemoServer.Running second = null;
        DemoClient options = new DemoClient();
        new CommandLine(options).parseArgs("--port", String.valueOf(port), "--ping-interval-ms", "500");
        ClientStats stats = new ClientStats(CLIENTS);
        AtomicInteger healthy = new AtomicInteger();
        AtomicInteger connected = new AtomicInteger();
        ConcurrentLinkedQueue<Long> reconnectAttempts = new ConcurrentLinkedQueue<>();
        ConcurrentLinkedQueue<Long> reconnectDelays = new ConcurrentLinkedQueue<>();
        EventLoopGroup loops = Transport.best().newGroup(2);
        List<ReconnectingClient> clients = new ArrayList<>();
        try {
            Bootstrap bootstrap = options.bootstrap(loops, stats);
            ReconnectGroup group = new ReconnectGroup(64);
            for (int i = 0; i < CLIENTS; i++) {
                ReconnectingClient client = options.reconnecting(bootstrap, group, event -> {
                            stats.onEvent(event);
                            if (event instanceof ReconnectEvent.Healthy) {
                                healthy.incrementAndGet();
                            } else if (event instanceof ReconnectEvent.Connected) {
                                connected.incrementAndGet();
                            } else if (event instanceof ReconnectEvent.Connecting c && c.attempt() == 2) {
                                reconnectAttempts.add(System.nanoTime()); // the first attempt after the loss
                            } else if (event instanceof ReconnectEvent.AttemptScheduled s && s.attempt() == 2) {
                                reconnectDelays.add(s.delay().toNanos()); // drawn from the window the GOODBYE gave
                            }
                        })
                        .build();
                clients.add(client);
                client.start();
            }
            await(() -> healthy.get() == CLIENTS, "all clients connected and healthy");

            long stoppedAt = System.nanoTime();
            CompletableFuture<Void> stopped = CompletableFuture.runAsync(first::close);
            second = serverOnceThePortIsFree(port);
            stopped.get(60, TimeUnit.SECONDS);
            long lameDuckOver = System.nanoTime() - stoppedAt;
            await(() -> connected.get() == 2 * CLIENTS, "all clients back on the new server");
            await(() -> reconnectAttempts.size() >= CLIENTS, "a first reconnect attempt from each client");

            long[] times = reconnectAttempts.stream()
                    .mapToLong(t -> t - stoppedAt)
                    .sorted()
                    .toArray();
            long[] delays =
                    reconnectDelays.stream().mapToLong(Long::longValue).sorted().toArray();
            int busiest = Spread.busiestWindow(delays, TimeUnit.MILLISECONDS.toNanos(100));
            double middleSpan = (delays[(int) (delays.length * 0.95)] - delays[(int) (delays.length * 0.05)]) / 1e9;
            int busiestAttempts = Spread.busiestWindow(times, TimeUnit.MILLISECONDS.toNanos(100));
            double attemptsMiddleSpan = (times[(int) (times.length * 0.95)] - times[(int) (times.length * 0.05)]) / 1e9;
            String summary = stats.summary();
            System.out.printf(
                    "lame duck: %d clients, window %d ms, the stop took %.2f s; delays drawn for the first "
                            + "reconnect from %.2f s to %.2f s, middle 90%% over %.2f s (bound %.1f s), busiest 100 ms "
                            + "window %d (%.1f%%, bound 20%%); first reconnects from %.2f s to %.2f s after the stop, "
                            + "middle 90%% over %.2f s, busiest 100 ms window %d (%.1f%%); %s%n",
                    CLIENTS,
                    LAME_DUCK_MS,
                    lameDuckOver / 1e9,
                    delays[0] / 1e9,
                    delays[delays.length - 1] / 1e9,
                    middleSpan,
                    LAME_DUCK_MS / 2000.0,
                    busiest,
                    100.0 * busiest / delays.length,
                    times[0] / 1e9,
                    times[times.length - 1] / 1e9,
                    attemptsMiddleSpan,
                    busiestAttempts,
                    100.0 * busiestAttempts / times.length,
                    summary);

            assertTrue(summary.contains(CLIENTS + " goodbyes"), "a GOODBYE on every connection: " + summary);
            assertEquals(CLIENTS, times.length, "one first reconnect per client");
            assertEquals(CLIENTS, delays.length, "one first reconnect scheduled per client");
            assertTrue(
                    delays[0] >= 0 && delays[delays.length - 1] < TimeUnit.MILLISECONDS.toNanos(LAME_DUCK_MS),
                    "delays within the window");
            assertTrue(busiest <= 0.2 * delays.length, "busiest 100 ms window: " + busiest);
            assertTrue(middleSpan >= LAME_DUCK_MS / 2000.0, "middle 90% over " + middleSpan + " s");
        } finally {
            CompletableFuture.allOf(
                            clients.stream().map(ReconnectingClient::close).toArray(CompletableFuture[]::new))
                    .get(30, TimeUnit.SECONDS);
            loops.shutdownGracefully(0, 2, TimeUnit.SECONDS).await(30, TimeUnit.SECONDS);
            if (second != null) {
                second.close();
            }
        }
    }

    private static DemoServer.Running server(int port) {
        DemoServer options = new DemoServer();
        new CommandLine(options)
                .parseArgs(
                        "--port",
                        String.valueOf(port),
                        "--metrics-port",
                        "-1",
                        "--threads",
                        "2",
                        "--lame-duck-ms",
                        String.valueOf(LAME_DUCK_MS),
                        "--connections-per-address",
                        "1000000");
        return options.start();
    }

    /** The first server closes its listening socket before its lame duck; take the port then. */
    private static DemoServer.Running serverOnceThePortIsFree(int port) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            try {
                return server(port);
            } catch (IllegalStateException bindFailed) {
                if (System.nanoTime() - deadline > 0) {
                    throw bindFailed;
                }
                Thread.sleep(10);
            }
        }
    }

    private static void await(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("never happened: " + what);
            }
            Thread.sleep(20);
        }
    }
}
