package io.wheelbeat.netty.loop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.GenericFutureListener;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * Netty's scheduled-future contract, proved on the wheel loop against Netty's own loop: both on
 * the same virtual clock play the same scenario, and their logs (runs, listener calls, what
 * {@code await}, {@code sync}, {@code get}, {@code cancel}, {@code getDelay} and {@code compareTo}
 * answer) must be equal line by line.
 */
class WheelScheduledFutureContractTest {

    private static final long MILLI = TimeUnit.MILLISECONDS.toNanos(1);
    private static final long SECOND = TimeUnit.SECONDS.toNanos(1);
    private static final long YEAR = TimeUnit.DAYS.toNanos(365);

    /** One scenario, played on one loop; what it observes goes to {@code log}. */
    private interface Scenario {
        void play(LoopClock clock, EventLoop loop, Log log) throws Exception;
    }

    /** The log and the futures a scenario waits on before it reads anything. */
    private static final class Log {
        final List<String> lines = Collections.synchronizedList(new ArrayList<>());
        final Map<Integer, ScheduledFuture<?>> futures = new ConcurrentHashMap<>();
        private final EventLoop loop;

        Log(EventLoop loop) {
            this.loop = loop;
        }

        void add(String line) {
            lines.add(line);
        }

        <F extends ScheduledFuture<?>> F keep(F future) {
            futures.put(futures.size(), future);
            return future;
        }

        /** Waits until the loop has run all that is due (and the listeners it notifies). */
        void settle() throws InterruptedException {
            WheelIoEventLoopDifferentialTest.settle(loop, lines, futures);
        }
    }

    private static void assertSameOnBothLoops(Scenario scenario) throws Exception {
        List<String> netty = play(scenario, LoopClock::nettyGroup);
        List<String> wheel = play(scenario, LoopClock::wheelGroup);
        assertEquals(String.join("\n", netty), String.join("\n", wheel));
    }

    private static List<String> play(Scenario scenario, Function<LoopClock, EventLoopGroup> groups) throws Exception {
        LoopClock clock = new LoopClock(0);
        EventLoopGroup group = groups.apply(clock);
        try {
            EventLoop loop = group.next();
            Log log = new Log(loop);
            scenario.play(clock, loop, log);
            log.settle();
            return new ArrayList<>(log.lines);
        } finally {
            clock.shutDown(group);
        }
    }

    private static String delays(String name, ScheduledFuture<?> future) {
        return name + " delay " + future.getDelay(TimeUnit.DAYS) + " d " + future.getDelay(TimeUnit.NANOSECONDS)
                + " ns " + (future.isDone() ? "done" : "pending");
    }

    /** Delays as Netty takes them: up to Long.MAX_VALUE ns, read back alike, and never fired early. */
    @Test
    void theLongestDelaysReadAsOnNettysLoopAndFireOnTime() throws Exception {
        long beyondOneWheelTimer = (1L << 62) + SECOND;
        assertSameOnBothLoops((clock, loop, log) -> {
            ScheduledFuture<?> days = log.keep(loop.schedule(() -> log.add("days ran"), Long.MAX_VALUE, TimeUnit.DAYS));
            ScheduledFuture<?> nanos = log.keep(
                    loop.submit(() -> loop.schedule(() -> log.add("nanos ran"), Long.MAX_VALUE, TimeUnit.NANOSECONDS))
                            .get());
            ScheduledFuture<?> far = log.keep(loop.submit(() -> loop.schedule(
                            () -> log.add("far ran at " + clock.nanoTime()), beyondOneWheelTimer, TimeUnit.NANOSECONDS))
                    .get());
            ScheduledFuture<?> farFromOutside = log.keep(loop.schedule(
                    () -> log.add("far from outside ran at " + clock.nanoTime()),
                    beyondOneWheelTimer + 1,
                    TimeUnit.NANOSECONDS));
            for (long step : new long[] {0, beyondOneWheelTimer - MILLI, MILLI, 1, 100 * YEAR}) {
                clock.advance(step);
                log.settle();
                log.add("at " + clock.nanoTime());
                log.add(delays("days", days));
                log.add(delays("nanos", nanos));
                log.add(delays("far", far));
                log.add(delays("far from outside", farFromOutside));
            }
        });
    }

