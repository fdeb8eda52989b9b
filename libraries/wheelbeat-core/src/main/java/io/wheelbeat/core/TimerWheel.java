package io.wheelbeat.core;

import java.util.Arrays;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.LongConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A hierarchical timing wheel of {@link TimerNode}s that, like Agrona's {@code DeadlineTimerWheel},
 * keeps no clock: deadlines and {@link #poll} take readings of the caller's clock. For code that
 * owns a thread and a clock; otherwise use {@link ExecutorDrivenWheel} or {@link WheelTimer}.
 * Arm, re-arm and cancel are O(1) and allocate nothing. A poll fires exactly the nodes due at its
 * reading, never early, by deadline then scheduling order (a re-arm is a new scheduling); readings
 * are compared by difference, so the clock may start anywhere and wrap. A node that throws is
 * logged and counted.
 *
 * <p>How: level 0 has one slot per tick; each level above has 64 slots, each a turn of the level
 * below. Slots are circular lists with a lower bound of their deadlines. A due upper slot is spliced
 * in O(1) onto a list that polls move down, a bounded number at a time. Nodes fire only from the
 * current tick's slot, sorted only if an append put it out of order; its due nodes leave it at once
 * and fire from the chain they form (sorted, from an array). A re-arm to a later tick only rewrites
 * the node; its old slot's walk moves it on.
 *
 * <p>Not thread-safe: one owner thread; the counts may be read elsewhere as racy snapshots.
 */
public final class TimerWheel {

    /** Longer delays saturate: no reading overflows. */
    static final long MAX_DELAY_NANOS = 1L << 62;

    private static final Logger log = LoggerFactory.getLogger(TimerWheel.class);
    private static final LongConsumer NO_LATENESS = lateness -> {};
    private static final int UPPER_SLOT_BITS = 6;
    private static final int UPPER_SLOTS = 1 << UPPER_SLOT_BITS;
    private static final long EMPTY = Long.MAX_VALUE;
    /** In a node's order: the node is in the batch being fired, taken out of every list. */
    private static final int BATCHED = Integer.MIN_VALUE;
    /** The most due level-0 slots whose lists are walked together before the first fires (8 pairs of locals). */
    private static final int LOOKAHEAD = 8;
    /** Nodes read ahead per list end: a crowded slot is read no further than a run could fire of it. */
    private static final int LOOKAHEAD_DEPTH = 2048;

    private static final class Sentinel extends TimerNode {
        final int slot;

        Sentinel(int slot) {
            this.slot = slot;
            next = this;
            prev = this;
        }

        @Override
        protected void expire() {
            throw new AssertionError("a sentinel never fires");
        }
    }

    private final long originNanos;
    private final int tickShift;
    private final int levelZeroSlots;
    private final int[] levelShift;
    private final int[] levelBase;
    private final int[] levelMask;
    /** The level of a delay in ticks, by the index of its highest set bit. */
    private final byte[] levelOfBit;

    private final int slotCount;
    /** Per slot, then the deferred list, then the moving list. */
    private final Sentinel[] heads;
    /** Nodes that callbacks made due during a poll (placed when it ends). */
    private final Sentinel deferred;
    /** Nodes of spliced upper slots, to move down; {@link #movingDue} bounds their deadlines. */
    private final Sentinel moving;

    private long movingDue = EMPTY;

    /** Per slot: a lower bound of the deadlines in it, or EMPTY. */
    private final long[] due;

    private final long[] occupiedZero;
    /** Bit w set while word w of occupiedZero is not zero. */
    private long occupiedZeroWords;
    /** Per level above 0: one bit per slot. */
    private final long[] occupiedUpper;
    /** Bit l set while level l holds a node. */
    private int occupiedLevels;

    private int pending;
    /** The scheduling order the next armed node gets. */
    private int nextOrder;
    /** The last poll's reading, or during a poll the latest deadline fired; at or before it, defer. */
    private long position;
    /** The tick that placement counts from; it never goes back. */
    private long baseTick;
    /** Per level-0 slot: set when an append may have broken firing order; only those are sorted. */
    private final long[] unorderedZero;
    /**
     * Per occupied level-0 slot: the deadline and order of its last append, or of its last node
     * after a sort. While the slot is in order no node of it fires after them, so an append
     * compares with these instead of loading the last node, which is rarely in cache.
     */
    private final long[] tailDeadline;

    private final int[] tailOrder;

    private boolean polling;
    private int budget;
    private long earliestDue;
    private int earliestUpper;
    private long earliestUpperDue;
    private TimerNode[] sortNodes = new TimerNode[32];
    private TimerNode[] spareNodes = new TimerNode[32];
    private long[] sortDeadlines = new long[32];
    private int[] sortOrders = new int[32];
    private long[] sortKeys = new long[32];
    private long[] spareKeys = new long[32];
    private final int[] radixCounts = new int[256];
    /** The lists {@link #loadAhead} reads, padded with {@link #nothing}. */
    private final Sentinel[] aheadHeads = new Sentinel[LOOKAHEAD];
    /** Always empty. */
    private final Sentinel nothing = new Sentinel(-1);
    /** The last tick whose slot {@link #loadAhead} walked. */
    private long loadedTick = -1;
    /** The batch being fired: {@code sortNodes[batchFrom, batchTo)}, its nodes flagged {@link #BATCHED}. */
    private int batchFrom;

    private int batchTo;
    /** The slot of the batch being fired, or -1; {@link #place} tells when it adds to it. */
    private int batchSlot = -1;

    private boolean addedToBatchSlot;
    /**
     * A batch in order is fired from the chain its links form, kept intact until then: these are
     * its last node and how many of its nodes have yet to fire. Anything that would change a
     * batched node's links first copies them into {@code sortNodes} ({@link #unchainBatch}).
     */
    private TimerNode chainLast;

    private int chainLeft;

    private long scheduledCount;
    private long cancelledCount;
    private long expiredCount;
    private long failedCount;
    private long movedCount;
    private int largestPoll;

    /**
     * A wheel that starts at {@code startNanos}.
     *
     * @param startNanos the clock's reading now: deadlines before it are due at once
     * @param tickNanos the span of one level-0 slot, a power of two nanoseconds
     * @param slots the number of level-0 slots, a power of two from 64 to 4096
     * @throws IllegalArgumentException if {@code tickNanos} or {@code slots} is not such a power of two
     */
    public TimerWheel(long startNanos, long tickNanos, int slots) {
        if (tickNanos <= 0 || Long.bitCount(tickNanos) != 1) {
            throw new IllegalArgumentException("tickNanos must be a power of two: " + tickNanos);
        }
        if (slots < 64 || slots > 4096 || Integer.bitCount(slots) != 1) {
            throw new IllegalArgumentException("slots must be a power of two from 64 to 4096: " + slots);
        }
        this.originNanos = startNanos;
        this.tickShift = Long.numberOfTrailingZeros(tickNanos);
        int levelZeroBits = Integer.numberOfTrailingZeros(slots);
        this.levelZeroSlots = slots;
        int tickBits = 63 - tickShift;
        int upperLevels = Math.max(1, (tickBits - levelZeroBits + UPPER_SLOT_BITS - 1) / UPPER_SLOT_BITS);
        int levels = 1 + upperLevels;
        this.levelShift = new int[levels];
        this.levelBase = new int[levels];
        this.levelMask = new int[levels];
        levelMask[0] = slots - 1;
        for (int level = 1; level < levels; level++) {
            levelShift[level] = levelZeroBits + (level - 1) * UPPER_SLOT_BITS;
            levelBase[level] = slots + (level - 1) * UPPER_SLOTS;
            levelMask[level] = UPPER_SLOTS - 1;
        }
        this.levelOfBit = new byte[64];
        for (int bit = 0; bit < 64; bit++) {
            levelOfBit[bit] = (byte)
                    (bit < levelZeroBits ? 0 : Math.min(levels - 1, 1 + (bit - levelZeroBits) / UPPER_SLOT_BITS));
        }
        this.slotCount = slots + upperLevels * UPPER_SLOTS;
        this.heads = new Sentinel[slotCount + 2];
        for (int slot = 0; slot < heads.length; slot++) {
            heads[slot] = new Sentinel(slot);
        }
        this.deferred = heads[slotCount];
        this.moving = heads[slotCount + 1];
        this.due = new long[slotCount];
        Arrays.fill(due, EMPTY);
        this.occupiedZero = new long[Math.max(1, slots >>> 6)];
        this.unorderedZero = new long[occupiedZero.length];
        this.tailDeadline = new long[slots];
        this.tailOrder = new int[slots];
        this.occupiedUpper = new long[levels];
    }

    /**
     * Arms or re-arms {@code node}; a deadline already passed fires at the next poll.
     *
     * @param node the timer, not pending in another wheel
     * @param deadlineNanos its deadline
     */
    public void scheduleAt(TimerNode node, long deadlineNanos) {
        if (nextOrder == Integer.MAX_VALUE) {
            renumber();
        }
        arm(node, deadlineNanos, nextOrder++);
    }

    /**
     * As {@link #scheduleAt}, but {@code node} keeps its place among equal deadlines from its last
     * arming on this wheel, as a Netty periodic task keeps its id.
     *
     * @param node the timer, not pending in another wheel
     * @param deadlineNanos its deadline
     */
    public void rescheduleAt(TimerNode node, long deadlineNanos) {
        arm(node, deadlineNanos, node.order & ~BATCHED);
    }

    private void arm(TimerNode node, long deadlineNanos, int order) {
        long deadline = relative(deadlineNanos);
        if (node.order < 0) {
            // Pending in the batch being fired, so in no list.
            unchainBatch();
            node.order = order;
            node.deadline = originNanos + deadline;
            placeOrDefer(node, deadline);
            return;
        }
        node.order = order;
        if (node.next == null) {
            node.deadline = originNanos + deadline;
            pending++;
            scheduledCount++;
            placeOrDefer(node, deadline);
            return;
        }
        long old = relative(node);
        node.deadline = originNanos + deadline;
        // Lazy: the old slot comes due by the old deadline and its walk moves the node on. Only to a
        // later tick (a slot's own-tick nodes stay in order); not for the current tick, nor for a
        // node that may sit among the deferred ones.
        long oldTick = old >>> tickShift;
        if ((deadline >>> tickShift) > oldTick && oldTick > baseTick && !(polling && old <= position)) {
            return;
        }
        unlink(node);
        placeOrDefer(node, deadline);
    }

    /**
     * Disarms a pending node.
     *
     * @param node the timer, not pending in another wheel
     * @return whether the node was pending
     */
    public boolean cancel(TimerNode node) {
        if (node.next == null) {
            return false;
        }
        if (node.order < 0) {
            unchainBatch();
            node.order &= ~BATCHED;
        } else {
            unlink(node);
        }
        release(node);
        cancelledCount++;
        return true;
    }

    /**
     * Fires every node due at {@code nowNanos}.
     *
     * @param nowNanos the clock's reading
     * @return the number of nodes that fired
     */
    public int poll(long nowNanos) {
        return poll(nowNanos, NO_LATENESS, Integer.MAX_VALUE);
    }

    /**
     * Fires the nodes due at {@code nowNanos}, doing at most {@code limit} units of work (nodes
     * fired or moved between slots); what the limit leaves stays due, in order, for the next poll.
     * A node a callback makes due waits for the next poll. Callbacks may arm, re-arm and cancel.
     *
     * @param nowNanos the clock's reading
     * @param lateness told how late each node fires, in ns, before it expires
     * @param limit the most units of work, at least 1
     * @return the number of nodes that fired
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
        budget = limit;
        int fired = 0;
        try {
            boolean stopped = false;
            int slot;
            while (true) {
                if (moving.next != moving) {
                    if (budget == 0) {
                        stopped = true;
                        break;
                    }
                    moveSome();
                    continue;
                }
                if ((slot = earliestSlot()) < 0 || earliestDue > now) {
                    break;
                }
                if (budget == 0) {
                    stopped = true; // the base tick stays on the rest
                    break;
                }
                moveBase(earliestDue >>> tickShift);
                int currentSlot = (int) baseTick & (levelZeroSlots - 1);
                if (slot != currentSlot) {
                    splice(slot);
                } else if (earliestUpper >= 0 && (earliestUpperDue >>> tickShift) <= baseTick) {
                    // It may hold nodes of this tick: they join the slot before any fires.
                    splice(earliestUpper);
                } else {
                    fired += fireCurrentTick(now, lateness);
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
            int work = limit - budget;
            if (work > largestPoll) {
                largestPoll = work;
            }
        }
        return fired;
    }

    /**
     * {@return the deadline of a pending node}
     *
     * @param node a node pending in this wheel
     * @throws IllegalStateException if the node is not pending
     */
    public long deadlineNanos(TimerNode node) {
        if (node.next == null) {
            throw new IllegalStateException("not pending: " + node);
        }
        return node.deadline;
    }

    /**
     * Returns when to poll next: the earliest deadline, or earlier (after a cancel or a re-arm to a
     * later deadline), never later. A reading already passed means poll now.
     *
     * @return a reading of the clock the wheel is polled with
     * @throws IllegalStateException if no node is pending, or if called from a callback
     */
    public long nextDeadlineNanos() {
        if (pending == 0 || polling) {
            throw new IllegalStateException(pending == 0 ? "no timer is pending" : "called from a timer callback");
        }
        earliestSlot();
        if (moving.next != moving) {
            return originNanos + Math.min(earliestDue, Math.min(movingDue, position));
        }
        return originNanos + earliestDue;
    }

    /** {@return the tick length in nanoseconds, a power of two} */
    public long tickNanos() {
        return 1L << tickShift;
    }

    /** {@return the number of level-0 slots (one per tick), a power of two} */
    public int slots() {
        return levelZeroSlots;
    }

    /** {@return the number of nodes armed and neither fired nor cancelled} */
    public int pendingTimers() {
        return pending;
    }

    /** {@return how many nodes were armed while not pending (re-arms not counted)} */
    public long scheduledCount() {
        return scheduledCount;
    }

    /** {@return how many pending nodes were cancelled} */
    public long cancelledCount() {
        return cancelledCount;
    }

    /** {@return how many nodes fired} */
    public long expiredCount() {
        return expiredCount;
    }

    /** {@return how many {@link TimerNode#expire()} calls threw} */
    public long failedCount() {
        return failedCount;
    }

    /**
     * {@return how many times a node was moved between slots (down a level, or after a re-arm)}
     */
    public long movedCount() {
        return movedCount;
    }

    /** {@return the most work one poll did so far: nodes fired plus nodes moved} */
    public int largestPoll() {
        return largestPoll;
    }

    @Override
    public String toString() {
        return "TimerWheel(" + pending + " pending, tick " + tickNanos() + " ns, " + levelZeroSlots + " level-0 slots, "
                + levelShift.length + " levels)";
    }

    /**
     * Every non-empty list and its nodes, for test failures. Owner thread only.
     *
     * @return the state, one line per list
     */
    public String dump() {
        StringBuilder out = new StringBuilder(toString())
                .append(": position ")
                .append(position)
                .append(", base tick ")
                .append(baseTick)
                .append('\n');
        for (Sentinel head : heads) {
            if (head.next == head) {
                continue;
            }
            if (head == deferred) {
                out.append("  deferred:");
            } else if (head == moving) {
                out.append("  moving, due ").append(movingDue).append(':');
            } else {
                int level = levelOf(head.slot);
                out.append("  level ")
                        .append(level)
                        .append(" slot ")
                        .append(head.slot - levelBase[level])
                        .append(" due ")
                        .append(due[head.slot])
                        .append(level == 0 && unordered(head.slot) ? " unordered:" : ":");
            }
            int shown = 0;
            for (TimerNode node = head.next; node != head && shown < 64; node = node.next, shown++) {
                out.append(' ').append(relative(node)).append('#').append(node.order);
            }
            out.append(shown == 64 ? " ...\n" : "\n");
        }
        return out.toString();
    }

    /**
     * Passes every pending node to {@code action}, which must not arm or cancel. Owner thread only.
     *
     * @param action told each pending node
     */
    public void forEachPending(Consumer<? super TimerNode> action) {
        for (Sentinel head : heads) {
            for (TimerNode node = head.next; node != head; node = node.next) {
                action.accept(node);
            }
        }
        unchainBatch();
        for (int i = batchFrom; i < batchTo; i++) {
            if (sortNodes[i].order < 0) {
                action.accept(sortNodes[i]);
            }
        }
    }

    /**
     * {@code nowNanos + delayNanos}, the delay clamped to {@code [0, 2^62]} ns.
     *
     * @param nowNanos a clock reading
     * @param delayNanos a delay
     * @return the deadline
     */
    public static long deadlineAfter(long nowNanos, long delayNanos) {
        return nowNanos + Math.min(Math.max(delayNanos, 0), MAX_DELAY_NANOS);
    }

    private void placeOrDefer(TimerNode node, long deadline) {
        if (polling && deadline <= position) {
            appendTo(deferred, node);
        } else {
            place(node, deadline);
        }
    }

    private void place(TimerNode node, long deadline) {
        long tick = deadline >>> tickShift;
        long delta = tick - baseTick;
        int slot;
        if (delta < levelZeroSlots) {
            slot = (int) (delta <= 0 ? baseTick : tick) & (levelZeroSlots - 1);
        } else {
            int level = levelOfBit[63 - Long.numberOfLeadingZeros(delta)];
            slot = levelBase[level] + ((int) (tick >>> levelShift[level]) & (UPPER_SLOTS - 1));
        }
        if (slot == batchSlot) {
            addedToBatchSlot = true;
        }
        Sentinel head = heads[slot];
        if (slot < levelZeroSlots) {
            int order = node.order;
            if (head.prev == head) {
                markOccupied(slot);
            } else {
                long after = deadline - tailDeadline[slot];
                // Without a branch: when deadlines are jittered it would be mispredicted half the time.
                boolean before = after < 0 | after == 0 & order - tailOrder[slot] < 0;
                unorderedZero[slot >>> 6] |= (before ? 1L : 0L) << slot;
            }
            tailDeadline[slot] = deadline;
            tailOrder[slot] = order;
        } else if (head.prev == head) {
            markOccupied(slot);
        }
        appendTo(head, node);
        if (deadline < due[slot]) {
            due[slot] = deadline;
        }
    }

    private static boolean firesBefore(TimerNode node, TimerNode other) {
        long difference = node.deadline - other.deadline;
        return difference < 0 || difference == 0 && node.order - other.order < 0;
    }

    /** No slot bookkeeping. */
    private static void appendTo(TimerNode head, TimerNode node) {
        TimerNode last = head.prev;
        last.next = node;
        node.next = head;
        node.prev = last;
        head.prev = node;
    }

    private void unlink(TimerNode node) {
        TimerNode next = node.next;
        TimerNode prev = node.prev;
        prev.next = next;
        next.prev = prev;
        if (prev == next && prev instanceof Sentinel head && head.slot < slotCount) {
            markEmpty(head.slot);
        }
    }

    private void release(TimerNode node) {
        node.next = null;
        node.prev = null;
        pending--;
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
            unorderedZero[word] &= ~(1L << slot);
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

    private boolean unordered(int slot) {
        return (unorderedZero[slot >>> 6] & (1L << slot)) != 0;
    }

    private int levelOf(int slot) {
        return slot < levelZeroSlots ? 0 : 1 + ((slot - levelZeroSlots) >>> UPPER_SLOT_BITS);
    }

    private void moveBase(long tick) {
        if (tick > baseTick) {
            baseTick = tick;
        }
    }

    /**
     * Returns the occupied slot with the smallest lower bound, or -1 (also for the upper levels, in
     * {@link #earliestUpper}). Per level only the base tick's slot and the next occupied one can
     * hold it: every node of a level lies within one turn of the base tick.
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
                next = others == 0
                        ? -1
                        : (current + 1 + Long.numberOfTrailingZeros(Long.rotateRight(others, current + 1)))
                                & (UPPER_SLOTS - 1);
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

    /** Returns the next occupied level-0 slot after {@code slot}, wrapping around, or -1. */
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

    private void splice(int slot) {
        Sentinel head = heads[slot];
        movingDue = moving.next == moving ? due[slot] : Math.min(movingDue, due[slot]);
        TimerNode first = head.next;
        TimerNode last = head.prev;
        TimerNode tail = moving.prev;
        tail.next = first;
        first.prev = tail;
        last.next = moving;
        moving.prev = last;
        head.next = head;
        head.prev = head;
        markEmpty(slot);
    }

    private void moveSome() {
        TimerNode node;
        while (budget > 0 && (node = moving.next) != moving) {
            TimerNode next = node.next;
            moving.next = next;
            next.prev = moving;
            place(node, relative(node));
            budget--;
            movedCount++;
        }
    }

    /**
     * Fires the current tick's due nodes within the budget. They are taken out of the slot at
     * once and fired from the chain they form (or, sorted, from an array): taking out one by one
     * would write each next node's link, and storing them in an array writes a reference each;
     * under G1 a reference store to a clean card costs a fence. Stops when a callback adds to the
     * slot (the caller's loop sorts it again).
     */
    private int fireCurrentTick(long now, LongConsumer lateness) {
        int slot = (int) baseTick & (levelZeroSlots - 1);
        Sentinel head = heads[slot];
        if (baseTick > loadedTick) {
            loadAhead(slot, now);
        }
        int count = 0;
        if (unordered(slot)) {
            int gathered = gatherSorted(slot);
            while (count < gathered && count < budget && sortDeadlines[count] <= now) {
                sortNodes[count++].order |= BATCHED;
            }
            relink(slot, count, gathered);
            if (count < gathered && sortDeadlines[count] > now) {
                due[slot] = sortDeadlines[count];
            }
            return fireBatch(slot, null, count, now, lateness);
        }
        TimerNode node = head.next;
        while (node != head && count < budget) {
            TimerNode next = node.next;
            long deadline = relative(node);
            if ((deadline >>> tickShift) > baseTick) {
                unlink(node);
                place(node, deadline);
                movedCount++;
                budget--;
            } else if (deadline > now) {
                due[slot] = deadline;
                break;
            } else {
                node.order |= BATCHED;
                count++;
            }
            node = next;
        }
        if (count == 0) {
            return 0;
        }
        TimerNode first = head.next;
        chainLast = node.prev;
        chainLeft = count;
        head.next = node;
        node.prev = head;
        if (node == head) {
            markEmpty(slot);
        }
        return fireBatch(slot, first, 0, now, lateness);
    }

    /** Fires the {@link #chainLeft} nodes linked from {@code first} on, then {@code sortNodes[0, gathered)}. */
    private int fireBatch(int slot, TimerNode first, int gathered, long now, LongConsumer lateness) {
        batchFrom = 0;
        batchTo = gathered;
        batchSlot = slot;
        addedToBatchSlot = false;
        int fired = 0;
        TimerNode next = first;
        while (true) {
            TimerNode node;
            if (chainLeft > 0) {
                node = next;
                next = node.next;
                chainLeft--;
            } else if (batchFrom < batchTo) {
                node = sortNodes[batchFrom];
                sortNodes[batchFrom++] = null;
            } else {
                break;
            }
            if (node.order >= 0) {
                continue; // a callback cancelled or re-armed it
            }
            node.order &= ~BATCHED;
            long deadline = relative(node);
            release(node);
            budget--;
            fired++;
            expiredCount++;
            if (deadline > position) {
                position = deadline;
            }
            try {
                lateness.accept(now - deadline);
                node.expire();
            } catch (Throwable t) {
                failedCount++;
                log.warn("timer {} threw; the wheel goes on", node, t);
            }
            if (addedToBatchSlot) {
                putBackBatch(slot);
            }
        }
        batchFrom = 0;
        batchTo = 0;
        batchSlot = -1;
        chainLast = null;
        return fired;
    }

    /** Copies the batch's unfired chained nodes into {@code sortNodes}, from its last node back. */
    private void unchainBatch() {
        int left = chainLeft;
        if (left == 0) {
            return;
        }
        while (left > sortNodes.length) {
            growSortArrays();
        }
        TimerNode node = chainLast;
        for (int i = left - 1; i >= 0; i--) {
            sortNodes[i] = node;
            node = node.prev;
        }
        batchFrom = 0;
        batchTo = left;
        chainLeft = 0;
        chainLast = null;
    }

    /** Returns the unfired rest of the batch to its slot, to be sorted with what a callback added. */
    private void putBackBatch(int slot) {
        unchainBatch();
        batchSlot = -1;
        while (batchFrom < batchTo) {
            TimerNode node = sortNodes[batchFrom];
            sortNodes[batchFrom++] = null;
            if (node.order < 0) {
                node.order &= ~BATCHED;
                node.next = null;
                place(node, relative(node));
            }
        }
        unorderedZero[slot >>> 6] |= 1L << slot;
    }

    private void placeDeferred() {
        TimerNode node;
        while ((node = deferred.next) != deferred) {
            unlink(node);
            place(node, relative(node));
        }
    }

    /** Sorts the current tick's slot, moving out nodes re-armed to a later tick. */
    private void sortCurrentSlot() {
        int slot = (int) baseTick & (levelZeroSlots - 1);
        if (unordered(slot)) {
            relink(slot, 0, gatherSorted(slot));
        }
    }

    /**
     * Gathers the current tick's nodes into {@code sortNodes} in firing order, moving out nodes
     * re-armed to a later tick; they stay linked.
     */
    private int gatherSorted(int slot) {
        Sentinel head = heads[slot];
        int count = 0;
        long minDeadline = EMPTY;
        long maxDeadline = 0;
        int minOrder = Integer.MAX_VALUE;
        int maxOrder = 0;
        for (TimerNode node = head.next, next; node != head; node = next) {
            next = node.next;
            long deadline = relative(node);
            if ((deadline >>> tickShift) > baseTick) {
                unlink(node);
                place(node, deadline);
                movedCount++;
                if (budget > 0) {
                    budget--;
                }
                continue;
            }
            if (count == sortNodes.length) {
                growSortArrays();
            }
            int order = node.order;
            sortNodes[count] = node;
            sortDeadlines[count] = deadline;
            sortOrders[count++] = order;
            minDeadline = Math.min(minDeadline, deadline);
            maxDeadline = Math.max(maxDeadline, deadline);
            minOrder = Math.min(minOrder, order);
            maxOrder = Math.max(maxOrder, order);
        }
        if (count > 1 && !sortByKeys(count, minDeadline, maxDeadline, minOrder, maxOrder)) {
            heapSort(sortNodes, count);
            for (int i = 0; i < count; i++) {
                sortDeadlines[i] = relative(sortNodes[i]);
            }
        }
        return count;
    }

    /** Makes {@code sortNodes[from, to)} the slot's list, in that order, and clears the rest of the array. */
    private void relink(int slot, int from, int to) {
        Sentinel head = heads[slot];
        TimerNode prev = head;
        for (int i = from; i < to; i++) {
            TimerNode node = sortNodes[i];
            sortNodes[i] = null;
            prev.next = node;
            node.prev = prev;
            prev = node;
        }
        prev.next = head;
        head.prev = prev;
        if (prev == head) {
            markEmpty(slot);
        } else {
            unorderedZero[slot >>> 6] &= ~(1L << slot);
            due[slot] = relative(head.next);
            tailDeadline[slot] = relative(prev);
            tailOrder[slot] = prev.order;
        }
    }

    private void growSortArrays() {
        int length = 2 * sortNodes.length;
        sortNodes = Arrays.copyOf(sortNodes, length);
        spareNodes = new TimerNode[length];
        sortDeadlines = Arrays.copyOf(sortDeadlines, length);
        sortOrders = Arrays.copyOf(sortOrders, length);
        sortKeys = new long[length];
        spareKeys = new long[length];
    }

    /**
     * Sorts the gathered nodes by keys that pack deadline, order and index, each less its
     * minimum, if they fit 63 bits: the sort then reads no node. Keys already in order are left.
     */
    private boolean sortByKeys(int count, long minDeadline, long maxDeadline, int minOrder, int maxOrder) {
        int indexBits = 32 - Integer.numberOfLeadingZeros(count - 1);
        int orderBits = 32 - Integer.numberOfLeadingZeros(maxOrder - minOrder);
        int bits = 64 - Long.numberOfLeadingZeros(maxDeadline - minDeadline) + orderBits + indexBits;
        if (bits > 63) {
            return false;
        }
        long[] keys = sortKeys;
        long descents = 0;
        long previous = 0;
        for (int i = 0; i < count; i++) {
            long key = (sortDeadlines[i] - minDeadline) << (orderBits + indexBits)
                    | (long) (sortOrders[i] - minOrder) << indexBits
                    | i;
            descents |= key - previous;
            previous = key;
            keys[i] = key;
        }
        if (descents >= 0) {
            return true;
        }
        if (count <= 32) {
            insertionSort(keys, count);
        } else if (bits <= 8 || !bucketSort(count, bits - 8)) {
            radixSort(count, bits);
        }
        keys = sortKeys;
        TimerNode[] nodes = spareNodes;
        long[] deadlines = spareKeys;
        for (int i = 0; i < count; i++) {
            int index = (int) keys[i] & ((1 << indexBits) - 1);
            nodes[i] = sortNodes[index];
            deadlines[i] = sortDeadlines[index];
        }
        spareNodes = sortNodes;
        sortNodes = nodes;
        spareKeys = sortDeadlines;
        sortDeadlines = deadlines;
        Arrays.fill(spareNodes, 0, count, null);
        return true;
    }

    /**
     * Spreads the keys over 256 buckets by their top byte, then sorts by insertion, which moves
     * keys only within their bucket; declines if a bucket would hold more than 32 keys.
     */
    private boolean bucketSort(int count, int shift) {
        int[] counts = radixCounts;
        Arrays.fill(counts, 0);
        long[] from = sortKeys;
        int largest = 0;
        for (int i = 0; i < count; i++) {
            largest = Math.max(largest, ++counts[(int) (from[i] >>> shift) & 0xFF]);
        }
        if (largest > 32) {
            return false;
        }
        for (int digit = 0, sum = 0; digit < 256; digit++) {
            int c = counts[digit];
            counts[digit] = sum;
            sum += c;
        }
        long[] to = spareKeys;
        for (int i = 0; i < count; i++) {
            long key = from[i];
            to[counts[(int) (key >>> shift) & 0xFF]++] = key;
        }
        sortKeys = to;
        spareKeys = from;
        insertionSort(to, count);
        return true;
    }

    private static void insertionSort(long[] keys, int count) {
        for (int i = 1; i < count; i++) {
            long key = keys[i];
            int j = i;
            for (; j > 0 && keys[j - 1] > key; j--) {
                keys[j] = keys[j - 1];
            }
            keys[j] = key;
        }
    }

    /** Least significant byte first: no worst case, no recursion. */
    private void radixSort(int count, int bits) {
        int[] counts = radixCounts;
        for (int shift = 0; shift < bits; shift += 8) {
            long[] from = sortKeys;
            long[] to = spareKeys;
            Arrays.fill(counts, 0);
            for (int i = 0; i < count; i++) {
                counts[(int) (from[i] >>> shift) & 0xFF]++;
            }
            for (int digit = 0, sum = 0; digit < 256; digit++) {
                int c = counts[digit];
                counts[digit] = sum;
                sum += c;
            }
            for (int i = 0; i < count; i++) {
                long key = from[i];
                to[counts[(int) (key >>> shift) & 0xFF]++] = key;
            }
            sortKeys = to;
            spareKeys = from;
        }
    }

    /**
     * Reads the lists of the current slot and of the next due level-0 slots, each from both ends
     * at once, meeting in the middle, so that the walks over them that follow find them in
     * cache: independent chains of loads let the CPU overlap their cache misses, where one walk
     * takes each miss after the last. The chain ends are locals: stored in arrays they cost G1's
     * write barrier per step (a fence once the array is old), and the longer loop body left
     * fewer loads in flight.
     */
    private void loadAhead(int slot, long now) {
        int lists = 0;
        long tick = baseTick;
        for (int at = slot; lists < LOOKAHEAD; ) {
            aheadHeads[lists++] = heads[at];
            loadedTick = tick;
            int next = nextOccupiedZero(at);
            if (next < 0 || due[next] > now) {
                break;
            }
            tick += (next - at) & (levelZeroSlots - 1);
            if (tick - baseTick >= levelZeroSlots) {
                break;
            }
            at = next;
        }
        Arrays.fill(aheadHeads, lists, LOOKAHEAD, nothing);
        TimerNode f0 = aheadHeads[0].next, b0 = aheadHeads[0].prev;
        TimerNode f1 = aheadHeads[1].next, b1 = aheadHeads[1].prev;
        TimerNode f2 = aheadHeads[2].next, b2 = aheadHeads[2].prev;
        TimerNode f3 = aheadHeads[3].next, b3 = aheadHeads[3].prev;
        TimerNode f4 = aheadHeads[4].next, b4 = aheadHeads[4].prev;
        TimerNode f5 = aheadHeads[5].next, b5 = aheadHeads[5].prev;
        TimerNode f6 = aheadHeads[6].next, b6 = aheadHeads[6].prev;
        TimerNode f7 = aheadHeads[7].next, b7 = aheadHeads[7].prev;
        for (int depth = 0, walking = -1; walking != 0 && depth < LOOKAHEAD_DEPTH; depth++) {
            walking = 0;
            if (f0 != b0 && (f0 = f0.next) != b0) {
                b0 = b0.prev;
                walking++;
            }
            if (f1 != b1 && (f1 = f1.next) != b1) {
                b1 = b1.prev;
                walking++;
            }
            if (f2 != b2 && (f2 = f2.next) != b2) {
                b2 = b2.prev;
                walking++;
            }
            if (f3 != b3 && (f3 = f3.next) != b3) {
                b3 = b3.prev;
                walking++;
            }
            if (f4 != b4 && (f4 = f4.next) != b4) {
                b4 = b4.prev;
                walking++;
            }
            if (f5 != b5 && (f5 = f5.next) != b5) {
                b5 = b5.prev;
                walking++;
            }
            if (f6 != b6 && (f6 = f6.next) != b6) {
                b6 = b6.prev;
                walking++;
            }
            if (f7 != b7 && (f7 = f7.next) != b7) {
                b7 = b7.prev;
                walking++;
            }
        }
    }

    /** In place, without allocating. */
    private static void heapSort(TimerNode[] nodes, int count) {
        for (int i = count / 2 - 1; i >= 0; i--) {
            siftDown(nodes, i, count);
        }
        for (int end = count - 1; end > 0; end--) {
            TimerNode top = nodes[0];
            nodes[0] = nodes[end];
            nodes[end] = top;
            siftDown(nodes, 0, end);
        }
    }

    private static void siftDown(TimerNode[] nodes, int i, int count) {
        int child;
        while ((child = 2 * i + 1) < count) {
            if (child + 1 < count && firesBefore(nodes[child], nodes[child + 1])) {
                child++;
            }
            if (!firesBefore(nodes[i], nodes[child])) {
                break;
            }
            TimerNode swap = nodes[i];
            nodes[i] = nodes[child];
            nodes[child] = swap;
            i = child;
        }
    }

    /** Nanoseconds since the start; readings before the start count as the start. */
    private long relative(long nanos) {
        return Math.max(0, nanos - originNanos);
    }

    /** A placed node's deadline, in nanoseconds since the start. */
    private long relative(TimerNode node) {
        return node.deadline - originNanos;
    }

    /**
     * Gives the pending nodes the orders 0, 1, ... in their present order, so that orders stay
     * non-negative ints whose difference cannot overflow; runs once per 2^31 schedulings.
     */
    private void renumber() {
        unchainBatch();
        long[] keys = new long[pending];
        TimerNode[] nodes = new TimerNode[pending];
        int count = 0;
        for (Sentinel head : heads) {
            for (TimerNode node = head.next; node != head; node = node.next) {
                keys[count] = (long) node.order << 32 | count;
                nodes[count++] = node;
            }
        }
        for (int i = batchFrom; i < batchTo; i++) {
            if (sortNodes[i].order < 0) {
                keys[count] = (long) (sortNodes[i].order & ~BATCHED) << 32 | count;
                nodes[count++] = sortNodes[i];
            }
        }
        Arrays.sort(keys, 0, count);
        for (int rank = 0; rank < count; rank++) {
            TimerNode node = nodes[(int) keys[rank]];
            node.order = rank | node.order & BATCHED;
        }
        nextOrder = count;
    }

    /** For tests: where the next scheduling's order starts, to reach a renumbering quickly. */
    void startOrdersAt(int order) {
        nextOrder = order;
    }
}
