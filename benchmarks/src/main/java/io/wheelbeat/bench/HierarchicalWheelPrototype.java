package io.wheelbeat.bench;

import java.util.Arrays;
import java.util.function.LongConsumer;

/**
 * BENCHMARK-ONLY PROTOTYPE, not part of wheelbeat: a hierarchical timing wheel written only to
 * compare overflow schemes against our rounds-based {@code TimerWheel} in
 * {@link OverflowSchemeBenchmark} (the design record in {@code docs/benchmarks.md}).
 *
 * <p>Same layout as ours: timers are cells of parallel int-indexed arrays (deadline, links,
 * generation, plus the slot each cell sits in), every slot a circular doubly linked list with a
 * sentinel cell; ids are {@code generation << 32 | cell}, so stale ids are rejected as in ours.
 * Same tick (2^20 ns). Four levels, Caffeine/Kafka style, indexed by absolute tick bits:
 * <pre>
 *   level 0: 256 slots of 1 tick        (reach 268 ms)
 *   level 1:  64 slots of 2^8 ticks     (reach 17.2 s)
 *   level 2:  64 slots of 2^14 ticks    (reach 18.3 min)
 *   level 3:  64 slots of 2^20 ticks    (reach 19.5 h; later deadlines wait in its farthest slot)
 * </pre>
 * A timer goes to the lowest level whose reach covers its delay; when time enters a slot of a
 * higher level, that slot is cascaded: each of its timers is placed again, one level or more
 * lower. With {@code sameSlotShortcut}, a move whose new deadline maps to the slot the timer
 * already sits in only writes the deadline (as Linux's {@code mod_timer} and as ours do).
 *
 * <p>Left out because the comparison does not exercise them: callbacks (expiry reports the id to
 * one {@link LongConsumer}), limits, metrics, skipping of empty ticks (advance steps tick by tick;
 * a few ns per tick) and thread checks. Owner thread only.
 */
final class HierarchicalWheelPrototype implements PrototypeWheel {

    private static final int LEVELS = 4;
    private static final int[] SHIFT = {0, 8, 14, 20};
    private static final int[] MASK = {255, 63, 63, 63};
    private static final int[] BASE = {0, 256, 320, 384};
    private static final long[] REACH = {1L << 8, 1L << 14, 1L << 20, 1L << 26};
    private static final int SLOTS = 448;
    private static final int FREE = -1;
    private static final int NIL = -1;

    private final long originNanos;
    private final boolean sameSlotShortcut;
    private final LongConsumer onExpiry;

    private long[] deadlines;
    private int[] next;
    private int[] prev;
    private int[] generations;
    private int[] slotOf;
    private int freeHead = NIL;
    private int highWater = SLOTS;
    private int pending;
    private long currentTick;

    HierarchicalWheelPrototype(long originNanos, boolean sameSlotShortcut, LongConsumer onExpiry) {
        this.originNanos = originNanos;
        this.sameSlotShortcut = sameSlotShortcut;
        this.onExpiry = onExpiry;
        int cells = SLOTS + 1024;
        deadlines = new long[cells];
        next = new int[cells];
        prev = new int[cells];
        generations = new int[cells];
        slotOf = new int[cells];
        for (int slot = 0; slot < SLOTS; slot++) {
            next[slot] = slot;
            prev[slot] = slot;
        }
    }

    /** Schedules a timer at {@code deadlineNanos} (same clock as the origin); returns its id. */
    @Override
    public long scheduleAt(long deadlineNanos) {
        int cell = allocate();
        long deadline = relative(deadlineNanos);
        deadlines[cell] = deadline;
        place(cell, dueTick(deadline));
        pending++;
        return ((long) generations[cell] << 32) | cell;
    }

    /** Moves a pending timer; returns false if it is not pending. */
    @Override
    public boolean rescheduleAt(long id, long deadlineNanos) {
        int cell = pendingCell(id);
        if (cell < 0) {
            return false;
        }
        long deadline = relative(deadlineNanos);
        deadlines[cell] = deadline;
        long tick = dueTick(deadline);
        if (sameSlotShortcut && slotFor(tick) == slotOf[cell]) {
            return true;
        }
        unlink(cell);
        place(cell, tick);
        return true;
    }