    /** Where Netty's own loop cannot go (its deadlines saturate at Long.MAX_VALUE): a clock near the wrap. */
    @Test
    void theLongestDelayReadsTheSameWhereverTheClockStarts() throws Exception {
        for (long origin : new long[] {Long.MIN_VALUE, -1, Long.MAX_VALUE - 10 * SECOND}) {
            LoopClock clock = new LoopClock(origin);
            EventLoopGroup group = clock.wheelGroup();
            try {
                EventLoop loop = group.next();
                List<String> ran = Collections.synchronizedList(new ArrayList<>());
                ScheduledFuture<?> days = loop.schedule(() -> ran.add("days"), Long.MAX_VALUE, TimeUnit.DAYS);
                ScheduledFuture<?> second = loop.schedule(() -> ran.add("second"), 1, TimeUnit.SECONDS);
                assertEquals(106_751, days.getDelay(TimeUnit.DAYS), "origin " + origin);
                assertEquals(Long.MAX_VALUE, days.getDelay(TimeUnit.NANOSECONDS), "origin " + origin);
                clock.advance(SECOND - 1);
                WheelIoEventLoopDifferentialTest.settle(loop, ran, Map.of(0, days, 1, second));
                assertEquals(List.of(), ran, "origin " + origin);
                clock.advance(1);
                WheelIoEventLoopDifferentialTest.settle(loop, ran, Map.of(0, days, 1, second));
                assertEquals(List.of("second"), ran, "origin " + origin);
                clock.advance(200 * YEAR);
                WheelIoEventLoopDifferentialTest.settle(loop, ran, Map.of(0, days, 1, second));
                assertEquals(List.of("second"), ran, "origin " + origin);
                assertEquals(
                        Long.MAX_VALUE - SECOND - 200 * YEAR, days.getDelay(TimeUnit.NANOSECONDS), "origin " + origin);
            } finally {
                clock.shutDown(group);
            }
        }
    }

    /**
     * {@code compareTo}: by deadline, then in the order the loop received the tasks (from the loop
     * or handed over from another thread), never 0 for two distinct tasks.
     */
    @Test
    void compareToOrdersAsNettysLoopAndNeverTiesTwoTasks() throws Exception {
        assertSameOnBothLoops((clock, loop, log) -> {
            List<ScheduledFuture<?>> tasks = new ArrayList<>();
            Random random = new Random(29);
            for (int i = 0; i < 24; i++) {
                // Not 0: a due task handed over from another thread runs at once, without an id on
                // Netty's loop, which then answers 1 both ways (or fails its assertion).
                long delay = 1 + random.nextInt(3);
                ScheduledFuture<?> task = i % 3 == 0
                        ? loop.schedule(() -> {}, delay, TimeUnit.MILLISECONDS)
                        : loop.submit(() -> loop.schedule(() -> {}, delay, TimeUnit.MILLISECONDS))
                                .get();
                tasks.add(log.keep(task));
            }
            log.settle();
            for (int i = 0; i < tasks.size(); i++) {
                StringBuilder row = new StringBuilder("compareTo " + i + ":");
                for (int j = 0; j < tasks.size(); j++) {
                    int sign = Integer.signum(tasks.get(i).compareTo(tasks.get(j)));
                    if (i != j) {
                        assertNotEquals(0, sign, i + " and " + j);
                        assertEquals(-sign, Integer.signum(tasks.get(j).compareTo(tasks.get(i))), i + " and " + j);
                    }
                    row.append(' ').append(sign);
                }
                log.add(row.toString());
            }
            clock.advance(3 * MILLI);
        });
    }

