package io.wheelbeat.demo.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.wheelbeat.demo.protocol.FrameType;
import io.wheelbeat.ratelimit.redis.RedisProcess;
import java.io.IOException;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * Three demo servers sharing one real Redis hold the per-address connection limit across all
 * three: a burst from one address spread over them is admitted as if by one server.
 */
class DemoServerClusterTest {

    private static final int LIMIT = 10;
    private static final int SERVERS = 3;

    private static DemoServer.Running start(String... args) {
        DemoServer options = new DemoServer();
        new CommandLine(options).parseArgs(args);
        return options.start();
    }

    /** Connects and sends a DATA frame: true if echoed (admitted), false if closed (refused). */
    private static boolean admitted(DemoServer.Running server, List<RawClient> open) throws IOException {
        RawClient client = new RawClient(server.address());
        open.add(client);
        byte[] payload = "hello".getBytes(StandardCharsets.UTF_8);
        try {
            client.send(FrameType.DATA, payload);
            return client.read().type() == FrameType.DATA.code();
        } catch (java.io.EOFException | SocketException refused) {
            return false;
        }
    }

    @Test
    void serversSharingARedisHoldThePerAddressConnectionLimitClusterWide() throws Exception {
        List<DemoServer.Running> servers = new ArrayList<>();
        List<RawClient> open = new ArrayList<>();
        try (RedisProcess redis = new RedisProcess()) {
            for (int i = 0; i < SERVERS; i++) {
                servers.add(start(
                        "--port",
                        "0",
                        "--metrics-port",
                        "-1",
                        "--threads",
                        "1",
                        "--lame-duck-ms",
                        "0",
                        "--connections-per-address",
                        Integer.toString(LIMIT),
                        "--redis",
                        redis.uri(),
                        "--cluster-size",
                        Integer.toString(SERVERS)));
            }
            // Start just after a window of Redis's clock (this machine's wall clock) begins.
            while (System.currentTimeMillis() % 1000 > 50) {
                Thread.sleep(1);
            }
            long start = System.currentTimeMillis();
            int accepted = 0;
            for (int attempt = 0; attempt < 6 * LIMIT; attempt++) {
                accepted += admitted(servers.get(attempt % SERVERS), open) ? 1 : 0;
            }
            long took = System.currentTimeMillis() - start;
            // In each window of Redis's clock: the limit, plus at most one connection on credit per
            // server; each server alone would have accepted LIMIT, three times the limit in all. A
            // busy machine can stretch the burst over more windows: the bound counts them.
            long windows = (start % 1000 + took) / 1000 + 1;
            assertTrue(
                    accepted >= LIMIT && accepted <= windows * (LIMIT + SERVERS),
                    "accepted " + accepted + " of " + 6 * LIMIT + " in " + took + " ms (" + windows + " windows)");
            double refused = 0;
            for (DemoServer.Running server : servers) {
                refused += server.registry
                        .get("wheelbeat.ratelimit.rejected")
                        .tag("reason", "rate")
                        .functionCounter()
                        .count();
                assertEquals(
                        0,
                        server.registry
                                .get("wheelbeat.ratelimit.store.fallbacks")
                                .tag("cause", "unavailable")
                                .functionCounter()
                                .count());
            }
            assertEquals(6 * LIMIT - accepted, refused);
        } finally {
            for (RawClient client : open) {
                client.close();
            }
            servers.forEach(DemoServer.Running::close);
        }
    }

    @Test
    void anUnreachableRedisStopsTheServerFromStartingWithAClearError() {
        String uri = "redis://127.0.0.1:" + RedisProcess.freePort();
        IllegalStateException e = assertThrows(
                IllegalStateException.class, () -> start("--port", "0", "--metrics-port", "-1", "--redis", uri));
        assertTrue(e.getMessage().contains("--redis") && e.getMessage().contains(uri), e.getMessage());
    }
}
