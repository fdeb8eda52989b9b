package io.wheelbeat.loadtest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * How a sampled stack (executing frame first) is attributed: the first deciding frame from the
 * top wins, so a handler passing a message on through the pipeline is not charged for the next
 * handler's work, while its own stamping, its timers and the loop's scheduler are.
 */
class IdleAttributionTest {

    private static final String PIPELINE_READ = "io.netty.channel.AbstractChannelHandlerContext.invokeChannelRead";

    @Test
    void nettysHandlerStampingItsReadTimeIsIdleMachinery() {
        assertEquals(
                "io.netty.handler.timeout.IdleStateHandler.channelReadComplete",
                IdleAttribution.idleFrame(List.of(
                        "java.lang.System.nanoTime",
                        "io.netty.handler.timeout.IdleStateHandler.channelReadComplete",
                        PIPELINE_READ,
                        "io.netty.channel.SingleThreadIoEventLoop.run")));
    }

    @Test
    void workAboveThePipelineIsTheNextHandlersNotTheIdleHandlers() {
        assertNull(IdleAttribution.idleFrame(List.of(
                "io.wheelbeat.loadtest.ServerProbe.channelRead",
                PIPELINE_READ,
                "io.netty.channel.AbstractChannelHandlerContext.fireChannelRead",
                "io.netty.handler.timeout.IdleStateHandler.channelRead",
                PIPELINE_READ)));
        assertNull(IdleAttribution.idleFrame(List.of(
                "io.wheelbeat.loadtest.IdleRecorder.userEventTriggered",
                "io.netty.channel.AbstractChannelHandlerContext.invokeUserEventTriggered",
                "io.wheelbeat.netty.idle.WheelIdleStateHandler.fire",
                "io.wheelbeat.core.internal.TimerWheel.poll")));
    }

    @Test
    void theSchedulerAndTheWheelAreIdleMachinery() {
        assertEquals(
                "io.netty.util.internal.DefaultPriorityQueue.offer",
                IdleAttribution.idleFrame(List.of(
                        "io.netty.util.internal.DefaultPriorityQueue.offer",
                        "io.netty.util.concurrent.AbstractScheduledEventExecutor.schedule",
                        "io.wheelbeat.loadtest.InstrumentedEventLoopGroup$CountingLoop.schedule",
                        "io.netty.handler.timeout.IdleStateHandler$ReaderIdleTimeoutTask.run")));
        assertEquals(
                "io.wheelbeat.core.internal.TimerWheel.place",
                IdleAttribution.idleFrame(List.of(
                        "io.wheelbeat.core.internal.TimerWheel.place",
                        "io.wheelbeat.core.ExecutorDrivenWheel.reschedule",
                        "io.wheelbeat.netty.idle.WheelIdleStateHandler.channelReadComplete",
                        PIPELINE_READ)));
    }

    @Test
    void tasksTheLoopGroupRunsAreJudgedAsOnNettysLoop() {
        assertNull(IdleAttribution.idleFrame(List.of(
                "io.netty.channel.local.LocalChannel.finishPeerRead0",
                "io.netty.util.concurrent.AbstractEventExecutor.safeExecute",
                "io.netty.util.concurrent.SingleThreadEventExecutor.runAllTasks",
                "io.wheelbeat.netty.loop.WheelIoEventLoop.runAllTasks",
                "io.netty.channel.SingleThreadIoEventLoop.run")));
        assertEquals(
                "io.wheelbeat.netty.loop.WheelScheduledTask.run",
                IdleAttribution.idleFrame(List.of(
                        "io.netty.util.concurrent.DefaultPromise.trySuccess",
                        "io.wheelbeat.netty.loop.WheelScheduledTask.run",
                        "io.netty.util.concurrent.SingleThreadEventExecutor.runAllTasks",
                        "io.wheelbeat.netty.loop.WheelIoEventLoop.runAllTasks")));
    }

    @Test
    void theLoadTestsOwnCodeAndTheTransportAreNot() {
        assertNull(IdleAttribution.idleFrame(List.of(
                "io.wheelbeat.loadtest.LoopLagProbe$Lag.record",
                "io.netty.util.concurrent.SingleThreadEventExecutor.runAllTasks",
                "io.netty.channel.SingleThreadIoEventLoop.run")));
        assertNull(IdleAttribution.idleFrame(List.of("io.netty.channel.local.LocalChannel.doBeginRead")));
        assertNull(IdleAttribution.idleFrame(List.of()));
    }

    @Test
    void theShareBecomesCpuPerMessageWithItsSamplingError() {
        List<String> idle = List.of("io.wheelbeat.core.internal.TimerWheel.poll");
        List<String> other = List.of("io.netty.channel.local.LocalChannel.doBeginRead");
        List<List<String>> stacks = new java.util.ArrayList<>();
        for (int i = 0; i < 400; i++) {
            stacks.add(i < 100 ? idle : other);
        }
        RunResult.Attribution a = IdleAttribution.attributeStacks(stacks, 2_000);
        assertEquals(400, a.samples());
        assertEquals(100, a.idleSamples());
        assertEquals(0.25, a.idleShare(), 1e-12);
        assertEquals(500, a.idleNanosPerMessage(), 1e-9);
        assertEquals(Math.sqrt(0.25 * 0.75 / 400) * 2_000, a.idleNanosPerMessageError(), 1e-9);
        assertEquals(List.of("io.wheelbeat.core.internal.TimerWheel.poll 100"), a.topIdleFrames());
    }
}
