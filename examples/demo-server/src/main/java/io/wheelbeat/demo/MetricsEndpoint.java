package io.wheelbeat.demo;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;

/**
 * Serves a Prometheus registry at {@code http://HOST:PORT/metrics} in the Prometheus text format,
 * on a small JDK HTTP server with one thread. Closed with {@link #close()}.
 */
public final class MetricsEndpoint implements AutoCloseable {

    private static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

    private final HttpServer server;

    /** Starts serving; port 0 picks a free port. */
    public MetricsEndpoint(PrometheusMeterRegistry registry, InetSocketAddress address) throws IOException {
        server = HttpServer.create(address, 0);
        server.createContext("/metrics", exchange -> respond(exchange, registry));
        server.start();
    }

    /** Returns the address the endpoint listens on. */
    public InetSocketAddress address() {
        return server.getAddress();
    }

    private static void respond(HttpExchange exchange, PrometheusMeterRegistry registry) throws IOException {
        try (exchange) {
            if (!"GET".equals(exchange.getRequestMethod())) {
                exchange.sendResponseHeaders(405, -1);
                return;
            }
            byte[] body = registry.scrape().getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", CONTENT_TYPE);
            exchange.sendResponseHeaders(200, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        }
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
