package io.wheelbeat.bench;

import java.util.Arrays;
import java.util.function.LongSupplier;

/**
 * Design experiment, not a product: the engine's level 0 with each slot an array of node
 * references instead of a linked list, so that firing a tick reads addresses in sequence and the
 * nodes' cache misses overlap. Same contract on this workload as {@link OursAdapter}'s wheel: 2^20 ns
 * ticks, 4096 slots, exact expiry, Netty's order (deadline, then scheduling order; a slot is sorted
 * only when an append put it out of order), a node that knows its slot and index (O(1) cancel by
 * swap-remove). Deadlines beyond the 4096 ticks wait in one overflow array, re-filed as the base
 * tick reaches them (the upper levels' role).
 */
final class ArraySlotsAdapter extends OwnerThreadAdapter {

    private static final int SLOTS = WHEEL_TICKS;
    private static final int OVERFLOW = SLOTS;
    private static final int TICK_SHIFT = Long.numberOfTrailingZeros(TICK_NANOS);

    private final LongSupplier clock;
    private final long origin;
    private final Node[] nodes;
    /** Per slot, then the overflow: node references; live from start to size. */
    private final Node[][] refs = new Node[SLOTS + 1][];

    private final int[] start = new int[SLOTS + 1];
    private final int[] size = new int[SLOTS + 1];
    private final boolean[] unordered = new boolean[SLOTS + 1];
    private long baseTick;
    private int nextOrder;
    private Node[] sorting = new Node[64];

    ArraySlotsAdapter(int capacity, boolean virtualTime) {
        super(capacity);
        this.clock = clock(virtualTime);
        this.origin = clock.getAsLong();
        for (int slot = 0; slot <= SLOTS; slot++) {
            refs[slot] = new Node[16];
        }
        nodes = new Node[capacity];
        for (int i = 0; i < capacity; i++) {
            nodes[i] = new Node();
        }
    }

    /** The experiment's node: slot and index instead of links; 32 B as the engine's. */
    private final class Node {
        int slot = -1;
        int index;
        long deadline;
        int order;

        void expire() {
            onFired();
        }
    }

    private static boolean firesBefore(Node a, Node b) {
        long difference = a.deadline - b.deadline;
        return difference < 0 || difference == 0 && a.order - b.order < 0;
    }

    @Override
    void schedule(int i, long delayNanos) {
        Node node = nodes[i];
        if (node.slot >= 0) {
            remove(node);
        }
        node.order = nextOrder++;
        node.deadline = clock.getAsLong() + delayNanos - origin;
        place(node);
    }

    private void place(Node node) {
        long tick = node.deadline >>> TICK_SHIFT;
        int slot = tick - baseTick >= SLOTS ? OVERFLOW : (int) Math.max(tick, baseTick) & (SLOTS - 1);
        Node[] row = refs[slot];
        int at = size[slot];
        if (at == row.length) {
            row = refs[slot] = Arrays.copyOf(row, 2 * at);
        }
        if (at > start[slot] && firesBefore(node, row[at - 1])) {
            unordered[slot] = true;
        }
        row[at] = node;
        size[slot] = at + 1;
        node.slot = slot;
        node.index = at;
    }

    private void remove(Node node) {
        int slot = node.slot;
        Node[] row = refs[slot];
        int last = --size[slot];
        if (node.index != last) {
            Node moved = row[last];
            row[node.index] = moved;
            moved.index = node.index;
            unordered[slot] = true;
        }
        row[last] = null;
        node.slot = -1;
    }

    @Override
    void cancel(int i) {
        Node node = nodes[i];
        if (node.slot >= 0) {
            remove(node);
        }
    }

    @Override
    int poll() {
        long now = clock.getAsLong() - origin;
        long nowTick = now >>> TICK_SHIFT;
        int fired = 0;
        while (true) {
            if ((baseTick & (SLOTS - 1)) == 0) {
                refileOverflow();
            }
            fired += fireSlot((int) baseTick & (SLOTS - 1), now);
            if (baseTick == nowTick) {
                return fired;
            }
            baseTick++;
        }
    }

    private void refileOverflow() {
        Node[] row = refs[OVERFLOW];
        int count = size[OVERFLOW];
        size[OVERFLOW] = 0;
        start[OVERFLOW] = 0;
        unordered[OVERFLOW] = false;
        for (int i = 0; i < count; i++) {
            Node node = row[i];
            row[i] = null;
            place(node);
        }
    }

    private int fireSlot(int slot, long now) {
        if (size[slot] == start[slot]) {
            return 0;
        }
        if (unordered[slot]) {
            sort(slot);
        }
        Node[] row = refs[slot];
        int i = start[slot];
        int end = size[slot];
        int fired = 0;
        for (; i < end; i++) {
            Node node = row[i];
            if (node.deadline > now) {
                break;
            }
            row[i] = null;
            node.slot = -1;
            fired++;
            node.expire();
        }
        if (i == end) {
            start[slot] = 0;
            size[slot] = 0;
        } else {
            start[slot] = i;
        }
        return fired;
    }

    private void sort(int slot) {
        int from = start[slot];
        int count = size[slot] - from;
        Node[] row = refs[slot];
        if (sorting.length < count) {
            sorting = new Node[Integer.highestOneBit(count) * 2];
        }
        System.arraycopy(row, from, sorting, 0, count);
        // Insertion sort would do for nearly ordered slots; a heap sort as the engine's for the rest.
        heapSort(sorting, count);
        for (int k = 0; k < count; k++) {
            Node node = sorting[k];
            sorting[k] = null;
            row[from + k] = node;
            node.index = from + k;
        }
        unordered[slot] = false;
    }

    private static void heapSort(Node[] a, int count) {
        for (int i = count / 2 - 1; i >= 0; i--) {
            siftDown(a, i, count);
        }
        for (int end = count - 1; end > 0; end--) {
            Node top = a[0];
            a[0] = a[end];
            a[end] = top;
            siftDown(a, 0, end);
        }
    }

    private static void siftDown(Node[] a, int i, int count) {
        int child;
        while ((child = 2 * i + 1) < count) {
            if (child + 1 < count && firesBefore(a[child], a[child + 1])) {
                child++;
            }
            if (!firesBefore(a[i], a[child])) {
                break;
            }
            Node swap = a[i];
            a[i] = a[child];
            a[child] = swap;
            i = child;
        }
    }

    @Override
    void advanceTime(long nanos) {
        advance(clock, nanos);
    }
}
