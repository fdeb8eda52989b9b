package io.wheelbeat.netty.loop;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * The wheel loop against Netty's own loop, both on the same virtual clock: one random script of
 * schedules (from the loop and from another thread, one-shot and periodic, many with equal
 * deadlines), cancels (from both sides, before and after the hand-over), tasks that schedule or
 * cancel others when they run, and clock advances. Both loops must show the same runs and
 * cancellations in the same order, the same {@code cancel} answers, the same {@code getDelay}
 * readings and the same final future states.
 */
class WheelIoEventLoopDifferentialTest {

    private static final int SEEDS = 12;
    private static final int OPS = 250;

    @Test
    void sameRunsAndCancellationsAsNettysLoop() throws Exception {
        for (int seed = 1; seed <= SEEDS; seed++) {
            List<Op> script = script(new Random(seed));
            List<String> netty = play(script, LoopClock::nettyGroup);
            List<String> wheel = play(script, LoopClock::wheelGroup);
            assertSameLog(seed, netty, wheel);
        }
    }

    /**
     * A periodic task keeps its first place among equal deadlines, as Netty's keeps its task id: at
     * 2 ms it runs before a task scheduled (for 2 ms) after its first run but before its second.
     */
    @Test
    void periodicTaskKeepsItsFirstPlaceAmongEqualDeadlines() throws Exception {
        for (boolean fixedRate : new boolean[] {true, false}) {
            List<String> netty = periodicTie(LoopClock::nettyGroup, fixedRate);
            List<String> wheel = periodicTie(LoopClock::wheelGroup, fixedRate);
            assertEquals(List.of("periodic", "periodic", "periodic", "one-shot"), netty, "Netty's loop");
            assertEquals(netty, wheel, "fixed rate " + fixedRate);
        }
    }

    private static List<String> periodicTie(Function<LoopClock, EventLoopGroup> groups, boolean fixedRate)
            throws Exception {
        // Netty's loop takes a deadline past Long.MAX_VALUE as Long.MAX_VALUE: a positive origin.
        LoopClock clock = new LoopClock(TimeUnit.HOURS.toNanos(1));
        EventLoopGroup group = groups.apply(clock);
        try {
            EventLoop loop = group.next();
            List<String> log = Collections.synchronizedList(new ArrayList<>());
            Map<Integer, ScheduledFuture<?>> futures = new ConcurrentHashMap<>();
            loop.submit(() -> {
                        Runnable periodic = () -> log.add("periodic");
                        futures.put(
                                0,
                                fixedRate
                                        ? loop.scheduleAtFixedRate(periodic, 0, 1, TimeUnit.MILLISECONDS)
                                        : loop.scheduleWithFixedDelay(periodic, 0, 1, TimeUnit.MILLISECONDS));
                    })
                    .sync();
            settle(loop, log, futures);
            loop.submit(() -> futures.put(1, loop.schedule(() -> log.add("one-shot"), 2, TimeUnit.MILLISECONDS)))
                    .sync();
            for (int ms = 0; ms < 2; ms++) {
                clock.advance(TimeUnit.MILLISECONDS.toNanos(1));
                settle(loop, log, futures);
            }
            futures.get(0).cancel(false);
            return new ArrayList<>(log);
        } finally {
            clock.shutDown(group);
        }
    }

    private static void assertSameLog(int seed, List<String> netty, List<String> wheel) {
        int at = 0;
        while (at < netty.size() && at < wheel.size() && netty.get(at).equals(wheel.get(at))) {
            at++;
        }
        if (at == netty.size() && at == wheel.size()) {
            return;
        }
        int from = Math.max(0, at - 6);
        assertEquals(
                netty.subList(from, Math.min(netty.size(), at + 4)),
                wheel.subList(from, Math.min(wheel.size(), at + 4)),
                "seed " + seed + ": the wheel loop's log differs from Netty's at line " + at);
    }

    private enum Kind {
        LOOP_SCHEDULE,
        THREAD_SCHEDULE,
        LOOP_PERIODIC,
        THREAD_PERIODIC,
        LOOP_CANCEL,
        THREAD_CANCEL,
        ADVANCE
    }

    /** One step; {@code child} / {@code victim} are what the task does when it runs (-1: nothing). */
    private record Op(
            Kind kind,
            int id,
            long delayMs,
            long periodMs,
            boolean fixedRate,
            int child,
            long childDelayMs,
            int victim) {}

    private static List<Op> script(Random random) {
        List<Op> ops = new ArrayList<>();
        int nextId = 0;
        for (int i = 0; i < OPS; i++) {
            int roll = random.nextInt(100);
            // Few distinct delays, so that many tasks share a deadline (FIFO decides their order).
            long delay = random.nextInt(4);
            int child = random.nextInt(5) == 0 ? 10_000 + nextId : -1;
            int victim = nextId > 0 && random.nextInt(6) == 0 ? random.nextInt(nextId) : -1;
            Kind kind;
            if (roll < 25) {
                kind = Kind.LOOP_SCHEDULE;
            } else if (roll < 45) {
                kind = Kind.THREAD_SCHEDULE;
            } else if (roll < 50) {
                kind = Kind.LOOP_PERIODIC;
            } else if (roll < 53) {
                kind = Kind.THREAD_PERIODIC;
            } else if (roll < 63) {
                kind = Kind.LOOP_CANCEL;
            } else if (roll < 73) {
                kind = Kind.THREAD_CANCEL;
            } else {
                kind = Kind.ADVANCE;
            }
            boolean cancel = kind == Kind.LOOP_CANCEL || kind == Kind.THREAD_CANCEL;
            if (cancel && nextId == 0) {
                kind = Kind.ADVANCE;
                cancel = false;
            }
            int id = cancel ? random.nextInt(nextId) : kind == Kind.ADVANCE ? -1 : nextId++;
            ops.add(new Op(
                    kind,
                    id,
                    kind == Kind.ADVANCE ? random.nextInt(3) : delay,
                    1 + random.nextInt(3),
                    random.nextBoolean(),
                    child,
                    random.nextInt(3),
                    victim));
        }
        ops.add(new Op(Kind.ADVANCE, -1, 20, 0, false, -1, 0, -1));
        return ops;
    }