    /** Listeners, await, sync, get and cancel, on success, failure and cancellation. */
    @Test
    void listenersAwaitSyncAndCancelKeepNettysContract() throws Exception {
        assertSameOnBothLoops((clock, loop, log) -> {
            ScheduledFuture<String> answer = log.keep(loop.schedule(() -> "answer", 10, TimeUnit.MILLISECONDS));
            answer.addListener(f -> log.add("listener 1 on loop " + loop.inEventLoop() + " at " + clock.nanoTime()
                    + " success " + f.isSuccess() + " " + f.getNow()));
            answer.addListener(f -> log.add("listener 2 " + f.getNow()));
            // Virtual time stands still: the task cannot be done, however long real time runs.
            log.add("await before " + answer.await(10, TimeUnit.MILLISECONDS) + " " + answer.isDone());
            log.add("blocking on the loop "
                    + loop.submit(() -> {
                                try {
                                    answer.await();
                                    return "no error";
                                } catch (Exception e) {
                                    return e.getClass().getName();
                                }
                            })
                            .get());
            clock.advance(10 * MILLI);
            // Each answer logged after the listeners the completion notifies (on the loop) have run.
            String synced = "sync " + answer.sync().getNow() + " get " + answer.get() + " await " + answer.await(1);
            log.settle();
            log.add(synced);
            log.add("cancel after success " + answer.cancel(false) + " " + answer.isCancelled());
            answer.addListener(f -> log.add("listener added after success " + f.getNow()));
            log.settle();

            ScheduledFuture<Object> failing = log.keep(loop.schedule(
                    () -> {
                        throw new IllegalStateException("boom");
                    },
                    5,
                    TimeUnit.MILLISECONDS));
            failing.addListener(f -> log.add("failure listener " + f.cause()));
            clock.advance(5 * MILLI);
            String awaited = "await failure " + failing.await(10, TimeUnit.SECONDS) + " cause " + failing.cause();
            log.settle();
            log.add(awaited);
            log.add("sync failure " + thrown(failing::sync));
            log.add("get failure " + thrown(failing::get));

            ScheduledFuture<?> cancelled = log.keep(loop.schedule(() -> log.add("cancelled ran"), 1, TimeUnit.HOURS));
            cancelled.addListener(
                    f -> log.add("cancel listener on loop " + loop.inEventLoop() + " " + f.isCancelled()));
            boolean answered = cancelled.cancel(false);
            log.settle();
            log.add("cancel " + answered + " again " + cancelled.cancel(true) + " " + cancelled.isCancelled()
                    + " await " + cancelled.await(1) + " sync " + thrown(cancelled::sync) + " get "
                    + thrown(cancelled::get)
                    + " cause " + kind(cancelled.cause()));

            ScheduledFuture<?> cancelledOnLoop = log.keep(loop.schedule(() -> log.add("never"), 1, TimeUnit.HOURS));
            cancelledOnLoop.addListener(f -> log.add("loop cancel listener " + f.isCancelled()));
            log.add("cancel on loop "
                    + loop.submit(() -> cancelledOnLoop.cancel(false)).get());
            ScheduledFuture<?> cancelledByTask =
                    log.keep(loop.schedule(() -> log.add("never"), 2, TimeUnit.MILLISECONDS));
            log.keep(loop.schedule(
                    () -> log.add("cancel by an earlier task " + cancelledByTask.cancel(false)),
                    1,
                    TimeUnit.MILLISECONDS));
            // Both placed before they are due (a task that arrives due runs at once, in arrival order).
            log.settle();
            clock.advance(2 * MILLI);
            log.settle();
            log.add("cancelled by task " + cancelledByTask.isCancelled());

            // Listeners added together, removed, one that throws, one added by another; waits without interrupts.
            ScheduledFuture<Object> many = log.keep(loop.schedule(() -> "many", 3, TimeUnit.MILLISECONDS));
            GenericFutureListener<Future<Object>> removed = f -> log.add("removed listener told");
            GenericFutureListener<Future<Object>> first = f -> log.add("first of two " + f.getNow());
            GenericFutureListener<Future<Object>> second = f -> log.add("second of two");
            many.addListeners(first, second);
            many.addListener(removed);
            many.addListener(f -> {
                throw new IllegalStateException("a listener throws");
            });
            many.addListener(f -> {
                log.add("after the one that throws");
                many.addListener(g -> log.add("added by a listener"));
            });
            many.removeListener(removed);
            log.add("many cancellable " + many.isCancellable() + " await "
                    + many.awaitUninterruptibly(10, TimeUnit.MILLISECONDS));
            log.settle();
            clock.advance(3 * MILLI);
            String synced2 = "many " + many.syncUninterruptibly().getNow();
            log.settle();
            log.add(synced2 + " cancellable " + many.isCancellable() + " success " + many.isSuccess() + " cancel "
                    + many.cancel(false));
            clock.advance(2 * TimeUnit.HOURS.toNanos(1));
        });
    }

    private static String thrown(Callable call) {
        try {
            call.call();
            return "nothing";
        } catch (Throwable t) {
            return kind(t) + (t.getCause() != null ? " of " + kind(t.getCause()) : "");
        }
    }

    /** The class of {@code t}; any {@link CancellationException} as such (Netty's is an internal subclass). */
    private static String kind(Throwable t) {
        return t instanceof CancellationException
                ? "a CancellationException"
                : t.getClass().getName();
    }

    /** A call that may throw anything. */
    private interface Callable {
        Object call() throws Throwable;
    }

