package io.wheelbeat.bench;

import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.distributed.BucketProxy;
import io.github.bucket4j.redis.lettuce.Bucket4jLettuce;
import io.github.bucket4j.redis.lettuce.cas.LettuceBasedProxyManager;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.cluster.RedisClusterClient;
import io.wheelbeat.core.WheelTimer;
import io.wheelbeat.core.ratelimit.KeyedRateLimiter;
import io.wheelbeat.core.ratelimit.RateLimit;
import io.wheelbeat.ratelimit.redis.RedisClusterProcess;
import io.wheelbeat.ratelimit.redis.RedisLeaseStore;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.runner.IterationType;

/**
 * One limit shared through a real Redis Cluster (three masters, three replicas, started once per
 * trial before any measurement): {@code tryAcquire} of one permit per call, on one hot key or
 * cycling through 100,000 keys in a fixed random order (the same for every contender), with a
 * token bucket both contenders express alike (16 million permits per 100 ms, refilled greedily,
 * burst 16 million: nothing is over the limit, so both do the same work).
 *
 * <ul>
 *   <li>{@code wheelbeat}: {@link KeyedRateLimiter} shared through {@link RedisLeaseStore} on the
 *       cluster (leases spent locally, refills in the background);</li>
 *   <li>{@code bucket4j}: Bucket4j's {@link LettuceBasedProxyManager} on Lettuce's cluster client
 *       ({@code tryConsume(1)}, compare-and-swap in Redis per call).</li>
 * </ul>
 *
 * Besides JMH's figures, each measurement iteration prints the Redis commands the cluster ran per
 * 1,000 decisions ({@code INFO commandstats} summed over every master before and after the
 * iteration: commands called inside scripts, topology refreshes and these readings included), and
 * the share of decisions admitted.
 */
@State(Scope.Benchmark)
@BenchmarkMode({Mode.Throughput, Mode.SampleTime})
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class ClusterRateLimitBenchmark {

    private static final int PERMITS = 16_000_000;
    private static final Duration PERIOD = Duration.ofMillis(100);

    @Param({"wheelbeat", "bucket4j"})
    public String limiter;

    @Param({"1", "100000"})
    public int keys;

    private RedisClusterProcess cluster;
    private WheelTimer wheel;
    private RedisLeaseStore store;
    private KeyedRateLimiter<String> ours;
    private RedisClusterClient client;
    private boolean isOurs;
    private String[] keyNames;
    private BucketProxy[] buckets;
    private final List<Caller> callers = new ArrayList<>();
    /** One connection per node, opened once: INFO over them costs the measured process little CPU. */
    private final List<RedisClient> nodeClients = new ArrayList<>();

    private final List<RedisCommands<String, String>> nodes = new ArrayList<>();
    private long commandsBefore;
    private long decisionsBefore;
    private long admittedBefore;

    /** A benchmark thread's cursor over the keys and its decision counts. */
    @State(Scope.Thread)
    public static class Caller {
        int next;
        long decisions;
        long admitted;

        @Setup(Level.Trial)
        public void register(ClusterRateLimitBenchmark shared) {
            synchronized (shared.callers) {
                // Threads start at different places of the key order, as unrelated clients would.
                next = shared.callers.size() * 7919 % shared.keys;
                shared.callers.add(this);
            }
        }
    }

    @Setup(Level.Trial)
    public void setUp() {
        cluster = new RedisClusterProcess();
        for (String uri : cluster.uris()) {
            RedisClient nodeClient = RedisClient.create(uri);
            nodeClients.add(nodeClient);
            nodes.add(nodeClient.connect().sync());
        }
        keyNames = new String[keys];
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < keys; i++) {
            order.add(i);
        }
        Collections.shuffle(order, new Random(42));
        for (int i = 0; i < keys; i++) {
            keyNames[i] = "10." + (order.get(i) >> 16) + "." + (order.get(i) >> 8 & 255) + "." + (order.get(i) & 255);
        }
        isOurs = "wheelbeat".equals(limiter);
        switch (limiter) {
            case "wheelbeat" -> {
                wheel = WheelTimer.builder().build();
                store = RedisLeaseStore.clusterBuilder(cluster.uris()).build();
                ours = KeyedRateLimiter.builder(RateLimit.tokenBucket(PERMITS, PERIOD), wheel)
                        .name("bench")
                        .maxKeys(2 * keys)
                        .sharedThrough(store)
                        .build();
            }
            case "bucket4j" -> {
                client = RedisClusterClient.create(
                        cluster.uris().stream().map(RedisURI::create).collect(Collectors.toList()));
                LettuceBasedProxyManager<byte[]> proxies =
                        Bucket4jLettuce.casBasedBuilder(client).build();
                BucketConfiguration configuration = BucketConfiguration.builder()
                        .addLimit(Bandwidth.builder()
                                .capacity(PERMITS)
                                .refillGreedy(PERMITS, PERIOD)
                                .build())
                        .build();
                buckets = new BucketProxy[keys];
                for (int i = 0; i < keys; i++) {
                    buckets[i] =
                            proxies.builder().build(keyNames[i].getBytes(StandardCharsets.UTF_8), () -> configuration);
                }
            }
            default -> throw new IllegalArgumentException("unknown limiter " + limiter);
        }
    }

    @Setup(Level.Iteration)
    public void countBefore() {
        commandsBefore = commands();
        decisionsBefore = callers.stream().mapToLong(c -> c.decisions).sum();
        admittedBefore = callers.stream().mapToLong(c -> c.admitted).sum();
    }

    @TearDown(Level.Iteration)
    public void countAfter(IterationParams iteration) {
        long commands = commands() - commandsBefore;
        long decisions = callers.stream().mapToLong(c -> c.decisions).sum() - decisionsBefore;
        long admitted = callers.stream().mapToLong(c -> c.admitted).sum() - admittedBefore;
        if (iteration.getType() == IterationType.MEASUREMENT) {
            System.out.printf(
                    "%n[redis] %s keys=%d: %d commands, %d decisions (%.4f%% admitted), "
                            + "%.3f commands per 1,000 decisions%n",
                    limiter,
                    keys,
                    commands,
                    decisions,
                    100.0 * admitted / Math.max(1, decisions),
                    1000.0 * commands / Math.max(1, decisions));
        }
    }

    /** Every master's commands so far, by {@code INFO commandstats}. */
    private long commands() {
        long total = 0;
        for (RedisCommands<String, String> node : nodes) {
            if (node.info("replication").contains("role:master")) {
                total += node.info("commandstats")
                        .lines()
                        .filter(l -> l.startsWith("cmdstat_"))
                        .mapToLong(l -> Long.parseLong(l.replaceFirst("^cmdstat_[^:]+:calls=(\\d+),.*", "$1")))
                        .sum();
            }
        }
        return total;
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        if (ours != null) {
            ours.close();
            store.close();
            wheel.stop();
        }
        if (client != null) {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
        nodeClients.forEach(c -> c.shutdown(Duration.ZERO, Duration.ofSeconds(2)));
        cluster.close();
    }

    @Benchmark
    public boolean tryAcquire(Caller caller) {
        int i = caller.next;
        caller.next = i + 1 == keys ? 0 : i + 1;
        boolean admitted =
                isOurs ? ours.tryAcquire(keyNames[i]) == KeyedRateLimiter.ADMITTED : buckets[i].tryConsume(1);
        caller.decisions++;
        if (admitted) {
            caller.admitted++;
        }
        return admitted;
    }
}
