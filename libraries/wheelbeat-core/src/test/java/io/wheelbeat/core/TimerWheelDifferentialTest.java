package io.wheelbeat.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeSet;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Random schedule / cancel / reschedule / poll operations against a plain reference model (sorted
 * sets of deadlines): the wheel must fire exactly the timers the model says are due, each at or
 * after its exact deadline, in exactly the model's order (by deadline, then first scheduled first,
 * a move counting as a new scheduling: Netty's order), and tell a wake-up time that is never
 * late. Many timers share a deadline (deadlines set lately are reused), and some polls are
 * bounded ({@code poll(now, lateness, limit)}) and leave due timers to the next. Callbacks
 * cancel, reschedule and schedule other timers, due in the same poll or later.
 * Delays cover every level, up to the saturated maximum; time moves in steps below a tick, to the
 * exact next deadline, and in jumps of many turns; clocks start at 0, near Long.MAX_VALUE (so
 * they wrap during the run) and below zero. Four runs of 300,000 operations: 1.2 million in all.
 * A failure prints the wheel's state.
 */
class TimerWheelDifferentialTest {

    private static final int OPERATIONS = 300_000;
    private static final int SLOTS = 64;
    private static final int TICK_SHIFT = 20;
    private static final long TICK = 1L << TICK_SHIFT;
    /** Keeps relative time small enough that a saturated delay (2^62) never overflows. */
    private static final long MAX_TIME = 1L << 60;

    /**
     * A pending timer of the model: due at {@code deadline} (ns since the start), scheduled (or
     * last moved) as the {@code order}-th scheduling.
     */
    private record Timer(Node id, long deadline, long order) {}

    /** A timer of the wheel; the model knows it by identity. */
    private final class Node extends TimerNode {
        @Override
        protected void expire() {
            fired(this);
        }

        @Override
        public String toString() {
            return "node@" + Integer.toHexString(System.identityHashCode(this));
        }
    }

    /** Netty's order: by deadline, then first scheduled first. */
    private static final Comparator<Timer> FIRING_ORDER =
            Comparator.comparingLong(Timer::deadline).thenComparingLong(Timer::order);

    private final Map<Node, Timer> pending = new HashMap<>();
    /** Every pending timer, deferred or not. */
    private final TreeSet<Timer> all = new TreeSet<>(FIRING_ORDER);
    /** Pending timers that may fire at the next poll (not deferred), in the order they must fire. */
    private final TreeSet<Timer> due = new TreeSet<>(FIRING_ORDER);
    /** Made due by a callback at or before the latest deadline fired: wait for the next poll. */
    private final Set<Node> deferred = new HashSet<>();

    private final List<Node> issued = new ArrayList<>();
    /** Deadlines set lately: reused so that many timers share a deadline. */
    private final long[] recentDeadlines = new long[8];

    private long schedulings;

    private SplittableRandom random;
    private TimerWheel wheel;
    private long origin;
    /** The reading of the latest poll (ns since the start); also the time timers are set at. */
    private long now;

    private long lastPoll;
    private boolean polling;
    private long firedUpTo;
    private int firedThisPoll;
    private String failure;

