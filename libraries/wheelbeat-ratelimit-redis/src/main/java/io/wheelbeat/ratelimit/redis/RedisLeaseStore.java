package io.wheelbeat.ratelimit.redis;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.Delay;
import io.wheelbeat.core.internal.checks.ConfigChecks;
import io.wheelbeat.core.ratelimit.KeyedRateLimiter;
import io.wheelbeat.core.ratelimit.LeaseStore;
import io.wheelbeat.core.ratelimit.RateLimit;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link LeaseStore} on Redis: the shared state of cluster-wide {@link KeyedRateLimiter}s.
 *
 * <pre>{@code
 * RedisLeaseStore redis = RedisLeaseStore.builder("redis://10.0.0.5:6379").build();   // once per process
 * KeyedRateLimiter<Object> perAddress = KeyedRateLimiter
 *         .builder(RateLimit.slidingWindow(20, Duration.ofSeconds(10)), wheel)
 *         .name("connections").sharedThrough(redis).processes(4).build();
 * }</pre>
 *
 * <p>One Lettuce connection per store, so per process: commands from every limiter and thread
 * are pipelined on it. Keys fall in buckets (one on a single Redis), each with one script call out
 * at a time: an {@code EVALSHA} that applies up to 512 {@link LeaseStore.Request}s in turn,
 * atomically; requests that arrive meanwhile go together in the next calls, so a request waits for
 * the calls ahead of it in its bucket and its own, each within the timeout. Windows and refills are
 * counted on the Redis server's clock ({@code TIME}), so the processes' clocks never need to agree.
 * A bucket's key states are fields of one hash; a field is deleted once its state is as good as new
 * (two windows after its window starts; once a bucket is full), by a sweep of a few fields per call.
 *
 * <p>Failures never reach the caller as exceptions: a command that is not answered within the
 * {@link Builder#timeout(Duration) timeout} fails as {@link LeaseStore.Failure#TIMEOUT}, one sent
 * while the connection is down fails at once as {@link LeaseStore.Failure#UNAVAILABLE} (Lettuce
 * reconnects on its own, with its backoff, and the limiters' probes notice), and an error reply
 * fails as {@link LeaseStore.Failure#ERROR}. At most {@link Builder#maxPending(int) maxPending}
 * exchanges are out at once; one more is not sent ({@link LeaseStore.Failure#BUSY}).
 *
 * <p>Lost state: the key {@code wheelbeat:rl:epoch} names the state's epoch, and every exchange
 * says which one it knows. When Redis loses its state (FLUSHALL, a restart without persistence,
 * a replica promoted), the next exchange finds a new or missing epoch, or one written under the
 * node's previous replication id, and the scripts take a sliding-window key not written since as
 * full for the rest of the window of the loss, and a token-bucket key as emptied at the moment of
 * the loss; the store logs the loss once.
 *
 * <p>On a Redis Cluster ({@link #clusterBuilder}), keys fall in 16 buckets, each a hash tag
 * shared by its hash and its own epoch: a call touches one slot, and a shard that loses its data
 * is bounded on its own.
 *
 * <p>Keys are stored as fields {@code <length of the limiter name>:<limiter name>:<key>} of
 * {@code wheelbeat:rl:keys} (on a cluster {@code wheelbeat:rl:{bucket}:keys}), so that no two
 * limiters' keys can share a name. A key is encoded if it is a
 * {@link CharSequence} of well-formed UTF-16, a {@link Number} of the standard integer types, an
 * {@link InetAddress}, an unresolved {@link InetSocketAddress} or a {@link UUID}, each with its
 * own type prefix; anything else, or an encoding longer than 1,024 characters, cannot be stored,
 * and the limiter decides it by its failure policy. {@link Builder#keyEncoder} replaces the rule.
 *
 * <h2>Thread rules</h2>
 * Thread-safe and non-blocking after {@link Builder#build()}, which blocks until connected (or
 * about the connect timeout, after which it connects in the background). Close it after the
 * limiters that use it.
 */
public final class RedisLeaseStore implements LeaseStore, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(RedisLeaseStore.class);
    private static final String KEY_PREFIX = "wheelbeat:rl:";
    /** The store's epoch: no limiter key has this name (theirs go on with the name's length). */
    static final String EPOCH_KEY = KEY_PREFIX + "epoch";
    /**
     * A cluster's keys fall in this many buckets, each in one slot with its own epoch and one hash
     * of its keys' states: few, so that one script call serves many keys.
     */
    static final int EPOCH_BUCKETS = 16;
    /** The most exchanges one script call carries. */
    private static final int MAX_BATCH = 512;

    private static final Duration TOPOLOGY_REFRESH = Duration.ofSeconds(10);
    private static final Duration MAX_RECONNECT_DELAY = Duration.ofSeconds(1);
    /** Lettuce's own queue may hold this many commands beyond ours: probes, scripts resent by body. */
    private static final int QUEUE_MARGIN = 1024;

    private static final int MAX_KEY_CHARS = 1024;

    private final String uri;
    private final ClientResources resources;
    /** A {@link RedisClient}, or a {@link RedisClusterClient} for a cluster. */
    private final AbstractRedisClient client;

    private final Supplier<CompletionStage<? extends StatefulConnection<String, String>>> connector;
    private final boolean cluster;
    private final Function<Object, String> keyEncoder;
    private final LongSupplier sharedClock;
    private final long sharedOrigin;
    private final Script batch;
    private final int maxPending;
    /** Exchanges sent and not yet completed; at most {@link #maxPending}. */
    private final AtomicInteger pending = new AtomicInteger();
    /**
     * The epoch keys: one for a single Redis; on a cluster one per bucket of keys, each in its
     * bucket's slot, so that a shard that loses its data loses its own epochs and no other's.
     */
    private final String[] epochKeys;
    /** Per bucket, its keys' exchanges waiting for or riding in its one script call out. */
    private final Lane[] lanes;
    /** The epoch id this store knows per bucket ("" before the first answer): another means a loss. */
    private final AtomicReferenceArray<String> epochs;
    /** The latest loss mark this store knows per bucket (-1 before the first answer): a later one means a loss. */
    private final AtomicLongArray lossMarks;
    /** The connection once made (Lettuce reconnects it on its own after that); null before. */
    private volatile StatefulConnection<String, String> connection;

    private volatile RedisClusterAsyncCommands<String, String> redis;
    /** The first connect's outcome: what {@link Builder#build()} waits for. */
    private final CompletableFuture<Void> firstConnect = new CompletableFuture<>();
    /** True while Redis does not answer: see {@link #failing()}. */
    private volatile boolean failing = true;

    private volatile boolean closed;

    /** A server-side script, sent by digest and by body once the server has lost it. */
    private record Script(String body, String digest) {
        static Script of(String body) {
            try {
                byte[] sha1 = MessageDigest.getInstance("SHA-1").digest(body.getBytes(StandardCharsets.UTF_8));
                return new Script(body, HexFormat.of().formatHex(sha1));
            } catch (NoSuchAlgorithmException e) {
                throw new IllegalStateException("no SHA-1, which every Java runtime has", e);
            }
        }
    }

    // Lettuce 6 (Spring Boot 3's) leaves adaptive refresh off unless enabled; Lettuce 7 enables it
    // by default and deprecates the call.
    @SuppressWarnings("deprecation")
    private static ClusterTopologyRefreshOptions topologyRefresh() {
        return ClusterTopologyRefreshOptions.builder()
                .enablePeriodicRefresh(TOPOLOGY_REFRESH)
                .enableAllAdaptiveRefreshTriggers()
                .build();
    }

    private RedisLeaseStore(Builder builder, List<RedisURI> uris) {
        this.uri = String.join(",", builder.uris);
        this.cluster = builder.cluster;
        this.keyEncoder = builder.keyEncoder;
        this.sharedClock = builder.sharedClock;
        this.sharedOrigin = builder.sharedOrigin;
        this.maxPending = builder.maxPending;
        this.epochKeys = new String[cluster ? EPOCH_BUCKETS : 1];
        for (int b = 0; b < epochKeys.length; b++) {
            epochKeys[b] = cluster ? KEY_PREFIX + "{" + b + "}:epoch" : EPOCH_KEY;
        }
        this.epochs = new AtomicReferenceArray<>(epochKeys.length);
        this.lossMarks = new AtomicLongArray(epochKeys.length);
        for (int b = 0; b < epochKeys.length; b++) {
            epochs.set(b, "");
            lossMarks.set(b, -1);
        }
        String prelude = resource("prelude.lua");
        // Sent by digest, computed here: a server that lacks a script gets its body (no SCRIPT LOAD at start).
        this.batch = Script.of(prelude + resource("batch.lua"));
        this.lanes = new Lane[epochKeys.length];
        for (int b = 0; b < lanes.length; b++) {
            String hash = cluster ? KEY_PREFIX + "{" + b + "}:keys" : KEY_PREFIX + "keys";
            lanes[b] = new Lane(b, new String[] {epochKeys[b], hash});
        }
        this.resources = DefaultClientResources.builder()
                .ioThreadPoolSize(1)
                .computationThreadPoolSize(1)
                // At most a second between reconnect attempts: shared decisions resume soon after Redis does.
                .reconnectDelay(Delay.exponential(Duration.ZERO, MAX_RECONNECT_DELAY, 2, TimeUnit.MILLISECONDS))
                .build();
        for (RedisURI each : uris) {
            // The URI's timeout bounds Lettuce's handshake: the connect timeout, not the command timeout.
            each.setTimeout(builder.connectTimeout);
        }
        if (cluster) {
            RedisClusterClient clusterClient = RedisClusterClient.create(resources, uris);
            // The client connects to each node on first use: a command waits for that connection
            // (or a node's reconnect) within the command timeout.
            ClusterClientOptions.Builder options =
                    common(ClusterClientOptions.builder(), builder, ClientOptions.DisconnectedBehavior.ACCEPT_COMMANDS);
            // MOVED and ASK are followed, and they, a lost node or a failover refresh the slot map
            // at once; a periodic refresh notices the rest.
            options.maxRedirects(5).topologyRefreshOptions(topologyRefresh());
            clusterClient.setOptions(options.build());
            this.client = clusterClient;
            // The slot map first (the client connects only once it has one): a blocking load, off
            // Lettuce's I/O threads.
            this.connector =
                    () -> CompletableFuture.runAsync(clusterClient::getPartitions, resources.eventExecutorGroup())
                            .thenCompose(loaded -> clusterClient.connectAsync(StringCodec.UTF8));
        } else {
            RedisClient single = RedisClient.create(resources, uris.get(0));
            // Fail fast while disconnected: the limiters fall back instead of queueing.
            single.setOptions(
                    common(ClientOptions.builder(), builder, ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                            .build());
            this.client = single;
            this.connector = () ->
                    single.connectAsync(StringCodec.UTF8, uris.get(0)).thenCompose(made -> refuseClusterNode(made));
        }
    }

    /** The options both clients share. */
    private static <B extends ClientOptions.Builder> B common(
            B options, Builder settings, ClientOptions.DisconnectedBehavior whileDisconnected) {
        options.autoReconnect(true)
                .disconnectedBehavior(whileDisconnected)
                // Ours holds maxPending exchanges: Lettuce never refuses one as over its queue.
                .requestQueueSize(settings.maxPending + QUEUE_MARGIN)
                .timeoutOptions(TimeoutOptions.enabled(settings.timeout))
                .socketOptions(SocketOptions.builder()
                        .connectTimeout(settings.connectTimeout)
                        .keepAlive(true)
                        .build());
        return options;
    }

    /**
     * A single-node store on a node of a cluster would put keys where the cluster refuses them:
     * the builder for a cluster is another, and this says so.
     */
    private CompletionStage<StatefulRedisConnection<String, String>> refuseClusterNode(
            StatefulRedisConnection<String, String> made) {
        return made.async().info("cluster").toCompletableFuture().handle((info, error) -> {
            if (info != null && info.contains("cluster_enabled:1")) {
                made.closeAsync();
                throw new CompletionException(new IllegalArgumentException(
                        uri + " is a node of a Redis Cluster:" + " use RedisLeaseStore.clusterBuilder(seed URIs)"));
            }
            return made; // INFO refused (renamed, ACL): not a cluster we can tell, used as given
        });
    }

    /** Connects, and until it succeeds tries again, at most a second apart. */
    private void connect(long delayMillis) {
        if (closed) {
            return;
        }
        connector.get().whenComplete((made, error) -> {
            if (error == null && !closed) {
                connection = made;
                redis = made instanceof StatefulRedisClusterConnection<String, String> sharded
                        ? sharded.async()
                        : ((StatefulRedisConnection<String, String>) made).async();
                failing = false;
                log.info("lease store connected to {}", uri);
                firstConnect.complete(null);
            } else if (error == null) {
                made.closeAsync();
            } else {
                Throwable cause = misuse(unwrap(error));
                firstConnect.completeExceptionally(cause);
                if (cause instanceof IllegalArgumentException) {
                    log.error("{}: {}; not connecting", this, cause.getMessage());
                } else if (!closed) {
                    long next = Math.min(MAX_RECONNECT_DELAY.toMillis(), Math.max(10, 2 * delayMillis));
                    log.debug("{}: cannot connect yet; next attempt in {} ms", this, next, error);
                    try {
                        resources.eventExecutorGroup().schedule(() -> connect(next), next, TimeUnit.MILLISECONDS);
                    } catch (RuntimeException shutDown) {
                        log.debug("{}: no more connect attempts", this, shutDown);
                    }
                }
            }
        });
    }

    /**
     * Returns a builder for the Redis at {@code uri}, in Lettuce's syntax:
     * {@code redis://[password@]host[:port][/database]}, {@code rediss://} for TLS, or the master
     * that Redis Sentinel names: {@code redis-sentinel://host:port[,host:port...]#masterName}
     * (after a failover the store reconnects to the master the sentinels name then).
     *
     * @param uri the Redis URI
     * @return a builder with the default settings
     * @throws NullPointerException if {@code uri} is null
     */
    public static Builder builder(String uri) {
        return new Builder(List.of(Objects.requireNonNull(uri, "uri")), false);
    }

    /**
     * Returns a builder for the Redis Cluster that {@code seedUris} lead to (any of its nodes; the
     * client learns the rest and follows the cluster's changes): Lettuce's cluster client, keys
     * placed so that each exchange touches one slot, and the loss rule per shard.
     *
     * @param seedUris URIs of some of the cluster's nodes, in the syntax of {@link #builder}
     * @return a builder with the default settings
     * @throws NullPointerException if {@code seedUris} or one of them is null
     * @throws IllegalArgumentException if {@code seedUris} is empty
     */
    public static Builder clusterBuilder(List<String> seedUris) {
        List<String> seeds = List.copyOf(seedUris);
        if (seeds.isEmpty()) {
            throw new IllegalArgumentException("a cluster needs at least one seed URI");
        }
        return new Builder(seeds, true);
    }

    @Override
    public Object storeKey(String limiterName, Object key) {
        String encoded = keyEncoder.apply(key);
        if (encoded == null || encoded.length() > MAX_KEY_CHARS || !wellFormed(encoded)) {
            return null;
        }
        // The name's length first: no name and key can spell another name and key.
        String name = limiterName.length() + ":" + limiterName + ":" + encoded;
        // On a cluster the bucket's hash tag leads its hash's and epoch's names: one slot for
        // both, whatever braces the name or key holds.
        int bucket = cluster ? Math.floorMod(name.hashCode(), EPOCH_BUCKETS) : 0;
        return new Placed(lanes[bucket].keys[1], name, bucket);
    }

    /** Where a key's state lives: a field of its bucket's hash. */
    record Placed(String hash, String field, int bucket) {
        @Override
        public String toString() {
            return hash + " " + field;
        }
    }

    /** One exchange waiting for its bucket's next script call. */
    private record Exchange(Request request, Reply reply) {}

    /**
     * One bucket's exchanges: at most one script call out; what arrives meanwhile goes together
     * in the next, so the calls per second stay few however many keys need exchanges.
     */
    private static final class Lane {
        final int bucket;
        /** The bucket's epoch and its hash of key states. */
        final String[] keys;

        private final ArrayDeque<Exchange> waiting = new ArrayDeque<>();
        private boolean out;

        Lane(int bucket, String[] keys) {
            this.bucket = bucket;
            this.keys = keys;
        }
    }

    @Override
    public void send(Request request, Reply reply) {
        Lane lane = lanes[((Placed) request.storeKey()).bucket];
        if (redis == null) {
            reply.failed(Failure.UNAVAILABLE); // not connected yet
            return;
        }
        if (pending.incrementAndGet() > maxPending) {
            pending.decrementAndGet();
            reply.failed(Failure.BUSY);
            return;
        }
        synchronized (lane) {
            lane.waiting.add(new Exchange(request, reply));
            if (lane.out) {
                return;
            }
            lane.out = true;
        }
        flush(lane);
    }

    /** Sends what waits in {@code lane} as one script call, or marks it idle when nothing does. */
    private void flush(Lane lane) {
        List<Exchange> exchanges;
        synchronized (lane) {
            if (lane.waiting.isEmpty()) {
                lane.out = false;
                return;
            }
            exchanges = new ArrayList<>(Math.min(lane.waiting.size(), MAX_BATCH));
            while (!lane.waiting.isEmpty() && exchanges.size() < MAX_BATCH) {
                exchanges.add(lane.waiting.poll());
            }
        }
        // Rounded up, so that a lease's end computed from the send time is never late.
        String now = sharedClock == null
                ? ""
                : Long.toString(-Math.floorDiv(-(sharedClock.getAsLong() - sharedOrigin), 1000));
        String[] args = new String[2 + 7 * exchanges.size()];
        args[0] = now;
        args[1] = epochs.get(lane.bucket);
        int a = 2;
        for (Exchange exchange : exchanges) {
            Request request = exchange.request();
            RateLimit limit = request.limit();
            long periodNanos = limit.period().toNanos();
            args[a++] = ((Placed) request.storeKey()).field;
            if (limit.kind() == RateLimit.Kind.SLIDING_WINDOW) {
                args[a++] = "w";
                // Whole microseconds, rounded up: a longer window is only stricter.
                args[a++] = Long.toString(-Math.floorDiv(-periodNanos, 1000));
                args[a++] = Long.toString(limit.permits());
            } else {
                long intervalNanos = -Math.floorDiv(-periodNanos, limit.permits());
                args[a++] = "b";
                args[a++] = micros(intervalNanos);
                args[a++] = micros(intervalNanos * limit.burst());
            }
            args[a++] = Long.toString(request.charge());
            args[a++] = Long.toString(request.ask());
            args[a++] = Long.toString(request.giveBack());
        }
        RedisClusterAsyncCommands<String, String> redis = this.redis;
        try {
            RedisFuture<List<Object>> sent = redis.evalsha(batch.digest, ScriptOutputType.MULTI, lane.keys, args);
            sent.whenComplete((result, error) -> {
                if (error != null && unwrap(error) instanceof RedisNoScriptException) {
                    // A restarted or flushed server lost the script: send its body, which reloads it.
                    try {
                        RedisFuture<List<Object>> again =
                                redis.eval(batch.body, ScriptOutputType.MULTI, lane.keys, args);
                        again.whenComplete((retried, failure) -> complete(lane, exchanges, retried, failure));
                    } catch (RuntimeException e) {
                        complete(lane, exchanges, null, e);
                    }
                    return;
                }
                complete(lane, exchanges, result, error);
            });
        } catch (RuntimeException e) {
            complete(lane, exchanges, null, e);
        }
    }

    @Override
    public void probe(Reply reply) {
        RedisClusterAsyncCommands<String, String> redis = this.redis;
        if (redis == null) {
            reply.failed(Failure.UNAVAILABLE); // not connected yet
            return;
        }
        try {
            redis.ping().whenComplete((pong, error) -> {
                if (error == null) {
                    failing = false;
                    reply.granted(0, 0, 0);
                } else {
                    reply.failed(failureOf(error));
                }
            });
        } catch (RuntimeException e) {
            reply.failed(failureOf(e));
        }
    }

    /**
     * Returns true while Redis does not answer: not connected yet, or the last exchange or probe
     * failed (timeout, connection lost) and none was answered since. Meanwhile the limiters decide
     * what no lease covers by their {@link io.wheelbeat.core.ratelimit.StoreFailurePolicy}. For
     * health checks; any thread.
     *
     * @return whether the store is failing now
     */
    public boolean failing() {
        return failing;
    }

    /** Closes the connection and releases its threads. Idempotent. */
    @Override
    public void close() {
        closed = true;
        StatefulConnection<String, String> made = connection;
        if (made != null) {
            made.close();
        }
        shutDownClient();
    }

    @Override
    public String toString() {
        return "RedisLeaseStore(" + uri + ")";
    }

    // ---------------------------------------------------------------- internals

    /** Reports a script call's outcome to each of its exchanges, then sends what waits meanwhile. */
    private void complete(Lane lane, List<Exchange> exchanges, List<Object> result, Throwable error) {
        pending.addAndGet(-exchanges.size());
        if (error != null) {
            Failure failure = failureOf(error);
            exchanges.forEach(exchange -> exchange.reply().failed(failure));
        } else {
            failing = false;
            long[] answers = new long[3 * exchanges.size()];
            try {
                for (int i = 0; i < answers.length; i++) {
                    answers[i] = (Long) result.get(2 + i);
                }
                noteEpoch(lane.bucket, (String) result.get(0), Long.parseLong((String) result.get(1)));
            } catch (RuntimeException malformed) {
                log.warn("{}: unexpected script reply {}", this, result, malformed);
                answers = null;
            }
            for (int i = 0; i < exchanges.size(); i++) {
                Reply reply = exchanges.get(i).reply();
                if (answers == null) {
                    reply.failed(Failure.ERROR);
                    continue;
                }
                long validMicros = answers[3 * i + 1];
                reply.granted(
                        answers[3 * i],
                        validMicros < 0 ? Long.MAX_VALUE : TimeUnit.MICROSECONDS.toNanos(validMicros),
                        TimeUnit.MICROSECONDS.toNanos(answers[3 * i + 2]));
            }
        }
        flush(lane);
    }

    /**
     * Warns once per loss: a new epoch, or a new loss mark on the same epoch (a replica promoted),
     * after which the scripts apply the loss rule.
     */
    private void noteEpoch(int bucket, String id, long lostAt) {
        String knownId = epochs.get(bucket);
        long knownMark = lossMarks.get(bucket);
        // The first answer only tells the epoch ("" before): a missing one the script marked itself.
        boolean newId = !id.equals(knownId) && epochs.compareAndSet(bucket, knownId, id);
        // Answers may arrive out of order: only a later mark than any seen is a new loss.
        boolean newMark = lostAt > knownMark && lossMarks.compareAndSet(bucket, knownMark, lostAt);
        boolean lost = newId ? !knownId.isEmpty() : newMark && knownMark >= 0;
        if (lost) {
            log.warn(
                    "{}: Redis lost its rate-limit state{} ({}, loss marked at {} us on the script's clock); keys"
                            + " without a count are taken as full for the rest of their window (token buckets: as"
                            + " emptied at the loss)",
                    this,
                    cluster ? " in bucket " + bucket : "",
                    newId ? "epoch " + knownId + " is now " + id : "a replica promoted, epoch " + id,
                    lostAt);
        }
    }

    private Failure failureOf(Throwable error) {
        Throwable cause = unwrap(error);
        if (cause instanceof RedisCommandTimeoutException) {
            failing = true;
            return Failure.TIMEOUT;
        }
        if (cause instanceof RedisException
                && String.valueOf(cause.getMessage()).contains("size exceeded")) {
            // Lettuce's queue is full (commands it still waits for after their timeout): not sent.
            return Failure.BUSY;
        }
        if (cause instanceof RedisCommandExecutionException
                && String.valueOf(cause.getMessage()).startsWith("TRYAGAIN")) {
            // A slot in migration holds some of the script's keys: not applied, sent again later.
            return Failure.BUSY;
        }
        StatefulConnection<String, String> made = connection;
        if (cause instanceof RedisConnectionException
                || cause instanceof IOException
                || made == null
                || !made.isOpen()
                || String.valueOf(cause.getMessage()).startsWith("Currently not connected")) {
            failing = true;
            log.debug("{}: Redis unavailable", this, cause);
            return Failure.UNAVAILABLE;
        }
        log.debug("{}: command failed", this, cause);
        return Failure.ERROR;
    }

    /** The cluster and single-node builders swapped: a clear error instead of a store that never works. */
    private Throwable misuse(Throwable cause) {
        for (Throwable t = cause; t != null; t = t.getCause()) {
            if (t instanceof IllegalArgumentException) {
                return t;
            }
            if (cluster && String.valueOf(t.getMessage()).contains("cluster support disabled")) {
                return new IllegalArgumentException(
                        uri + " is not a Redis Cluster: use RedisLeaseStore.builder(uri)", cause);
            }
        }
        return cause;
    }

    private static Throwable unwrap(Throwable error) {
        return error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
    }

    private static String resource(String name) {
        try (InputStream in = RedisLeaseStore.class.getResourceAsStream(name)) {
            return new String(Objects.requireNonNull(in, name).readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void shutDownClient() {
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        resources.shutdown(0, 2, TimeUnit.SECONDS);
    }

    private static String micros(long nanos) {
        return BigDecimal.valueOf(nanos).movePointLeft(3).toPlainString();
    }

    private static boolean wellFormed(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isHighSurrogate(c)) {
                if (++i == s.length() || !Character.isLowSurrogate(s.charAt(i))) {
                    return false;
                }
            } else if (Character.isLowSurrogate(c)) {
                return false;
            }
        }
        return true;
    }

    /** The standard encoding; see the class documentation. */
    static String encodeStandard(Object key) {
        if (key instanceof CharSequence text) {
            return "s:" + text;
        }
        if (key instanceof Long
                || key instanceof Integer
                || key instanceof Short
                || key instanceof Byte
                || key instanceof java.math.BigInteger) {
            return "n:" + key;
        }
        if (key instanceof InetAddress address) {
            return "ip:" + address.getHostAddress().replaceFirst("%.*$", "");
        }
        if (key instanceof InetSocketAddress socket && socket.isUnresolved()) {
            return "host:" + socket.getHostString();
        }
        if (key instanceof UUID id) {
            return "u:" + id;
        }
        return null;
    }

    /**
     * Settings of a {@link RedisLeaseStore}. Defaults: a 250 ms command timeout, a 2 s connect
     * timeout, at most 10,000 exchanges out, the standard key encoding. Not thread-safe.
     */
    public static final class Builder {
        private final List<String> uris;
        private final boolean cluster;
        private Duration timeout = Duration.ofMillis(250);
        private Duration connectTimeout = Duration.ofSeconds(2);
        private int maxPending = 10_000;
        private Function<Object, String> keyEncoder = RedisLeaseStore::encodeStandard;
        private LongSupplier sharedClock;
        private long sharedOrigin;
        private boolean failIfUnreachable;

        private Builder(List<String> uris, boolean cluster) {
            this.uris = uris;
            this.cluster = cluster;
        }

        /**
         * How long a command may wait for its answer before it fails as
         * {@link LeaseStore.Failure#TIMEOUT}; the limiters then decide by their failure policy. An
         * exchange also waits for the calls ahead of it in its bucket (up to 512 exchanges each),
         * each within this timeout.
         *
         * @param timeout the longest wait for an answer; 250 ms by default
         * @return this builder
         * @throws IllegalArgumentException if not positive
         */
        public Builder timeout(Duration timeout) {
            ConfigChecks.positiveNanos("timeout", timeout);
            this.timeout = timeout;
            return this;
        }

        /**
         * How long {@link #build()} and each reconnect attempt may take to connect.
         *
         * @param connectTimeout the longest connect; 2 s by default
         * @return this builder
         * @throws IllegalArgumentException if not positive
         */
        public Builder connectTimeout(Duration connectTimeout) {
            ConfigChecks.positiveNanos("connectTimeout", connectTimeout);
            this.connectTimeout = connectTimeout;
            return this;
        }

        /**
         * The most exchanges sent and not yet answered (default 10,000); beyond it an exchange is
         * not sent and fails at once as {@link LeaseStore.Failure#BUSY}: the limiter refuses that
         * request or sends its exchange later, and stays on shared decisions.
         *
         * @param commands the most commands in flight; 10,000 by default
         * @return this builder
         * @throws IllegalArgumentException if below 1
         */
        public Builder maxPending(int commands) {
            if (commands < 1) {
                throw new IllegalArgumentException("maxPending must be at least 1: " + commands);
            }
            this.maxPending = commands;
            return this;
        }

        /**
         * How to name keys in Redis: return a stable string for a key (the same in every
         * process), or null if the key cannot be stored. Called once per key tracked.
         *
         * @param keyEncoder maps a key to its Redis name, or to null if it cannot be stored
         * @return this builder
         */
        public Builder keyEncoder(Function<Object, String> keyEncoder) {
            this.keyEncoder = Objects.requireNonNull(keyEncoder, "keyEncoder");
            return this;
        }

        /**
         * Counts windows on {@code clock}, as nanoseconds since its reading {@code originNanos},
         * instead of on the server's {@code TIME}: for processes that share one clock and one
         * origin, such as tests in virtual time. The distance from the origin must stay within
         * 2^53 microseconds (285 years), the integers a Lua number holds exactly. Redis expires
         * the state on its own clock, ten minutes after it ends on this one.
         */
        Builder sharedClock(LongSupplier clock, long originNanos) {
            this.sharedClock = Objects.requireNonNull(clock, "clock");
            this.sharedOrigin = originNanos;
            return this;
        }

        /**
         * Whether {@link #build()} throws when Redis cannot be reached within the connect timeout
         * (default false: the store is built, the limiters decide by their failure policy, and the
         * store keeps connecting in the background, at most a second apart).
         *
         * @param failIfUnreachable true to fail the build instead
         * @return this builder
         */
        public Builder failIfUnreachable(boolean failIfUnreachable) {
            this.failIfUnreachable = failIfUnreachable;
            return this;
        }

        /**
         * Builds the store and connects it. Blocks until connected, for at most about twice the
         * connect timeout (the connection, then Lettuce's handshake): call it at startup, never on
         * an event loop. If Redis cannot be reached by then, the store starts {@link #failing()
         * failing} and connects in the background, unless {@link #failIfUnreachable} was set.
         *
         * @return the store; {@link RedisLeaseStore#close()} it when done
         * @throws IllegalArgumentException if the URI is malformed
         * @throws IllegalStateException with {@link #failIfUnreachable}, if Redis cannot be reached
         */
        public RedisLeaseStore build() {
            List<RedisURI> parsed = new java.util.ArrayList<>();
            for (String uri : uris) {
                if (!cluster && uri.contains(",") && !uri.contains("-sentinel://")) {
                    throw new IllegalArgumentException("one Redis takes one URI: " + uri
                            + " (for a Redis Cluster, RedisLeaseStore.clusterBuilder(seed URIs))");
                }
                try {
                    parsed.add(RedisURI.create(uri));
                } catch (RuntimeException e) {
                    throw new IllegalArgumentException("not a Redis URI (redis://host:port): " + uri, e);
                }
            }
            RedisLeaseStore store = new RedisLeaseStore(this, parsed);
            store.connect(0);
            String uri = store.uri;
            try {
                store.firstConnect.get(2 * connectTimeout.toNanos(), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                store.close();
                throw new IllegalStateException("interrupted while connecting to Redis at " + uri, e);
            } catch (ExecutionException | TimeoutException e) {
                Throwable cause = e instanceof ExecutionException ? e.getCause() : e;
                if (cause instanceof IllegalArgumentException misuse) {
                    store.close();
                    throw new IllegalArgumentException(misuse.getMessage(), misuse);
                }
                if (failIfUnreachable) {
                    store.close();
                    throw new IllegalStateException("cannot use Redis at " + uri + ": " + cause.getMessage(), cause);
                }
                log.warn(
                        "{}: Redis does not answer ({}); the limiters decide by their failure policy until it does",
                        store,
                        cause.toString());
            }
            return store;
        }
    }
}