    /**
     * Periodic tasks, at a fixed rate and with a fixed delay: their runs on a clock that moves in
     * steps and in a stall, a cancel from another thread, a cancel from their own run, a throw.
     */
    @Test
    void periodicTasksRunAndStopAsOnNettysLoop() throws Exception {
        assertSameOnBothLoops((clock, loop, log) -> {
            // Each periodic task a few microseconds off the others: Netty keeps a periodic task's
            // first place among equal deadlines (its id), the wheel orders a re-arm as a new schedule.
            ScheduledFuture<?> rate = log.keep(loop.scheduleAtFixedRate(
                    () -> log.add("rate at " + clock.nanoTime()), 10 * MILLI, 10 * MILLI, TimeUnit.NANOSECONDS));
            int[] delayRuns = new int[1];
            ScheduledFuture<?>[] delaySelf = new ScheduledFuture<?>[1];
            ScheduledFuture<?> delay = log.keep(loop.submit(() -> delaySelf[0] = loop.scheduleWithFixedDelay(
                            () -> {
                                log.add("delay at " + clock.nanoTime());
                                if (++delayRuns[0] == 6) {
                                    log.add("delay cancels itself " + delaySelf[0].cancel(false));
                                }
                            },
                            10 * MILLI + 1_000,
                            10 * MILLI + 1_000,
                            TimeUnit.NANOSECONDS))
                    .get());
            int[] throwingRuns = new int[1];
            ScheduledFuture<?> throwing = log.keep(loop.scheduleAtFixedRate(
                    () -> {
                        log.add("throwing at " + clock.nanoTime());
                        if (++throwingRuns[0] == 3) {
                            throw new IllegalStateException("third run");
                        }
                    },
                    5 * MILLI + 2_000,
                    7 * MILLI,
                    TimeUnit.NANOSECONDS));
            for (ScheduledFuture<?> future : List.of(rate, delay, throwing)) {
                future.addListener(f -> log.add("done: cancelled " + f.isCancelled() + " cause "
                        + (f.cause() == null
                                ? null
                                : kind(f.cause()) + ": " + f.cause().getMessage())));
            }
            for (int i = 0; i < 8; i++) {
                clock.advance(5 * MILLI);
                log.settle();
            }
            // A stall: five periods at once. Each loop runs a fixed-rate task that fell behind once per turn.
            clock.advance(50 * MILLI);
            log.settle();
            for (int i = 0; i < 4; i++) {
                clock.advance(5 * MILLI);
                log.settle();
            }
            boolean cancelled = rate.cancel(false);
            log.settle();
            log.add("rate cancelled " + cancelled + " " + rate.isCancelled() + " again " + rate.cancel(false));
            clock.advance(100 * MILLI);
            log.settle();
            log.add("states " + rate.isCancelled() + " " + delay.isCancelled() + " " + throwing.isDone() + " "
                    + throwing.isSuccess());
        });
    }

    /**
     * Equal deadlines run in the order the loop received the tasks, also when the loop wakes to a
     * backlog larger than one batch after a stall, whose tasks schedule more as they run and spend
     * the loop's task-time quantum (each holds the loop 1 ms of its clock).
     */
    @Test
    void equalDeadlinesKeepTheirOrderAfterAStall() throws Exception {
        assertSameOnBothLoops((clock, loop, log) -> {
            Random random = new Random(32);
            int tasks = 5_000;
            loop.submit(() -> {
                        for (int i = 0; i < tasks; i++) {
                            int id = i;
                            long delay = 1 + random.nextInt(3);
                            loop.schedule(
                                    () -> {
                                        log.add("run " + id);
                                        clock.advance(MILLI);
                                        if (id % 97 == 0) {
                                            loop.schedule(
                                                    () -> log.add("child of " + id),
                                                    random.nextInt(2),
                                                    TimeUnit.MILLISECONDS);
                                        }
                                    },
                                    delay,
                                    TimeUnit.MILLISECONDS);
                            if (id % 500 == 0) {
                                // From another thread too: received when the loop runs the hand-over, after this task.
                                Thread other = new Thread(() ->
                                        loop.schedule(() -> log.add("outside " + id), delay, TimeUnit.MILLISECONDS));
                                other.start();
                                try {
                                    other.join();
                                } catch (InterruptedException e) {
                                    throw new AssertionError(e);
                                }
                            }
                        }
                    })
                    .sync();
            // The hand-overs placed before the stall (a task that arrives due runs at once).
            log.settle();
            clock.advance(SECOND);
            long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (log.lines.size() < tasks + tasks / 97 + tasks / 500 && System.nanoTime() - giveUp < 0) {
                log.settle();
            }
            assertFalse(log.lines.isEmpty());
        });
    }
}
