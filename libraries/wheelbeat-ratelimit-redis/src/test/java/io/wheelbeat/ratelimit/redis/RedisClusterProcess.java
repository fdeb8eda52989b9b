package io.wheelbeat.ratelimit.redis;

import io.lettuce.core.MigrateArgs;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import redis.embedded.RedisServer;

/**
 * A real Redis Cluster for tests: three masters and three replicas, each a {@code redis-server}
 * (the binary embedded-redis ships) on a free loopback port, made into a cluster by this class
 * ({@code CLUSTER ADDSLOTS}, {@code MEET}, {@code REPLICATE}). Nodes can be killed, started again
 * (empty, with their cluster identity), failed over and have slots migrated. Nothing is saved
 * but each node's cluster configuration, in a temporary directory removed by {@link #close()}.
 */
public final class RedisClusterProcess implements AutoCloseable {

    static final int SLOTS = 16384;
    private static final int NODES = 6;
    private static final long WAIT_MILLIS = 30_000;

    private final Path dir;
    private final int[] ports = new int[NODES];
    private final RedisServer[] servers = new RedisServer[NODES];
    private final String[] ids = new String[NODES];

    /** Starts six nodes and makes them a cluster: nodes 0-2 masters (slots in thirds), 3-5 their replicas. */
    public RedisClusterProcess() {
        try {
            dir = Files.createTempDirectory("wheelbeat-cluster");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        for (int i = 0; i < NODES; i++) {
            ports[i] = freeClusterPort();
            start(i);
        }
        for (int i = 0; i < NODES; i++) {
            ids[i] = call(i, c -> c.clusterMyId());
        }
        for (int m = 0; m < 3; m++) {
            int[] slots = IntStream.range(m * SLOTS / 3, (m + 1) * SLOTS / 3).toArray();
            int master = m;
            call(master, c -> c.clusterAddSlots(slots));
        }
        for (int i = 1; i < NODES; i++) {
            int port = ports[i];
            call(0, c -> c.clusterMeet("127.0.0.1", port));
        }
        await(
                "every node knows every other",
                () -> IntStream.range(0, NODES)
                        .allMatch(i -> call(i, c -> c.clusterNodes())
                                        .lines()
                                        .filter(l -> l.contains("connected") && !l.contains("handshake"))
                                        .count()
                                == NODES));
        for (int r = 3; r < NODES; r++) {
            String master = ids[r - 3];
            call(r, c -> c.clusterReplicate(master));
        }
        awaitHealthy();
    }

    /** The seed URIs: every node's. */
    public List<String> uris() {
        List<String> uris = new ArrayList<>();
        for (int port : ports) {
            uris.add("redis://127.0.0.1:" + port);
        }
        return uris;
    }

    /** The URI of node {@code i}. */
    public String uri(int i) {
        return "redis://127.0.0.1:" + ports[i];
    }

    /** Waits until every node says the cluster is ok and each master has a replica in sync. */
    public void awaitHealthy() {
        await(
                "cluster ok",
                () -> IntStream.range(0, NODES)
                        .filter(i -> servers[i] != null && servers[i].isActive())
                        .allMatch(i -> call(i, c -> c.clusterInfo()).contains("cluster_state:ok")));
        await(
                "replicas in sync",
                () -> IntStream.range(0, NODES)
                        .filter(i -> servers[i] != null
                                && servers[i].isActive()
                                && call(i, c -> c.info("replication")).contains("role:slave"))
                        .allMatch(i -> call(i, c -> c.info("replication")).contains("master_link_status:up")));
    }

    /** The node serving {@code slot} now, as this class numbers nodes. */
    public int masterOf(int slot) {
        for (int i = 0; i < NODES; i++) {
            if (servers[i] == null || !servers[i].isActive()) {
                continue;
            }
            String info = call(i, c -> c.info("replication"));
            if (!info.contains("role:master")) {
                continue;
            }
            int node = i;
            boolean owns = call(i, c -> c.clusterNodes())
                    .lines()
                    .filter(l -> l.contains("myself"))
                    .flatMap(l -> Stream.of(l.split(" ")).skip(8))
                    .anyMatch(range -> covers(range, slot));
            if (owns) {
                return node;
            }
        }
        throw new IllegalStateException("no master serves slot " + slot);
    }

    private static boolean covers(String range, int slot) {
        if (range.startsWith("[")) {
            return false; // a slot being migrated or imported
        }
        String[] ends = range.split("-");
        int from = Integer.parseInt(ends[0]);
        int to = ends.length > 1 ? Integer.parseInt(ends[1]) : from;
        return from <= slot && slot <= to;
    }

    /** The replica of master {@code i} (replicas are the masters' numbers plus three, until a failover). */
    public int replicaOf(int master) {
        String id = ids[master];
        for (int i = 0; i < NODES; i++) {
            int node = i;
            if (i != master
                    && servers[i] != null
                    && servers[i].isActive()
                    && call(i, c -> c.clusterNodes()).lines().anyMatch(l -> l.contains("myself") && l.contains(id))) {
                return node;
            }
        }
        throw new IllegalStateException("no replica of node " + master);
    }

    /** Stops node {@code i} (SIGTERM, nothing saved): its data is gone. */
    public void kill(int i) {
        try {
            servers[i].stop();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Starts node {@code i} again, empty, with its cluster identity. */
    public void start(int i) {
        try {
            servers[i] = RedisServer.newRedisServer()
                    .port(ports[i])
                    .bind("127.0.0.1")
                    .setting("cluster-enabled yes")
                    .setting("cluster-config-file nodes-" + ports[i] + ".conf")
                    .setting("dir " + dir)
                    .setting("cluster-node-timeout 1000")
                    // The other shards keep serving while one has no master.
                    .setting("cluster-require-full-coverage no")
                    .setting("save \"\"")
                    .setting("appendonly no")
                    .build();
            servers[i].start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start redis-server on port " + ports[i], e);
        }
    }

    /** Makes replica {@code replica} the master of its shard at once, without its master's consent. */
    public void takeOver(int replica) {
        call(replica, c -> c.clusterFailover(false, true));
        await(
                "node " + replica + " promoted",
                () -> call(replica, c -> c.info("replication")).contains("role:master"));
    }

    /** Starts moving {@code slot} to node {@code to}, as resharding does: IMPORTING there, MIGRATING here. */
    public void beginMigration(int slot, int to) {
        int from = masterOf(slot);
        call(to, c -> c.clusterSetSlotImporting(slot, ids[from]));
        call(from, c -> c.clusterSetSlotMigrating(slot, ids[to]));
    }

    /** MIGRATEs the keys of {@code slot} (begun with {@link #beginMigration}) to node {@code to}. */
    public void moveKeys(int slot, int to) {
        int from = migratingFrom(slot);
        List<String> keys;
        while (!(keys = call(from, c -> c.clusterGetKeysInSlot(slot, 100))).isEmpty()) {
            List<String> batch = keys;
            call(from, c -> c.migrate("127.0.0.1", ports[to], 0, 5000, MigrateArgs.Builder.<String>keys(batch)));
        }
    }

    /** Ends the migration: node {@code to} serves {@code slot}, as every master is told. */
    public void endMigration(int slot, int to) {
        int from = migratingFrom(slot);
        call(to, c -> c.clusterSetSlotNode(slot, ids[to]));
        call(from, c -> c.clusterSetSlotNode(slot, ids[to]));
    }

    private int migratingFrom(int slot) {
        for (int i = 0; i < NODES; i++) {
            if (servers[i] != null
                    && servers[i].isActive()
                    && call(i, c -> c.clusterNodes())
                            .lines()
                            .anyMatch(l -> l.contains("myself") && l.contains("[" + slot + "->-"))) {
                return i;
            }
        }
        throw new IllegalStateException("slot " + slot + " is not migrating");
    }

    /** Runs a command on node {@code i} over a connection of its own. */
    public <T> T call(int i, java.util.function.Function<RedisCommands<String, String>, T> command) {
        RedisClient client = RedisClient.create("redis://127.0.0.1:" + ports[i]);
        try (StatefulRedisConnection<String, String> connection = client.connect()) {
            return command.apply(connection.sync());
        } finally {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }

    private static void await(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MILLIS);
        while (true) {
            try {
                if (condition.getAsBoolean()) {
                    return;
                }
            } catch (RuntimeException notYet) {
                // a node still starting
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("never: " + what);
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
    }

    /** A free port whose cluster bus port (10,000 above) is free too. */
    private static int freeClusterPort() {
        for (int attempt = 0; attempt < 100; attempt++) {
            int port = RedisProcess.freePort();
            if (port + 10000 > 65535) {
                continue;
            }
            try (ServerSocket bus = new ServerSocket(port + 10000)) {
                return port;
            } catch (IOException taken) {
                // another
            }
        }
        throw new IllegalStateException("no free port pair");
    }

    @Override
    public void close() {
        for (RedisServer server : servers) {
            try {
                if (server != null && server.isActive()) {
                    server.stop();
                }
            } catch (IOException e) {
                // stopping anyway
            }
        }
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // a temporary directory
        }
    }
}
