package io.wheelbeat.core.ratelimit;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * One key's share of a limit shared through a {@link LeaseStore}: permits drawn and not yet spent,
 * credit admitted ahead of the store's answer, and the one exchange that may be out.
 *
 * <p>The lease is one long, {@code (expiry << COUNT_BITS) | count}, spent by compare-and-set. The
 * expiry is in 2^14 ns units modulo 2^40, compared as a signed distance; the key's timer clears a
 * lapsed lease long before the distance could alias.
 *
 * <p>Exchanges are serialized by {@link #inFlight}: whoever sets it sends, the reply clears it,
 * so the reply's bookkeeping fields need no other guard.
 */
final class Lease implements LeaseStore.Reply {

    /** What {@link #sendIfIdle} did. */
    static final int SENT = 0;

    static final int OUT = 1;
    static final int NO_ROOM = 2;

    static final int COUNT_BITS = 24;
    static final long MAX_COUNT = (1L << COUNT_BITS) - 1;
    private static final int UNIT_SHIFT = 14;
    private static final long EXPIRY_MASK = (1L << (64 - COUNT_BITS)) - 1;

    private static final VarHandle GRANT;
    private static final VarHandle IN_FLIGHT;
    private static final VarHandle UNCONFIRMED;
    private static final VarHandle UNCHARGED;
    private static final VarHandle DEMAND;
    private static final VarHandle GIVE_BACK;
    private static final VarHandle DEBT;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            GRANT = lookup.findVarHandle(Lease.class, "grant", long.class);
            IN_FLIGHT = lookup.findVarHandle(Lease.class, "inFlight", int.class);
            UNCONFIRMED = lookup.findVarHandle(Lease.class, "unconfirmed", long.class);
            UNCHARGED = lookup.findVarHandle(Lease.class, "uncharged", long.class);
            DEMAND = lookup.findVarHandle(Lease.class, "demand", long.class);
            GIVE_BACK = lookup.findVarHandle(Lease.class, "giveBack", long.class);
            DEBT = lookup.findVarHandle(Lease.class, "debt", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** The key in the store, or null when the store cannot hold it. */
    final Object storeKey;

    private final Leases leases;

    @SuppressWarnings("unused") // accessed through GRANT
    private volatile long grant;
    /** When the lease falls to this count, the next exchange is started ahead of need. */
    private volatile long lowWater;

    @SuppressWarnings("unused") // accessed through IN_FLIGHT
    private volatile int inFlight;
    /** Credit admitted and not yet answered by the store (sent or not). */
    @SuppressWarnings("unused") // accessed through UNCONFIRMED
    private volatile long unconfirmed;
    /** Credit admitted and not yet sent. */
    @SuppressWarnings("unused") // accessed through UNCHARGED
    private volatile long uncharged;
    /** Permits taken on credit or refused for want of a lease since the last exchange was sent. */
    @SuppressWarnings("unused") // accessed through DEMAND
    private volatile long demand;
    /** Unspent permits of a token-bucket lease to give back with the next exchange. */
    @SuppressWarnings("unused") // accessed through GIVE_BACK
    private volatile long giveBack;
    /** Until then the store said the key is full; read only with {@link #refused}. */
    private volatile long refusedUntil;

    private volatile boolean refused;
    /** Set by the first grant: the key may use all the room for exchanges. */
    private volatile boolean established;

    /** When the exchange out was sent. */
    private volatile long sentAt;
    // The exchange out: written by its sender, read by its reply (ordered by inFlight).
    private long charged;
    /**
     * Permits admitted without the store (while it failed, or without room for an exchange), still
     * to charge; not unconfirmed, so they hold back no request.
     */
    @SuppressWarnings("unused") // accessed through DEBT
    private volatile long debt;

    private long chargedDebt;
    private long givenBack;
    /** The lease count after the last grant, and when: the base of the rate estimate. */
    private long baseCount;

    private long baseAt;
    private long lastAsk;

    Lease(Object storeKey, Leases leases, long now) {
        this.storeKey = storeKey;
        this.leases = leases;
        this.baseAt = now;
    }

    /** Spends from a valid lease; starts the next exchange when it runs low. */
    boolean trySpend(long permits, long now) {
        long nowUnits = now >>> UNIT_SHIFT;
        for (; ; ) {
            long lease = (long) GRANT.getVolatile(this);
            long count = lease & MAX_COUNT;
            if (count < permits || !validAt(lease, nowUnits)) {
                return false;
            }
            if (GRANT.compareAndSet(this, lease, lease - permits)) {
                if (count - permits <= lowWater && !refused) {
                    sendIfIdle(now, 0);
                }
                return true;
            }
        }
    }

    private static boolean validAt(long lease, long nowUnits) {
        return distance(lease >>> COUNT_BITS, nowUnits) > 0;
    }

    /** {@code a - b} modulo 2^40, signed. */
    private static long distance(long a, long b) {
        return ((a - b) << COUNT_BITS) >> COUNT_BITS;
    }

    /** Permits admitted without an exchange: the key's timer charges them. */
    void owe(long permits) {
        DEBT.getAndAdd(this, permits);
    }

    /** Returns the nanoseconds the store said to wait, or 0. */
    long refusedFor(long now) {
        if (!refused) {
            return 0;
        }
        long wait = refusedUntil - now;
        if (wait > 0) {
            return wait;
        }
        refused = false;
        return 0;
    }

    /** How long the exchange out has waited; 0 when none is out. */
    long outFor(long now) {
        return (int) IN_FLIGHT.getVolatile(this) == 0 ? 0 : Math.max(0, now - sentAt);
    }

    /** Admits ahead of the store's answer if the credit allows. */
    boolean takeCredit(long permits, long maxUnconfirmed) {
        for (; ; ) {
            long open = (long) UNCONFIRMED.getVolatile(this);
            if (open + permits > maxUnconfirmed) {
                DEMAND.getAndAdd(this, permits);
                return false;
            }
            if (UNCONFIRMED.compareAndSet(this, open, open + permits)) {
                // Confirmed counts first, so that a reply never subtracts more than was added.
                UNCHARGED.getAndAdd(this, permits);
                DEMAND.getAndAdd(this, permits);
                return true;
            }
        }
    }

    /**
     * Starts an exchange unless one is out. Without room for one, gives back {@code credit} just
     * taken, unless an exchange sent meanwhile carries it.
     */
    int sendIfIdle(long now, long credit) {
        if ((int) IN_FLIGHT.getVolatile(this) != 0 || !IN_FLIGHT.compareAndSet(this, 0, 1)) {
            return OUT;
        }
        if (leases.reserveExchange(established)) {
            send(now);
            return SENT;
        }
        int outcome = credit > 0 && !returnCredit(credit) ? OUT : NO_ROOM;
        IN_FLIGHT.setVolatile(this, 0);
        return outcome;
    }

    /** Takes back credit not yet sent; false if an exchange took it. {@link #inFlight} held. */
    private boolean returnCredit(long credit) {
        for (; ; ) {
            long unsent = (long) UNCHARGED.getVolatile(this);
            if (unsent < credit) {
                return false;
            }
            if (UNCHARGED.compareAndSet(this, unsent, unsent - credit)) {
                UNCONFIRMED.getAndAdd(this, -credit);
                return true;
            }
        }
    }

    /** Sends an exchange. {@link #inFlight} held. */
    private void send(long now) {
        long charge = (long) UNCHARGED.getAndSet(this, 0L);
        long owed = (long) DEBT.getAndSet(this, 0L);
        long wanted = (long) DEMAND.getAndSet(this, 0L);
        long back = (long) GIVE_BACK.getAndSet(this, 0L);
        long lease = (long) GRANT.getVolatile(this);
        long left = validAt(lease, now >>> UNIT_SHIFT) ? lease & MAX_COUNT : 0;
        // One horizon at the rate since the last grant, at most doubling per exchange (slow start).
        long spent = Math.max(0, baseCount - left) + wanted;
        long horizon = leases.sizingHorizon();
        long atRate = -Math.floorDiv(-spent * horizon, Math.max(now - baseAt, leases.horizonNanos / 16));
        long ask = Math.min(leases.maxLease, Math.max(wanted, Math.min(atRate, 2 * Math.max(1, lastAsk))));
        lastAsk = ask;
        sentAt = now;
        charged = charge;
        chargedDebt = owed;
        givenBack = back;
        leases.send(this, charge + owed, ask, back);
    }

    @Override
    public void granted(long permits, long validNanos, long retryAfterNanos) {
        long now = leases.now();
        UNCONFIRMED.getAndAdd(this, -charged);
        leases.answered(now - sentAt, permits);
        long left = 0;
        if (permits > 0) {
            established = true;
            long expiryUnits = ((sentAt + leases.lifetime(validNanos)) >>> UNIT_SHIFT) & EXPIRY_MASK;
            long sameWindowUnits = leases.sameWindowNanos >>> UNIT_SHIFT;
            long nowUnits = now >>> UNIT_SHIFT;
            for (; ; ) {
                long old = (long) GRANT.getVolatile(this);
                long oldCount = old & MAX_COUNT;
                boolean oldValid = oldCount > 0 && validAt(old, nowUnits);
                long oldExpiry = old >>> COUNT_BITS;
                long later = distance(expiryUnits, oldExpiry);
                // Grants of one window add up; their ends differ by a round trip, the earlier holds.
                boolean sameWindow = oldValid && Math.abs(later) < sameWindowUnits;
                long expiry = sameWindow && later > 0 ? oldExpiry : expiryUnits;
                left = Math.min(MAX_COUNT, (sameWindow ? oldCount : 0) + permits);
                if (GRANT.compareAndSet(this, old, (expiry << COUNT_BITS) | left)) {
                    if (!sameWindow && oldValid) {
                        lapsed(oldCount);
                    }
                    break;
                }
            }
            lowWater = left / 2;
        } else if (retryAfterNanos > 0) {
            refusedUntil = now + retryAfterNanos;
            refused = true;
        }
        baseCount = left;
        baseAt = now;
        finish(now);
    }

    @Override
    public void failed(LeaseStore.Failure cause) {
        long now = leases.now();
        if (cause == LeaseStore.Failure.BUSY) {
            // Not sent: what it carried waits for the key's timer.
            UNCHARGED.getAndAdd(this, charged);
            DEBT.getAndAdd(this, chargedDebt);
            GIVE_BACK.getAndAdd(this, givenBack);
            leases.deferred();
            leases.releaseExchange();
            IN_FLIGHT.setVolatile(this, 0);
            return;
        }
        // Credit waiting to be sent becomes debt: charged later, holding back no request meanwhile.
        long unsent = (long) UNCHARGED.getAndSet(this, 0L);
        DEBT.getAndAdd(this, unsent);
        UNCONFIRMED.getAndAdd(this, -(charged + unsent));
        leases.failedAfter(now - sentAt);
        leases.failed(cause);
        finish(now);
    }

    /** Ends the exchange, or sends the next in its room when credit waits. */
    private void finish(long now) {
        if ((long) UNCHARGED.getVolatile(this) > 0 && !leases.degraded()) {
            send(now);
            return;
        }
        leases.releaseExchange();
        IN_FLIGHT.setVolatile(this, 0);
        if ((long) UNCHARGED.getVolatile(this) > 0 && !leases.degraded()) {
            sendIfIdle(now, 0);
        }
    }

    /** Returns how long this lease still matters (0: forget the key); clears a lapsed lease. */
    long busyFor(long now) {
        if ((int) IN_FLIGHT.getVolatile(this) != 0) {
            return leases.horizonNanos;
        }
        long nowUnits = now >>> UNIT_SHIFT;
        long lease = (long) GRANT.getVolatile(this);
        long count = lease & MAX_COUNT;
        if (count > 0) {
            if (validAt(lease, nowUnits)) {
                long expiryUnits = lease >>> COUNT_BITS;
                return Math.max(1, (((expiryUnits - nowUnits) << COUNT_BITS) >> COUNT_BITS) << UNIT_SHIFT);
            }
            if (GRANT.compareAndSet(this, lease, 0L)) {
                lapsed(count);
            }
        }
        if (((long) UNCHARGED.getVolatile(this) > 0
                        || (long) DEBT.getVolatile(this) > 0
                        || (long) GIVE_BACK.getVolatile(this) > 0)
                && !leases.degraded()) {
            sendIfIdle(now, 0);
            return leases.horizonNanos;
        }
        long wait = refusedFor(now);
        if (wait > 0) {
            return wait;
        }
        return (long) UNCONFIRMED.getVolatile(this) > 0 ? leases.horizonNanos : 0;
    }

    /** A token bucket gets unspent permits back. */
    private void lapsed(long count) {
        if (leases.givesBack) {
            GIVE_BACK.getAndAdd(this, count);
        }
    }

    @Override
    public String toString() {
        long lease = (long) GRANT.getVolatile(this);
        return "Lease(" + storeKey + ", " + (lease & MAX_COUNT) + " permits)";
    }
}
