package io.wheelbeat.core;

import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.LongConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A hashed timing wheel with O(1) schedule, cancel and reschedule, confined to one owner thread.
 *
 * <h2>Contract</h2>
 * <ul>
 *   <li>{@link #schedule}, {@link #cancel}, {@link #reschedule} and their {@code At} forms are O(1)
 *       and allocate nothing once the timer arrays have grown to the peak number of pending
 *       timers. A timer is named by a {@code long} id; ids are never reused in practice (each
 *       reuse of a storage cell bumps a 32-bit generation), so a stale id is answered
 *       {@code false}, never mistaken for another timer.</li>
 *   <li><b>Precision:</b> time is cut into ticks of {@link #tickNanos()} nanoseconds (the requested
 *       tick rounded up to a power of two). A timer never fires before its deadline and fires on
 *       the first tick boundary at or after it, so it is late by less than one tick plus however
 *       late the driver calls {@link #advance(long)}.</li>
 *   <li><b>Reach:</b> any delay. Delays beyond one turn ({@code slots x tick}) stay in their slot
 *       and are skipped until their turn comes (see below); {@code Long.MAX_VALUE} nanoseconds
 *       saturates instead of overflowing. Zero and negative delays fire on the next tick.</li>
 *   <li><b>Order:</b> {@link #advance(long)} fires due timers in deadline-tick order, each exactly
 *       once, even when it catches up over a long pause. Within one tick, timers fire in the order
 *       they were placed in their slot.</li>
 *   <li><b>Bounded:</b> with {@link Builder#maxPendingTimers(int)}, scheduling beyond the limit
 *       throws {@link RejectedExecutionException} and leaves every pending timer as it was.</li>
 *   <li><b>Failure isolation:</b> a callback that throws is logged through SLF4J and counted in
 *       {@link #failedCount()}; the other timers still fire.</li>
 * </ul>
 *
 * <h2>Why rounds, not a hierarchy</h2>
 * A timer far beyond one turn sits in the slot of its deadline tick and is passed over until the
 * turn of its deadline. Each slot keeps a lower bound of the earliest deadline tick in it, and a
 * bitmap marks occupied slots, so the wheel never walks a slot that holds nothing due, and it can
 * tell its driver the next tick worth waking up for. Idle deadlines are nearly always moved or
 * cancelled before they fire, so a hierarchy's cascading would mostly move timers that never
 * fire; rounds never move a timer that is not due. The JMH comparison is in
 * {@code docs/benchmarks.md}.
 *
 * <h2>Lazy re-arm</h2>
 * Moving a timer later (what traffic does to an idle deadline) only writes its new deadline: the
 * timer stays in its slot, which comes due no later than the new deadline, and is moved to the
 * right slot only if it is still pending when that slot is walked. Cell, deadline and links sit
 * together in one array, so a re-arm touches one cache line, not the four of a linked move. A
 * timer moved earlier than its slot's next visit is relinked at once.
 *
 * <h2>Thread rules</h2>
 * Not thread-safe. Every method must be called on one owner thread, including callbacks, which
 * run on the thread that calls {@link #advance(long)}. The statistics getters may be read from
 * other threads as racy snapshots (for metrics). For a thread-safe timer use {@link WheelTimer};
 * to let an existing single-threaded executor drive a wheel use {@link ExecutorDrivenWheel}.
 *
 * <h2>Layout</h2>
 * A timer is a cell of three longs in one array (deadline; next and previous links; generation
 * and slot) plus its callback reference: 28 bytes per timer with compressed references. Each slot
 * is a circular doubly linked list with a sentinel cell, so unlinking never needs to know the
 * slot.
 */
public final class TimerWheel {

    /** A timer id that no timer ever has. */
    public static final long NO_TIMER = 0L;

    private static final Logger log = LoggerFactory.getLogger(TimerWheel.class);
    /** Longs per cell in {@link #cells}: deadline, links, meta. */
    private static final int STRIDE = 3;
    private static final int DEADLINE = 0;
    /** Next cell in the high half, previous cell in the low half. */
    private static final int LINKS = 1;
    /** Generation in the high half, slot (or FREE) in the low half. */
    private static final int META = 2;
    /** The slot of a free cell. */
    private static final int FREE = -1;
    /** Ends the free list. */
    private static final int NIL = -1;
    private static final long LOW = 0xFFFF_FFFFL;
    private static final int MAX_CELLS = (Integer.MAX_VALUE - 8) / STRIDE;
    private static final long NO_TICK = Long.MAX_VALUE;

    private final Ticker ticker;
    private final long originNanos;
    private final int tickShift;
    private final long tickNanos;
    private final int slotCount;
    private final int slotMask;
    /** The sentinel of the list of timers due in the tick being expired. */
    private final int expiring;
    private final int firstTimerCell;
    private final int maxPendingTimers;

    /** Per slot: a lower bound of the deadline ticks in it, congruent to the slot, or NO_TICK. */
    private final long[] slotEarliest;
    /** One bit per slot: set while the slot holds a timer. */
    private final long[] occupied;

    /**
     * {@link #STRIDE} longs per cell: the deadline in nanoseconds since {@link #originNanos}, the
     * links, and the generation with the slot the cell sits in. Sentinels use only their links.
     */
    private long[] cells;
    private TimerCallback[] callbacks;

    private int freeHead = NIL;
    /** Cells below this index have been used at least once. */
    private int highWater;
    private int pending;
    /** The last tick that {@link #advance(long)} has processed. */
    private long currentTick;
    private boolean advancing;

    /** The tick the driver will next wake for; earlier links tell it through {@link #wakeHook}. */
    private long wakeTick = Long.MIN_VALUE;
    private WakeHook wakeHook;
    /** Places other threads have reserved for timers handed over to this thread, or null. */
    private AtomicInteger reservations;
    private volatile LongConsumer latenessRecorder;

    private long scheduledCount;
    private long cancelledCount;
    private long expiredCount;
    private long failedCount;

    /** Told when a timer lands before the tick the driver is armed for. Owner thread only. */
    interface WakeHook {
        void wakeEarlier(long expiryNanos);
    }

    private TimerWheel(Builder b) {
        this.ticker = b.ticker;
        this.originNanos = ticker.nanoTime();
        this.tickShift = b.tickShift;
        this.tickNanos = 1L << tickShift;
        this.slotCount = b.slots;
        this.slotMask = slotCount - 1;
        this.expiring = slotCount;
        this.firstTimerCell = slotCount + 1;
        this.maxPendingTimers = b.maxPendingTimers;
        this.slotEarliest = new long[slotCount];
        Arrays.fill(slotEarliest, NO_TICK);
        this.occupied = new long[Math.max(1, slotCount >>> 6)];
        int capacity = (int) Math.min(MAX_CELLS, (long) firstTimerCell + b.initialCapacity);
        this.cells = new long[capacity * STRIDE];
        this.callbacks = new TimerCallback[capacity];
        for (int sentinel = 0; sentinel <= expiring; sentinel++) {
            setLinks(sentinel, sentinel, sentinel);
        }
        this.highWater = firstTimerCell;
    }

    /** Returns a builder with the defaults: a 1.05 ms tick (2^20 ns), 4096 slots, no limit. */
    public static Builder builder() {
        return new Builder();
    }

    // ---------------------------------------------------------------- scheduling

    /**
     * Schedules {@code callback} to run once after {@code delay}.
     *
     * @return the new timer's id, never {@link #NO_TIMER}
     * @throws NullPointerException if {@code callback} or {@code unit} is null
     * @throws RejectedExecutionException if the wheel holds its maximum number of pending timers
     */
    public long schedule(TimerCallback callback, long delay, TimeUnit unit) {
        Objects.requireNonNull(unit, "unit");
        return scheduleRelative(callback, deadlineAfter(unit.toNanos(delay)));
    }

    /**
     * Schedules {@code callback} to run once at {@code deadlineNanos}, a reading of this wheel's
     * {@link #ticker()}. A deadline in the past fires on the next tick. Lets a caller that has
     * already read the clock (once per read batch, say) skip a second reading.
     *
     * @return the new timer's id, never {@link #NO_TIMER}
     * @throws NullPointerException if {@code callback} is null
     * @throws RejectedExecutionException if the wheel holds its maximum number of pending timers
     */
    public long scheduleAt(TimerCallback callback, long deadlineNanos) {
        return scheduleRelative(callback, relative(deadlineNanos));
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
     * Moves a pending timer to fire {@code delay} from now instead, keeping its id and callback.
     * When the new deadline falls in the slot the timer already sits in, only the deadline is
     * written.
     *
     * @return {@code true} if the timer was pending and was moved; {@code false} (and nothing
     *     changes) if it already fired or was cancelled
     * @throws NullPointerException if {@code unit} is null
     */
    public boolean reschedule(long timerId, long delay, TimeUnit unit) {
        Objects.requireNonNull(unit, "unit");
        int cell = pendingCell(timerId);
        if (cell < 0) {
            return false;
        }
        move(cell, deadlineAfter(unit.toNanos(delay)));
        return true;
    }

    /**
     * Moves a pending timer to fire at {@code deadlineNanos}, a reading of {@link #ticker()}.
     *
     * @return as {@link #reschedule(long, long, TimeUnit)}
     */
    public boolean rescheduleAt(long timerId, long deadlineNanos) {
        int cell = pendingCell(timerId);
        if (cell < 0) {
            return false;
        }
        move(cell, relative(deadlineNanos));
        return true;
    }

    /** Returns whether {@code timerId} is scheduled and has neither fired nor been cancelled. */
    public boolean isPending(long timerId) {
        return pendingCell(timerId) >= 0;
    }

    /**
     * Returns the deadline of a pending timer as a reading of {@link #ticker()}, or
     * {@code Long.MIN_VALUE} if the timer is not pending.
     */
    public long deadlineNanos(long timerId) {
        int cell = pendingCell(timerId);
        return cell < 0 ? Long.MIN_VALUE : absolute(cells[cell * STRIDE + DEADLINE]);
    }

    // ---------------------------------------------------------------- driving

    /**
     * Fires every timer whose deadline tick is at or before the tick containing {@code nowNanos},
     * in tick order, on the calling thread. Ticks with nothing due cost a bitmap scan, not a slot
     * walk. Callbacks may schedule, cancel and reschedule; a timer they schedule for an elapsed
     * tick fires in this same call, on the next tick after the one being expired.
     *
     * @param nowNanos a reading of {@link #ticker()}; a reading earlier than the last one is a no-op
     * @return the number of timers that fired
     * @throws IllegalStateException if called from a callback of this wheel
     */
    public int advance(long nowNanos) {
        if (advancing) {
            throw new IllegalStateException("advance() called from a timer callback of the same wheel");
        }
        long now = relative(nowNanos);
        long targetTick = now >>> tickShift;
        if (targetTick <= currentTick) {
            return 0;
        }
        advancing = true;
        int fired = 0;
        try {
            long tick;
            while ((tick = nextDueTick(currentTick + 1, targetTick)) != NO_TICK) {
                currentTick = tick;
                fired += expireSlot((int) tick & slotMask, tick, now);
            }
            currentTick = targetTick;
        } finally {
            advancing = false;
        }
        return fired;
    }

    /**
     * Returns the earliest {@link #ticker()} reading at which {@link #advance(long)} would fire a
     * timer, or {@code Long.MAX_VALUE} if no timer is pending. May be early (a cancelled timer's
     * slot is only rechecked when visited), never late: a driver that sleeps until then misses
     * nothing. Costs a scan of the occupancy bitmap.
     */
    public long nextExpiryNanos() {
        return tickStartNanos(nextDueTick(currentTick + 1, Long.MAX_VALUE));
    }

    // ---------------------------------------------------------------- introspection

    /** Returns the ticker this wheel reads. */
    public Ticker ticker() {
        return ticker;
    }

    /** Returns the tick length in nanoseconds, a power of two. */
    public long tickNanos() {
        return tickNanos;
    }

    /** Returns the number of slots, a power of two. */
    public int slots() {
        return slotCount;
    }

    /** Returns the maximum number of pending timers ({@code Integer.MAX_VALUE}: no limit). */
    public int maxPendingTimers() {
        return maxPendingTimers;
    }

    /** Returns the number of timers scheduled and neither fired nor cancelled. */
    public int pendingTimers() {
        return pending;
    }

    /** Returns how many timers were ever scheduled. */
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

    // ---------------------------------------------------------------- package-private hooks for drivers

    /**
     * Arms the driver: returns {@link #nextExpiryNanos()} and remembers its tick, so that a timer
     * linked before it calls {@code hook}.
     */
    long armWake(WakeHook hook) {
        this.wakeHook = hook;
        long tick = nextDueTick(currentTick + 1, Long.MAX_VALUE);
        wakeTick = tick;
        return tickStartNanos(tick);
    }

    /** The last tick processed, or the tick being expired while callbacks run. For tests. */
    long currentTick() {
        return currentTick;
    }

    void reservations(AtomicInteger reservations) {
        this.reservations = reservations;
    }

    void latenessRecorder(LongConsumer recorder) {
        this.latenessRecorder = recorder;
    }

    /** Schedules a timer whose place another thread reserved: skips the limit check. */
    long scheduleReserved(TimerCallback callback, long deadlineNanos) {
        return link(callback, relative(deadlineNanos));
    }

    /** Passes every pending timer's callback to {@code action}. */
    void forEachPending(Consumer<? super TimerCallback> action) {
        for (int cell = firstTimerCell; cell < highWater; cell++) {
            if (slotOf(cell) != FREE) {
                action.accept(callbacks[cell]);
            }
        }
    }

    // ---------------------------------------------------------------- internals

    private long scheduleRelative(TimerCallback callback, long deadline) {
        Objects.requireNonNull(callback, "callback");
        int reserved = reservations == null ? 0 : reservations.get();
        if (pending + (long) reserved >= maxPendingTimers) {
            throw new RejectedExecutionException("too many pending timers: " + (pending + reserved)
                    + " pending, the maximum is " + maxPendingTimers);
        }
        return link(callback, deadline);
    }

    private long link(TimerCallback callback, long deadline) {
        int cell = allocate();
        cells[cell * STRIDE + DEADLINE] = deadline;
        callbacks[cell] = callback;
        place(cell, dueTick(deadline));
        pending++;
        scheduledCount++;
        return ((long) generationOf(cell) << 32) | cell;
    }

    private void move(int cell, long deadline) {
        long tick = dueTick(deadline);
        cells[cell * STRIDE + DEADLINE] = deadline;
        int slot = slotOf(cell);
        if (slot != expiring) {
            if (tick >= nextVisit(slot)) {
                // Lazy: the slot is walked no later than the new deadline; the walk moves it on.
                return;
            }
            if (((tick ^ slot) & slotMask) == 0) {
                // An earlier turn of the slot it sits in: nothing to relink.
                noteTick(slot, tick);
                return;
            }
        }
        unlink(cell);
        place(cell, tick);
    }

    /** The first tick, from the next one on, at which {@code slot} will be walked. */
    private long nextVisit(int slot) {
        long from = Math.max(currentTick + 1, slotEarliest[slot]);
        return from + ((slot - from) & slotMask);
    }

    /** Links {@code cell} at the tail of the slot of {@code tick}. */
    private void place(int cell, long tick) {
        int slot = (int) tick & slotMask;
        appendTo(slot, cell);
        occupied[slot >>> 6] |= 1L << slot;
        noteTick(slot, tick);
    }

    /** Links {@code cell} at the tail of the list of {@code sentinel} and records where it is. */
    private void appendTo(int sentinel, int cell) {
        int last = prevOf(sentinel);
        setNext(last, cell);
        setLinks(cell, sentinel, last);
        setPrev(sentinel, cell);
        int meta = cell * STRIDE + META;
        cells[meta] = (cells[meta] & ~LOW) | sentinel;
    }

    private void noteTick(int slot, long tick) {
        if (tick < slotEarliest[slot]) {
            slotEarliest[slot] = tick;
        }
        if (tick < wakeTick) {
            wakeTick = tick;
            wakeHook.wakeEarlier(tickStartNanos(tick));
        }
    }

    private void unlink(int cell) {
        long links = cells[cell * STRIDE + LINKS];
        int n = (int) (links >>> 32);
        int p = (int) links;
        setNext(p, n);
        setPrev(n, p);
        if (p == n && p < slotCount) {
            // p is a slot sentinel whose list is now empty.
            occupied[p >>> 6] &= ~(1L << p);
            slotEarliest[p] = NO_TICK;
        }
    }

    /**
     * Walks {@code slot} at {@code tick}: moves the due timers to the expiring list, moves timers
     * re-armed for another slot to it, then fires the due ones one by one.
     */
    private int expireSlot(int slot, long tick, long now) {
        long earliest = NO_TICK;
        int cell = nextOf(slot);
        while (cell != slot) {
            int following = nextOf(cell);
            long due = tickOf(cells[cell * STRIDE + DEADLINE]);
            if (due <= tick) {
                unlink(cell);
                appendTo(expiring, cell);
            } else if (((due ^ slot) & slotMask) != 0) {
                unlink(cell);
                place(cell, due);
            } else if (due < earliest) {
                earliest = due;
            }
            cell = following;
        }
        if (nextOf(slot) != slot) {
            slotEarliest[slot] = earliest;
        }
        // Callbacks may cancel or move timers still on the expiring list: take one at a time.
        int fired = 0;
        while ((cell = nextOf(expiring)) != expiring) {
            unlink(cell);
            long id = ((long) generationOf(cell) << 32) | cell;
            long lateness = now - cells[cell * STRIDE + DEADLINE];
            TimerCallback callback = callbacks[cell];
            release(cell);
            expiredCount++;
            fired++;
            LongConsumer recorder = latenessRecorder;
            if (recorder != null) {
                recorder.accept(lateness);
            }
            try {
                callback.onTimeout(id);
            } catch (Throwable t) {
                failedCount++;
                log.warn("timer callback {} threw; the wheel goes on", callback, t);
            }
        }
        return fired;
    }

    /**
     * Returns the first tick in [from, limit] at which an occupied slot holds something due, or
     * NO_TICK. Scans at most one turn of the bitmap; if nothing is due within it, every slot was
     * seen, so the smallest lower bound among them is the answer.
     */
    private long nextDueTick(long from, long limit) {
        if (pending == 0 || from > limit) {
            return NO_TICK;
        }
        long turnEnd = from + slotMask;
        long end = Math.min(limit, turnEnd);
        long smallest = NO_TICK;
        long tick = from;
        while (tick <= end) {
            int slot = (int) tick & slotMask;
            int found = nextOccupiedSlot(slot);
            if (found < 0) {
                return NO_TICK;
            }
            tick += (found - slot) & slotMask;
            if (tick > end) {
                break;
            }
            long earliest = slotEarliest[found];
            if (earliest <= tick) {
                return tick;
            }
            smallest = Math.min(smallest, earliest);
            tick++;
        }
        if (end < turnEnd) {
            return NO_TICK;
        }
        return smallest <= limit ? smallest : NO_TICK;
    }

    /** Returns the first occupied slot at or after {@code slot}, wrapping around, or -1. */
    private int nextOccupiedSlot(int slot) {
        int words = occupied.length;
        int word = slot >>> 6;
        long bits = occupied[word] & (-1L << slot);
        for (int scanned = 0; scanned <= words; scanned++) {
            if (bits != 0) {
                int found = (word << 6) + Long.numberOfTrailingZeros(bits);
                return found & slotMask;
            }
            word = (word + 1) % words;
            bits = occupied[word];
        }
        return -1;
    }

    private int allocate() {
        int cell = freeHead;
        if (cell != NIL) {
            freeHead = nextOf(cell);
            return cell;
        }
        if (highWater == callbacks.length) {
            grow();
        }
        return highWater++;
    }

    private void release(int cell) {
        callbacks[cell] = null;
        int meta = cell * STRIDE + META;
        // Bump the generation, so that ids issued for this cell go stale, and mark it free.
        cells[meta] = (((cells[meta] >>> 32) + 1) << 32) | (FREE & LOW);
        setNext(cell, freeHead);
        freeHead = cell;
        pending--;
    }

    private void grow() {
        int length = callbacks.length;
        if (length >= MAX_CELLS) {
            throw new RejectedExecutionException("too many pending timers: " + pending
                    + " pending, the wheel cannot hold more");
        }
        int grown = (int) Math.min(MAX_CELLS, Math.max(16L, 2L * length));
        cells = Arrays.copyOf(cells, grown * STRIDE);
        callbacks = Arrays.copyOf(callbacks, grown);
    }

    private int pendingCell(long timerId) {
        int cell = (int) timerId;
        if (cell < firstTimerCell || cell >= highWater) {
            return -1;
        }
        long meta = cells[cell * STRIDE + META];
        if ((int) (meta >>> 32) != (int) (timerId >>> 32) || (int) meta == FREE) {
            return -1;
        }
        return cell;
    }

    private int nextOf(int cell) {
        return (int) (cells[cell * STRIDE + LINKS] >>> 32);
    }

    private int prevOf(int cell) {
        return (int) cells[cell * STRIDE + LINKS];
    }

    private void setNext(int cell, int next) {
        int links = cell * STRIDE + LINKS;
        cells[links] = ((long) next << 32) | (cells[links] & LOW);
    }

    private void setPrev(int cell, int prev) {
        int links = cell * STRIDE + LINKS;
        cells[links] = (cells[links] & ~LOW) | (prev & LOW);
    }

    private void setLinks(int cell, int next, int prev) {
        cells[cell * STRIDE + LINKS] = ((long) next << 32) | (prev & LOW);
    }

    private int slotOf(int cell) {
        return (int) cells[cell * STRIDE + META];
    }

    private int generationOf(int cell) {
        return (int) (cells[cell * STRIDE + META] >>> 32);
    }

    /** The relative deadline {@code delayNanos} from now; non-positive delays mean now. */
    private long deadlineAfter(long delayNanos) {
        return deadlineAfter(relative(ticker.nanoTime()), delayNanos);
    }

    /** {@code now + delayNanos}, saturating at {@code Long.MAX_VALUE}; non-positive delays mean now. */
    static long deadlineAfter(long now, long delayNanos) {
        if (delayNanos <= 0) {
            return now;
        }
        long deadline = now + delayNanos;
        return deadline < now ? Long.MAX_VALUE : deadline;
    }

    /** Converts a ticker reading to nanoseconds since the origin, saturating, never negative. */
    private long relative(long nanos) {
        long rel = nanos - originNanos;
        // Overflow is only possible when nanos and the origin lie far apart on opposite signs.
        if (((nanos ^ originNanos) & (nanos ^ rel)) < 0) {
            return nanos < originNanos ? 0 : Long.MAX_VALUE;
        }
        return Math.max(0, rel);
    }

    private long absolute(long rel) {
        long abs = originNanos + rel;
        return ((originNanos ^ abs) & (rel ^ abs)) < 0 ? Long.MAX_VALUE : abs;
    }

    /** The first tick at or after {@code deadline}: a timer never fires early. */
    private long tickOf(long deadline) {
        return (deadline >>> tickShift) + ((deadline & (tickNanos - 1)) == 0 ? 0 : 1);
    }

    /** The tick a timer with {@code deadline} is placed at: never one already processed. */
    private long dueTick(long deadline) {
        return Math.max(tickOf(deadline), currentTick + 1);
    }

    private long tickStartNanos(long tick) {
        if (tick == NO_TICK || tick > (Long.MAX_VALUE >>> tickShift)) {
            return Long.MAX_VALUE;
        }
        return absolute(tick << tickShift);
    }

    /** Settings of a {@link TimerWheel}. Not thread-safe. */
    public static final class Builder {
        private Ticker ticker = Ticker.system();
        private int tickShift = 20;
        private int slots = 4096;
        private int maxPendingTimers = Integer.MAX_VALUE;
        private int initialCapacity = 1024;

        private Builder() {
        }

        /** The clock; {@link Ticker#system()} by default. */
        public Builder ticker(Ticker ticker) {
            this.ticker = Objects.requireNonNull(ticker, "ticker");
            return this;
        }

        /**
         * The tick length, rounded up to a power of two nanoseconds (1 ms becomes 1.048576 ms), so
         * that finding a deadline's tick is a shift. Between 1 microsecond and about 1.1 hours.
         *
         * @throws IllegalArgumentException if out of that range
         */
        public Builder tickDuration(long duration, TimeUnit unit) {
            long nanos = unit.toNanos(duration);
            if (nanos < 1_000 || nanos > (1L << 42)) {
                throw new IllegalArgumentException("tick must be between 1 us and 2^42 ns: " + duration + " " + unit);
            }
            this.tickShift = 64 - Long.numberOfLeadingZeros(nanos - 1);
            return this;
        }

        /**
         * The number of slots, rounded up to a power of two, between 64 and 2^22. One turn of the
         * wheel spans {@code slots x tick}; longer delays work too, at the cost of being passed
         * over once per turn when their slot comes due for another timer.
         *
         * @throws IllegalArgumentException if out of that range
         */
        public Builder slots(int slots) {
            if (slots < 64 || slots > (1 << 22)) {
                throw new IllegalArgumentException("slots must be between 64 and 4194304: " + slots);
            }
            this.slots = Integer.highestOneBit(slots - 1) << 1;
            return this;
        }

        /**
         * The most timers that may be pending at once; scheduling beyond it throws
         * {@link RejectedExecutionException}. No limit by default.
         *
         * @throws IllegalArgumentException if not positive
         */
        public Builder maxPendingTimers(int max) {
            if (max <= 0) {
                throw new IllegalArgumentException("maxPendingTimers must be positive: " + max);
            }
            this.maxPendingTimers = max;
            return this;
        }

        /**
         * How many timers the arrays hold before they first grow (they double when full, which
         * allocates; size this for the expected peak to keep the steady state allocation free).
         *
         * @throws IllegalArgumentException if negative
         */
        public Builder initialCapacity(int timers) {
            if (timers < 0) {
                throw new IllegalArgumentException("initialCapacity must not be negative: " + timers);
            }
            this.initialCapacity = timers;
            return this;
        }

        /** Builds a wheel whose time starts at the ticker's current reading. */
        public TimerWheel build() {
            return new TimerWheel(this);
        }
    }
}
