package io.wheelbeat.ratelimit.redis;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.Delay;
import io.wheelbeat.core.Ticker;
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
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
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
 * are pipelined on it, each an {@code EVALSHA} of a server-side script that applies one
 * {@link LeaseStore.Request} atomically. Windows and refills are counted on the Redis server's
 * clock ({@code TIME}), so the processes' clocks never need to agree. Each key expires in Redis
 * once its state is as good as new (two windows after its window starts; once a bucket is full).
 *
 * <p>Failures never reach the caller as exceptions: a command that is not answered within the
 * {@link Builder#timeout(Duration) timeout} fails as {@link LeaseStore.Failure#TIMEOUT}, one sent
 * while the connection is down fails at once as {@link LeaseStore.Failure#UNAVAILABLE} (Lettuce
 * reconnects on its own, with its backoff, and the limiters' probes notice), and an error reply
 * fails as {@link LeaseStore.Failure#ERROR}. At most {@link Builder#maxPending(int) maxPending}
 * exchanges are out at once; one more is not sent ({@link LeaseStore.Failure#BUSY}).
 *
 * <p>Lost state: the key {@code wheelbeat:rl:epoch} names the state's epoch, and every exchange
 * says which one it knows. When Redis loses its state (FLUSHALL, a restart without persistence),
 * the next exchange finds a new epoch, and the scripts take a sliding-window key that has no
 * count in the window of the loss as full for the rest of that window, and a token-bucket key
 * with no state as emptied at the moment of the loss; the store logs the loss once.
 *
 * <p>Keys are stored as {@code wheelbeat:rl:<length of the limiter name>:<limiter name>:<key>}, so
 * that no two limiters' keys can share a name. A key is encoded if it is a
 * {@link CharSequence} of well-formed UTF-16, a {@link Number} of the standard integer types, an
 * {@link InetAddress}, an unresolved {@link InetSocketAddress} or a {@link UUID}, each with its
 * own type prefix; anything else, or an encoding longer than 1,024 characters, cannot be stored,
 * and the limiter decides it by its failure policy. {@link Builder#keyEncoder} replaces the rule.
 *
 * <h2>Thread rules</h2>
 * Thread-safe and non-blocking after {@link Builder#build()}, which blocks until connected (or
 * the connect timeout). Close it after the limiters that use it.
 */
public final class RedisLeaseStore implements LeaseStore, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(RedisLeaseStore.class);
    private static final String KEY_PREFIX = "wheelbeat:rl:";
    /** The store's epoch: no limiter key has this name (theirs go on with the name's length). */
    static final String EPOCH_KEY = KEY_PREFIX + "epoch";
    /** Lettuce's own queue may hold this many commands beyond ours: probes, scripts resent by body. */
    private static final int QUEUE_MARGIN = 1024;
    private static final int MAX_KEY_CHARS = 1024;

    private final String uri;
    private final ClientResources resources;
    private final RedisClient client;
    private final StatefulRedisConnection<String, String> connection;
    private final RedisAsyncCommands<String, String> redis;
    private final Function<Object, String> keyEncoder;
    private final Ticker sharedClock;
    private final long sharedOrigin;
    private final Script slidingWindow;
    private final Script tokenBucket;
    private final int maxPending;
    /** Exchanges sent and not yet completed; at most {@link #maxPending}. */
    private final AtomicInteger pending = new AtomicInteger();
    /** The epoch id this store knows: a reply with another one means Redis lost its state. */
    private final AtomicReference<String> epoch = new AtomicReference<>();

    /** A server-side script, sent by digest and by body once the server has lost it. */
    private record Script(String body, String digest) {
    }

    private RedisLeaseStore(Builder builder, RedisURI redisUri) {
        this.uri = builder.uri;
        this.keyEncoder = builder.keyEncoder;
        this.sharedClock = builder.sharedClock;
        this.sharedOrigin = builder.sharedOrigin;
        this.maxPending = builder.maxPending;
        this.resources = DefaultClientResources.builder().ioThreadPoolSize(1).computationThreadPoolSize(1)
                // At most a second between reconnect attempts: shared decisions resume soon after Redis does.
                .reconnectDelay(Delay.exponential(Duration.ZERO, Duration.ofSeconds(1), 2, TimeUnit.MILLISECONDS))
                .build();
        this.client = RedisClient.create(resources, redisUri);
        client.setOptions(ClientOptions.builder()
                .autoReconnect(true)
                // Fail fast while disconnected: the limiters fall back instead of queueing.
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                // Ours holds maxPending exchanges: Lettuce never refuses one as over its queue.
                .requestQueueSize(builder.maxPending + QUEUE_MARGIN)
                .timeoutOptions(TimeoutOptions.enabled(builder.timeout))
                .socketOptions(SocketOptions.builder().connectTimeout(builder.connectTimeout).keepAlive(true).build())
                .build());
        try {
            this.connection = client.connect(StringCodec.UTF8);
            this.redis = connection.async();
            String prelude = resource("prelude.lua");
            this.slidingWindow = load(prelude + resource("sliding-window.lua"));
            this.tokenBucket = load(prelude + resource("token-bucket.lua"));
            RedisCommands<String, String> sync = connection.sync();
            sync.set(EPOCH_KEY, UUID.randomUUID() + " 0", SetArgs.Builder.nx());
            epoch.set(sync.get(EPOCH_KEY).split(" ", 2)[0]);
        } catch (RuntimeException e) {
            shutDownClient();
            throw new IllegalStateException("cannot use Redis at " + uri + ": " + e.getMessage(), e);
        }
        log.info("lease store connected to {}", uri);
    }

    /**
     * Returns a builder for the Redis at {@code uri}, in Lettuce's syntax:
     * {@code redis://[password@]host[:port][/database]}, {@code rediss://} for TLS.
     *
     * @param uri the Redis URI
     * @return a builder with the default settings
     * @throws NullPointerException if {@code uri} is null
     */
    public static Builder builder(String uri) {
        return new Builder(uri);
    }

    @Override
    public Object storeKey(String limiterName, Object key) {
        String encoded = keyEncoder.apply(key);
        if (encoded == null || encoded.length() > MAX_KEY_CHARS || !wellFormed(encoded)) {
            return null;
        }
        // The name's length first: no name and key can spell another name and key.
        return KEY_PREFIX + limiterName.length() + ":" + limiterName + ":" + encoded;
    }

    @Override
    public void send(Request request, Reply reply) {
        RateLimit limit = request.limit();
        // Rounded up, so that a lease's end computed from the send time is never late.
        String now = sharedClock == null ? ""
                : Long.toString(-Math.floorDiv(-(sharedClock.nanoTime() - sharedOrigin), 1000));
        long periodNanos = limit.period().toNanos();
        Script script;
        String[] args;
        if (limit.kind() == RateLimit.Kind.SLIDING_WINDOW) {
            script = slidingWindow;
            // Whole microseconds, rounded up: a longer window is only stricter.
            args = new String[] {now, Long.toString(-Math.floorDiv(-periodNanos, 1000)),
                    Long.toString(limit.permits()), Long.toString(request.charge()), Long.toString(request.ask()),
                    epoch.get()};
        } else {
            script = tokenBucket;
            long intervalNanos = -Math.floorDiv(-periodNanos, limit.permits());
            args = new String[] {now, micros(intervalNanos), micros(intervalNanos * limit.burst()),
                    Long.toString(request.charge()), Long.toString(request.ask()), Long.toString(request.giveBack()),
                    epoch.get()};
        }
        String[] keys = {(String) request.storeKey(), EPOCH_KEY};
        if (pending.incrementAndGet() > maxPending) {
            pending.decrementAndGet();
            reply.failed(Failure.BUSY);
            return;
        }
        try {
            RedisFuture<List<Object>> sent = redis.evalsha(script.digest, ScriptOutputType.MULTI, keys, args);
            sent.whenComplete((result, error) -> {
                if (error != null && unwrap(error) instanceof RedisNoScriptException) {
                    // A restarted or flushed server lost the script: send its body, which reloads it.
                    try {
                        RedisFuture<List<Object>> again = redis.eval(script.body, ScriptOutputType.MULTI, keys, args);
                        again.whenComplete((retried, failure) -> complete(retried, failure, reply));
                    } catch (RuntimeException e) {
                        complete(null, e, reply);
                    }
                    return;
                }
                complete(result, error, reply);
            });
        } catch (RuntimeException e) {
            complete(null, e, reply);
        }
    }

    @Override
    public void probe(Reply reply) {
        try {
            redis.ping().whenComplete((pong, error) -> {
                if (error == null) {
                    reply.granted(0, 0, 0);
                } else {
                    reply.failed(failureOf(error));
                }
            });
        } catch (RuntimeException e) {
            reply.failed(failureOf(e));
        }
    }

    /** Closes the connection and releases its threads. Idempotent. */
    @Override
    public void close() {
        connection.close();
        shutDownClient();
    }

    @Override
    public String toString() {
        return "RedisLeaseStore(" + uri + ")";
    }

    // ---------------------------------------------------------------- internals

    private void complete(List<Object> result, Throwable error, Reply reply) {
        pending.decrementAndGet();
        if (error != null) {
            reply.failed(failureOf(error));
            return;
        }
        long granted;
        long validMicros;
        long retryMicros;
        try {
            granted = (Long) result.get(0);
            validMicros = (Long) result.get(1);
            retryMicros = (Long) result.get(2);
            noteEpoch((String) result.get(3));
        } catch (RuntimeException malformed) {
            log.warn("{}: unexpected script reply {}", this, result, malformed);
            reply.failed(Failure.ERROR);
            return;
        }
        reply.granted(granted, validMicros < 0 ? Long.MAX_VALUE : TimeUnit.MICROSECONDS.toNanos(validMicros),
                TimeUnit.MICROSECONDS.toNanos(retryMicros));
    }

    /** Warns once per new epoch: Redis lost its state, and the scripts apply the loss rule. */
    private void noteEpoch(String id) {
        String known = epoch.get();
        if (!id.equals(known) && epoch.compareAndSet(known, id)) {
            log.warn("{}: Redis lost its rate-limit state (epoch {} is now {}); keys without a count are taken as"
                    + " full for the rest of their window (token buckets: as emptied at the loss)", this, known, id);
        }
    }

    private Failure failureOf(Throwable error) {
        Throwable cause = unwrap(error);
        if (cause instanceof RedisCommandTimeoutException) {
            return Failure.TIMEOUT;
        }
        if (cause instanceof RedisException && String.valueOf(cause.getMessage()).contains("size exceeded")) {
            // Lettuce's queue is full (commands it still waits for after their timeout): not sent.
            return Failure.BUSY;
        }
        if (cause instanceof RedisConnectionException || cause instanceof IOException || !connection.isOpen()) {
            return Failure.UNAVAILABLE;
        }
        log.debug("{}: command failed", this, cause);
        return Failure.ERROR;
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

    private Script load(String body) {
        return new Script(body, connection.sync().scriptLoad(body));
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
        if (key instanceof Long || key instanceof Integer || key instanceof Short || key instanceof Byte
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
        private final String uri;
        private Duration timeout = Duration.ofMillis(250);
        private Duration connectTimeout = Duration.ofSeconds(2);
        private int maxPending = 10_000;
        private Function<Object, String> keyEncoder = RedisLeaseStore::encodeStandard;
        private Ticker sharedClock;
        private long sharedOrigin;

        private Builder(String uri) {
            this.uri = Objects.requireNonNull(uri, "uri");
        }

        /**
         * How long a command may wait for its answer before it fails as
         * {@link LeaseStore.Failure#TIMEOUT}; the limiters then decide by their failure policy.
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
         * 2^53 microseconds (285 years), the integers a Lua number holds exactly.
         */
        Builder sharedClock(Ticker clock, long originNanos) {
            this.sharedClock = Objects.requireNonNull(clock, "clock");
            this.sharedOrigin = originNanos;
            return this;
        }

        /**
         * Connects to Redis and loads the scripts. Blocks for at most about the connect timeout
         * plus the command timeout: call it at startup, never on an event loop.
         *
         * @return the connected store; {@link RedisLeaseStore#close()} it when done
         * @throws IllegalArgumentException if the URI is malformed
         * @throws IllegalStateException if Redis cannot be reached or refuses the scripts
         */
        public RedisLeaseStore build() {
            RedisURI parsed;
            try {
                parsed = RedisURI.create(uri);
            } catch (RuntimeException e) {
                throw new IllegalArgumentException("not a Redis URI (redis://host:port): " + uri, e);
            }
            parsed.setTimeout(timeout);
            return new RedisLeaseStore(this, parsed);
        }

    }
}
