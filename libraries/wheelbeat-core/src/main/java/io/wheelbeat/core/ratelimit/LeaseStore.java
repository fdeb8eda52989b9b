package io.wheelbeat.core.ratelimit;

import java.util.Objects;

/**
 * Where the limiters of several processes keep each key's shared count (a service provider
 * interface): the back end of a {@link KeyedRateLimiter} built with
 * {@link KeyedRateLimiter.Builder#sharedThrough(LeaseStore)}. The limiter decides locally from
 * leases, permits it draws from the store ahead of use; the store only has to apply one
 * {@link Request} at a time, atomically, and say what it granted.
 *
 * <p>Module {@code ratelimit-redis} implements it on Redis. An implementation must keep each
 * request atomic in the shared state (no two processes may be granted the same permit), count
 * time on one clock shared by every process, and forget a key's state once it is as good as new
 * (a window later for a sliding window, once refilled for a token bucket).
 *
 * <h2>Thread rules</h2>
 * Thread-safe: any thread may call any method, including a Netty event loop, so no method may
 * block or throw (failures are reported through {@link Reply#failed}).
 */
public interface LeaseStore {

    /**
     * Returns the store's name for {@code key} of the limiter named {@code limiterName}, or
     * {@code null} if the key cannot be stored: the limiter then decides that key by its
     * {@link StoreFailurePolicy} and counts it as a fallback. Called once per key tracked (the
     * cold path); must not block.
     *
     * @param limiterName the limiter's name
     * @param key the application's key
     * @return the key's name in the store, or null
     */
    Object storeKey(String limiterName, Object key);

    /**
     * Applies {@code request} atomically at the store's current time and reports the outcome to
     * {@code reply} exactly once, on any thread, within the store's timeout. Never blocks, never
     * throws.
     *
     * @param request what to apply
     * @param reply where the outcome goes
     */
    void send(Request request, Reply reply);

    /**
     * Makes the cheapest round trip that tells whether the store answers, reporting to
     * {@code reply} as {@link #send}: {@link Reply#granted} with zeros on success. Never blocks,
     * never throws.
     *
     * @param reply where the outcome goes
     */
    void probe(Reply reply);

    /**
     * One exchange of a key with the store, applied in this order: give back {@code giveBack}
     * unspent permits of an earlier lease (token buckets only: a sliding window's unspent permits
     * lapse with their window), charge {@code charge} permits the process already admitted
     * (always counted, even beyond the limit), then grant as many permits as possible up to
     * {@code ask}, within the limit.
     *
     * @param storeKey what {@link #storeKey} returned for the key
     * @param limit the key's limit; every process must use the same one for a key
     */
    record Request(Object storeKey, RateLimit limit, long charge, long ask, long giveBack) {
        /**
         * Checks the request's parts.
         *
         * @param storeKey what {@link LeaseStore#storeKey} returned for the key
         * @param limit the key's limit
         * @param charge permits already admitted, to count
         * @param ask the most permits to grant
         * @param giveBack unspent permits of an earlier lease to return
         * @throws NullPointerException if {@code storeKey} or {@code limit} is null
         * @throws IllegalArgumentException if a count is negative
         */
        public Request {
            Objects.requireNonNull(storeKey, "storeKey");
            Objects.requireNonNull(limit, "limit");
            if (charge < 0 || ask < 0 || giveBack < 0) {
                throw new IllegalArgumentException("negative count: charge " + charge + ", ask " + ask
                        + ", giveBack " + giveBack);
            }
        }
    }

    /** Why a request or probe failed. */
    enum Failure {
        /** The store did not answer within its timeout. */
        TIMEOUT,
        /** The store cannot be reached: not connected, or reconnecting. */
        UNAVAILABLE,
        /** The store answered with an error, or the request could not be sent. */
        ERROR,
        /**
         * The request was not sent: the store has its most requests out. Not a failure of the
         * store: the limiter keeps deciding from the store and sends the key's exchange later.
         */
        BUSY
    }

    /**
     * The outcome of one {@link Request} or probe. Exactly one method is called, once, on any
     * thread; it must not block.
     */
    interface Reply {

        /**
         * The request was applied.
         *
         * @param permits the permits granted, {@code 0..ask}
         * @param validNanos how long the granted permits may be spent, counted from the store's
         *     time of the request (so from the moment the request was sent, the lease ends no
         *     later than in the store)
         * @param retryAfterNanos when nothing was granted: how long after the store's time of the
         *     request one permit would be; otherwise 0
         */
        void granted(long permits, long validNanos, long retryAfterNanos);

        /**
         * The request failed; it may or may not have been applied.
         *
         * @param cause why it failed
         */
        void failed(Failure cause);
    }
}
