package io.wheelbeat.ratelimit.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.sentinel.api.StatefulRedisSentinelConnection;
import io.wheelbeat.core.WheelTimer;
import io.wheelbeat.core.ratelimit.KeyedRateLimiter;
import io.wheelbeat.core.ratelimit.RateLimit;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import redis.embedded.RedisSentinel;
import redis.embedded.RedisServer;

/**
 * A store on Redis Sentinel: a master, its replica and one sentinel, each a real redis-server
 * (the sentinel is {@code redis-server --sentinel}) on loopback, named to the store with a second
 * sentinel that is down. The master killed, the sentinel
 * promotes the replica; the store finds the new master through the sentinel, shared decisions
 * resume there on their own, and the promoted replica's epoch marks the loss (writes the old
 * master had not replicated may be gone). Waits are generous and never the verdict.
 */
class SentinelLeaseStoreTest {

    private static final String MASTER_NAME = "wheelbeat";
    private static final String KEYS = "wheelbeat:rl:keys";
    private static final String KEY = "8:sentinel:s:k";

    private final List<AutoCloseable> closing = new ArrayList<>();

    @AfterEach
    void stopEverything() throws Exception {
        for (int i = closing.size() - 1; i >= 0; i--) {
            closing.get(i).close();
        }
    }

    @Test
    void afterAFailoverSharedDecisionsResumeOnThePromotedReplicaWithTheLossMarked() throws Exception {
        RedisProcess master = new RedisProcess();
        closing.add(master);
        int replicaPort = RedisProcess.freePort();
        RedisServer replica = RedisServer.newRedisServer()
                .port(replicaPort)
                .bind("127.0.0.1")
                .setting("replicaof 127.0.0.1 " + master.port())
                .setting("save \"\"")
                .setting("appendonly no")
                .build();
        replica.start();
        closing.add(() -> stop(replica.isActive() ? replica : null));
        String replicaUri = "redis://127.0.0.1:" + replicaPort;
        await(
                "replica in sync",
                () -> call(replicaUri, c -> c.info("replication")).contains("master_link_status:up"));
        int sentinelPort = RedisProcess.freePort();
        RedisSentinel sentinel = RedisSentinel.newRedisSentinel()
                .bind("127.0.0.1")
                .port(sentinelPort)
                .masterName(MASTER_NAME)
                .masterPort(master.port())
                .quorumSize(1)
                .downAfterMilliseconds(500)
                .failOverTimeout(5000)
                .build();
        sentinel.start();
        closing.add(sentinel::stop);
        // The sentinel learns the replica from the master's INFO: a failover needs it known.
        await("the sentinel knows the replica", () -> {
            RedisClient client = RedisClient.create("redis://127.0.0.1:" + sentinelPort);
            try (StatefulRedisSentinelConnection<String, String> connection = client.connectSentinel()) {
                return !connection.sync().replicas(MASTER_NAME).isEmpty();
            } finally {
                client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            }
        });

        WheelTimer wheel = WheelTimer.builder().build();
        closing.add(wheel::stop);
        // Two sentinels named, the first one down: the store asks the next.
        RedisLeaseStore store = RedisLeaseStore.builder("redis-sentinel://127.0.0.1:" + RedisProcess.freePort()
                        + ",127.0.0.1:" + sentinelPort + "#" + MASTER_NAME)
                .timeout(Duration.ofSeconds(1))
                .build();
        closing.add(store);
        KeyedRateLimiter<String> limiter = KeyedRateLimiter.builder(
                        RateLimit.slidingWindow(100_000, Duration.ofSeconds(1)), wheel)
                .name("sentinel")
                .sharedThrough(store)
                .build();
        closing.add(limiter::close);
        Meters meters = Meters.of(limiter);

        limiter.tryAcquire("k");
        meters.awaitAnswered();
        assertEquals(0, meters.allFallbacks(), "shared decisions through the sentinel's master");
        assertEquals(
                1L,
                (long) call(master.uri(), c -> c.hexists(KEYS, KEY) ? 1L : 0L),
                "the key lives on the master the sentinel names");
        await("the key replicated", () -> call(replicaUri, c -> c.hexists(KEYS, KEY) ? 1L : 0L) == 1);

        LogCapture logs = new LogCapture();
        closing.add(logs);
        master.kill();
        await(
                "the replica promoted",
                () -> call(replicaUri, c -> c.info("replication")).contains("role:master"));
        // Decisions go on meanwhile (by the failure policy) until the store reaches the new master.
        await("the loss marked on the promoted replica", () -> {
            limiter.tryAcquire("k");
            String epoch = call(replicaUri, c -> c.get(RedisLeaseStore.EPOCH_KEY));
            return epoch != null && !epoch.split(" ")[1].equals("0") && epoch.endsWith(replid(replicaUri));
        });

        await("shared decisions again", () -> {
            limiter.tryAcquire("k");
            return !store.failing();
        });
        double fallbacks = meters.allFallbacks();
        long before = roundTrips(meters);
        for (int i = 0; i < 5; i++) {
            limiter.tryAcquire("k" + i);
        }
        meters.awaitAnswered();
        assertEquals(fallbacks, meters.allFallbacks(), "no more fallbacks once the new master answers");
        assertTrue(roundTrips(meters) > before, "the new keys' exchanges went to Redis");
        assertEquals(
                1L,
                (long) call(replicaUri, c -> c.hexists(KEYS, KEY + "4") ? 1L : 0L),
                "a new key is counted on the promoted replica");
        assertFalse(store.failing());
        assertEquals(1, logs.lines("lost its rate-limit state"), "the loss the promotion marked, logged once");
    }

    private static long roundTrips(Meters meters) {
        return (long) meters.registry()
                .get("wheelbeat.ratelimit.store.round.trips")
                .functionCounter()
                .count();
    }

    private static String replid(String uri) {
        return call(uri, c -> c.info("replication"))
                .lines()
                .filter(l -> l.startsWith("master_replid:"))
                .map(l -> l.substring("master_replid:".length()).trim())
                .findFirst()
                .orElse("-");
    }

    private static void stop(RedisServer server) throws IOException {
        if (server != null) {
            server.stop();
        }
    }

    private static <T> T call(String uri, Function<RedisCommands<String, String>, T> command) {
        RedisClient client = RedisClient.create(uri);
        try (StatefulRedisConnection<String, String> connection = client.connect()) {
            return command.apply(connection.sync());
        } finally {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }

    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            try {
                if (condition.getAsBoolean()) {
                    return;
                }
            } catch (RuntimeException notYet) {
                // a node stopping or starting
            }
            assertTrue(System.nanoTime() - deadline < 0, "never: " + what);
            Thread.sleep(20);
        }
    }
}
