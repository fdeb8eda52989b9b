package io.wheelbeat.netty.loop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.util.concurrent.ScheduledFuture;
import io.wheelbeat.core.ExecutorDrivenWheel;
import io.wheelbeat.netty.EventLoopWheels;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** The group's contract on real threads and the system clock; bad input checked against Netty's group. */
class WheelIoEventLoopGroupTest {

    private static final Runnable NOOP = () -> {};

    @Test
    void badInputIsRefusedAsNettysGroupRefusesIt() throws Exception {
        EventLoopGroup netty = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        EventLoopGroup wheel = new WheelIoEventLoopGroup(1, NioIoHandler.newFactory());
        try {
            List<java.util.function.Function<EventLoop, Executable>> calls = List.of(
                    loop -> () -> loop.schedule((Runnable) null, 1, TimeUnit.SECONDS),
                    loop -> () -> loop.schedule((java.util.concurrent.Callable<?>) null, 1, TimeUnit.SECONDS),
                    loop -> () -> loop.schedule(NOOP, 1, null),
                    loop -> () -> loop.scheduleAtFixedRate(NOOP, -1, 1, TimeUnit.SECONDS),
                    loop -> () -> loop.scheduleAtFixedRate(NOOP, 0, 0, TimeUnit.SECONDS),
                    loop -> () -> loop.scheduleAtFixedRate(NOOP, 0, -5, TimeUnit.SECONDS),
                    loop -> () -> loop.scheduleAtFixedRate(null, 0, 1, TimeUnit.SECONDS),
                    loop -> () -> loop.scheduleWithFixedDelay(NOOP, -1, 1, TimeUnit.SECONDS),
                    loop -> () -> loop.scheduleWithFixedDelay(NOOP, 0, 0, TimeUnit.SECONDS),
                    loop -> () -> loop.scheduleWithFixedDelay(NOOP, 0, -5, TimeUnit.SECONDS),
                    loop -> () -> loop.scheduleWithFixedDelay(NOOP, 0, 1, null));
            for (int i = 0; i < calls.size(); i++) {
                Throwable expected = thrown(calls.get(i).apply(netty.next()));
                Throwable actual = thrown(calls.get(i).apply(wheel.next()));
                assertEquals(expected.getClass(), actual.getClass(), "call " + i);
                assertEquals(expected.getMessage(), actual.getMessage(), "call " + i);
            }
        } finally {
            netty.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS).sync();
            wheel.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS).sync();
        }
        // After shutdown, from another thread: rejected, as Netty's loop rejects it.
        Throwable expected = thrown(() -> netty.next().schedule(NOOP, 1, TimeUnit.SECONDS));
        Throwable actual = thrown(() -> wheel.next().schedule(NOOP, 1, TimeUnit.SECONDS));
        assertEquals(expected.getClass(), actual.getClass());
        assertEquals(
                expected.getClass(),
                thrown(() -> wheel.next().scheduleAtFixedRate(NOOP, 1, 1, TimeUnit.SECONDS))
                        .getClass());
    }

    private static Throwable thrown(Executable call) {
        return assertThrows(Throwable.class, call);
    }

    @Test
    void shutdownCancelsPendingScheduledTasksAsNettysLoopDoes() throws Exception {
        for (Supplier<EventLoopGroup> groups : List.<Supplier<EventLoopGroup>>of(
                () -> new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory()),
                () -> new WheelIoEventLoopGroup(1, NioIoHandler.newFactory()))) {
            EventLoopGroup group = groups.get();
            EventLoop loop = group.next();
            ScheduledFuture<?> outside = loop.schedule(NOOP, 1, TimeUnit.HOURS);
            ScheduledFuture<?> periodic = loop.scheduleAtFixedRate(NOOP, 1, 1, TimeUnit.HOURS);
            ScheduledFuture<?> inside =
                    loop.submit(() -> loop.schedule(NOOP, 1, TimeUnit.HOURS)).get();
            List<Boolean> notified = new ArrayList<>();
            outside.addListener(f -> notified.add(f.isCancelled()));
            group.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS).sync();
            assertTrue(outside.isCancelled() && periodic.isCancelled() && inside.isCancelled(), group.toString());
            assertEquals(List.of(true), notified);
        }
    }

    @Test
    void futuresKeepNettysContract() throws Exception {
        EventLoopGroup group = new WheelIoEventLoopGroup(1, NioIoHandler.newFactory());
        try {
            EventLoop loop = group.next();
            ScheduledFuture<String> answer = loop.schedule(() -> "done", 20, TimeUnit.MILLISECONDS);
            assertTrue(answer.getDelay(TimeUnit.MILLISECONDS) <= 20);
            assertEquals("done", answer.get(10, TimeUnit.SECONDS));
            assertTrue(answer.isSuccess());
            assertFalse(answer.cancel(false));

            CountDownLatch listened = new CountDownLatch(1);
            ScheduledFuture<?> far = loop.schedule(NOOP, 1, TimeUnit.HOURS);
            far.addListener(f -> {
                assertTrue(loop.inEventLoop());
                listened.countDown();
            });
            long delay = far.getDelay(TimeUnit.MINUTES);
            assertTrue(delay >= 59 && delay <= 60, "getDelay " + delay);
            assertTrue(far.cancel(false));
            assertTrue(far.isCancelled());
            assertThrows(CancellationException.class, far::get);
            assertTrue(listened.await(10, TimeUnit.SECONDS));
            ExecutorDrivenWheel wheel = EventLoopWheels.shared().wheelFor(loop);
            // The hand-over of the cancel has reached the loop: the wheel holds nothing.
            assertEquals(0, (int) loop.submit(wheel::pendingTimers).get());

            ScheduledFuture<?> failing = loop.schedule(
                    () -> {
                        throw new IllegalStateException("boom");
                    },
                    1,
                    TimeUnit.MILLISECONDS);
            assertThrows(java.util.concurrent.ExecutionException.class, () -> failing.get(10, TimeUnit.SECONDS));
            assertEquals("boom", failing.cause().getMessage());
        } finally {
            group.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS).sync();
        }
    }

    @Test
    void theLoopsWheelIsTheOneEventLoopWheelsHandsOut() throws Exception {
        EventLoopGroup group = new WheelIoEventLoopGroup(2, NioIoHandler.newFactory());
        try {
            EventLoop loop = group.next();
            ExecutorDrivenWheel shared = EventLoopWheels.shared().wheelFor(loop);
            EventLoopWheels other = new EventLoopWheels(java.time.Duration.ofMillis(4), 64);
            List<ExecutorDrivenWheel> announced = new ArrayList<>();
            other.onNewWheel((announcedLoop, wheel) -> announced.add(wheel));
            assertSame(shared, other.wheelFor(loop));
            assertSame(shared, other.wheelFor(loop));
            assertEquals(List.of(shared), announced);
            ScheduledFuture<?> task = loop.schedule(NOOP, 1, TimeUnit.HOURS);
            io.wheelbeat.core.TimerNode handlerTimer = new io.wheelbeat.core.TimerNode() {
                @Override
                protected void expire() {}
            };
            loop.submit(() -> shared.schedule(handlerTimer, TimeUnit.HOURS.toNanos(1)))
                    .sync();
            assertEquals(2, (int) loop.submit(shared::pendingTimers).get());
            task.cancel(false);
            loop.submit(() -> shared.cancel(handlerTimer)).sync();
            assertEquals(0, (int) loop.submit(shared::pendingTimers).get());
        } finally {
            group.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS).sync();
        }
    }

    /**
     * On the system clock: never early, in deadline order, and an idle loop with a far task
     * scheduled sleeps (its thread uses little CPU) instead of spinning.
     */
    @Test
    void realClockNeverEarlyInOrderAndNoSpinWhileIdle() throws Exception {
        EventLoopGroup group = new WheelIoEventLoopGroup(1, NioIoHandler.newFactory());
        try {
            EventLoop loop = group.next();
            int tasks = 40;
            long[] before = new long[tasks];
            long[] after = new long[tasks];
            long[] delay = new long[tasks];
            long[] ran = new long[tasks];
            List<Integer> order = java.util.Collections.synchronizedList(new ArrayList<>());
            CountDownLatch done = new CountDownLatch(tasks);
            for (int i = 0; i < tasks; i++) {
                int task = i;
                delay[i] = TimeUnit.MILLISECONDS.toNanos(3L * (tasks - i));
                Runnable body = () -> {
                    ran[task] = System.nanoTime();
                    order.add(task);
                    done.countDown();
                };
                if (i % 2 == 0) {
                    before[i] = System.nanoTime();
                    loop.schedule(body, delay[i], TimeUnit.NANOSECONDS);
                    after[i] = System.nanoTime();
                } else {
                    loop.submit(() -> {
                                before[task] = System.nanoTime();
                                loop.schedule(body, delay[task], TimeUnit.NANOSECONDS);
                                after[task] = System.nanoTime();
                            })
                            .sync();
                }
            }
            assertTrue(done.await(30, TimeUnit.SECONDS));
            for (int i = 0; i < tasks; i++) {
                assertTrue(ran[i] - (before[i] + delay[i]) >= 0, "task " + i + " ran early");
            }
            // Its deadline lies in [before + delay, after + delay]: where two such ranges do not
            // overlap, the earlier must run first.
            for (int i = 0; i < tasks; i++) {
                for (int j = 0; j < tasks; j++) {
                    if (after[i] + delay[i] < before[j] + delay[j]) {
                        assertTrue(
                                order.indexOf(i) < order.indexOf(j),
                                "task " + i + " is due before " + j + ": " + order);
                    }
                }
            }

            loop.schedule(NOOP, 1, TimeUnit.HOURS);
            ThreadMXBean threads = ManagementFactory.getThreadMXBean();
            long thread = loop.submit(() -> Thread.currentThread().getId()).get();
            long cpuBefore = threads.getThreadCpuTime(thread);
            Thread.sleep(1000);
            long used = threads.getThreadCpuTime(thread) - cpuBefore;
            assertTrue(
                    used < TimeUnit.MILLISECONDS.toNanos(300), "idle loop used " + used / 1_000_000 + " ms CPU in 1 s");
        } finally {
            group.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS).sync();
        }
    }

    /**
     * A loop that stalls while 20,000 tasks come due fires them in bounded batches, one per turn
     * of the loop (each turn serves I/O first), not all in one go.
     */
    @Test
    void aStalledLoopRunsItsBacklogInBoundedBatchesWithIoBetween() throws Exception {
        EventLoopGroup group = new WheelIoEventLoopGroup(1, NioIoHandler.newFactory());
        try {
            io.netty.channel.SingleThreadEventLoop loop = (io.netty.channel.SingleThreadEventLoop) group.next();
            int tasks = 20_000;
            int[] fired = new int[1];
            List<Integer> perTurn = new ArrayList<>();
            CountDownLatch done = new CountDownLatch(1);
            Runnable[] endOfTurn = new Runnable[1];
            int[] before = new int[1];
            endOfTurn[0] = () -> {
                if (fired[0] > before[0]) {
                    perTurn.add(fired[0] - before[0]);
                    before[0] = fired[0];
                }
                if (fired[0] == tasks) {
                    done.countDown();
                } else {
                    // From a task: a tail task that adds itself would run again in this same turn.
                    loop.execute(() -> loop.executeAfterEventLoopIteration(endOfTurn[0]));
                }
            };
            loop.submit(() -> {
                        for (int i = 0; i < tasks; i++) {
                            loop.schedule(() -> fired[0]++, 1, TimeUnit.MILLISECONDS);
                        }
                        loop.executeAfterEventLoopIteration(endOfTurn[0]);
                        try {
                            Thread.sleep(50);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    })
                    .sync();
            assertTrue(done.await(30, TimeUnit.SECONDS));
            assertEquals(tasks, perTurn.stream().mapToInt(Integer::intValue).sum());
            assertTrue(
                    perTurn.size() >= 5 && perTurn.stream().allMatch(n -> n <= 4096),
                    "due tasks per turn of the loop: " + perTurn);
        } finally {
            group.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS).sync();
        }
    }
}
