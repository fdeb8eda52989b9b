package io.wheelbeat.core.internal;

import io.wheelbeat.core.ExecutorDrivenWheel;
import io.wheelbeat.core.TimerCallback;
import io.wheelbeat.core.WheelSettings;
import io.wheelbeat.core.WheelTimer;
import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;
import java.util.function.LongConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A hierarchical timing wheel: the engine behind {@link ExecutorDrivenWheel} and
 * {@link WheelTimer}. It keeps no clock: every deadline and every {@link #poll} takes a reading of
 * the caller's clock (the driver's {@link io.wheelbeat.core.Ticker Ticker}), and {@link #nextDeadlineNanos()} tells the
 * driver when to poll next.
 *
 * <h2>Contract</h2>
 * <ul>
 *   <li>{@link #scheduleAt}, {@link #cancel} and {@link #rescheduleAt} are O(1) and allocate
 *       nothing once the wheel has grown to the peak number of pending timers. A timer is named by
 *       a {@code long} id that carries a 32-bit generation of its storage cell, so an id whose
 *       timer fired or was cancelled is answered {@code false}, never mistaken for the timer that
 *       reused the cell.</li>
 *   <li><b>Exact expiry:</b> {@code poll(now)} fires exactly the pending timers whose deadline is
 *       at or before {@code now}: never one early, and no rounding to a tick (due at 10.3 ms and
 *       polled at 10.4 ms it fires; polled at 10.2 ms it does not). Deadlines and readings are
 *       compared by their difference, as {@link System#nanoTime()} asks: a clock may start
 *       anywhere and wrap.</li>
 *   <li><b>Order:</b> timers fire in deadline order across ticks (of {@link #tickNanos()}), even
 *       when one poll catches up over a long pause. Timers of one tick fire in deadline order once
 *       a poll has landed inside that tick (a driver that polls at each
 *       {@link #nextDeadlineNanos()} sees every timer in deadline order); timers of one tick that
 *       first come due together in a single poll fire in the order they reached their slot.</li>
 *   <li><b>Progress:</b> a poll fires each due timer once. A timer that a callback schedules or
 *       moves to a deadline at or before the latest deadline fired so far in this poll waits for
 *       the next poll (its driver sees {@link #nextDeadlineNanos()} already passed and polls
 *       again), so callbacks cannot keep a poll busy forever.</li>
 *   <li><b>Reach:</b> any deadline a {@code long} reading can name within 2^62 ns (146 years) of
 *       the start; deadlines before the start are due at once.</li>
 *   <li><b>Failure isolation:</b> a callback that throws is logged through SLF4J and counted in
 *       {@link #failedCount()}; the other timers still fire.</li>
 *   <li><b>Capacity:</b> at most about 16.7 million timers pending at once; beyond that,
 *       {@link #scheduleAt} throws {@link RejectedExecutionException}.</li>
 * </ul>
 *
 * <h2>How it works</h2>
 * Time is cut into ticks of 2^k ns. Level 0 has one slot per tick for {@link WheelSettings#slots} ticks;
 * each level above has 64 slots, each spanning a whole turn of the level below, up to the reach of
 * a {@code long}. A timer goes to the lowest level whose turn covers its delay, in the slot of its
 * deadline. Every slot keeps a lower bound of the deadlines in it; a slot is walked when that
 * bound comes due, in one pass: due timers fire, the others move to the slot their deadline now
 * belongs in (one level down or more). So a timer moves at most once per level, and only while it
 * is still pending: timers cancelled or moved before their coarse slot comes due never move.
 * Occupancy bitmaps per level find the earliest slot in a few word operations, so an idle poll
 * over any gap costs about the same whatever the number of timers.
 *
 * <p>Moving a deadline later (what traffic does to an idle deadline) only writes the new deadline:
 * the timer's slot comes due no later than the old deadline, and the walk moves it on. Moving it
 * earlier relinks it at once. The current tick's slot is kept in deadline order once a poll lands
 * inside it, so a driver waking at each distinct deadline walks only what it fires.
 *
 * <h2>Layout</h2>
 * A timer is a cell of two longs (the deadline; the generation, the next link and the high bits of
 * the previous link), a {@code char} (the rest of the previous link) and its callback reference:
 * 22 bytes with compressed references. Cells live in pages of 4096, allocated as the wheel grows,
 * never copied. A bitmap (one bit per cell) marks free cells, which are reused lowest address
 * first; the generation's parity says whether a cell holds a pending timer.
 *
 * <p>Internal: not exported from the module (the drivers are the API); public for the drivers in
 * {@code io.wheelbeat.core} and for the benchmarks, which measure the engine against its peers.
 *
 * <h2>Thread rules</h2>
 * Not thread-safe: one owner thread calls every method, and callbacks run on it, inside
 * {@link #poll}. The statistics getters may be read from other threads as racy snapshots (for
 * metrics). Schedule through a driver, not through this class, when a driver runs the wheel: a
 * timer placed here directly does not move the driver's wake-up earlier.
 */
public final class TimerWheel {

    /** A timer id that no timer ever has. */
    public static final long NO_TIMER = 0L;

    /** Longer delays saturate here: far beyond any real deadline, and no reading overflows. */
    static final long MAX_DELAY_NANOS = 1L << 62;

    private static final Logger log = LoggerFactory.getLogger(TimerWheel.class);
    private static final LongConsumer NO_LATENESS = lateness -> { };

    private static final int INDEX_BITS = 24;
    private static final int INDEX_MASK = (1 << INDEX_BITS) - 1;
    private static final long NEXT_BITS = (long) INDEX_MASK << 8;
    private static final int PAGE_SHIFT = 12;
    private static final int PAGE_CELLS = 1 << PAGE_SHIFT;
    private static final int PAGE_MASK = PAGE_CELLS - 1;
    private static final int UPPER_SLOT_BITS = 6;
    private static final int UPPER_SLOTS = 1 << UPPER_SLOT_BITS;
    /** The lower bound of an empty slot. */
    private static final long EMPTY = Long.MAX_VALUE;

    private final long originNanos;
    private final int tickShift;
    private final int levelZeroBits;
    private final int levelZeroSlots;
    /** Per level: the shift from ticks to that level's slot number, the first slot, the mask. */
    private final int[] levelShift;
    private final int[] levelBase;
    private final int[] levelMask;
    /** The level of a delay in ticks, by the index of its highest set bit. */
    private final byte[] levelOfBit;
    private final int slotCount;
    /** Sentinel of the list being walked. */
    private final int walk;
    /** Sentinel of the timers that callbacks made due during a poll (placed when it ends). */
    private final int deferred;
    private final int firstTimerCell;

    /** Per slot: a lower bound of the deadlines in it, or EMPTY. */
    private final long[] due;
    private final long[] occupiedZero;
    /** Bit w set while word w of occupiedZero is not zero. */
    private long occupiedZeroWords;
    /** Per level above 0: one bit per slot. */
    private final long[] occupiedUpper;
    /** Bit l set while level l holds a timer. */
    private int occupiedLevels;

    /** Per page, two longs per cell: the deadline, then generation / next / previous-high. */
    private long[][] words = new long[0][];
    /** Per page, the low 16 bits of each cell's previous link. */
    private char[][] previousLows = new char[0][];
    private TimerCallback[][] callbacks = new TimerCallback[0][];
    private int capacity;
    private int highWater;
    /** One bit per cell below {@link #highWater}, set while the cell is free. */
    private long[] freeCells = new long[0];
    /** One bit per word of {@link #freeCells}, set while that word has a free cell. */
    private long[] freeWords = new long[0];
    /** The word of {@link #freeWords} that allocation looks at first. */
    private int freeCursor;
    private int freeCount;
    private int pending;

    /**
     * Nanoseconds since the start: the last poll's reading, or, during a poll, the latest
     * deadline fired so far if later. A timer made due at or before it during a poll is deferred.
     */
    private long position;
    /** The tick that placement counts from; it never goes back. */
    private long baseTick;
    /** The level-0 slot of the current tick while its list is in {@link #orderKey} order, or -1. */
    private int sortedSlot = -1;
    /** The next cell of the walk in progress, or {@link #walk} when none. */
    private int walkHead;
    private boolean polling;
    /** The lower bound of the slot that {@link #earliestSlot()} returned. */
    private long earliestDue;
    private long[] sortKeys = new long[16];

    private long scheduledCount;
    private long cancelledCount;
    private long expiredCount;
    private long failedCount;

    private TimerWheel(WheelSettings settings, long startNanos) {
        this.originNanos = startNanos;
        this.tickShift = Long.numberOfTrailingZeros(settings.tick().toNanos());
        this.levelZeroBits = Integer.numberOfTrailingZeros(settings.slots());
        this.levelZeroSlots = 1 << levelZeroBits;
        int tickBits = 63 - tickShift;
        int upperLevels = Math.max(1, (tickBits - levelZeroBits + UPPER_SLOT_BITS - 1) / UPPER_SLOT_BITS);
        int levels = 1 + upperLevels;
        this.levelShift = new int[levels];
        this.levelBase = new int[levels];
        this.levelMask = new int[levels];
        levelMask[0] = levelZeroSlots - 1;
        for (int level = 1; level < levels; level++) {
            levelShift[level] = levelZeroBits + (level - 1) * UPPER_SLOT_BITS;
            levelBase[level] = levelZeroSlots + (level - 1) * UPPER_SLOTS;
            levelMask[level] = UPPER_SLOTS - 1;
        }
        this.levelOfBit = new byte[64];
        for (int bit = 0; bit < 64; bit++) {
            levelOfBit[bit] = (byte) (bit < levelZeroBits ? 0
                    : Math.min(levels - 1, 1 + (bit - levelZeroBits) / UPPER_SLOT_BITS));
        }
        this.slotCount = levelZeroSlots + upperLevels * UPPER_SLOTS;
        this.walk = slotCount;
        this.deferred = slotCount + 1;
        this.firstTimerCell = slotCount + 2;
        this.walkHead = walk;
        this.due = new long[slotCount];
        Arrays.fill(due, EMPTY);
        this.occupiedZero = new long[Math.max(1, levelZeroSlots >>> 6)];
        this.occupiedUpper = new long[levels];
        ensureCapacity((int) Math.min(INDEX_MASK, (long) firstTimerCell + settings.initialCapacity()));
        for (int sentinel = 0; sentinel <= deferred; sentinel++) {
            setLinks(sentinel, sentinel, sentinel);
        }
        this.highWater = firstTimerCell;
    }

    /** A wheel with {@code settings}, starting at their ticker's current reading. */
    public static TimerWheel of(WheelSettings settings) {
        return new TimerWheel(settings, settings.ticker().nanoTime());
    }

    // ---------------------------------------------------------------- timers

    /**
     * Schedules {@code callback} to run once at {@code deadlineNanos}, a reading of the clock the
     * wheel is polled with. A deadline already passed fires at the next poll.
     *
     * @return the new timer's id, never {@link #NO_TIMER}
     * @throws NullPointerException if {@code callback} is null
     * @throws RejectedExecutionException if the wheel holds as many timers as it can
     */
    public long scheduleAt(TimerCallback callback, long deadlineNanos) {
        Objects.requireNonNull(callback, "callback");
        int cell = allocate();
        int generation = generationOf(cell) + 1;
        setWord1(cell, (long) generation << 32);
        long deadline = relative(deadlineNanos);
        setDeadline(cell, deadline);
        callbacks[cell >>> PAGE_SHIFT][cell & PAGE_MASK] = callback;
        pending++;
        scheduledCount++;
        placeOrDefer(cell, deadline);
        return ((long) generation << 32) | cell;
    }

    /**
     * Cancels a pending timer.
     *
     * @return {@code true} if the timer was pending and now will never fire; {@code false} if it
     *     already fired, was already cancelled, or {@code timerId} was never issued by this wheel
     */
    public boolean cancel(long timerId) {
        int cell = pendingCell(timerId);
        if (cell < 0) {
            return false;
        }
        unlink(cell);
        release(cell);
        cancelledCount++;
        return true;
    }

    /**
     * Moves a pending timer to fire at {@code deadlineNanos} instead, keeping its id and callback.
     * A later deadline is one write; an earlier one relinks the timer.
     *
     * @return {@code true} if the timer was pending and was moved; {@code false} (and nothing
     *     changes) if it already fired or was cancelled
     */
    public boolean rescheduleAt(long timerId, long deadlineNanos) {
        int cell = pendingCell(timerId);
        if (cell < 0) {
            return false;
        }
        long deadline = relative(deadlineNanos);
        long old = deadlineOf(cell);
        setDeadline(cell, deadline);
        // Lazy: the cell's slot comes due no later than its old deadline, and the walk moves it
        // on. Not for the current tick, whose slot is kept in deadline order.
        if (deadline - old >= 0 && (old >>> tickShift) > baseTick) {
            return true;
        }
        unlink(cell);
        placeOrDefer(cell, deadline);
        return true;
    }

    /** Returns whether {@code timerId} is scheduled and has neither fired nor been cancelled. */
    public boolean isPending(long timerId) {
        return pendingCell(timerId) >= 0;
    }

    /**
     * Returns the deadline of a pending timer, as a reading of the clock the wheel is polled with.
     *
     * @throws IllegalArgumentException if the timer is not pending
     */
    public long deadlineNanos(long timerId) {
        int cell = pendingCell(timerId);
        if (cell < 0) {
            throw new IllegalArgumentException("timer " + Long.toHexString(timerId) + " is not pending");
        }
        return originNanos + deadlineOf(cell);
    }

    // ---------------------------------------------------------------- driving

    /** Fires every timer due at {@code nowNanos}: {@code poll(nowNanos, lateness -> { })}. */
    public int poll(long nowNanos) {
        return poll(nowNanos, NO_LATENESS);
    }

    /**
     * Fires, on the calling thread, every pending timer whose deadline is at or before
     * {@code nowNanos}, in the order the class comment gives. Callbacks may schedule, cancel and
     * reschedule any timer, including ones due in this same poll. A reading earlier than the
     * previous poll's counts as that one.
     *
     * @param lateness told, before each callback runs, how late its timer fires
     *     ({@code nowNanos} minus the deadline, in ns)
     * @return the number of timers that fired
     * @throws IllegalStateException if called from a callback of this wheel
     */
    public int poll(long nowNanos, LongConsumer lateness) {
        Objects.requireNonNull(lateness, "lateness");
        if (polling) {
            throw new IllegalStateException("poll() called from a timer callback of the same wheel");
        }
        long now = Math.max(nowNanos - originNanos, position);
        polling = true;
        int fired = 0;
        try {
            int slot;
            while ((slot = earliestSlot()) >= 0 && earliestDue <= now) {
                moveBase(earliestDue >>> tickShift);
                fired += visit(slot, now, lateness);
            }
            position = now;
            moveBase(now >>> tickShift);
        } finally {
            polling = false;
            placeDeferred();
        }
        sortCurrentSlot();
        return fired;
    }

    /**
     * Returns when to poll next: the earliest deadline among pending timers, or a reading before
     * it (never after; it can be early after a cancel or a move to a later deadline, and the poll
     * then finds nothing and this moves on). A reading already passed means poll now.
     *
     * @throws IllegalStateException if no timer is pending, or if called from a callback
     */
    public long nextDeadlineNanos() {
        if (pending == 0 || polling) {
            throw new IllegalStateException(pending == 0 ? "no timer is pending" : "called from a timer callback");
        }
        earliestSlot();
        return originNanos + earliestDue;
    }

    // ---------------------------------------------------------------- introspection

    /** Returns the tick length in nanoseconds, a power of two. */
    public long tickNanos() {
        return 1L << tickShift;
    }

    /** Returns the number of level-0 slots (one per tick), a power of two. */
    public int slots() {
        return levelZeroSlots;
    }

    /** Returns the number of timers scheduled and neither fired nor cancelled. */
    public int pendingTimers() {
        return pending;
    }

    /** Returns how many timers were scheduled. */
    public long scheduledCount() {
        return scheduledCount;
    }

    /** Returns how many pending timers were cancelled. */
    public long cancelledCount() {
        return cancelledCount;
    }

    /** Returns how many timers fired. */
    public long expiredCount() {
        return expiredCount;
    }

    /** Returns how many callbacks threw. */
    public long failedCount() {
        return failedCount;
    }

    @Override
    public String toString() {
        return "TimerWheel(" + pending + " pending, tick " + tickNanos() + " ns, " + levelZeroSlots
                + " level-0 slots, " + levelShift.length + " levels)";
    }

    /**
     * Every occupied slot with its lower bound and its cells (id, deadline), relative to the
     * start; for test failures. Owner thread only.
     */
    public String dump() {
        StringBuilder out = new StringBuilder(toString()).append(": position ").append(position)
                .append(", base tick ").append(baseTick).append(", sorted slot ").append(sortedSlot).append('\n');
        for (int slot = 0; slot < slotCount; slot++) {
            if (nextOf(slot) == slot) {
                continue;
            }
            int level = levelOf(slot);
            out.append("  level ").append(level).append(" slot ").append(slot - levelBase[level])
                    .append(" due ").append(due[slot]).append(':');
            int shown = 0;
            for (int cell = nextOf(slot); cell != slot && shown < 64; cell = nextOf(cell), shown++) {
                out.append(' ').append(Long.toHexString(((long) generationOf(cell) << 32) | cell))
                        .append('@').append(deadlineOf(cell));
            }
            out.append(shown == 64 ? " ...\n" : "\n");
        }
        return out.toString();
    }

    /** Passes every pending timer's callback to {@code action}. Owner thread only. */
    public void forEachPending(Consumer<? super TimerCallback> action) {
        for (int cell = firstTimerCell; cell < highWater; cell++) {
            if ((generationOf(cell) & 1) != 0) {
                action.accept(callbacks[cell >>> PAGE_SHIFT][cell & PAGE_MASK]);
            }
        }
    }

    /** {@code nowNanos + delayNanos}, the delay saturated at 2^62 ns; negative delays mean now. */
    public static long deadlineAfter(long nowNanos, long delayNanos) {
        return nowNanos + Math.min(Math.max(delayNanos, 0), MAX_DELAY_NANOS);
    }

    // ---------------------------------------------------------------- placement

    private void placeOrDefer(int cell, long deadline) {
        if (polling && deadline <= position) {
            appendTo(deferred, cell);
        } else {
            place(cell, deadline);
        }
    }

    /** Links {@code cell} into the slot its deadline belongs in, counted from the base tick. */
    private void place(int cell, long deadline) {
        long tick = deadline >>> tickShift;
        long delta = tick - baseTick;
        int slot;
        if (delta < levelZeroSlots) {
            slot = (int) (delta <= 0 ? baseTick : tick) & (levelZeroSlots - 1);
        } else {
            int level = levelOfBit[63 - Long.numberOfLeadingZeros(delta)];
            slot = levelBase[level] + ((int) (tick >>> levelShift[level]) & (UPPER_SLOTS - 1));
        }
        int last = prevOf(slot);
        if (last == slot) {
            markOccupied(slot);
        } else if (slot == sortedSlot && orderKey(deadline) < orderKey(deadlineOf(last))) {
            int first = nextOf(slot);
            if (orderKey(deadline) <= orderKey(deadlineOf(first))) {
                setLinks(cell, first, slot);
                setPrev(first, cell);
                setNext(slot, cell);
                due[slot] = Math.min(due[slot], deadline);
                return;
            }
            sortedSlot = -1;
        }
        setNext(last, cell);
        setLinks(cell, slot, last);
        setPrev(slot, cell);
        if (deadline < due[slot]) {
            due[slot] = deadline;
        }
    }

    /** Links {@code cell} at the tail of the list of {@code sentinel}; no slot bookkeeping. */
    private void appendTo(int sentinel, int cell) {
        int last = prevOf(sentinel);
        setNext(last, cell);
        setLinks(cell, sentinel, last);
        setPrev(sentinel, cell);
    }

    private void unlink(int cell) {
        int next = nextOf(cell);
        if (cell == walkHead) {
            // The front of the walk: only walkHead points at it (its previous link is stale).
            walkHead = next;
            return;
        }
        int prev = prevOf(cell);
        setNext(prev, next);
        setPrev(next, prev);
        if (prev == next && prev < slotCount) {
            markEmpty(prev);
        }
    }

    /**
     * What the current tick's slot is ordered by: the deadline, or the tick's start for deadlines
     * before it (all due, in no particular order).
     */
    private long orderKey(long deadline) {
        return Math.max(deadline, baseTick << tickShift);
    }

    private void markOccupied(int slot) {
        if (slot < levelZeroSlots) {
            int word = slot >>> 6;
            occupiedZero[word] |= 1L << slot;
            occupiedZeroWords |= 1L << word;
            occupiedLevels |= 1;
        } else {
            int level = levelOf(slot);
            occupiedUpper[level] |= 1L << slot;
            occupiedLevels |= 1 << level;
        }
    }

    private void markEmpty(int slot) {
        due[slot] = EMPTY;
        if (slot < levelZeroSlots) {
            int word = slot >>> 6;
            if ((occupiedZero[word] &= ~(1L << slot)) == 0 && (occupiedZeroWords &= ~(1L << word)) == 0) {
                occupiedLevels &= ~1;
            }
        } else {
            int level = levelOf(slot);
            if ((occupiedUpper[level] &= ~(1L << slot)) == 0) {
                occupiedLevels &= ~(1 << level);
            }
        }
    }

    private int levelOf(int slot) {
        return slot < levelZeroSlots ? 0 : 1 + ((slot - levelZeroSlots) >>> UPPER_SLOT_BITS);
    }

    // ---------------------------------------------------------------- expiry

    private void moveBase(long tick) {
        if (tick > baseTick) {
            baseTick = tick;
            sortedSlot = -1;
        }
    }

    /**
     * Returns the occupied slot with the smallest lower bound (left in {@link #earliestDue}), or
     * -1. Per level only two slots can hold it: the slot of the base tick (its own span, or one
     * turn later) and the next occupied one after it, since every timer of a level lies within
     * one turn of the base tick.
     */
    private int earliestSlot() {
        int best = -1;
        long bestDue = EMPTY;
        for (int levels = occupiedLevels; levels != 0; levels &= levels - 1) {
            int level = Integer.numberOfTrailingZeros(levels);
            int current = (int) (baseTick >>> levelShift[level]) & levelMask[level];
            int base = levelBase[level];
            boolean currentOccupied;
            int next;
            if (level == 0) {
                currentOccupied = (occupiedZero[current >>> 6] & (1L << current)) != 0;
                next = nextOccupiedZero(current);
            } else {
                long bits = occupiedUpper[level];
                currentOccupied = (bits & (1L << current)) != 0;
                long others = bits & ~(1L << current);
                next = others == 0 ? -1
                        : (current + 1 + Long.numberOfTrailingZeros(Long.rotateRight(others, current + 1))) & (UPPER_SLOTS - 1);
            }
            if (currentOccupied && due[base + current] < bestDue) {
                bestDue = due[base + current];
                best = base + current;
            }
            if (next >= 0 && due[base + next] < bestDue) {
                bestDue = due[base + next];
                best = base + next;
            }
        }
        earliestDue = bestDue;
        return best;
    }

    /** Returns the first occupied level-0 slot after {@code slot}, wrapping around, not {@code slot} itself; or -1. */
    private int nextOccupiedZero(int slot) {
        int word = slot >>> 6;
        long bits = occupiedZero[word] & (-2L << slot);
        if (bits != 0) {
            return (word << 6) | Long.numberOfTrailingZeros(bits);
        }
        long words = occupiedZeroWords & ~(1L << word);
        if (words != 0) {
            long after = words & (-2L << word);
            int found = Long.numberOfTrailingZeros(after != 0 ? after : words);
            return (found << 6) | Long.numberOfTrailingZeros(occupiedZero[found]);
        }
        bits = occupiedZero[word] & ((1L << slot) - 1);
        return bits == 0 ? -1 : (word << 6) | Long.numberOfTrailingZeros(bits);
    }

    /**
     * Walks {@code slot} once: fires its timers due by {@code now} in the base tick or earlier,
     * and moves every other one to the slot its deadline belongs in now.
     */
    private int visit(int slot, long now, LongConsumer lateness) {
        if (slot == sortedSlot) {
            return expireSorted(slot, now, lateness);
        }
        // Detach the list onto the walk sentinel: what callbacks add to this slot waits for the
        // next visit, and they may still cancel or move any cell not yet walked.
        int head = nextOf(slot);
        setNext(prevOf(slot), walk);
        setLinks(slot, slot, slot);
        markEmpty(slot);
        walkHead = head;
        long base = baseTick;
        int fired = 0;
        int cell;
        while ((cell = walkHead) != walk) {
            walkHead = nextOf(cell);
            long deadline = deadlineOf(cell);
            if (deadline <= now && (deadline >>> tickShift) <= base) {
                fire(cell, deadline, now, lateness);
                fired++;
            } else {
                place(cell, deadline);
            }
        }
        return fired;
    }

    /** The current tick's slot in deadline order: fires from the front while due. */
    private int expireSorted(int slot, long now, LongConsumer lateness) {
        int fired = 0;
        while (sortedSlot == slot) {
            int cell = nextOf(slot);
            if (cell == slot) {
                break;
            }
            long deadline = deadlineOf(cell);
            if (deadline > now) {
                // In order from here on, and none before the tick: this is the earliest.
                due[slot] = deadline;
                break;
            }
            unlink(cell);
            fire(cell, deadline, now, lateness);
            fired++;
        }
        return fired;
    }

    private void fire(int cell, long deadline, long now, LongConsumer lateness) {
        long id = ((long) generationOf(cell) << 32) | cell;
        TimerCallback callback = callbacks[cell >>> PAGE_SHIFT][cell & PAGE_MASK];
        release(cell);
        expiredCount++;
        if (deadline > position) {
            position = deadline;
        }
        try {
            lateness.accept(now - deadline);
            callback.onTimeout(id);
        } catch (Throwable t) {
            failedCount++;
            log.warn("timer callback {} threw; the wheel goes on", callback, t);
        }
    }

    private void placeDeferred() {
        int cell;
        while ((cell = nextOf(deferred)) != deferred) {
            unlink(cell);
            place(cell, deadlineOf(cell));
        }
    }

    /**
     * Puts the current tick's slot in deadline order, so that polls inside this tick walk only
     * what they fire instead of the whole slot each time.
     */
    private void sortCurrentSlot() {
        int slot = (int) baseTick & (levelZeroSlots - 1);
        int first = nextOf(slot);
        if (slot == sortedSlot || first == slot) {
            return;
        }
        long tickStart = baseTick << tickShift;
        long earliest = EMPTY;
        int count = 0;
        for (int cell = first, next; cell != slot; cell = next) {
            next = nextOf(cell);
            long deadline = deadlineOf(cell);
            if ((deadline >>> tickShift) > baseTick) {
                // Moved later while its slot was still ahead: not this tick's, so out it goes.
                unlink(cell);
                place(cell, deadline);
                continue;
            }
            if (count == sortKeys.length) {
                sortKeys = Arrays.copyOf(sortKeys, 2 * count);
            }
            // The offset of orderKey(deadline) in the tick, then the cell.
            sortKeys[count++] = (Math.max(0, deadline - tickStart) << INDEX_BITS) | cell;
            earliest = Math.min(earliest, deadline);
        }
        if (count == 0) {
            return;
        }
        heapSort(sortKeys, count);
        int prev = slot;
        for (int i = 0; i < count; i++) {
            int cell = (int) sortKeys[i] & INDEX_MASK;
            setNext(prev, cell);
            setPrev(cell, prev);
            prev = cell;
        }
        setNext(prev, slot);
        setPrev(slot, prev);
        due[slot] = earliest;
        sortedSlot = slot;
    }

    /** Sorts {@code keys[0..count)} ascending, in place and without allocating. */
    private static void heapSort(long[] keys, int count) {
        for (int i = count / 2 - 1; i >= 0; i--) {
            siftDown(keys, i, count);
        }
        for (int end = count - 1; end > 0; end--) {
            long top = keys[0];
            keys[0] = keys[end];
            keys[end] = top;
            siftDown(keys, 0, end);
        }
    }

    private static void siftDown(long[] keys, int i, int count) {
        long key = keys[i];
        int child;
        while ((child = 2 * i + 1) < count) {
            if (child + 1 < count && keys[child + 1] > keys[child]) {
                child++;
            }
            if (keys[child] <= key) {
                break;
            }
            keys[i] = keys[child];
            i = child;
        }
        keys[i] = key;
    }

    // ---------------------------------------------------------------- cells

    /**
     * Takes the free cell at the lowest address from a cursor on (or a new one): allocating in
     * address order lets the memory system stream the cells a burst of schedules writes, where a
     * free list would hand them out in the scattered order they were freed.
     */
    private int allocate() {
        if (freeCount > 0) {
            int summaryWord = freeCursor;
            long summary;
            while ((summary = freeWords[summaryWord]) == 0) {
                summaryWord = summaryWord + 1 == freeWords.length ? 0 : summaryWord + 1;
            }
            freeCursor = summaryWord;
            int word = (summaryWord << 6) | Long.numberOfTrailingZeros(summary);
            long bits = freeCells[word];
            long lowest = bits & -bits;
            if ((freeCells[word] = bits ^ lowest) == 0) {
                freeWords[summaryWord] = summary & (summary - 1);
            }
            freeCount--;
            return (word << 6) | Long.numberOfTrailingZeros(lowest);
        }
        if (highWater == capacity) {
            if (capacity >= INDEX_MASK) {
                throw new RejectedExecutionException("too many pending timers: " + pending
                        + " pending, the wheel cannot hold more");
            }
            ensureCapacity(capacity + 1);
        }
        return highWater++;
    }

    /** Frees a cell: bumps its generation (now even: free) and marks it free. */
    private void release(int cell) {
        callbacks[cell >>> PAGE_SHIFT][cell & PAGE_MASK] = null;
        setWord1(cell, (long) (generationOf(cell) + 1) << 32);
        int word = cell >>> 6;
        freeCells[word] |= 1L << cell;
        freeWords[word >>> 6] |= 1L << word;
        freeCount++;
        pending--;
    }

    /** Adds pages until {@code cells} cells fit. */
    private void ensureCapacity(int cells) {
        int pages = (cells + PAGE_MASK) >>> PAGE_SHIFT;
        if (pages <= words.length) {
            return;
        }
        int had = words.length;
        freeCells = Arrays.copyOf(freeCells, pages << (PAGE_SHIFT - 6));
        freeWords = Arrays.copyOf(freeWords, Math.max(1, pages << (PAGE_SHIFT - 12)));
        words = Arrays.copyOf(words, pages);
        previousLows = Arrays.copyOf(previousLows, pages);
        callbacks = Arrays.copyOf(callbacks, pages);
        for (int page = had; page < pages; page++) {
            words[page] = new long[2 * PAGE_CELLS];
            previousLows[page] = new char[PAGE_CELLS];
            callbacks[page] = new TimerCallback[PAGE_CELLS];
        }
        capacity = Math.min(INDEX_MASK, pages << PAGE_SHIFT);
    }

    private int pendingCell(long timerId) {
        int cell = (int) timerId;
        if (cell < firstTimerCell || cell >= highWater) {
            return -1;
        }
        int generation = generationOf(cell);
        return generation == (int) (timerId >>> 32) && (generation & 1) != 0 ? cell : -1;
    }

    private long deadlineOf(int cell) {
        return words[cell >>> PAGE_SHIFT][(cell & PAGE_MASK) << 1];
    }

    private void setDeadline(int cell, long deadline) {
        words[cell >>> PAGE_SHIFT][(cell & PAGE_MASK) << 1] = deadline;
    }

    private long word1(int cell) {
        return words[cell >>> PAGE_SHIFT][((cell & PAGE_MASK) << 1) | 1];
    }

    private void setWord1(int cell, long value) {
        words[cell >>> PAGE_SHIFT][((cell & PAGE_MASK) << 1) | 1] = value;
    }

    private int generationOf(int cell) {
        return (int) (word1(cell) >>> 32);
    }

    private int nextOf(int cell) {
        return (int) (word1(cell) >>> 8) & INDEX_MASK;
    }

    private int prevOf(int cell) {
        return ((int) word1(cell) & 0xFF) << 16 | previousLows[cell >>> PAGE_SHIFT][cell & PAGE_MASK];
    }

    private void setNext(int cell, int next) {
        setWord1(cell, (word1(cell) & ~NEXT_BITS) | ((long) next << 8));
    }

    private void setPrev(int cell, int prev) {
        setWord1(cell, (word1(cell) & ~0xFFL) | (prev >>> 16));
        previousLows[cell >>> PAGE_SHIFT][cell & PAGE_MASK] = (char) prev;
    }

    private void setLinks(int cell, int next, int prev) {
        setWord1(cell, (word1(cell) & ~(NEXT_BITS | 0xFFL)) | ((long) next << 8) | (prev >>> 16));
        previousLows[cell >>> PAGE_SHIFT][cell & PAGE_MASK] = (char) prev;
    }

    /** Nanoseconds since the start; readings before the start count as the start. */
    private long relative(long nanos) {
        return Math.max(0, nanos - originNanos);
    }
}
