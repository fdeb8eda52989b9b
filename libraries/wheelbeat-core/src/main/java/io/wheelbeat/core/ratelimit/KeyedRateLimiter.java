package io.wheelbeat.core.ratelimit;

import io.wheelbeat.core.ExecutorDrivenWheel;
import io.wheelbeat.core.Ticker;
import io.wheelbeat.core.WheelScheduler;
import io.wheelbeat.core.WheelTimeout;
import io.wheelbeat.core.WheelTimer;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link RateLimit} applied to each key separately (a source address, a connection, a user),
 * with the keys' windows on a shared timing wheel.
 *
 * <h2>Acquiring</h2>
 * {@link #tryAcquire(Object, long)} returns a {@code long} and never blocks:
 * <ul>
 *   <li>{@link #ADMITTED} ({@code 0}): the permits were taken;</li>
 *   <li>a positive number: refused; the nanoseconds until the same request would be admitted if
 *       no other permits are taken meanwhile (a retry-after hint);</li>
 *   <li>{@link #KEY_LIMIT_REACHED} ({@code -1}): refused because the key is new and the limiter
 *       cannot track another key (see {@link KeyLimitPolicy}); nothing was taken.</li>
 * </ul>
 * A primitive result keeps the hot path allocation free. For a key already tracked the call is
 * O(1), takes no lock and allocates nothing: a {@link ConcurrentHashMap} lookup with the caller's
 * own key object, then one compare-and-set of the key's packed state (a refusal writes nothing).
 * A new key allocates its entry and takes a lock shared with eviction, so that the count of keys
 * and the eviction order stay exact; this is the cold path.
 *
 * <h2>Forgetting keys</h2>
 * Each key has one eviction check on the {@link WheelScheduler}, armed when the key is first seen
 * and re-armed lazily: acquiring never touches the timer; when the check fires on a key that was
 * used meanwhile, it re-arms itself for the time the key will be idle. A key is forgotten once its
 * state is as good as new: a sliding window two windows after the window of its last use (so no
 * use for at least one full window), a token bucket once it has refilled (checked at most once
 * per period). Forgetting never changes a decision, and memory is bounded by the keys active
 * recently, never by every key ever seen.
 *
 * <h2>Bounded</h2>
 * At most {@link Builder#maxKeys(int) maxKeys} keys are tracked; a new key beyond that is handled
 * by the {@link KeyLimitPolicy}. If the scheduler refuses the eviction timer of a new key (its
 * maximum of pending timers), the key is refused with {@link #KEY_LIMIT_REACHED} too.
 *
 * <h2>Cluster mode</h2>
 * Built with {@link Builder#sharedThrough(LeaseStore)}, the limit holds across every process that
 * shares the store (module {@code ratelimit-redis}: Redis), with the same result contract. Each
 * process draws leases, permits of a key granted by the store ahead of use, and spends them
 * locally by one compare-and-set: a known key with a lease costs no round trip and no
 * allocation. A lease is sized to the key's rate over the next 100 ms (growing at most twofold
 * per exchange, never above half of this process's share), refilled in the background when half
 * spent, and one exchange per key is out at a time. A sliding window's lease ends with its
 * window, and its refills in that window add to it; a token bucket's lease ends after 100 ms,
 * and the unspent rest goes back to the bucket. At most 1,024 exchanges of a limiter are out at
 * once, 64 of them for keys never granted a lease; a request that needs one when there is no
 * room is refused (retry-after: one round trip) and counted as saturated, never decided by the
 * failure policy. When no
 * lease covers a request, up to {@link Builder#maxUnconfirmed(long) maxUnconfirmed} permits are
 * admitted on credit and charged to the store with the next exchange; otherwise the request is
 * refused with the store's retry-after (or one round trip while the answer is out).
 * <p><b>Bound on over-admission</b>, with {@code N} processes and {@code D = maxUnconfirmed}: a
 * sliding window admits at most {@code permits + N x D} per window of the store's clock; a token
 * bucket at most {@code burst + permits x (t + 100 ms) / period + N x D} in any span {@code t}
 * (the 100 ms: a lease drawn before the span may be spent in it). While the store fails, or for
 * a key it cannot hold, requests no lease covers are decided by the {@link StoreFailurePolicy}
 * and counted; a probe on the wheel every 500 ms notices when the store answers again.
 *
 * <h2>Thread rules</h2>
 * Thread-safe: any thread may call {@link #tryAcquire}, including the scheduler's own. Eviction
 * checks run on the scheduler's thread. The limiter never stops its scheduler, which may be
 * shared (for instance the wheel of an event loop, {@code EventLoopWheels.wheelFor(loop)}).
 *
 * @param <K> the key type; its {@code equals} and {@code hashCode} must be cheap and must not
 *     allocate (a {@code String}, an {@code InetAddress}, a {@code Long} the caller keeps)
 */
public final class KeyedRateLimiter<K> {

    /** The result of an admitted request. */
    public static final long ADMITTED = 0L;
    /** The result of a request refused because a new key could not be tracked. */
    public static final long KEY_LIMIT_REACHED = -1L;

    private static final Logger log = LoggerFactory.getLogger(KeyedRateLimiter.class);

    private final String name;
    private final RateLimit limit;
    /** The limit the keys' own states count: the limit, or in cluster mode the fail-local share. */
    private final RateLimit local;
    /** The cluster mode, or null when the limit is this process's alone. */
    private final Leases leases;
    private final WheelScheduler scheduler;
    private final Ticker ticker;
    private final long originNanos;
    private final int maxKeys;
    private final KeyLimitPolicy policy;
    private final ConcurrentHashMap<K, KeyEntry<K>> entries;

    /** Guards the ring, {@link #keys} and {@link #closed}; never taken for a known key. */
    private final ReentrantLock lock = new ReentrantLock();
    /** The CLOCK ring's sentinel: {@code ring.newer} is the oldest entry, the hand's next. */
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
        this.originNanos = ticker.nanoTime();
        this.maxKeys = builder.maxKeys;
        this.policy = builder.policy;
        this.entries = new ConcurrentHashMap<>(Math.min(maxKeys, 1 << 16));
        this.leases = builder.store == null ? null : new Leases(this, builder);
        this.local = leases == null ? limit : leases.share;
        ring.older = ring;
        ring.newer = ring;
    }

    /**
     * Returns a builder of a limiter applying {@code limit} to each key, with its eviction
     * timers on {@code scheduler} (a {@link WheelTimer}, or an {@link ExecutorDrivenWheel} such as
     * an event loop's wheel), whose {@link WheelScheduler#ticker() ticker} is also the limiter's
     * clock.
     *
     * @param limit the limit of each key
     * @param scheduler where the eviction timers go; its ticker is the limiter's clock
     * @return a builder with the default settings
     * @throws NullPointerException if an argument is null
     */
    public static Builder builder(RateLimit limit, WheelScheduler scheduler) {
        return new Builder(limit, scheduler);
    }

    /**
     * Takes one permit for {@code key}; see {@link #tryAcquire(Object, long)}.
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
     *     {@link #KEY_LIMIT_REACHED}; see the class documentation
     * @throws NullPointerException if {@code key} is null
     * @throws IllegalArgumentException if {@code permits} is below 1 or above the limit's
     *     {@link RateLimit#burst() burst}: such a request could never be admitted
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

    /**
     * Returns the number of keys tracked now (a snapshot).
     *
     * @return the number of keys tracked
     */
    public int activeKeys() {
        return keys;
    }

    /**
     * Returns the name, used to tag this limiter's metrics.
     *
     * @return the name
     */
    public String name() {
        return name;
    }

    /**
     * Returns the limit applied to each key.
     *
     * @return the limit
     */
    public RateLimit limit() {
        return limit;
    }

    /**
     * Forgets every key and cancels their eviction checks; later calls to {@link #tryAcquire}
     * throw {@link IllegalStateException}. The scheduler is left running. Idempotent.
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

    // ---------------------------------------------------------------- counts, for the metrics

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

    /** The cluster mode's counts, or null when the limit is local. */
    Leases leases() {
        return leases;
    }

    // ---------------------------------------------------------------- internals

    long now() {
        return Math.max(0, ticker.nanoTime() - originNanos);
    }

    private long counted(KeyEntry<K> entry, long result) {
        entry.touch();
        (result == ADMITTED ? admitted : rejected).increment();
        return result;
    }

    /** The cold path: the key is new, or its entry died under us. */
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
                // A fresh key always admits: permits <= burst was checked. Not yet shared: no race.
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

    /**
     * The eviction check of {@code entry}, run by the scheduler: forgets the key if it is idle,
     * otherwise re-arms for the time it will be.
     */
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
            // Unwatched, it would never leave: forget it now. It comes back with a full limit.
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

    /**
     * Makes room for one key by the CLOCK algorithm (see {@link KeyLimitPolicy#EVICT_LEAST_RECENT}).
     * After one full turn every flag has been cleared, so a key is chosen within
     * {@code keys + 1} steps even while other threads keep setting flags. Lock held.
     */
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

    /** Removes a dead entry from the map and the ring, once. Lock held. */
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

    /**
     * Settings of a {@link KeyedRateLimiter}. Defaults: name {@code "default"}, at most 100,000
     * keys, {@link KeyLimitPolicy#EVICT_LEAST_RECENT}. Not thread-safe.
     */
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
         * The name that tags the metrics ({@code limiter=<name>}); keep it to a few fixed values.
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
         * The most keys tracked at once. Each costs about 160 bytes of heap: its entry, its map
         * node and its eviction timer's handle (136 bytes measured with 200,000 keys), and its
         * cell in the wheel (28 bytes).
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
         * What to do with a new key when {@link #maxKeys(int)} keys are tracked.
         *
         * @param policy what happens to a new key when full
         * @return this builder
         */
        public Builder whenFull(KeyLimitPolicy policy) {
            this.policy = Objects.requireNonNull(policy, "policy");
            return this;
        }

        /**
         * Shares the limit with the limiters of other processes through {@code store} (cluster
         * mode): each key's count lives in the store, and this process draws leases of permits
         * from it and spends them locally. Every process must give a key the same limit and name.
         * See the class documentation for the bound on over-admission.
         *
         * @param store where the counts live
         * @return this builder
         * @throws IllegalArgumentException if the limit's burst exceeds 16,777,215 permits (a
         *     lease's largest count)
         */
        public Builder sharedThrough(LeaseStore store) {
            Objects.requireNonNull(store, "store");
            if (limit.burst() > Lease.MAX_COUNT) {
                throw new IllegalArgumentException("a shared limit takes at most " + Lease.MAX_COUNT
                        + " permits at once: " + limit);
            }
            this.store = store;
            return this;
        }

        /**
         * Cluster mode: how to decide what no lease covers while the store fails, and keys the
         * store cannot hold. Default {@link StoreFailurePolicy#FAIL_LOCAL}.
         *
         * @param policy the decision while the store fails
         * @return this builder
         */
        public Builder onStoreFailure(StoreFailurePolicy policy) {
            this.failurePolicy = Objects.requireNonNull(policy, "policy");
            return this;
        }

        /**
         * Cluster mode: how many processes share the limit (default 1). Each process's
         * {@link StoreFailurePolicy#FAIL_LOCAL} share is the limit divided by it, rounded up, and
         * no lease exceeds half of that share.
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
         * Cluster mode: the most permits of one key this process may admit ahead of the store's
         * answer (default 1), so that a new key, or one whose lease ran out, is served while its
         * lease is drawn. It is the bound on over-admission per process; 0 makes such requests
         * wait for the store (refused with a retry-after of one round trip).
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
         * Builds the limiter; its clock starts at the scheduler's ticker's current reading.
         *
         * @param <K> the type of the keys
         * @return the limiter, thread-safe
         */
        public <K> KeyedRateLimiter<K> build() {
            return new KeyedRateLimiter<>(this);
        }
    }
}
