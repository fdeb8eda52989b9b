package io.wheelbeat.core.ratelimit;

/**
 * How a {@link KeyedRateLimiter} built with a {@link LeaseStore} decides while the store is slow,
 * down or gone, and for a key the store cannot hold. Leases already drawn are spent as usual; this
 * decides what no lease covers. Each such decision is counted as a fallback, by cause.
 *
 * <p>Immutable and thread-safe.
 */
public enum StoreFailurePolicy {

    /**
     * Decide locally with this process's share of the limit: the limit divided by
     * {@link KeyedRateLimiter.Builder#processes(int) processes}, rounded up. The default: the
     * cluster as a whole stays near its limit while every process goes on serving.
     */
    FAIL_LOCAL,

    /** Admit every request: availability first, no limit until the store is back. */
    ADMIT_ALL,

    /** Refuse every request: the limit first, nothing admitted until the store is back. */
    REFUSE_ALL
}
