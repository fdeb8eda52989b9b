package io.wheelbeat.core.ratelimit;

/** What a {@link KeyedRateLimiter} does with a new key when it tracks its maximum of keys. */
public enum KeyLimitPolicy {

    /**
     * Refuse it ({@link KeyedRateLimiter#KEY_LIMIT_REACHED}) until a tracked key goes idle; known
     * keys keep their limits exactly.
     */
    REJECT_NEW_KEYS,

    /**
     * Forget the least recently used key, by the CLOCK (second chance) algorithm: amortized O(1),
     * a flag set on the hot path. A forgotten key returns with a full limit, so a flood of new keys
     * makes limits more lenient, never stricter.
     */
    EVICT_LEAST_RECENT
}
