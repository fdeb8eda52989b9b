package io.wheelbeat.ratelimit.redis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import redis.embedded.RedisServer;

/**
 * A real {@code redis-server} (the binary embedded-redis ships) on a free loopback port, for
 * tests: started by the constructor, killed and restarted on the same port on demand, stopped by
 * {@link #close()} (and by embedded-redis's shutdown hook if a test dies first). Nothing is saved
 * to disk.
 */
public final class RedisProcess implements AutoCloseable {

    private final int port;
    private RedisServer server;

    /** Starts a server on a free port. */
    public RedisProcess() {
        this.port = freePort();
        start();
    }

    /** Returns the URI of the server. */
    public String uri() {
        return "redis://127.0.0.1:" + port;
    }

    /** Returns the port. */
    public int port() {
        return port;
    }

    /** Starts the server again on the same port after {@link #kill()}. */
    public synchronized void start() {
        try {
            server = RedisServer.newRedisServer()
                    .port(port)
                    .bind("127.0.0.1")
                    .setting("save \"\"")
                    .setting("appendonly no")
                    .build();
            server.start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start redis-server on port " + port, e);
        }
    }

    /** Stops the server process (SIGTERM, no save); connections to it break. */
    public synchronized void kill() {
        try {
            server.stop();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public synchronized void close() {
        if (server != null && server.isActive()) {
            kill();
        }
    }

    /** A loopback port free now (Redis binds it next; another process could take it first, rarely). */
    public static int freePort() {
        try (ServerSocket socket = new ServerSocket(0)) {
            socket.setReuseAddress(true);
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