    private static List<String> play(List<Op> script, Function<LoopClock, EventLoopGroup> groups) throws Exception {
        LoopClock clock = new LoopClock(0);
        EventLoopGroup group = groups.apply(clock);
        try {
            EventLoop loop = group.next();
            List<String> log = Collections.synchronizedList(new ArrayList<>());
            Map<Integer, ScheduledFuture<?>> futures = new ConcurrentHashMap<>();
            String answer = null;
            for (Op op : script) {
                switch (op.kind()) {
                    case LOOP_SCHEDULE, LOOP_PERIODIC ->
                        loop.submit(() -> futures.put(op.id(), schedule(loop, op, log, futures)))
                                .sync();
                    case THREAD_SCHEDULE, THREAD_PERIODIC -> futures.put(op.id(), schedule(loop, op, log, futures));
                    case LOOP_CANCEL ->
                        loop.submit(() -> log.add("loop cancel " + op.id() + " "
                                        + futures.get(op.id()).cancel(false)))
                                .sync();
                    // Its line after the loop has settled: the cancel's listener runs on the loop meanwhile.
                    case THREAD_CANCEL ->
                        answer = "thread cancel " + op.id() + " "
                                + futures.get(op.id()).cancel(false);
                    case ADVANCE -> clock.advance(TimeUnit.MILLISECONDS.toNanos(op.delayMs()));
                }
                settle(loop, log, futures);
                if (answer != null) {
                    log.add(answer);
                    answer = null;
                }
                StringBuilder delays = new StringBuilder("delays");
                futures.entrySet().stream()
                        .sorted(Map.Entry.comparingByKey())
                        .filter(e -> !e.getValue().isDone())
                        .forEach(e -> delays.append(' ')
                                .append(e.getKey())
                                .append('=')
                                .append(e.getValue().getDelay(TimeUnit.NANOSECONDS)));
                log.add(delays.toString());
            }
            List<String> result = new ArrayList<>(log);
            clock.shutDown(group);
            // Shutdown cancels every task still pending (the order of its cancellations is not
            // compared: Netty's follows its heap's array).
            StringBuilder states = new StringBuilder("after shutdown");
            futures.entrySet().stream()
                    .sorted(Map.Entry.comparingByKey())
                    .forEach(e -> states.append(' ')
                            .append(e.getKey())
                            .append(
                                    e.getValue().isCancelled()
                                            ? "C"
                                            : e.getValue().isSuccess() ? "S" : "P"));
            result.add(states.toString());
            return result;
        } finally {
            clock.shutDown(group);
        }
    }

    private static ScheduledFuture<?> schedule(
            EventLoop loop, Op op, List<String> log, Map<Integer, ScheduledFuture<?>> futures) {
        Runnable task = () -> {
            log.add("run " + op.id());
            if (op.child() >= 0 && !futures.containsKey(op.child())) {
                futures.put(
                        op.child(),
                        loop.schedule(() -> log.add("run " + op.child()), op.childDelayMs(), TimeUnit.MILLISECONDS));
            }
            ScheduledFuture<?> victim = op.victim() >= 0 ? futures.get(op.victim()) : null;
            if (victim != null) {
                log.add("task " + op.id() + " cancels " + op.victim() + " " + victim.cancel(false));
            }
        };
        boolean periodic = op.kind() == Kind.LOOP_PERIODIC || op.kind() == Kind.THREAD_PERIODIC;
        // Whole milliseconds: a periodic task's later runs tie with other tasks, where Netty orders
        // them by the periodic task's first place (its task id), not by its re-arm.
        ScheduledFuture<?> future = !periodic
                ? loop.schedule(task, op.delayMs(), TimeUnit.MILLISECONDS)
                : op.fixedRate()
                        ? loop.scheduleAtFixedRate(task, op.delayMs(), op.periodMs(), TimeUnit.MILLISECONDS)
                        : loop.scheduleWithFixedDelay(task, op.delayMs(), op.periodMs(), TimeUnit.MILLISECONDS);
        future.addListener(f -> {
            if (f.isCancelled()) {
                log.add("cancelled " + op.id());
            }
        });
        return future;
    }

    /**
     * Waits until the loop has run everything due: no task due and not done, and three round trips
     * in a row with no new log line.
     */
    static void settle(EventLoop loop, List<String> log, Map<Integer, ScheduledFuture<?>> futures)
            throws InterruptedException {
        long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        int quiet = 0;
        while (quiet < 3) {
            int before = log.size();
            loop.submit(() -> {}).sync();
            boolean due = futures.values().stream().anyMatch(f -> !f.isDone() && f.getDelay(TimeUnit.NANOSECONDS) <= 0);
            quiet = log.size() == before && !due ? quiet + 1 : 0;
            if (System.nanoTime() - giveUp > 0) {
                throw new AssertionError("the loop never settled: " + futures);
            }
        }
    }
}
