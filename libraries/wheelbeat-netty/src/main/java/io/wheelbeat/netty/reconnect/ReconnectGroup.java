package io.wheelbeat.netty.reconnect;

import io.wheelbeat.core.backoff.BackoffPolicy;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Caps the connection attempts in progress at once across many {@link ReconnectingClient}s. A
 * client without a permit waits on its wheel for the {@link #permitWait()} policy's delay and
 * tries again; waiting is not an attempt. Thread-safe.
 */
public final class ReconnectGroup {

    private static final BackoffPolicy DEFAULT_PERMIT_WAIT = BackoffPolicy.exponential(
                    Duration.ofMillis(10), Duration.ofSeconds(1))
            .equalJitter()
            .build();

    private final int maxConcurrentAttempts;
    private final BackoffPolicy permitWait;
    private final AtomicInteger inProgress = new AtomicInteger();

    /**
     * A group that waits for permits with the default policy: 10 ms doubling up to 1 s, equal
     * jitter.
     *
     * @param maxConcurrentAttempts the most connect attempts in flight at once in the group
     * @throws IllegalArgumentException if {@code maxConcurrentAttempts} is not positive
     */
    public ReconnectGroup(int maxConcurrentAttempts) {
        this(maxConcurrentAttempts, DEFAULT_PERMIT_WAIT);
    }

    /**
     * A group whose clients wait for a permit as {@code permitWait} says, with the number of
     * refusals in a row as its failure count. Its {@code maxAttempts} is ignored: a client waits
     * as long as it takes.
     *
     * @param maxConcurrentAttempts the most connect attempts in flight at once in the group
     * @param permitWait how long a refused client waits before it asks again
     * @throws IllegalArgumentException if {@code maxConcurrentAttempts} is not positive
     * @throws NullPointerException if {@code permitWait} is null
     */
    public ReconnectGroup(int maxConcurrentAttempts, BackoffPolicy permitWait) {
        if (maxConcurrentAttempts <= 0) {
            throw new IllegalArgumentException("maxConcurrentAttempts must be positive: " + maxConcurrentAttempts);
        }
        this.maxConcurrentAttempts = maxConcurrentAttempts;
        this.permitWait = Objects.requireNonNull(permitWait, "permitWait");
    }

    /** @return the most attempts that may be in progress at once */
    public int maxConcurrentAttempts() {
        return maxConcurrentAttempts;
    }

    /** @return how long a client waits before asking again after a refusal */
    public BackoffPolicy permitWait() {
        return permitWait;
    }

    /** @return the number of attempts in progress now */
    public int attemptsInProgress() {
        return inProgress.get();
    }

    /** Takes a permit if one is free. */
    boolean tryAcquire() {
        int taken;
        do {
            taken = inProgress.get();
            if (taken >= maxConcurrentAttempts) {
                return false;
            }
        } while (!inProgress.compareAndSet(taken, taken + 1));
        return true;
    }

    /** Returns a permit taken by {@link #tryAcquire()}. */
    void release() {
        if (inProgress.decrementAndGet() < 0) {
            inProgress.incrementAndGet();
            throw new IllegalStateException("released a permit that was not taken");
        }
    }

    @Override
    public String toString() {
        return "ReconnectGroup(" + inProgress.get() + "/" + maxConcurrentAttempts + " attempts in progress)";
    }
}
