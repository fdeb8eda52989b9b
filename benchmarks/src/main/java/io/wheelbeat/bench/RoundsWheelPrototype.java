package io.wheelbeat.bench;

import java.util.Arrays;
import java.util.function.LongConsumer;

/**
 * BENCHMARK-ONLY PROTOTYPE, not part of wheelbeat: the rounds-based wheel that was wheelbeat's
 * {@code TimerWheel} until TimerWheel v2 (issue 11), kept only so that {@link OverflowSchemeBenchmark}
 * can measure the overflow schemes against each other in one run (the design record in
 * {@code docs/benchmarks.md}).
 *
 * <p>One level of {@code slots} slots of one tick (2^20 ns); a timer beyond one turn stays in the
 * slot of its deadline tick and is skipped until its turn (rounds), so nothing ever cascades.
 * Each slot is a circular list of cells in one interleaved {@code long[]} (deadline, links,
 * generation and slot) with a lower bound of the deadline ticks in it; a bitmap marks occupied
 * slots. Moving a deadline later only writes it when the slot is walked no later than the new
 * deadline. Expiry walks a due slot twice: due cells to an expiring list, then fired one by one.
 * Timers fire on the first tick boundary at or after their deadline (tick-quantized).
 *
 * <p>Left out: callbacks (expiry reports the id to one {@link LongConsumer}), limits, metrics,
 * wake-up hooks. Owner thread only.
 */
final class RoundsWheelPrototype implements PrototypeWheel {

    private static final int STRIDE = 3;
    private static final int DEADLINE = 0;
    private static final int LINKS = 1;
    private static final int META = 2;
    private static final int FREE = -1;
    private static final int NIL = -1;
    private static final long LOW = 0xFFFF_FFFFL;
    private static final long NO_TICK = Long.MAX_VALUE;

    private final long originNanos;
    private final int slotCount;
    private final int slotMask;
    private final int expiring;
    private final int firstTimerCell;
    private final long[] slotEarliest;
    private final long[] occupied;
    private final LongConsumer onExpiry;

    private long[] cells;
    private int freeHead = NIL;
    private int highWater;
    private long currentTick;

    RoundsWheelPrototype(long originNanos, int slots, LongConsumer onExpiry) {
        this.originNanos = originNanos;
        this.slotCount = slots;
        this.slotMask = slots - 1;
        this.expiring = slots;
        this.firstTimerCell = slots + 1;
        this.onExpiry = onExpiry;
        this.slotEarliest = new long[slots];
        Arrays.fill(slotEarliest, NO_TICK);
        this.occupied = new long[Math.max(1, slots >>> 6)];
        this.cells = new long[(firstTimerCell + 1024) * STRIDE];
        for (int sentinel = 0; sentinel <= expiring; sentinel++) {
            setLinks(sentinel, sentinel, sentinel);
        }
        this.highWater = firstTimerCell;
    }

    @Override
    public long scheduleAt(long deadlineNanos) {
        int cell = allocate();
        long deadline = relative(deadlineNanos);
        cells[cell * STRIDE + DEADLINE] = deadline;
        place(cell, dueTick(deadline));
        return ((long) generationOf(cell) << 32) | cell;
    }

    @Override
    public boolean rescheduleAt(long id, long deadlineNanos) {
        int cell = pendingCell(id);
        if (cell < 0) {
            return false;
        }
        long deadline = relative(deadlineNanos);
        long tick = dueTick(deadline);
        cells[cell * STRIDE + DEADLINE] = deadline;
        int slot = slotOf(cell);
        if (slot != expiring) {
            if (tick >= nextVisit(slot)) {
                return true;
            }
            if (((tick ^ slot) & slotMask) == 0) {
                noteTick(slot, tick);
                return true;
            }
        }
        unlink(cell);
        place(cell, tick);
        return true;
    }

    /** Fires, in tick order, every timer due at or before the tick of {@code nowNanos}. */
    @Override
    public int advance(long nowNanos) {
        long targetTick = relative(nowNanos) >>> TICK_SHIFT;
        if (targetTick <= currentTick) {
            return 0;
        }
        int fired = 0;
        long tick;
        while ((tick = nextDueTick(currentTick + 1, targetTick)) != NO_TICK) {
            currentTick = tick;
            fired += expireSlot((int) tick & slotMask, tick);
        }
        currentTick = targetTick;
        return fired;
    }

    private long nextVisit(int slot) {
        long from = Math.max(currentTick + 1, slotEarliest[slot]);
        return from + ((slot - from) & slotMask);
    }

    private void place(int cell, long tick) {
        int slot = (int) tick & slotMask;
        appendTo(slot, cell);
        occupied[slot >>> 6] |= 1L << slot;
        noteTick(slot, tick);
    }

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
    }

    private void unlink(int cell) {
        long links = cells[cell * STRIDE + LINKS];
        int n = (int) (links >>> 32);
        int p = (int) links;
        setNext(p, n);
        setPrev(n, p);
        if (p == n && p < slotCount) {
            occupied[p >>> 6] &= ~(1L << p);
            slotEarliest[p] = NO_TICK;
        }
    }

    private int expireSlot(int slot, long tick) {
        long earliest = NO_TICK;
        int cell = nextOf(slot);
        while (cell != slot) {
            int following = nextOf(cell);
            long due = PrototypeWheel.tickOf(cells[cell * STRIDE + DEADLINE]);
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
        int fired = 0;
        while ((cell = nextOf(expiring)) != expiring) {
            unlink(cell);
            long id = ((long) generationOf(cell) << 32) | cell;
            release(cell);
            fired++;
            onExpiry.accept(id);
        }
        return fired;
    }

    private long nextDueTick(long from, long limit) {
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

    private int nextOccupiedSlot(int slot) {
        int words = occupied.length;
        int word = slot >>> 6;
        long bits = occupied[word] & (-1L << slot);
        for (int scanned = 0; scanned <= words; scanned++) {
            if (bits != 0) {
                return ((word << 6) + Long.numberOfTrailingZeros(bits)) & slotMask;
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
        if (highWater * STRIDE == cells.length) {
            cells = Arrays.copyOf(cells, 2 * cells.length);
        }
        return highWater++;
    }

    private void release(int cell) {
        int meta = cell * STRIDE + META;
        cells[meta] = (((cells[meta] >>> 32) + 1) << 32) | (FREE & LOW);
        setNext(cell, freeHead);
        freeHead = cell;
    }

    private int pendingCell(long id) {
        int cell = (int) id;
        if (cell < firstTimerCell || cell >= highWater) {
            return -1;
        }
        long meta = cells[cell * STRIDE + META];
        return (int) (meta >>> 32) != (int) (id >>> 32) || (int) meta == FREE ? -1 : cell;
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

    private long relative(long nanos) {
        return Math.max(0, nanos - originNanos);
    }

    private long dueTick(long deadline) {
        return Math.max(PrototypeWheel.tickOf(deadline), currentTick + 1);
    }
}
