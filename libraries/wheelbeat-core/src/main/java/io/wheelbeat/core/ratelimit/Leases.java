package io.wheelbeat.core.ratelimit;

import io.wheelbeat.core.WheelScheduler;
import io.wheelbeat.core.WheelTimeout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cluster mode of one {@link KeyedRateLimiter}: decides a key from its {@link Lease}, falls
 * back by the {@link StoreFailurePolicy} while the store fails, probes the store on the wheel
 * until it answers again, and counts all of it for the metrics.
 */
final class Leases {

    private static final Logger log = LoggerFactory.getLogger(Leases.class);

    /** How far ahead a lease is sized, and how long a token-bucket lease lives. */
    static final long HORIZON_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    /** The longest a lease is sized ahead (keeps the sizing's product of permits and nanoseconds in a long). */
    private static final long MAX_SIZING_NANOS = TimeUnit.MINUTES.toNanos(1);
    /** How often a failed store is probed. */
    static final long PROBE_INTERVAL_NANOS = TimeUnit.MILLISECONDS.toNanos(500);
    /** The most exchanges of one limiter out at once. */
    static final int MAX_EXCHANGES = 1024;
    /** The most of them for keys never granted a lease: a flood of new keys leaves the rest to known keys. */
    static final int MAX_NEW_KEY_EXCHANGES = 64;

