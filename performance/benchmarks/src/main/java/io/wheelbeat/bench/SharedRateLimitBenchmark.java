package io.wheelbeat.bench;

import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.distributed.BucketProxy;
import io.github.bucket4j.redis.lettuce.Bucket4jLettuce;
import io.github.bucket4j.redis.lettuce.cas.LettuceBasedProxyManager;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.wheelbeat.core.WheelTimer;
import io.wheelbeat.core.ratelimit.KeyedRateLimiter;
import io.wheelbeat.core.ratelimit.LeaseStore;
import io.wheelbeat.core.ratelimit.RateLimit;
import io.wheelbeat.ratelimit.redis.RedisLeaseStore;
import io.wheelbeat.ratelimit.redis.RedisProcess;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
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

/**
 * Workload 6, a keyed rate limit on a known key: {@code tryAcquire} of one permit, all admitted
 * (the limit is far above what one thread can take), on a real Redis this benchmark starts.
 *
 * <ul>
 *   <li>{@code local}: {@link KeyedRateLimiter} of this process alone;</li>
 *   <li>{@code cluster}: the same limit shared through {@link RedisLeaseStore} (cluster mode:
 *       leases spent locally, refills drawn in the background, on the caller's thread);</li>
 *   <li>{@code naive}: one round trip per request, the same script with one token-bucket key and ask = 1,
 *       waited for (what a limiter without leases does);</li>
 *   <li>{@code bucket4j}: Bucket4j's Lettuce-backed bucket ({@code tryConsume(1)}, compare-and-swap
 *       in Redis, one or more round trips per request).</li>
 * </ul>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class SharedRateLimitBenchmark {

    /** 160 million a second with a burst of 16 million (a lease's largest count): never refused. */
    private static final RateLimit LIMIT = RateLimit.tokenBucket(16_000_000, Duration.ofMillis(100));

    private static final String KEY = "10.0.0.1";
    /** The naive limiter's epoch and hash of key states (the script's KEYS), apart from the store's. */
    private static final String[] NAIVE_KEYS = {"bench:naive:epoch", "bench:naive:keys"};

    @Param({"local", "cluster", "naive", "bucket4j"})
    public String mode;

    private RedisProcess redis;
    private WheelTimer wheel;
    private RedisLeaseStore store;
    private KeyedRateLimiter<String> limiter;
    private RedisClient client;
    private StatefulRedisConnection<String, String> naiveConnection;
    private RedisCommands<String, String> naive;
    private String tokenBucketDigest;
    private String[] naiveArgs;
    private BucketProxy bucket;

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        redis = new RedisProcess();
        wheel = WheelTimer.builder().build();
        switch (mode) {
            case "local" ->
                limiter = KeyedRateLimiter.builder(LIMIT, wheel).name("bench").build();
            case "cluster" -> {
                store = RedisLeaseStore.builder(redis.uri()).build();
                limiter = KeyedRateLimiter.builder(LIMIT, wheel)
                        .name("bench")
                        .sharedThrough(store)
                        .build();
            }
            case "naive" -> {
                client = RedisClient.create(redis.uri());
                naiveConnection = client.connect();
                naive = naiveConnection.sync();
                // The script as the store sends it: the shared prelude (clock, epoch check), then the bucket.
                tokenBucketDigest = naive.scriptLoad(script("prelude.lua") + script("batch.lua"));
                // now (server clock), no epoch known (never marks a loss), then one key: a bucket of
                // interval 6.25 ns, tolerance 16M intervals, charge 0, ask 1, give back 0.
                naiveArgs = new String[] {"", "", KEY, "b", "0.00625", "100000", "0", "1", "0"};
            }
            case "bucket4j" -> {
                client = RedisClient.create(redis.uri());
                LettuceBasedProxyManager<byte[]> buckets =
                        Bucket4jLettuce.casBasedBuilder(client).build();
                BucketConfiguration configuration = BucketConfiguration.builder()
                        .addLimit(Bandwidth.builder()
                                .capacity(16_000_000)
                                .refillGreedy(16_000_000, Duration.ofMillis(100))
                                .build())
                        .build();
                bucket = buckets.builder().build(KEY.getBytes(StandardCharsets.UTF_8), () -> configuration);
            }
            default -> throw new IllegalArgumentException("unknown mode " + mode);
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        if (limiter != null) {
            limiter.close();
        }
        if (store != null) {
            store.close();
        }
        if (naiveConnection != null) {
            naiveConnection.close();
        }
        if (client != null) {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
        wheel.stop();
        redis.close();
    }

    @Benchmark
    public boolean tryAcquire() {
        return switch (mode) {
            case "naive" ->
                (Long) naive.<List<Object>>evalsha(tokenBucketDigest, ScriptOutputType.MULTI, NAIVE_KEYS, naiveArgs)
                                .get(2)
                        == 1L;
            case "bucket4j" -> bucket.tryConsume(1);
            default -> limiter.tryAcquire(KEY) == KeyedRateLimiter.ADMITTED;
        };
    }

    private static String script(String name) throws IOException {
        try (InputStream in =
                LeaseStore.class.getClassLoader().getResourceAsStream("io/wheelbeat/ratelimit/redis/" + name)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }
}
