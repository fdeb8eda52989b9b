package io.wheelbeat.demo.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.wheelbeat.demo.server.DemoServer;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The server and the client as real processes: the client connects and heartbeats; the server
 * is killed and started again; the client reconnects; SIGTERM shuts the server down gracefully
 * (GOODBYE to every connection, exit 0), and the client exits 0 with a summary. Waits are
 * generous and never the verdict.
 */
class DemoProcessesTest {

    private static final int CONNECTIONS = 20;
    private static final long WAIT_SECONDS = 60;
    private static final Pattern STATUS =
            Pattern.compile("connected (\\d+)/(\\d+), reconnecting \\d+, attempts \\d+, pongs (\\d+).*goodbyes (\\d+)");

    private Process server;
    private Process client;

    @AfterEach
    void killLeftovers() {
        for (Process process : new Process[] {server, client}) {
            if (process != null) {
                process.destroyForcibly();
            }
        }
    }

    @Test
    void clientHeartbeatsReconnectsAfterAServerRestartAndSeesAGracefulShutdown() throws Exception {
        int port = JavaProcess.freePort();
        server = startServer(port);
        client = start(
                DemoClient.class,
                "--port",
                String.valueOf(port),
                "--connections",
                String.valueOf(CONNECTIONS),
                "--ping-interval-ms",
                "600",
                "--status-interval-s",
                "1");
        BlockingQueue<String> clientLines = JavaProcess.lines(client);

        awaitStatus(clientLines, s -> s.connected == CONNECTIONS && s.pongs > 0, "all connected and heartbeating");

        server.destroyForcibly().waitFor();
        awaitStatus(clientLines, s -> s.connected == 0, "all connections lost after the kill");

        server = startServer(port);
        Status back =
                awaitStatus(clientLines, s -> s.connected == CONNECTIONS && s.pongs > 0, "all back after the restart");

        server.toHandle().destroy(); // SIGTERM, leaving our end of its output open
        assertTrue(server.waitFor(WAIT_SECONDS, TimeUnit.SECONDS), "server did not exit after SIGTERM");
        assertEquals(143, server.exitValue(), "graceful shutdown ends as the JVM does on SIGTERM, 128 + 15");
        awaitStatus(clientLines, s -> s.goodbyes >= back.goodbyes + CONNECTIONS, "a GOODBYE on every connection");

        client.toHandle().destroy(); // SIGTERM, leaving our end of its output open
        assertTrue(client.waitFor(WAIT_SECONDS, TimeUnit.SECONDS), "client did not exit after SIGTERM");
        assertEquals(143, client.exitValue());
        List<String> rest = drain(clientLines);
        assertTrue(
                rest.stream().anyMatch(line -> line.startsWith("summary: " + CONNECTIONS + " connections")),
                "the client prints a summary on exit: " + rest);
    }

    /** One parsed status line of the client. */
    private record Status(int connected, long pongs, long goodbyes) {}

    private static Status awaitStatus(BlockingQueue<String> lines, Predicate<Status> wanted, String what)
            throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        String last = "none";
        while (System.nanoTime() < deadline) {
            String line = lines.poll(1, TimeUnit.SECONDS);
            if (line == null) {
                continue;
            }
            Matcher m = STATUS.matcher(line);
            if (m.find()) {
                last = line;
                Status status = new Status(
                        Integer.parseInt(m.group(1)), Long.parseLong(m.group(3)), Long.parseLong(m.group(4)));
                if (wanted.test(status)) {
                    return status;
                }
            }
        }
        throw new AssertionError("never saw: " + what + "; last status: " + last);
    }

    private Process startServer(int port) throws IOException {
        return start(
                DemoServer.class,
                "--port",
                String.valueOf(port),
                "--metrics-port",
                "-1",
                "--threads",
                "2",
                "--lame-duck-ms",
                "1000");
    }

    private static Process start(Class<?> main, String... args) throws IOException {
        return JavaProcess.start(main, List.of("-Xmx256m"), args);
    }

    private static List<String> drain(BlockingQueue<String> lines) throws InterruptedException {
        Thread.sleep(200);
        List<String> rest = new java.util.ArrayList<>();
        lines.drainTo(rest);
        return rest;
    }
}