    private static final VarHandle DEGRADED;
    private static final VarHandle MAX_LATENCY;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            DEGRADED = lookup.findVarHandle(Leases.class, "degraded", LeaseStore.Failure.class);
            MAX_LATENCY = lookup.findVarHandle(Leases.class, "maxLatencyNanos", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final KeyedRateLimiter<?> limiter;
    private final LeaseStore store;
    private final RateLimit limit;
    private final WheelScheduler scheduler;
    private final StoreFailurePolicy policy;
    /** This process's share of the limit, for {@link StoreFailurePolicy#FAIL_LOCAL}. */
    final RateLimit share;

    final long maxUnconfirmed;
    final long maxLease;
    final long horizonNanos;
    /**
     * How long a request no lease covers waits for the exchange out before the failure policy
     * decides: well within the half lease left when its refill is sent.
     */
    private final long patienceNanos;

    final boolean givesBack;
    /** Sliding-window grants whose ends differ by less end the same window; 0 for a token bucket. */
    final long sameWindowNanos;

    private final AtomicInteger exchangesOut = new AtomicInteger();

    /** Why the store is failing, or null while it answers. */
    @SuppressWarnings("unused") // accessed through DEGRADED
    private volatile LeaseStore.Failure degraded;

    private final Consumer<WheelTimeout> probe = this::probe;
    private final LeaseStore.Reply probeReply = new ProbeReply();
    private volatile WheelTimeout probeTimeout;
    private volatile boolean closed;
    /** The last round trip's duration: the retry hint of a request waiting for a lease. */
    private volatile long lastLatencyNanos = TimeUnit.MILLISECONDS.toNanos(1);

    private final LongAdder roundTrips = new LongAdder();
    private final LongAdder draws = new LongAdder();
    private final LongAdder permitsLeased = new LongAdder();
    private final LongAdder latencyNanos = new LongAdder();
    private final LongAdder answered = new LongAdder();
    private final LongAdder saturated = new LongAdder();

    @SuppressWarnings("unused") // accessed through MAX_LATENCY
    private volatile long maxLatencyNanos;

    private final LongAdder[] fallbacks = new LongAdder[FallbackCause.values().length];

    /** Why a decision was left to the failure policy; the metrics' {@code cause} tag. */
    enum FallbackCause {
        TIMEOUT,
        UNAVAILABLE,
        ERROR,
        KEY;

        static FallbackCause of(LeaseStore.Failure failure) {
            return switch (failure) {
                case TIMEOUT -> TIMEOUT;
                case UNAVAILABLE -> UNAVAILABLE;
                case ERROR -> ERROR;
                case BUSY -> throw new IllegalArgumentException("not a failure of the store: " + failure);
            };
        }

        String tag() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    Leases(KeyedRateLimiter<?> limiter, KeyedRateLimiter.Builder settings) {
        this.limiter = limiter;
        this.store = settings.store;
        this.limit = settings.limit;
        this.scheduler = settings.scheduler;
        this.policy = settings.failurePolicy;
        this.share = limit.share(settings.processes);
        this.maxUnconfirmed = settings.maxUnconfirmed;
        this.maxLease = Math.max(1, Math.min(Lease.MAX_COUNT, limit.burst() / (2L * settings.processes)));
        this.horizonNanos = Math.min(HORIZON_NANOS, limit.periodNanos);
        this.patienceNanos = horizonNanos / 4;
        this.givesBack = limit.kind() == RateLimit.Kind.TOKEN_BUCKET;
        this.sameWindowNanos = givesBack ? 0 : limit.periodNanos / 2;
        for (int i = 0; i < fallbacks.length; i++) {
            fallbacks[i] = new LongAdder();
        }
    }

    /** The lease of a new key: the cold path. */
    Lease newLease(Object key, long now) {
        Object storeKey;
        try {
            storeKey = store.storeKey(limiter.name(), key);
        } catch (RuntimeException e) {
            log.debug("{}: the store cannot name a key; it is decided by {}", limiter, policy, e);
            storeKey = null;
        }
        return new Lease(storeKey, this, now);
    }

    /**
     * Takes {@code permits} for {@code entry}: from its lease when it covers them (the hot path:
     * one compare-and-set), otherwise on credit, by the store's last refusal, or by the failure
     * policy. Returns as {@link KeyEntry#tryAcquire}.
     */
    long tryAcquire(KeyEntry<?> entry, long permits, long now) {
        Lease lease = entry.lease;
        if (lease.trySpend(permits, now)) {
            return KeyedRateLimiter.ADMITTED;
        }
        if (entry.state() == KeyEntry.DEAD) {
            return KeyEntry.GONE;
        }
        if (lease.storeKey == null) {
            return fallback(entry, permits, now, FallbackCause.KEY);
        }
        LeaseStore.Failure down = degraded;
        if (down != null) {
            return fallback(entry, permits, now, FallbackCause.of(down));
        }
        long wait = lease.refusedFor(now);
        if (wait > 0) {
            return wait;
        }
        boolean credited = lease.takeCredit(permits, maxUnconfirmed);
        if (lease.sendIfIdle(now, credited ? permits : 0) == Lease.NO_ROOM) {
            // No exchange could start (its credit, if any, returned): decided with this process's
            // share, as by FAIL_LOCAL, and what it admits is charged with the key's next exchange.
            saturated.increment();
            long result = permits > share.burst() ? share.periodNanos : entry.tryAcquire(share, permits, now);
            if (result == KeyedRateLimiter.ADMITTED) {
                lease.owe(permits);
            }
            return result;
        }
        if (credited) {
            return KeyedRateLimiter.ADMITTED;
        }
        // The answer is late (the lease was sized to outlast a round trip): the store is slow,
        // and tryAcquire never waits for it.
        if (lease.outFor(now) > patienceNanos) {
            return fallback(entry, permits, now, FallbackCause.TIMEOUT);
        }
        return Math.max(1, lastLatencyNanos);
    }

    private long fallback(KeyEntry<?> entry, long permits, long now, FallbackCause cause) {
        fallbacks[cause.ordinal()].increment();
        return switch (policy) {
            case ADMIT_ALL -> KeyedRateLimiter.ADMITTED;
            case REFUSE_ALL -> cause == FallbackCause.KEY ? limit.periodNanos : PROBE_INTERVAL_NANOS;
            case FAIL_LOCAL -> permits > share.burst() ? share.periodNanos : entry.tryAcquire(share, permits, now);
        };
    }

    /** Takes room for one exchange: false when {@code established ? all : half} of it is taken. */
    boolean reserveExchange(boolean established) {
        int cap = established ? MAX_EXCHANGES : MAX_NEW_KEY_EXCHANGES;
        for (; ; ) {
            int out = exchangesOut.get();
            if (out >= cap) {
                return false;
            }
            if (exchangesOut.compareAndSet(out, out + 1)) {
                return true;
            }
        }
    }

    /** An exchange ended (answered, failed, or not sent). */
    void releaseExchange() {
        exchangesOut.decrementAndGet();
    }

    /** The store had no room for an exchange; the key sends it later. */
    void deferred() {
        saturated.increment();
    }

    void send(Lease lease, long charge, long ask, long giveBack) {
        roundTrips.increment();
        if (ask > 0) {
            draws.increment();
        }
        LeaseStore.Request request = new LeaseStore.Request(lease.storeKey, limit, charge, ask, giveBack);
        try {
            store.send(request, lease);
        } catch (RuntimeException e) {
            log.warn("{}: the store threw instead of reporting a failure", limiter, e);
            lease.failed(LeaseStore.Failure.ERROR);
        }
    }

    /**
     * How far ahead a lease is sized: one horizon, or for a sliding window four round trips if
     * longer, so a refill sent at half the lease returns in time even from a slow store.
     */
    long sizingHorizon() {
        return givesBack
                ? horizonNanos
                : Math.min(limit.periodNanos, Math.max(horizonNanos, Math.min(4 * lastLatencyNanos, MAX_SIZING_NANOS)));
    }

    /** How long granted permits live: a sliding window's to its window's end, a bucket's one horizon. */
    long lifetime(long validNanos) {
        return givesBack ? Math.min(validNanos, horizonNanos) : validNanos;
    }

    void answered(long latency, long permits) {
        latency = Math.max(0, latency);
        lastLatencyNanos = latency;
        permitsLeased.add(permits);
        timed(latency);
    }

    /** Timed for the metrics only: a timeout says nothing of how fast the store answers. */
    void failedAfter(long latency) {
        timed(Math.max(0, latency));
    }

    private void timed(long latency) {
        latencyNanos.add(latency);
        answered.increment();
        long max;
        while (latency > (max = (long) MAX_LATENCY.getVolatile(this))
                && !MAX_LATENCY.compareAndSet(this, max, latency)) {
            // retry
        }
    }

    boolean degraded() {
        return degraded != null;
    }

    /** The store failed: decide by the policy until a probe gets an answer. */
    void failed(LeaseStore.Failure cause) {
        if (DEGRADED.compareAndSet(this, null, cause)) {
            log.warn("{}: the lease store failed ({}); deciding by {} until it answers again", limiter, cause, policy);
            armProbe();
        }
    }

    private void armProbe() {
        if (closed) {
            return;
        }
        try {
            probeTimeout = scheduler.newTimeout(probe, PROBE_INTERVAL_NANOS);
        } catch (RuntimeException e) {
            log.warn("{}: cannot schedule a probe of the lease store; staying on {}", limiter, policy, e);
        }
    }

    private void probe(WheelTimeout timeout) {
        if (!closed) {
            roundTrips.increment();
            store.probe(probeReply);
        }
    }

    private final class ProbeReply implements LeaseStore.Reply {
        @Override
        public void granted(long permits, long validNanos, long retryAfterNanos) {
            LeaseStore.Failure was = degraded;
            degraded = null;
            log.info("{}: the lease store answers again after {}; shared decisions resume", limiter, was);
        }

        @Override
        public void failed(LeaseStore.Failure cause) {
            if (cause != LeaseStore.Failure.BUSY) {
                degraded = cause;
            }
            armProbe();
        }
    }

    long now() {
        return limiter.now();
    }

    void close() {
        closed = true;
        WheelTimeout pending = probeTimeout;
        if (pending != null) {
            pending.cancel();
        }
    }

    long roundTripCount() {
        return roundTrips.sum();
    }

    long drawCount() {
        return draws.sum();
    }

    long permitsLeasedCount() {
        return permitsLeased.sum();
    }

    long fallbackCount(FallbackCause cause) {
        return fallbacks[cause.ordinal()].sum();
    }

    long saturatedCount() {
        return saturated.sum();
    }

    long exchangesOut() {
        return exchangesOut.get();
    }

    long answeredCount() {
        return answered.sum();
    }

    double latencySeconds() {
        return latencyNanos.sum() / 1e9;
    }

    double maxLatencySeconds() {
        return maxLatencyNanos / 1e9;
    }
}
