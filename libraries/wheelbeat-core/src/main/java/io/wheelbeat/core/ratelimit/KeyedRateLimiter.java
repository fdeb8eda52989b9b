package io.wheelbeat.core.ratelimit;

import io.wheelbeat.core.ExecutorDrivenWheel;
import io.wheelbeat.core.WheelScheduler;
import io.wheelbeat.core.WheelTimeout;
import io.wheelbeat.core.WheelTimer;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link RateLimit} applied to each key separately. {@link #tryAcquire(Object, long)} never
 * blocks; for a known key it is O(1), lock-free and allocation-free. Each key has one eviction check
 * on the {@link WheelScheduler}; a key is forgotten once its state is as good as new, so forgetting
 * never changes a decision. At most {@link Builder#maxKeys(int) maxKeys} keys are tracked.
 *
 * <p>With {@link Builder#sharedThrough(LeaseStore)} the limit holds across processes: each spends
 * leases drawn from the store locally, admits up to {@link Builder#maxUnconfirmed(long)} permits on
 * credit, and lets the {@link StoreFailurePolicy} decide while the store fails.
 *
 * <p>Thread-safe; eviction checks run on the scheduler's thread, which the limiter never stops.
 *
 * @param <K> the key type; its {@code equals} and {@code hashCode} must be cheap and not allocate
 */
public final class KeyedRateLimiter<K> {

    /** The result of an admitted request. */
    public static final long ADMITTED = 0L;
    /** The result of a request refused because a new key could not be tracked. */
    public static final long KEY_LIMIT_REACHED = -1L;

    private static final Logger log = LoggerFactory.getLogger(KeyedRateLimiter.class);

    private final String name;
    private final RateLimit limit;
    /** The limit, or in cluster mode the fail-local share. */
    private final RateLimit local;
    /** The cluster mode, or null when the limit is this process's alone. */
    private final Leases leases;

    private final WheelScheduler scheduler;
    private final LongSupplier ticker;
    private final long originNanos;
    private final int maxKeys;
    private final KeyLimitPolicy policy;
    private final ConcurrentHashMap<K, KeyEntry<K>> entries;

    /** Guards the ring, {@link #keys} and {@link #closed}; never taken for a known key. */
    private final ReentrantLock lock = new ReentrantLock();
    /** The CLOCK ring's sentinel: {@code ring.newer} is the oldest entry. */
    private final KeyEntry<K> ring = new KeyEntry<>(null, null);

    private volatile int keys;
    private boolean closed;

    private final LongAdder admitted = new LongAdder();
    private final LongAdder rejected = new LongAdder();
    private final LongAdder keyLimitRejected = new LongAdder();
    private final LongAdder evictedIdle = new LongAdder();
    private final LongAdder evictedForRoom = new LongAdder();

    private KeyedRateLimiter(Builder builder) {
        this.name = builder.name;
        this.limit = builder.limit;
        this.scheduler = builder.scheduler;
        this.ticker = scheduler.ticker();
        this.originNanos = ticker.getAsLong();
        this.maxKeys = builder.maxKeys;
        this.policy = builder.policy;
        this.entries = new ConcurrentHashMap<>(Math.min(maxKeys, 1 << 16));
        this.leases = builder.store == null ? null : new Leases(this, builder);
        this.local = leases == null ? limit : leases.share;
        ring.older = ring;
        ring.newer = ring;
    }

    /**
     * {@return a builder of a limiter applying {@code limit} to each key, with its eviction timers on
     * {@code scheduler}, a {@link WheelTimer} or an {@link ExecutorDrivenWheel}}
     *
     * @param limit the limit of each key
     * @param scheduler where the eviction timers go; its ticker is the limiter's clock
     * @throws NullPointerException if an argument is null
     */
    public static Builder builder(RateLimit limit, WheelScheduler scheduler) {
        return new Builder(limit, scheduler);
    }

    /**
     * Takes one permit.
     *
     * @param key the key, not null
     * @return as {@link #tryAcquire(Object, long)}
     */
    public long tryAcquire(K key) {
        return tryAcquire(key, 1);
    }

    /**
     * Takes {@code permits} for {@code key} if its limit allows, all or nothing.
     *
     * @param key the key, not null
     * @param permits how many permits, 1 or more
     * @return {@link #ADMITTED}, the positive nanoseconds until the request would be admitted, or
     *     {@link #KEY_LIMIT_REACHED}
     * @throws NullPointerException if {@code key} is null
     * @throws IllegalArgumentException if {@code permits} is below 1 or above the limit's
     *     {@link RateLimit#burst() burst}
     * @throws IllegalStateException if the limiter is closed, or a new key arrives after the
     *     scheduler was stopped
     */
    public long tryAcquire(K key, long permits) {
        Objects.requireNonNull(key, "key");
        limit.checkPermits(permits);
        long now = now();
        KeyEntry<K> entry = entries.get(key);
        if (entry != null) {
            long result = decide(entry, permits, now);
            if (result != KeyEntry.GONE) {
                return counted(entry, result);
            }
        }
        return acquireNewKey(key, permits, now);
    }

    private long decide(KeyEntry<K> entry, long permits, long now) {
        return leases == null ? entry.tryAcquire(limit, permits, now) : leases.tryAcquire(entry, permits, now);
    }

    /** {@return the number of keys tracked now (a snapshot)} */
    public int activeKeys() {
        return keys;
    }

    /** {@return the name, used to tag this limiter's metrics} */
    public String name() {
        return name;
    }

    /** {@return the limit applied to each key} */
    public RateLimit limit() {
        return limit;
    }

    /**
     * Forgets every key; later {@link #tryAcquire} calls throw. The scheduler keeps running. Idempotent.
     */
    public void close() {
        if (leases != null) {
            leases.close();
        }
        lock.lock();
        try {
            closed = true;
            KeyEntry<K> entry;
            while ((entry = ring.newer) != ring) {
                entry.killNow();
                entry.cancelEviction();
                retire(entry);
            }
        } finally {
            lock.unlock();
        }
    }

    @Override
    public String toString() {
        return "KeyedRateLimiter(" + name + ", " + limit + ", " + keys + "/" + maxKeys + " keys)";
    }

    long admittedCount() {
        return admitted.sum();
    }

    long rejectedCount() {
        return rejected.sum();
    }

    long keyLimitRejectedCount() {
        return keyLimitRejected.sum();
    }

    long evictedIdleCount() {
        return evictedIdle.sum();
    }

    long evictedForRoomCount() {
        return evictedForRoom.sum();
    }

    Leases leases() {
        return leases;
    }

    long now() {
        return Math.max(0, ticker.getAsLong() - originNanos);
    }

    private long counted(KeyEntry<K> entry, long result) {
        entry.touch();
        (result == ADMITTED ? admitted : rejected).increment();
        return result;
    }

    /** The cold path: a new key, or its entry died under us. */
    private long acquireNewKey(K key, long permits, long now) {
        lock.lock();
        try {
            if (closed) {
                throw new IllegalStateException(this + " is closed");
            }
            KeyEntry<K> entry = entries.get(key);
            if (entry != null) {
                long result = decide(entry, permits, now);
                if (result != KeyEntry.GONE) {
                    return counted(entry, result); // another thread added it meanwhile
                }
                retire(entry); // killed, its killer not yet done removing it
            }
            if (keys >= maxKeys && (policy == KeyLimitPolicy.REJECT_NEW_KEYS || !evictLeastRecent())) {
                keyLimitRejected.increment();
                return KEY_LIMIT_REACHED;
            }
            KeyEntry<K> fresh = new KeyEntry<>(key, this);
            long result = ADMITTED;
            long firstCheck;
            if (leases == null) {
                // Admits: permits <= burst was checked.
                result = fresh.tryAcquire(limit, permits, now);
                firstCheck = limit.nextCheckDelay(fresh.state(), now);
            } else {
                fresh.lease = leases.newLease(key, now);
                firstCheck = leases.horizonNanos;
            }
            try {
                fresh.eviction = scheduler.newTimeout(fresh, firstCheck);
            } catch (RejectedExecutionException full) {
                log.debug("{}: the scheduler refused the eviction timer of a new key; key refused", this, full);
                keyLimitRejected.increment();
                return KEY_LIMIT_REACHED;
            }
            if (leases != null) {
                result = leases.tryAcquire(fresh, permits, now); // may talk to the store: after the checks
            }
            entries.put(key, fresh);
            linkNewest(fresh);
            keys++;
            (result == ADMITTED ? admitted : rejected).increment(); // not touched: new keys sit at the back
            return result;
        } finally {
            lock.unlock();
        }
    }

    /** Forgets an idle key, or re-arms its check. */
    void checkIdle(KeyEntry<K> entry) {
        long now = now();
        long state;
        while ((state = entry.state()) != KeyEntry.DEAD) {
            long leaseBusy = leases == null ? 0 : entry.lease.busyFor(now);
            boolean localBusy = now < local.idleAt(state, now);
            if (leaseBusy > 0 || localBusy) {
                long localDelay = localBusy ? local.nextCheckDelay(state, now) : Long.MAX_VALUE;
                rearm(entry, Math.min(leaseBusy > 0 ? leaseBusy : Long.MAX_VALUE, localDelay));
                return;
            }
            if (entry.kill(state)) {
                evictedIdle.increment();
                retireLocking(entry);
                return;
            }
        }
    }

    private void rearm(KeyEntry<K> entry, long delay) {
        WheelTimeout next;
        try {
            next = scheduler.newTimeout(entry, delay);
        } catch (RejectedExecutionException | IllegalStateException e) {
            // Unwatched, it would never leave: forget it now.
            log.warn("{}: cannot re-arm the eviction check of a key; forgetting it early", this, e);
            if (entry.killNow() != KeyEntry.DEAD) {
                evictedForRoom.increment();
            }
            retireLocking(entry);
            return;
        }
        entry.eviction = next;
        // Killed meanwhile (least-recent eviction, close)? Its killer may have missed this timer.
        if (entry.state() == KeyEntry.DEAD) {
            next.cancel();
        }
    }

    /** CLOCK eviction; {@code secondChances} bounds it while other threads set flags. Lock held. */
    private boolean evictLeastRecent() {
        int secondChances = keys;
        for (KeyEntry<K> candidate = ring.newer; candidate != ring; candidate = ring.newer) {
            if (candidate.referenced && secondChances-- > 0) {
                candidate.referenced = false;
                unlink(candidate);
                linkNewest(candidate);
                continue;
            }
            if (candidate.killNow() != KeyEntry.DEAD) {
                candidate.cancelEviction();
                evictedForRoom.increment();
            }
            retire(candidate);
            return true;
        }
        return false;
    }

    private void retireLocking(KeyEntry<K> entry) {
        lock.lock();
        try {
            retire(entry);
        } finally {
            lock.unlock();
        }
    }

    /** Lock held. */
    private void retire(KeyEntry<K> entry) {
        if (entry.older == null) {
            return; // already retired
        }
        unlink(entry);
        entries.remove(entry.key, entry);
        keys--;
    }

    private void linkNewest(KeyEntry<K> entry) {
        KeyEntry<K> newest = ring.older;
        entry.older = newest;
        entry.newer = ring;
        newest.newer = entry;
        ring.older = entry;
    }

    private void unlink(KeyEntry<K> entry) {
        entry.older.newer = entry.newer;
        entry.newer.older = entry.older;
        entry.older = null;
        entry.newer = null;
    }

    /** Settings of a {@link KeyedRateLimiter}. Not thread-safe. */
    public static final class Builder {
        final RateLimit limit;
        final WheelScheduler scheduler;
        private String name = "default";
        private int maxKeys = 100_000;
        private KeyLimitPolicy policy = KeyLimitPolicy.EVICT_LEAST_RECENT;
        LeaseStore store;
        StoreFailurePolicy failurePolicy = StoreFailurePolicy.FAIL_LOCAL;
        int processes = 1;
        long maxUnconfirmed = 1;

        private Builder(RateLimit limit, WheelScheduler scheduler) {
            this.limit = Objects.requireNonNull(limit, "limit");
            this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
        }

        /**
         * The name that tags the metrics; default {@code "default"}.
         *
         * @param name the name, not blank
         * @return this builder
         * @throws IllegalArgumentException if blank
         */
        public Builder name(String name) {
            if (Objects.requireNonNull(name, "name").isBlank()) {
                throw new IllegalArgumentException("name must not be blank");
            }
            this.name = name;
            return this;
        }

        /**
         * The most keys tracked at once; default 100,000.
         *
         * @param maxKeys the most keys tracked
         * @return this builder
         * @throws IllegalArgumentException if below 1
         */
        public Builder maxKeys(int maxKeys) {
            if (maxKeys < 1) {
                throw new IllegalArgumentException("maxKeys must be at least 1: " + maxKeys);
            }
            this.maxKeys = maxKeys;
            return this;
        }

        /**
         * What to do with a new key when full; default {@link KeyLimitPolicy#EVICT_LEAST_RECENT}.
         *
         * @param policy what happens to a new key when full
         * @return this builder
         */
        public Builder whenFull(KeyLimitPolicy policy) {
            this.policy = Objects.requireNonNull(policy, "policy");
            return this;
        }

        /**
         * Shares the limit with other processes through {@code store}; each must use the same limit and name.
         *
         * @param store where the counts live
         * @return this builder
         * @throws IllegalArgumentException if the limit's burst exceeds 16,777,215 permits
         */
        public Builder sharedThrough(LeaseStore store) {
            Objects.requireNonNull(store, "store");
            if (limit.burst() > Lease.MAX_COUNT) {
                throw new IllegalArgumentException(
                        "a shared limit takes at most " + Lease.MAX_COUNT + " permits at once: " + limit);
            }
            this.store = store;
            return this;
        }

        /**
         * Cluster mode: the decision while the store fails; default {@link StoreFailurePolicy#FAIL_LOCAL}.
         *
         * @param policy the decision while the store fails
         * @return this builder
         */
        public Builder onStoreFailure(StoreFailurePolicy policy) {
            this.failurePolicy = Objects.requireNonNull(policy, "policy");
            return this;
        }

        /**
         * Cluster mode: how many processes share the limit (default 1), which sizes the fail-local share.
         *
         * @param processes the number of processes sharing the limit
         * @return this builder
         * @throws IllegalArgumentException if below 1
         */
        public Builder processes(int processes) {
            if (processes < 1) {
                throw new IllegalArgumentException("processes must be at least 1: " + processes);
            }
            this.processes = processes;
            return this;
        }

        /**
         * Cluster mode: the most permits of one key admitted ahead of the store's answer (default 1).
         *
         * @param permits the most permits admitted ahead of the store, 0 or more
         * @return this builder
         * @throws IllegalArgumentException if negative
         */
        public Builder maxUnconfirmed(long permits) {
            if (permits < 0) {
                throw new IllegalArgumentException("maxUnconfirmed must not be negative: " + permits);
            }
            this.maxUnconfirmed = permits;
            return this;
        }

        /**
         * Builds the limiter; the scheduler's ticker is its clock.
         *
         * @param <K> the type of the keys
         * @return the limiter, thread-safe
         */
        public <K> KeyedRateLimiter<K> build() {
            return new KeyedRateLimiter<>(this);
        }
    }
}
