package io.wheelbeat.core.ratelimit;

/**
 * What a {@link KeyedRateLimiter} does with a new key when it already tracks its maximum number
 * of keys.
 *
 * <p>Immutable and thread-safe.
 */
public enum KeyLimitPolicy {

    /**
     * Refuse the new key: {@link KeyedRateLimiter#tryAcquire} returns
     * {@link KeyedRateLimiter#KEY_LIMIT_REACHED} and takes nothing, until a tracked key goes idle
     * and is evicted. Keys already tracked keep their limits exactly. Under a flood of new keys
     * (many source addresses), newcomers are refused while the known keys are served.
     */
    REJECT_NEW_KEYS,

    /**
     * Forget the least recently used key to make room, by the CLOCK (second chance) algorithm:
     * keys sit in arrival order, a key used since the hand last passed it is moved to the back
     * instead of evicted, and the first key not used since then is forgotten. It approximates
     * least-recently-used at amortized O(1) cost, and costs the hot path no more than setting a
     * flag. A forgotten key starts again with a full limit when it returns, so under a flood of
     * new keys the limits become more lenient, never stricter.
     */
    EVICT_LEAST_RECENT
}