    @ParameterizedTest(name = "clock starts at {0}, seed {1}")
    @CsvSource({
        "0, 1",
        "9223372036854775807, 42",
        "-1099511627776, 2026",
        "-9223372036854775808, 12648430",
    })
    void wheelFiresExactlyTheTimersThatAReferenceModelSaysAreDue(long start, long seed) {
        random = new SplittableRandom(seed);
        // Near Long.MAX_VALUE the clock wraps within the first seconds of the run.
        origin = start == Long.MAX_VALUE ? start - random.nextLong(TICK * SLOTS) : start;
        wheel = new TimerWheel(origin, TICK, SLOTS);
        try {
            for (int op = 0; op < OPERATIONS; op++) {
                step(op);
                if (issued.size() > 50_000) {
                    issued.subList(0, 25_000).clear();
                }
            }
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "\n" + wheel.dump(), e);
        }
    }

    private void step(int op) {
        int kind = random.nextInt(100);
        if (kind < 35 || issued.isEmpty()) {
            schedule(randomDeadline(now));
        } else if (kind < 50) {
            cancel(pick());
        } else if (kind < 75) {
            reschedule(pick(), randomDeadline(now));
        } else if (kind < 78) {
            // A driver's first look: the wake-up time is never late.
            checkNextDeadline("op " + op);
        } else {
            poll(op);
        }
        assertEquals(pending.size(), wheel.pendingTimers(), "pending at op " + op);
    }

    private void schedule(long deadline) {
        Node id = new Node();
        wheel.scheduleAt(id, origin + deadline);
        issued.add(id);
        add(new Timer(id, Math.max(0, deadline), schedulings++));
    }

    private void cancel(Node id) {
        boolean was = remove(id) != null;
        assertEquals(was, wheel.cancel(id), "cancel of " + id);
    }

    /** Arms a node again, pending or not: a move counts as a new scheduling. */
    private void reschedule(Node id, long deadline) {
        boolean was = remove(id) != null;
        assertEquals(was, id.isPending(), "pending: " + id);
        wheel.scheduleAt(id, origin + deadline);
        add(new Timer(id, Math.max(0, deadline), schedulings++));
    }

    private void add(Timer timer) {
        pending.put(timer.id, timer);
        all.add(timer);
        if (polling && timer.deadline <= firedUpTo) {
            deferred.add(timer.id);
            return;
        }
        due.add(timer);
    }

    private Timer remove(Node id) {
        Timer timer = pending.remove(id);
        if (timer != null) {
            all.remove(timer);
            due.remove(timer);
            deferred.remove(id);
        }
        return timer;
    }

    private void poll(int op) {
        long next = pending.isEmpty() ? now : wheel.nextDeadlineNanos() - origin;
        int how = random.nextInt(100);
        if (how < 25 && next > now) {
            now = next; // a punctual driver: exactly at the wake-up time
        } else if (how >= 30) {
            now = Math.min(MAX_TIME, now + randomStep());
        } // else polled again at the same reading
        polling = true;
        firedUpTo = lastPoll; // what the wheel has reached: the previous poll's reading
        firedThisPoll = 0;
        // Sometimes a bounded poll, which may leave due timers for the next one.
        int limit = random.nextInt(5) == 0 ? 1 + random.nextInt(4) : Integer.MAX_VALUE;
        int fired;
        long movedBefore = wheel.movedCount();
        try {
            fired = wheel.poll(origin + now, lateness -> {}, limit);
        } finally {
            polling = false;
        }
        long moved = wheel.movedCount() - movedBefore;
        if (failure != null) {
            throw new AssertionError(failure + " (op " + op + ", now " + now + ")");
        }
        assertEquals(firedThisPoll, fired, "fired count at op " + op);
        assertEquals(0, wheel.failedCount(), "callbacks threw");
        assertTrue(fired <= limit, fired + " fired, limit " + limit);
        // The limit bounds fired plus moved; a poll it stopped leaves the wake-up already passed.
        boolean stopped = limit != Integer.MAX_VALUE
                && fired + moved >= limit
                && !pending.isEmpty()
                && wheel.nextDeadlineNanos() - origin <= now;
        if (!stopped && !due.isEmpty() && due.first().deadline <= now) {
            throw new AssertionError("not fired although due at " + now + ": " + due.first() + " (op " + op + ")");
        }
        // Timers deferred in this poll are due at the next one, in firing order with the rest.
        for (Node id : deferred) {
            due.add(pending.get(id));
        }
        boolean anyDeferred = !deferred.isEmpty();
        deferred.clear();
        lastPoll = now;
        if (!pending.isEmpty()) {
            long wake = checkNextDeadline("op " + op);
            if (!anyDeferred && !stopped && wake - now <= 0) {
                throw new AssertionError("wake-up " + wake + " not after the poll at " + now + " (op " + op + ")");
            }
        }
    }

    /** Asserts the wake-up time is at or before the earliest deadline and returns it. */
    private long checkNextDeadline(String where) {
        if (pending.isEmpty()) {
            return Long.MAX_VALUE;
        }
        long wake = wheel.nextDeadlineNanos() - origin;
        long earliest = all.first().deadline;
        if (wake > earliest) {
            throw new AssertionError("wake-up " + wake + " after the earliest deadline " + earliest + " at " + where);
        }
        return wake;
    }

    /** The callback of every timer: checks the firing against the model, then acts at random. */
    private void fired(Node id) {
        if (failure != null) {
            return;
        }
        Timer timer = pending.get(id);
        if (timer == null || deferred.contains(id)) {
            failure = "fired a timer that is " + (timer == null ? "not pending" : "deferred to the next poll") + ": "
                    + id;
            return;
        }
        if (timer.deadline > now) {
            failure = "fired early: " + timer + " at " + now;
            return;
        }
        if (!due.first().equals(timer)) {
            failure = "fired out of order (deadline, then scheduling): " + timer + " before " + due.first();
            return;
        }
        remove(id);
        firedUpTo = Math.max(firedUpTo, timer.deadline);
        firedThisPoll++;
        int actions = random.nextInt(8);
        for (int a = 0; a < actions && a < 3; a++) {
            int kind = random.nextInt(3);
            long deadline = callbackDeadline();
            if (kind == 0) {
                schedule(deadline);
            } else if (kind == 1 && !issued.isEmpty()) {
                Node other = pick();
                boolean was = remove(other) != null;
                if (was != wheel.cancel(other)) {
                    failure = "cancel from a callback answered " + !was;
                }
            } else if (!issued.isEmpty()) {
                Node other = pick();
                boolean was = remove(other) != null;
                if (was != other.isPending()) {
                    failure = "pending from a callback answered " + !was;
                }
                wheel.scheduleAt(other, origin + deadline);
                add(new Timer(other, Math.max(0, deadline), schedulings++));
            }
        }
    }

    /** From a callback: before the latest deadline fired, due later in this poll, or later. */
    private long callbackDeadline() {
        int kind = random.nextInt(5);
        return switch (kind) {
            case 0 -> firedUpTo - random.nextLong(2 * TICK);
            case 4 -> recentDeadline(randomDeadline(now));
            case 1 -> firedUpTo + 1 + random.nextLong(Math.max(1, now - firedUpTo));
            case 2 -> now + 1 + random.nextLong(SLOTS * TICK);
            default -> randomDeadline(now);
        };
    }

    /** Half the time one of the last few timers: fresh timers have the most interesting states. */
    private Node pick() {
        int size = issued.size();
        return random.nextBoolean()
                ? issued.get(size - 1 - random.nextInt(Math.min(size, 4)))
                : issued.get(random.nextInt(size));
    }

    /** A deadline for a timer set at {@code at}: past, on tick and level boundaries, any level, saturated. */
    private long randomDeadline(long at) {
        int kind = random.nextInt(100);
        if (kind < 15) {
            return recentDeadline(at + random.nextLong(SLOTS * TICK));
        }
        long delay;
        if (kind < 5) {
            delay = -random.nextLong(10 * TICK);
        } else if (kind < 8) {
            delay = 0;
        } else if (kind < 40) {
            delay = random.nextLong(SLOTS * TICK);
        } else if (kind < 50) {
            // Exactly on a tick, a turn or a level boundary, or one nanosecond either side.
            long boundary = (((at >>> TICK_SHIFT) + 1) << TICK_SHIFT) - at;
            long span = TICK << (6 * random.nextInt(4));
            delay = boundary + span * random.nextInt(3) + random.nextInt(3) - 1;
        } else if (kind < 97) {
            // Any level: a delay of 2^k ns, k up to 62.
            int bits = random.nextInt(63);
            delay = (1L << bits) + random.nextLong(1L << bits);
        } else {
            delay = TimerWheel.MAX_DELAY_NANOS; // what a saturated Long.MAX_VALUE delay becomes
        }
        return at + Math.min(delay, TimerWheel.MAX_DELAY_NANOS);
    }

    /** One of the deadlines set lately (timers sharing a deadline), else {@code otherwise}, remembered. */
    private long recentDeadline(long otherwise) {
        int i = random.nextInt(recentDeadlines.length);
        long deadline = recentDeadlines[i] != 0 && random.nextInt(4) != 0 ? recentDeadlines[i] : otherwise;
        recentDeadlines[i] = deadline;
        return deadline;
    }

    /** A step of time: below a tick, onto a tick boundary, within a turn, or many turns at once. */
    private long randomStep() {
        int kind = random.nextInt(100);
        if (kind < 20) {
            return random.nextLong(TICK);
        }
        if (kind < 35) {
            return ((TICK - (now & (TICK - 1))) & (TICK - 1)) + TICK * random.nextInt(3);
        }
        if (kind < 90) {
            return random.nextLong(SLOTS * TICK);
        }
        if (kind < 99) {
            return random.nextLong(SLOTS * SLOTS * TICK * 4);
        }
        // Many turns of many levels: up to 2^50 ns (13 days).
        return 1L << (30 + random.nextInt(21));
    }
}
