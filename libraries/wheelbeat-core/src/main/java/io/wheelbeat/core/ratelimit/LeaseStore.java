package io.wheelbeat.core.ratelimit;

import java.util.Objects;

/**
 * Where the limiters of several processes keep each key's shared count (the SPI behind
 * {@link KeyedRateLimiter.Builder#sharedThrough(LeaseStore)}). An implementation applies each
 * {@link Request} atomically, on one clock shared by every process. Thread-safe; called from event
 * loops, so no method blocks or throws (failures go to {@link Reply#failed}).
 */
public interface LeaseStore {

    /**
     * Returns the store's name for {@code key}, or {@code null} if it cannot be stored (the
     * {@link StoreFailurePolicy} decides it).
     *
     * @param limiterName the limiter's name
     * @param key the application's key
     * @return the key's name in the store, or null
     */
    Object storeKey(String limiterName, Object key);

    /**
     * Applies {@code request} atomically and reports to {@code reply} exactly once, in a time the store bounds.
     *
     * @param request what to apply
     * @param reply where the outcome goes
     */
    void send(Request request, Reply reply);

    /**
     * Makes the cheapest round trip: {@link Reply#granted} with zeros if the store answers.
     *
     * @param reply where the outcome goes
     */
    void probe(Reply reply);

    /**
     * One exchange of a key with the store, in this order: give back {@code giveBack} unspent
     * permits (token buckets only), charge {@code charge} permits already admitted (even beyond
     * the limit), then grant up to {@code ask} within the limit.
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
                throw new IllegalArgumentException(
                        "negative count: charge " + charge + ", ask " + ask + ", giveBack " + giveBack);
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
        /** Not sent: the store has its most requests out; the limiter retries later. */
        BUSY
    }

    /** The outcome of one {@link Request} or probe: one call, on any thread; must not block. */
    interface Reply {

        /**
         * The request was applied.
         *
         * @param permits the permits granted, {@code 0..ask}
         * @param validNanos how long the permits may be spent, from the store's time of the request
         * @param retryAfterNanos if nothing was granted, how long until a permit would be; else 0
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
