package io.wheelbeat.netty.ratelimit;

import io.wheelbeat.core.ratelimit.KeyedRateLimiter;
import java.util.Objects;

/**
 * A user event of a {@link RateLimitHandler} each time
 * a connection or message is over its limit, before the {@link OverLimitAction} is taken. It
 * names no key: log the channel's address yourself if you need it. Immutable.
 */
public final class RateLimitExceededEvent {

    /** What was counted. */
    public enum Limited {
        /** A new connection, on the accepting side. */
        CONNECTION,
        /** A message read on a connection. */
        MESSAGE
    }

    private final String limiterName;
    private final Limited limited;
    private final OverLimitAction action;
    private final long result;

    /**
     * @param limiterName the {@link KeyedRateLimiter#name() name} of the limiter that refused
     * @param limited what was counted
     * @param action what the handler does about it
     * @param result what {@link KeyedRateLimiter#tryAcquire} returned: positive nanoseconds to
     *     wait, or {@link KeyedRateLimiter#KEY_LIMIT_REACHED}
     * @throws IllegalArgumentException if {@code result} is not a refusal
     */
    public RateLimitExceededEvent(String limiterName, Limited limited, OverLimitAction action, long result) {
        if (result <= 0 && result != KeyedRateLimiter.KEY_LIMIT_REACHED) {
            throw new IllegalArgumentException("not a refusal: " + result);
        }
        this.limiterName = Objects.requireNonNull(limiterName, "limiterName");
        this.limited = Objects.requireNonNull(limited, "limited");
        this.action = Objects.requireNonNull(action, "action");
        this.result = result;
    }

    /** @return the name of the limiter that refused */
    public String limiterName() {
        return limiterName;
    }

    /** @return what was counted: a connection or a message */
    public Limited limited() {
        return limited;
    }

    /** @return what the handler does about it */
    public OverLimitAction action() {
        return action;
    }

    /**
     * @return the nanoseconds until the key would have a permit again if it took none meanwhile (a retry-after hint),
     *     or {@code -1} if {@link #keyLimitReached()}
     */
    public long retryAfterNanos() {
        return result > 0 ? result : -1;
    }

    /**
     * @return whether the refusal came from the limiter's key limit (a new key it could not track), not from the key's
     *     own rate
     */
    public boolean keyLimitReached() {
        return result == KeyedRateLimiter.KEY_LIMIT_REACHED;
    }

    @Override
    public String toString() {
        return "RateLimitExceededEvent(" + limiterName + ", " + limited + ", " + action
                + (keyLimitReached() ? ", key limit reached" : ", retry after " + result + "ns") + ")";
    }
}
