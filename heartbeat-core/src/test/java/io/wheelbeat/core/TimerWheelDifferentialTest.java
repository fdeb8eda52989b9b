package io.wheelbeat.core;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Random schedule / cancel / reschedule / advance operations against a plain reference model, a
 * priority queue of deadline ticks: the wheel must fire the same timers in the same ticks.
 * Four seeds of 300,000 operations each: 1.2 million in all.
 */
class TimerWheelDifferentialTest {

    private static final int OPERATIONS = 300_000;
    private static final int SLOTS = 64;
    private static final long TICK = 1L << 20;

    /** A pending timer of the model. */
    private record Expected(long id, long tick) {
    }

    /** A firing the wheel reported: which timer, in which tick. */
    private record Firing(long id, long tick) {
    }

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {1, 42, 2026, 0xC0FFEE})
    void wheelFiresTheSameTimersInTheSameTicksAsAPriorityQueue(long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        ManualTicker ticker = new ManualTicker(random.nextLong());
        TimerWheel wheel = TimerWheel.builder().ticker(ticker).slots(SLOTS).initialCapacity(0).build();
        long origin = ticker.nanoTime();

        Map<Long, Expected> model = new HashMap<>();
        List<Long> issued = new ArrayList<>();
        List<Firing> firings = new ArrayList<>();
        TimerCallback record = id -> firings.add(new Firing(id, wheel.currentTick()));
        long[] processedTick = {0};

        for (int op = 0; op < OPERATIONS; op++) {
            int kind = random.nextInt(100);
            if (kind < 40 || issued.isEmpty()) {
                long delay = randomDelay(random);
                long id = wheel.schedule(record, delay, TimeUnit.NANOSECONDS);
                issued.add(id);
                model.put(id, new Expected(id, dueTick(ticker.nanoTime() - origin, delay, processedTick[0])));
            } else if (kind < 55) {
                long id = pick(random, issued);
                assertEquals(model.remove(id) != null, wheel.cancel(id), "cancel result at op " + op);
            } else if (kind < 80) {
                long id = pick(random, issued);
                long delay = randomDelay(random);
                boolean pending = model.containsKey(id);
                assertEquals(pending, wheel.reschedule(id, delay, TimeUnit.NANOSECONDS), "reschedule at op " + op);
                if (pending) {
                    model.put(id, new Expected(id, dueTick(ticker.nanoTime() - origin, delay, processedTick[0])));
                }
            } else {
                ticker.advance(randomStep(random, ticker.nanoTime() - origin), TimeUnit.NANOSECONDS);
                long target = (ticker.nanoTime() - origin) >>> 20;
                firings.clear();
                wheel.advance(ticker.nanoTime());
                List<Firing> expected = expireModel(model, target);
                processedTick[0] = Math.max(processedTick[0], target);
                assertEquals(expected, sortedByTickThenId(firings), "firings at op " + op);
                assertTickOrder(firings);
            }
            if (issued.size() > 50_000) {
                issued.subList(0, 25_000).clear();
            }
            assertEquals(model.size(), wheel.pendingTimers(), "pending at op " + op);
        }
    }

    /** Half the time one of the last few timers: fresh timers have the most interesting states. */
    private static long pick(SplittableRandom random, List<Long> issued) {
        int size = issued.size();
        return random.nextBoolean()
                ? issued.get(size - 1 - random.nextInt(Math.min(size, 4)))
                : issued.get(random.nextInt(size));
    }

    private static long randomDelay(SplittableRandom random) {
        int kind = random.nextInt(100);
        if (kind < 5) {
            return -random.nextLong(10 * TICK);
        }
        if (kind < 10) {
            return 0;
        }
        if (kind < 70) {
            return random.nextLong(SLOTS * TICK);
        }
        if (kind < 97) {
            return random.nextLong(10 * SLOTS * TICK);
        }
        return random.nextBoolean() ? Long.MAX_VALUE : random.nextLong(Long.MAX_VALUE);
    }

    /** A step of time; one in five lands exactly on a tick boundary, where clamping happens. */
    private static long randomStep(SplittableRandom random, long now) {
        int kind = random.nextInt(100);
        if (kind < 20) {
            return ((TICK - (now & (TICK - 1))) & (TICK - 1)) + TICK * random.nextInt(3);
        }
        if (kind < 50) {
            return random.nextLong(2 * TICK);
        }
        if (kind < 95) {
            return random.nextLong(SLOTS * TICK);
        }
        return random.nextLong(20 * SLOTS * TICK);
    }

    /** The model's rule: the first tick at or after the deadline, never one already processed. */
    private static long dueTick(long now, long delay, long processedTick) {
        long deadline = delay <= 0 ? now : (now + delay < now ? Long.MAX_VALUE : now + delay);
        long tick = (deadline >>> 20) + ((deadline & (TICK - 1)) == 0 ? 0 : 1);
        return Math.max(tick, processedTick + 1);
    }

    private static List<Firing> expireModel(Map<Long, Expected> model, long target) {
        PriorityQueue<Expected> queue = new PriorityQueue<>((a, b) -> a.tick != b.tick
                ? Long.compare(a.tick, b.tick) : Long.compare(a.id, b.id));
        queue.addAll(model.values());
        List<Firing> fired = new ArrayList<>();
        while (!queue.isEmpty() && queue.peek().tick <= target) {
            Expected due = queue.poll();
            model.remove(due.id);
            fired.add(new Firing(due.id, due.tick));
        }
        return fired;
    }

    private static List<Firing> sortedByTickThenId(List<Firing> firings) {
        List<Firing> sorted = new ArrayList<>(firings);
        sorted.sort((a, b) -> a.tick != b.tick ? Long.compare(a.tick, b.tick) : Long.compare(a.id, b.id));
        return sorted;
    }

    private static void assertTickOrder(List<Firing> firings) {
        for (int i = 1; i < firings.size(); i++) {
            if (firings.get(i).tick < firings.get(i - 1).tick) {
                throw new AssertionError("fired out of tick order: " + firings.get(i - 1) + " then " + firings.get(i));
            }
        }
    }
}
