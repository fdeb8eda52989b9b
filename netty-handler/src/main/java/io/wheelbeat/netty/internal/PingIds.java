package io.wheelbeat.netty.internal;

import java.util.concurrent.ThreadLocalRandom;

/**
 * Ids for a connection's pings that a peer cannot guess without reading them: a random start per
 * connection, then one up per ping. A pong must echo the id of the ping it answers, so a peer
 * that never reads cannot answer with guessed ids (1, 2, 3 ...) and pass for alive.
 *
 * <p>Internal: not part of wheelbeat's API. Thread-safe.
 */
public final class PingIds {

    private PingIds() {
    }

    /**
     * Draws the id before a connection's first ping, from the calling thread's
     * {@code ThreadLocalRandom} (no allocation, no contention): uniform in [2^40, 2^62), so that
     * the next 2^62 ids are positive (never {@code HeartbeatHandler.NO_PING}, 0) and above small
     * constants such as HTTP/2's drain PING.
     */
    public static long randomStart() {
        return ThreadLocalRandom.current().nextLong(1L << 40, 1L << 62);
    }
}
