package io.wheelbeat.ratelimit.redis;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.time.Duration;
import redis.embedded.RedisServer;

/**
 * A real {@code redis-server} (the binary embedded-redis ships) on a free loopback port, for
 * tests: started by the constructor, killed and restarted on the same port on demand, stopped by
 * {@link #close()} (and by embedded-redis's shutdown hook if a test dies first). Nothing is saved
 * to disk. A new server holds the store's epoch, as one in use does: a limiter that finds none
 * takes Redis as having lost its state (see {@link #seedEpoch()}).
 */
public final class RedisProcess implements AutoCloseable {

    private static final int ATTEMPTS = 5;
    private static final long READY_WAIT_MILLIS = 10_000;

    private int port;
    private RedisServer server;

    /**
     * Starts a server on a free port. A port found free can be taken before redis-server binds it
     * (by any outgoing connection's source port, on a busy machine), so a server that does not
     * answer is stopped and another free port tried.
     */
    public RedisProcess() {
        UncheckedIOException last = null;
        for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
            this.port = freePort();
            try {
                start();
                seedEpoch();
                return;
            } catch (UncheckedIOException e) {
                last = e;
                close();
            }
        }
        throw last;
    }

    private RedisProcess(int port) {
        this.port = port;
        start();
        seedEpoch();
    }

    /** Starts a server on {@code port}, found free earlier (no retry on another port). */
    public static RedisProcess on(int port) {
        return new RedisProcess(port);
    }

    /** Empties the server (FLUSHALL): the store's state is lost, its epoch included. */
    public void flushAll() {
        RedisClient client = RedisClient.create(uri());
        try (StatefulRedisConnection<String, String> connection = client.connect()) {
            connection.sync().flushall();
        } finally {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }

    /** Returns the URI of the server. */
    public String uri() {
        return "redis://127.0.0.1:" + port;
    }

    /** Returns the port. */
    public int port() {
        return port;
    }

    /**
     * Writes the store's epoch as one with no loss seen, as a Redis in use would hold it after a
     * FLUSHALL or restart is no longer news: the limiters then start from empty counts.
     */
    public void seedEpoch() {
        RedisClient client = RedisClient.create(uri());
        try (StatefulRedisConnection<String, String> connection = client.connect()) {
            // Written by this server (its replication id): not a failover's leftover either.
            String replid = connection
                    .sync()
                    .info("replication")
                    .lines()
                    .filter(l -> l.startsWith("master_replid:"))
                    .map(l -> l.substring("master_replid:".length()).trim())
                    .findFirst()
                    .orElseThrow();
            connection.sync().set("wheelbeat:rl:epoch", "seeded 0 " + replid);
        } finally {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }

    /** Starts the server again on the same port after {@link #kill()}, empty. */
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
        awaitAccepting();
    }

    /** Returns once the server accepts a connection on its port; throws after a generous wait. */
    private void awaitAccepting() {
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(READY_WAIT_MILLIS);
        while (true) {
            try (java.net.Socket probe = new java.net.Socket()) {
                probe.connect(new java.net.InetSocketAddress("127.0.0.1", port), 1_000);
                return;
            } catch (IOException notYet) {
                if (System.nanoTime() - deadline > 0) {
                    throw new UncheckedIOException("redis-server does not accept connections on port " + port, notYet);
                }
                try {
                    Thread.sleep(20);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new UncheckedIOException(new java.io.InterruptedIOException("interrupted"));
                }
            }
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
