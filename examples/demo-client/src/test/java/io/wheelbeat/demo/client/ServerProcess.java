package io.wheelbeat.demo.client;

import io.wheelbeat.demo.server.DemoServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The demo server in its own JVM, on free ports, with its Prometheus endpoint read over HTTP:
 * a server whose memory, file descriptors and failures are its own.
 */
final class ServerProcess implements AutoCloseable {

    private final Process process;
    private final BlockingQueue<String> lines;
    private final List<String> output = new ArrayList<>();
    private final int port;
    private final int metricsPort;
    private final HttpClient http = HttpClient.newHttpClient();

    private ServerProcess(List<String> jvmOptions, List<String> args) throws IOException {
        port = JavaProcess.freePort();
        metricsPort = JavaProcess.freePort();
        List<String> all =
                new ArrayList<>(List.of("--port", String.valueOf(port), "--metrics-port", String.valueOf(metricsPort)));
        all.addAll(args);
        process = JavaProcess.start(DemoServer.class, jvmOptions, all.toArray(String[]::new));
        lines = JavaProcess.lines(process);
    }

    /** Starts the server and returns once it listens (within 60 s). */
    static ServerProcess start(List<String> jvmOptions, String... args) throws Exception {
        ServerProcess server = new ServerProcess(jvmOptions, List.of(args));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() - deadline < 0) {
            String line = server.lines.poll(1, TimeUnit.SECONDS);
            if (line != null) {
                server.output.add(line);
                if (line.contains("listening on")) {
                    return server;
                }
            }
            if (!server.process.isAlive()) {
                break;
            }
        }
        server.close();
        throw new AssertionError("the server did not start: " + server.output());
    }

    InetSocketAddress address() {
        return new InetSocketAddress("127.0.0.1", port);
    }

    /**
     * Sums the samples of the Prometheus series {@code name} whose labels contain every one of
     * {@code labels} (each written as in the text format, e.g. {@code reason="slow_consumer"}).
     */
    double metric(String name, String... labels) throws IOException, InterruptedException {
        String body = http.send(
                        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + metricsPort + "/metrics"))
                                .build(),
                        HttpResponse.BodyHandlers.ofString())
                .body();
        double sum = 0;
        for (String line : body.split("\n")) {
            if (!(line.startsWith(name + "{") || line.startsWith(name + " "))) {
                continue;
            }
            boolean all = true;
            for (String label : labels) {
                all &= line.contains(label);
            }
            if (all) {
                sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return sum;
    }

    /** Everything the server printed so far. */
    List<String> output() {
        lines.drainTo(output);
        return output;
    }

    boolean isAlive() {
        return process.isAlive();
    }

    @Override
    public void close() throws InterruptedException {
        process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
    }
}
