package io.wheelbeat.loadtest;

import java.util.Arrays;

/**
 * Members {@code 0} to {@code members - 1} filed in first-in first-out buckets, each member in
 * at most one bucket at a time, linked through one {@code int} per member. Its memory is fixed
 * when it is made, so filing never allocates: the heap read during a ramp does not depend on
 * how the members happened to crowd into buckets.
 *
 * <p>Not thread-safe: one owner thread.
 */
final class IndexBuckets {

    /** Ends a chain; an empty bucket's head. */
    static final int NONE = -1;

    private final int[] next;
    private final int[] head;
    private final int[] tail;

    IndexBuckets(int buckets, int members) {
        this.next = new int[members];
        this.head = new int[buckets];
        this.tail = new int[buckets];
        Arrays.fill(head, NONE);
    }

    /** Files {@code member}, in no bucket now, last in {@code bucket}. */
    void add(int bucket, int member) {
        next[member] = NONE;
        if (head[bucket] == NONE) {
            head[bucket] = member;
        } else {
            next[tail[bucket]] = member;
        }
        tail[bucket] = member;
    }

    /**
     * Empties {@code bucket} and returns its first member, or {@link #NONE}. Walk the chain with
     * {@link #next}, reading a member's successor before filing that member again.
     */
    int takeAll(int bucket) {
        int first = head[bucket];
        head[bucket] = NONE;
        return first;
    }

    /** The member after {@code member} in the chain it was taken in, or {@link #NONE}. */
    int next(int member) {
        return next[member];
    }
}
