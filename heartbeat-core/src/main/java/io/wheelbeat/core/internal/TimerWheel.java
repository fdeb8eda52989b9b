package io.wheelbeat.core.internal;

import io.wheelbeat.core.TimerCallback;
import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;
import java.util.function.LongConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A hierarchical timing wheel. Like Agrona's DeadlineTimerWheel it is made of plain numbers (its
 * start reading, tick, number of slots and initial room) and knows nothing of what drives it: the
 * drivers (ExecutorDrivenWheel and WheelTimer in io.wheelbeat.core) read their clock and pass the
 * readings in. It keeps no clock: every deadline and every {@link #poll} takes a reading of the
 * caller's clock, and {@link #nextDeadlineNanos()} tells the caller when to poll next.
 *
 * <h2>Contract</h2>
 * <ul>
 *   <li>{@link #scheduleAt}, {@link #cancel} and {@link #rescheduleAt} are O(1) and allocate
 *       nothing once the wheel has grown to the peak number of pending timers. A timer is named by
 *       a {@code long} id that carries a 40-bit generation of its storage cell, so an id whose
 *       timer fired or was cancelled is answered {@code false}, never mistaken for a timer that
 *       reused the cell: a cell whose generation would wrap (after 2^39 timers in it) is retired,
 *       never used again.</li>
 *   <li><b>Exact expiry:</b> {@code poll(now)} fires exactly the pending timers whose deadline is
 *       at or before {@code now}: never one early, and no rounding to a tick (due at 10.3 ms and
 *       polled at 10.4 ms it fires; polled at 10.2 ms it does not). Deadlines and readings are
 *       compared by their difference, as {@link System#nanoTime()} asks: a clock may start
 *       anywhere and wrap.</li>
 *   <li><b>Order (Netty's):</b> timers fire by deadline, then in the order they were scheduled
 *       (first scheduled, first fired, as the task ids of Netty's scheduler order them), in every
 *       poll, also when one poll catches up over a long pause. Moving a timer
 *       ({@link #rescheduleAt}) counts as scheduling it anew, as Netty's handlers schedule a new
 *       task to move a deadline. The scheduling order is a 40-bit count compared by difference:
 *       it orders timers with equal deadlines that were scheduled within 2^39 schedulings of
 *       each other.</li>
 *   <li><b>Progress:</b> a poll fires each due timer once. A timer that a callback schedules or
 *       moves to a deadline at or before the latest deadline fired so far in this poll (or the
 *       previous poll's reading) waits for the next poll (its driver sees {@link #nextDeadlineNanos()} already passed and polls
 *       again), so callbacks cannot keep a poll busy forever. {@link #poll(long, LongConsumer, int)}
 *       also bounds how many timers one poll fires; the rest stay due, in the same order.</li>
 *   <li><b>Reach:</b> any deadline a {@code long} reading can name within 2^62 ns (146 years) of
 *       the start; deadlines before the start are due at once.</li>
 *   <li><b>Failure isolation:</b> a callback that throws is logged through SLF4J and counted in
 *       {@link #failedCount()}; the other timers still fire.</li>
 *   <li><b>Capacity:</b> at most about 16.7 million timers pending at once; beyond that,
 *       {@link #scheduleAt} throws {@link RejectedExecutionException}.</li>
 * </ul>
 *
 * <h2>How it works</h2>
 * Time is cut into ticks of 2^k ns. Level 0 has one slot per tick for {@link #slots()} ticks;
 * each level above has 64 slots, each spanning a whole turn of the level below, up to the reach of
 * a {@code long}. A timer goes to the lowest level whose turn covers its delay, in the slot of its
 * deadline. Every slot keeps a lower bound of the deadlines in it; a slot of a level above 0 is
 * walked when that bound comes due, or as soon as it could hold a timer of the tick about to fire,
 * and its timers move to the slot their deadline now belongs in (one level down or more). So a
 * timer moves at most once per level, and only while it is still pending: timers cancelled or
 * moved before their coarse slot comes due never move. Timers fire only from the current tick's
 * level-0 slot, which is put in firing order (deadline, then scheduling order) when a poll first
 * reaches its tick, and kept in that order while the tick lasts. Occupancy bitmaps per level find
 * the earliest slot in a few word operations, so an idle poll over any gap costs about the same
 * whatever the number of timers.
 *
 * <p>Moving a deadline later (what traffic does to an idle deadline) only writes the new deadline
 * and scheduling order: the timer's slot comes due no later than the old deadline, and the walk
 * moves it on. Moving it earlier, or within the current tick, relinks it at once.
 *
 * <h2>Layout</h2>
 * A timer is a cell of three longs (the deadline; the generation and the next link; the
 * scheduling order and the previous link) and its callback reference: 28 bytes with compressed
 * references. Cells live in pages of 4096, allocated as the wheel grows, never copied. A bitmap
 * (one bit per cell) marks free cells, and a summary (one bit per word of it) the words that have
 * one. A new timer takes a free cell from a cursor on: the lowest free cell of the first page at or
 * after the cursor's page (the page where it last found one, wrapping around) that has one. So
 * freed cells are reused in address order within a page, not lowest address first over the wheel;
 * cells never used yet are taken only when no freed cell is left. The generation's parity says
 * whether a cell holds a pending timer.
 *
 * <p>Internal: its package is exported to no module (the drivers are the API); public for the
 * drivers in {@code io.wheelbeat.core}, and for the benchmarks (which measure the engine against
 * its peers) and tests, which use it on the class path.
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

    /** Generations a cell goes through (two per timer: pending, then free) before it is retired. */
    static final long GENERATIONS = 1L << 40;

    private static final Logger log = LoggerFactory.getLogger(TimerWheel.class);
    private static final LongConsumer NO_LATENESS = lateness -> { };

    private static final int INDEX_BITS = 24;
    private static final int INDEX_MASK = (1 << INDEX_BITS) - 1;
    private static final int PAGE_SHIFT = 12;
    private static final int PAGE_CELLS = 1 << PAGE_SHIFT;
    private static final int PAGE_MASK = PAGE_CELLS - 1;
    /** Longs per cell: deadline; generation and next link; scheduling order and previous link. */
    private static final int CELL_WORDS = 3;
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

    /** Per page, three longs per cell (see {@link #CELL_WORDS}). */
    private long[][] words = new long[0][];
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
    private int retiredCells;
    /** The scheduling order the next (re)scheduled timer gets; its low 40 bits are stored. */
    private long nextOrder;

    /**
     * Nanoseconds since the start: the last poll's reading, or, during a poll, the latest
     * deadline fired so far if later. A timer made due at or before it during a poll is deferred.
     */
    private long position;
    /** The tick that placement counts from; it never goes back. */
    private long baseTick;
    /** The level-0 slot of the current tick while its list is in firing order, or -1. */
    private int sortedSlot = -1;
    private boolean polling;
    /** The lower bound of the slot that {@link #earliestSlot()} returned. */
    private long earliestDue;
    /** The occupied slot above level 0 with the smallest lower bound, or -1; and that bound. */
    private int earliestUpper;
    private long earliestUpperDue;
    /** Pairs (deadline, order << 24 | cell) being sorted. */
    private long[] sortKeys = new long[32];

    private long scheduledCount;
    private long cancelledCount;
    private long expiredCount;
    private long failedCount;

    /**
     * A wheel that starts at {@code startNanos}, a reading of the clock it will be polled with.
     *
     * @param startNanos the clock's reading now: deadlines before it are due at once
     * @param tickNanos the span of one level-0 slot, a power of two nanoseconds
     * @param slots the number of level-0 slots, a power of two from 64 to 4096 (level 0's
     *     occupancy bitmap is at most 64 words, summarised in one)
     * @param initialCapacity how many timers to make room for up front (it grows by pages of
     *     4096 when needed, which allocates)
     * @throws IllegalArgumentException if {@code tickNanos} or {@code slots} is not such a power
     *     of two, or {@code initialCapacity} is negative
     */
    public TimerWheel(long startNanos, long tickNanos, int slots, int initialCapacity) {
        if (tickNanos <= 0 || Long.bitCount(tickNanos) != 1) {
            throw new IllegalArgumentException("tickNanos must be a power of two: " + tickNanos);
        }
        if (slots < 64 || slots > 4096 || Integer.bitCount(slots) != 1) {
            throw new IllegalArgumentException("slots must be a power of two from 64 to 4096: " + slots);
        }
        if (initialCapacity < 0) {
            throw new IllegalArgumentException("initialCapacity must not be negative: " + initialCapacity);
        }
        this.originNanos = startNanos;
        this.tickShift = Long.numberOfTrailingZeros(tickNanos);
        this.levelZeroBits = Integer.numberOfTrailingZeros(slots);
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
        this.deferred = slotCount;
        this.firstTimerCell = slotCount + 1;
        this.due = new long[slotCount];
        Arrays.fill(due, EMPTY);
        this.occupiedZero = new long[Math.max(1, levelZeroSlots >>> 6)];
        this.occupiedUpper = new long[levels];
        ensureCapacity((int) Math.min(INDEX_MASK, (long) firstTimerCell + initialCapacity));
        for (int sentinel = 0; sentinel <= deferred; sentinel++) {
            setNext(sentinel, sentinel);
            setPrev(sentinel, sentinel);
        }
        this.highWater = firstTimerCell;
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
        long generation = generationOf(cell) + 1;
        setWord(cell, 1, generation << INDEX_BITS);
        setWord(cell, 2, nextOrder++ << INDEX_BITS);
        long deadline = relative(deadlineNanos);
        setDeadline(cell, deadline);
        callbacks[cell >>> PAGE_SHIFT][cell & PAGE_MASK] = callback;
        pending++;
        scheduledCount++;
        placeOrDefer(cell, deadline);
        return (generation << INDEX_BITS) | cell;
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
     * Moves a pending timer to fire at {@code deadlineNanos} instead, keeping its id and callback;
     * among timers with the same deadline it now fires after those scheduled before this call. A
     * later deadline is two writes; an earlier one relinks the timer.
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
        setWord(cell, 2, (nextOrder++ << INDEX_BITS) | prevOf(cell));
        // Lazy: the cell's slot comes due no later than its old deadline, and the walk moves it
        // on. Not for the current tick, whose slot is kept in firing order, nor during a poll for
        // a timer that may sit among the deferred ones (its deadline at or before the position).
        if (deadline - old >= 0 && (old >>> tickShift) > baseTick && !(polling && old <= position)) {
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
        return poll(nowNanos, NO_LATENESS, Integer.MAX_VALUE);
    }

    /** Fires every timer due at {@code nowNanos}: {@code poll(nowNanos, lateness, Integer.MAX_VALUE)}. */
    public int poll(long nowNanos, LongConsumer lateness) {
        return poll(nowNanos, lateness, Integer.MAX_VALUE);
    }

    /**
     * Fires, on the calling thread, the pending timers whose deadline is at or before
     * {@code nowNanos}, in the order the class comment gives, at most {@code limit} of them (as
     * Agrona's {@code poll(now, handler, expiryLimit)}): what the limit leaves stays due, and the
     * next poll fires it first, in the same order. Callbacks may schedule, cancel and reschedule
     * any timer, including ones due in this same poll. A reading earlier than the previous poll's
     * counts as that one.
     *
     * @param lateness told, before each callback runs, how late its timer fires
     *     ({@code nowNanos} minus the deadline, in ns)
     * @param limit the most timers to fire, at least 1
     * @return the number of timers that fired; {@code limit} when the limit may have left some
     * @throws IllegalArgumentException if {@code limit} is below 1
     * @throws IllegalStateException if called from a callback of this wheel
     */
    public int poll(long nowNanos, LongConsumer lateness, int limit) {
        Objects.requireNonNull(lateness, "lateness");
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be at least 1: " + limit);
        }
        if (polling) {
            throw new IllegalStateException("poll() called from a timer callback of the same wheel");
        }
        long now = Math.max(nowNanos - originNanos, position);
        polling = true;
        int fired = 0;
        try {
            int slot;
            boolean stopped = false;
            while ((slot = earliestSlot()) >= 0 && earliestDue <= now) {
                if (fired == limit) {
                    stopped = true; // the rest stays due, in order: the base tick stays on it
                    break;
                }
                moveBase(earliestDue >>> tickShift);
                int currentSlot = (int) baseTick & (levelZeroSlots - 1);
                if (slot != currentSlot) {
                    cascade(slot);
                } else if (earliestUpper >= 0 && (earliestUpperDue >>> tickShift) <= baseTick) {
                    // It may hold timers of this tick: they must join the slot before any fires.
                    cascade(earliestUpper);
                } else {
                    fired += fireCurrentTick(now, lateness, limit - fired);
                }
            }
            position = now;
            if (!stopped) {
                moveBase(now >>> tickShift);
            }
        } finally {
            polling = false;
            placeDeferred();
            sortCurrentSlot();
        }
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
                .append(", base tick ").append(baseTick).append(", sorted slot ").append(sortedSlot)
                .append(", retired cells ").append(retiredCells).append('\n');
        for (int slot = 0; slot < slotCount; slot++) {
            if (nextOf(slot) == slot) {
                continue;
            }
            int level = levelOf(slot);
            out.append("  level ").append(level).append(" slot ").append(slot - levelBase[level])
                    .append(" due ").append(due[slot]).append(':');
            int shown = 0;
            for (int cell = nextOf(slot); cell != slot && shown < 64; cell = nextOf(cell), shown++) {
                out.append(' ').append(Long.toHexString((generationOf(cell) << INDEX_BITS) | cell))
                        .append('@').append(deadlineOf(cell)).append('#').append(orderOf(cell));
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

    /**
     * For tests of generation wrap: sets the generation of the free cell of {@code staleTimerId}
     * (a timer that fired or was cancelled) to {@code generation}, an even number below
     * {@link #GENERATIONS}, as if it had been reused that often.
     */
    void setGenerationOfFreeCell(long staleTimerId, long generation) {
        int cell = (int) staleTimerId & INDEX_MASK;
        if ((generationOf(cell) & 1) != 0 || (generation & 1) != 0 || generation >= GENERATIONS) {
            throw new IllegalArgumentException("cell " + cell + " is pending or generation " + generation + " is not free");
        }
        setWord(cell, 1, (generation << INDEX_BITS) | nextOf(cell));
    }

    /** Returns the number of cells retired because their generation would have wrapped. */
    int retiredCells() {
        return retiredCells;
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
        } else if (slot == sortedSlot && firesBefore(cell, last)) {
            int first = nextOf(slot);
            if (firesBefore(cell, first)) {
                setNext(cell, first);
                setPrev(cell, slot);
                setPrev(first, cell);
                setNext(slot, cell);
                due[slot] = Math.min(due[slot], deadline);
                return;
            }
            sortedSlot = -1;
        }
        appendTo(slot, cell);
        if (deadline < due[slot]) {
            due[slot] = deadline;
        }
    }

    /** Whether {@code cell} fires before {@code other}: earlier deadline, or scheduled earlier. */
    private boolean firesBefore(int cell, int other) {
        long deadline = deadlineOf(cell);
        long otherDeadline = deadlineOf(other);
        return deadline < otherDeadline
                || deadline == otherDeadline && orderedBefore(word(cell, 2), word(other, 2));
    }

    /** Compares the 40-bit scheduling orders in the top bits of two words, by difference. */
    private static boolean orderedBefore(long word, long otherWord) {
        return ((word >>> INDEX_BITS) - (otherWord >>> INDEX_BITS)) << INDEX_BITS < 0;
    }

    /** Links {@code cell} at the tail of the list of {@code sentinel}; no slot bookkeeping. */
    private void appendTo(int sentinel, int cell) {
        int last = prevOf(sentinel);
        setNext(last, cell);
        setNext(cell, sentinel);
        setPrev(cell, last);
        setPrev(sentinel, cell);
    }

    private void unlink(int cell) {
        int next = nextOf(cell);
        int prev = prevOf(cell);
        setNext(prev, next);
        setPrev(next, prev);
        if (prev == next && prev < slotCount) {
            markEmpty(prev);
        }
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
     * -1; leaves the same for the levels above 0 in {@link #earliestUpper}. Per level only two
     * slots can hold it: the slot of the base tick (its own span, or one turn later) and the next
     * occupied one after it, since every timer of a level lies within one turn of the base tick.
     */
    private int earliestSlot() {
        int best = -1;
        long bestDue = EMPTY;
        int upper = -1;
        long upperDue = EMPTY;
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
            int levelBest = -1;
            long levelDue = EMPTY;
            if (currentOccupied) {
                levelDue = due[base + current];
                levelBest = base + current;
            }
            if (next >= 0 && due[base + next] < levelDue) {
                levelDue = due[base + next];
                levelBest = base + next;
            }
            if (level > 0 && levelDue < upperDue) {
                upperDue = levelDue;
                upper = levelBest;
            }
            if (levelDue < bestDue) {
                bestDue = levelDue;
                best = levelBest;
            }
        }
        earliestDue = bestDue;
        earliestUpper = upper;
        earliestUpperDue = upperDue;
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

    /** Moves every timer of {@code slot} to the slot its deadline belongs in now. Fires none. */
    private void cascade(int slot) {
        int cell = nextOf(slot);
        setNext(slot, slot);
        setPrev(slot, slot);
        markEmpty(slot);
        while (cell != slot) {
            int next = nextOf(cell);
            place(cell, deadlineOf(cell));
            cell = next;
        }
    }

    /**
     * Fires, in firing order, the timers of the current tick's slot due by {@code now}, at most
     * {@code budget} of them. Stops early when a callback places a timer out of order in the slot
     * (the caller's loop comes back and sorts it again).
     */
    private int fireCurrentTick(long now, LongConsumer lateness, int budget) {
        int slot = (int) baseTick & (levelZeroSlots - 1);
        sortCurrentSlot();
        int fired = 0;
        while (sortedSlot == slot && fired < budget) {
            int cell = nextOf(slot);
            if (cell == slot) {
                break;
            }
            long deadline = deadlineOf(cell);
            if (deadline > now) {
                // In order from here on: this is the earliest.
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
        long id = (generationOf(cell) << INDEX_BITS) | cell;
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
     * Puts the current tick's slot in firing order (deadline, then scheduling order), moving out
     * the timers moved later while the slot was still ahead, so that polls inside this tick walk
     * only what they fire.
     */
    private void sortCurrentSlot() {
        int slot = (int) baseTick & (levelZeroSlots - 1);
        int first = nextOf(slot);
        if (slot == sortedSlot || first == slot) {
            return;
        }
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
            if (2 * count == sortKeys.length) {
                sortKeys = Arrays.copyOf(sortKeys, 4 * count);
            }
            sortKeys[2 * count] = deadline;
            sortKeys[2 * count + 1] = (word(cell, 2) & ~(long) INDEX_MASK) | cell;
            count++;
        }
        if (count == 0) {
            return;
        }
        heapSort(sortKeys, count);
        int prev = slot;
        for (int i = 0; i < count; i++) {
            int cell = (int) sortKeys[2 * i + 1] & INDEX_MASK;
            setNext(prev, cell);
            setPrev(cell, prev);
            prev = cell;
        }
        setNext(prev, slot);
        setPrev(slot, prev);
        due[slot] = sortKeys[0];
        sortedSlot = slot;
    }

    /** Sorts the pairs {@code keys[0..2 count)} by firing order, in place and without allocating. */
    private static void heapSort(long[] keys, int count) {
        for (int i = count / 2 - 1; i >= 0; i--) {
            siftDown(keys, i, count);
        }
        for (int end = count - 1; end > 0; end--) {
            swap(keys, 0, end);
            siftDown(keys, 0, end);
        }
    }

    private static void siftDown(long[] keys, int i, int count) {
        int child;
        while ((child = 2 * i + 1) < count) {
            if (child + 1 < count && pairBefore(keys, child, child + 1)) {
                child++;
            }
            if (!pairBefore(keys, i, child)) {
                break;
            }
            swap(keys, i, child);
            i = child;
        }
    }

    private static boolean pairBefore(long[] keys, int i, int j) {
        long deadline = keys[2 * i];
        long other = keys[2 * j];
        return deadline < other || deadline == other && orderedBefore(keys[2 * i + 1], keys[2 * j + 1]);
    }

    private static void swap(long[] keys, int i, int j) {
        long deadline = keys[2 * i];
        long order = keys[2 * i + 1];
        keys[2 * i] = keys[2 * j];
        keys[2 * i + 1] = keys[2 * j + 1];
        keys[2 * j] = deadline;
        keys[2 * j + 1] = order;
    }

    // ---------------------------------------------------------------- cells

    /**
     * Takes the lowest free cell of the first page, from the cursor's page on (wrapping around),
     * that has one; or a cell never used yet when none is free. Allocating in address order lets
     * the memory system stream the cells a burst of schedules writes, where a free list would hand
     * them out in the scattered order they were freed.
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

    /**
     * Frees a cell: bumps its generation (now even: free) and marks it free; or, when the
     * generation would wrap to one its ids already carried, retires it for good.
     */
    private void release(int cell) {
        callbacks[cell >>> PAGE_SHIFT][cell & PAGE_MASK] = null;
        long generation = generationOf(cell) + 1;
        pending--;
        if (generation == GENERATIONS) {
            // Generation 0 is even (not pending): no id matches it, and the cell is never handed out again.
            setWord(cell, 1, 0L);
            retiredCells++;
            return;
        }
        setWord(cell, 1, generation << INDEX_BITS);
        int word = cell >>> 6;
        freeCells[word] |= 1L << cell;
        freeWords[word >>> 6] |= 1L << word;
        freeCount++;
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
        callbacks = Arrays.copyOf(callbacks, pages);
        for (int page = had; page < pages; page++) {
            words[page] = new long[CELL_WORDS * PAGE_CELLS];
            callbacks[page] = new TimerCallback[PAGE_CELLS];
        }
        capacity = Math.min(INDEX_MASK, pages << PAGE_SHIFT);
    }

    private int pendingCell(long timerId) {
        int cell = (int) timerId & INDEX_MASK;
        if (cell < firstTimerCell || cell >= highWater) {
            return -1;
        }
        long generation = generationOf(cell);
        return generation == timerId >>> INDEX_BITS && (generation & 1) != 0 ? cell : -1;
    }

    private long word(int cell, int index) {
        return words[cell >>> PAGE_SHIFT][(cell & PAGE_MASK) * CELL_WORDS + index];
    }

    private void setWord(int cell, int index, long value) {
        words[cell >>> PAGE_SHIFT][(cell & PAGE_MASK) * CELL_WORDS + index] = value;
    }

    private long deadlineOf(int cell) {
        return word(cell, 0);
    }

    private void setDeadline(int cell, long deadline) {
        setWord(cell, 0, deadline);
    }

    private long generationOf(int cell) {
        return word(cell, 1) >>> INDEX_BITS;
    }

    private long orderOf(int cell) {
        return word(cell, 2) >>> INDEX_BITS;
    }

    private int nextOf(int cell) {
        return (int) word(cell, 1) & INDEX_MASK;
    }

    private int prevOf(int cell) {
        return (int) word(cell, 2) & INDEX_MASK;
    }

    private void setNext(int cell, int next) {
        setWord(cell, 1, (word(cell, 1) & ~(long) INDEX_MASK) | next);
    }

    private void setPrev(int cell, int prev) {
        setWord(cell, 2, (word(cell, 2) & ~(long) INDEX_MASK) | prev);
    }

    /** Nanoseconds since the start; readings before the start count as the start. */
    private long relative(long nanos) {
        return Math.max(0, nanos - originNanos);
    }
}
