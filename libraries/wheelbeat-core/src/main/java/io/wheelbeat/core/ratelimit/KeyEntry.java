package io.wheelbeat.core.ratelimit;

import io.wheelbeat.core.WheelTimeout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.function.Consumer;

/**
 * One tracked key: its algorithm state, the flag of the CLOCK eviction, its eviction timer, and
 * its links in the limiter's CLOCK ring. The entry is its own timer task, so re-arming the
 * eviction check allocates only the scheduler's handle.
 *
 * <p>The state moves by compare-and-set from any thread, and once to {@link #DEAD}, after which
 * the entry is never used again: whoever kills it removes it from the limiter.
 */
final class KeyEntry<K> implements Consumer<WheelTimeout> {

    /** The state of an entry that has been removed or is being removed. Live states are >= 0. */
    static final long DEAD = -1L;
    /** What {@link #tryAcquire} returns for a dead entry; never a real result. */
    static final long GONE = Long.MIN_VALUE;

    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(KeyEntry.class, "state", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final K key;
    private final KeyedRateLimiter<K> limiter;

    @SuppressWarnings("unused") // accessed through STATE
    private volatile long state;
    /** Set when the key is used; cleared when the CLOCK hand passes it. */
    volatile boolean referenced;
    /** The key's share of a limit kept in a {@link LeaseStore}; null when the limit is local. */
    Lease lease;
    /** The pending eviction check; written by whoever arms it. */
    volatile WheelTimeout eviction;
    /** The CLOCK ring, guarded by the limiter's lock; {@code older == null} when not linked. */
    KeyEntry<K> older;

    KeyEntry<K> newer;

    KeyEntry(K key, KeyedRateLimiter<K> limiter) {
        this.key = key;
        this.limiter = limiter;
    }

    /**
     * Takes {@code permits} by {@code limit} at {@code now}: 0 if admitted, the nanoseconds to
     * wait if not, {@link #GONE} if the entry is dead. A rejection writes nothing.
     */
    long tryAcquire(RateLimit limit, long permits, long now) {
        for (; ; ) {
            long current = (long) STATE.getVolatile(this);
            if (current == DEAD) {
                return GONE;
            }
            long next = limit.next(current, permits, now);
            if (next < 0) {
                return -next;
            }
            if (STATE.compareAndSet(this, current, next)) {
                return 0;
            }
        }
    }

    long state() {
        return (long) STATE.getVolatile(this);
    }

    /** Kills the entry if its state is still {@code expected}. */
    boolean kill(long expected) {
        return STATE.compareAndSet(this, expected, DEAD);
    }

    /** Kills the entry whatever its state; returns the state it had. */
    long killNow() {
        return (long) STATE.getAndSet(this, DEAD);
    }

    /** Marks the key as used, writing only when the flag is clear. */
    void touch() {
        if (!referenced) {
            referenced = true;
        }
    }

    /** Cancels the pending eviction check, if any. Call after killing the entry. */
    void cancelEviction() {
        WheelTimeout pending = eviction;
        if (pending != null) {
            pending.cancel();
        }
    }

    @Override
    public void accept(WheelTimeout timeout) {
        limiter.checkIdle(this);
    }

    @Override
    public String toString() {
        return "KeyEntry(" + key + ", state " + state() + ")";
    }
}
