package io.wheelbeat.loadtest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.channel.EventLoop;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.util.concurrent.ScheduledFuture;
import io.wheelbeat.netty.loop.WheelIoEventLoopGroup;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * {@code --event-loop} reaches the run: it parses, it is passed on to each run's JVM, and the
 * server group a run makes from it is that kind of group, whose scheduled tasks, and on the wheel
 * group the largest run of each loop's wheel, the load test still counts. No timing.
 */
class EventLoopOptionTest {

    private static final Preflight.Machine MACHINE = Preflight.Machine.current(List.of());

    @Test
    void nettyIsTheDefaultAndWheelIsPassedOnToEachRound() {
        assertEquals(List.of(EventLoopKind.NETTY), settings().eventLoops());
        Settings wheel = settings("--event-loop", "WHEEL", "--idle-handler", "netty");
        assertEquals(List.of(EventLoopKind.WHEEL), wheel.eventLoops());
        Settings round = wheel.forRound(1000, 2);
        List<String> childArgs = round.toArgs();
        int at = childArgs.indexOf("--event-loop");
        assertEquals("wheel", childArgs.get(at + 1), String.join(" ", childArgs));
        assertEquals(round, settings(childArgs.toArray(String[]::new)));
    }

    @Test
    void twoLoopsAreComparedSideBySideWithOneHandlerAndTheOrderRotates() {
        Settings both = settings("--event-loop", "netty,wheel");
        assertTrue(both.comparesLoops());
        assertEquals(
                List.of(IdleHandlerKind.NETTY, IdleHandlerKind.NONE),
                both.handlers(),
                "Netty's handler on both, and the baseline");
        assertEquals(
                List.of("netty-loop", "wheel-loop", "none"),
                both.forRound(1000, 1).arms().stream().map(Arm::id).toList());
        assertEquals(
                List.of("wheel-loop", "none", "netty-loop"),
                both.forRound(1000, 2).arms().stream().map(Arm::id).toList());
        Arm baseline = both.baseArms().get(2);
        assertEquals(new Arm(IdleHandlerKind.NONE, EventLoopKind.NETTY, "none"), baseline, "on Netty's loops");
        assertFalse(baseline.ours());
        assertEquals(3, both.rounds(), "three arms: each opens its share in each place once");
        Settings pair = settings("--event-loop", "netty,wheel", "--no-baseline");
        assertEquals(
                List.of("netty-loop", "wheel-loop"),
                pair.baseArms().stream().map(Arm::id).toList());
        assertEquals(4, pair.rounds(), "two arms: each opens its share first in half the rounds");
        assertEquals(
                3,
                settings("--event-loop", "netty,wheel", "--no-baseline", "--repeat", "3")
                        .rounds());
        assertEquals("wheel-loop", both.ours());
        assertEquals("netty-loop", both.theirs());
        assertTrue(both.forRound(1000, 1).arms().get(1).ours());
        assertEquals(EventLoopKind.WHEEL, both.forRound(1000, 1).arms().get(1).loop());
    }

    @Test
    void theRunsServerGroupIsOfTheKindAskedForAndItsScheduledTasksAreCounted() throws Exception {
        for (EventLoopKind kind : EventLoopKind.values()) {
            Settings s = settings("--event-loop", kind.id(), "--server-threads", "1");
            InstrumentedEventLoopGroup group =
                    Transport.of(s.tier()).newServerGroup(s.eventLoops().get(0), s.serverThreads(), "server");
            try {
                if (kind == EventLoopKind.WHEEL) {
                    assertInstanceOf(WheelIoEventLoopGroup.class, group.loops());
                } else {
                    assertInstanceOf(MultiThreadIoEventLoopGroup.class, group.loops());
                    assertFalse(group.loops() instanceof WheelIoEventLoopGroup);
                }
                EventLoop loop = (EventLoop) group.loops().next();
                long before = group.snapshot(false, 10, TimeUnit.SECONDS).loopScheduledTasks();
                // Two from the loop, one handed over from this thread; none runs (an hour ahead).
                List<ScheduledFuture<?>> tasks = loop.submit(() -> List.<ScheduledFuture<?>>of(
                                loop.schedule(() -> {}, 1, TimeUnit.HOURS), loop.schedule(() -> 1, 1, TimeUnit.HOURS)))
                        .get(10, TimeUnit.SECONDS);
                ScheduledFuture<?> fromOutside = loop.schedule(() -> {}, 1, TimeUnit.HOURS);
                long after = group.snapshot(false, 10, TimeUnit.SECONDS).loopScheduledTasks();
                assertEquals(3, after - before, kind + ": scheduled tasks counted");
                for (ScheduledFuture<?> task : tasks) {
                    assertTrue(task.cancel(false));
                }
                assertTrue(fromOutside.cancel(false));

                // A task the loop schedules and runs: on the wheel group, a run of the loop's wheel
                // fires it (one handed over from another thread when already due runs directly).
                loop.submit(() -> loop.schedule(() -> {}, 1, TimeUnit.MILLISECONDS))
                        .get(10, TimeUnit.SECONDS)
                        .get(10, TimeUnit.SECONDS);
                List<Integer> largest =
                        group.snapshot(false, 10, TimeUnit.SECONDS).largestWheelRuns();
                if (kind == EventLoopKind.WHEEL) {
                    assertEquals(1, largest.size(), "one loop, one wheel");
                    assertTrue(
                            largest.get(0) >= 1 && largest.get(0) <= TimerAccounting.WHEEL_RUN_BOUND,
                            largest.toString());
                } else {
                    assertEquals(List.of(), largest, "Netty's loops with Netty's handler use no wheel");
                }
            } finally {
                group.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(10, TimeUnit.SECONDS);
            }
        }
    }

    private static Settings settings(String... args) {
        LoadTest command = new LoadTest();
        new CommandLine(command).parseArgs(args);
        return command.resolve(MACHINE);
    }
}