    /** Cancels a pending timer; returns false if it is not pending. */
    boolean cancel(long id) {
        int cell = pendingCell(id);
        if (cell < 0) {
            return false;
        }
        unlink(cell);
        release(cell);
        return true;
    }

    boolean isPending(long id) {
        return pendingCell(id) >= 0;
    }

    int pending() {
        return pending;
    }

    /** Fires, in tick order, every timer due at or before {@code nowNanos}; returns how many. */
    @Override
    public int advance(long nowNanos) {
        long target = relative(nowNanos) >>> TICK_SHIFT;
        int fired = 0;
        while (currentTick < target) {
            if (pending == 0) {
                currentTick = target;
                break;
            }
            long tick = ++currentTick;
            for (int level = LEVELS - 1; level >= 1; level--) {
                if ((tick & ((1L << SHIFT[level]) - 1)) == 0) {
                    cascade(BASE[level] + (int) ((tick >>> SHIFT[level]) & MASK[level]));
                }
            }
            fired += expire(BASE[0] + (int) (tick & MASK[0]), tick);
        }
        return fired;
    }

    private void cascade(int slot) {
        int cell = next[slot];
        while (cell != slot) {
            int following = next[cell];
            unlink(cell);
            // A timer due in this very tick goes to the level-0 slot that is expired next.
            place(cell, Math.max(PrototypeWheel.tickOf(deadlines[cell]), currentTick));
            cell = following;
        }
    }

    private int expire(int slot, long tick) {
        int fired = 0;
        int cell = next[slot];
        while (cell != slot) {
            int following = next[cell];
            unlink(cell);
            if (PrototypeWheel.tickOf(deadlines[cell]) <= tick) {
                long id = ((long) generations[cell] << 32) | cell;
                release(cell);
                fired++;
                onExpiry.accept(id);
            } else {
                place(cell, dueTick(deadlines[cell]));
            }
            cell = following;
        }
        return fired;
    }

    /** The slot a timer due at {@code tick} belongs in now. */
    private int slotFor(long tick) {
        long delta = tick - currentTick;
        int level = 0;
        while (level < LEVELS - 1 && delta >= REACH[level]) {
            level++;
        }
        long indexTick = delta >= REACH[LEVELS - 1] ? currentTick + REACH[LEVELS - 1] - (1L << SHIFT[LEVELS - 1]) : tick;
        return BASE[level] + (int) ((indexTick >>> SHIFT[level]) & MASK[level]);
    }

    private void place(int cell, long tick) {
        int slot = slotFor(tick);
        int last = prev[slot];
        next[last] = cell;
        prev[cell] = last;
        next[cell] = slot;
        prev[slot] = cell;
        slotOf[cell] = slot;
    }

    private void unlink(int cell) {
        int p = prev[cell];
        int n = next[cell];
        next[p] = n;
        prev[n] = p;
    }

    private int allocate() {
        int cell = freeHead;
        if (cell != NIL) {
            freeHead = next[cell];
            return cell;
        }
        if (highWater == deadlines.length) {
            int grown = 2 * deadlines.length;
            deadlines = Arrays.copyOf(deadlines, grown);
            next = Arrays.copyOf(next, grown);
            prev = Arrays.copyOf(prev, grown);
            generations = Arrays.copyOf(generations, grown);
            slotOf = Arrays.copyOf(slotOf, grown);
        }
        return highWater++;
    }

    private void release(int cell) {
        generations[cell]++;
        prev[cell] = FREE;
        next[cell] = freeHead;
        freeHead = cell;
        pending--;
    }

    private int pendingCell(long id) {
        int cell = (int) id;
        if (cell < SLOTS || cell >= highWater || generations[cell] != (int) (id >>> 32) || prev[cell] == FREE) {
            return -1;
        }
        return cell;
    }

    private long relative(long nanos) {
        return Math.max(0, nanos - originNanos);
    }

    private long dueTick(long deadline) {
        return Math.max(PrototypeWheel.tickOf(deadline), currentTick + 1);
    }
}
