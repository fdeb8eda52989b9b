package io.wheelbeat.netty;

import io.wheelbeat.core.ExportedApi;
import org.junit.jupiter.api.Test;

/**
 * netty-handler's exported API never shows an internal package, its own or the core's, nor a
 * non-public type (no public type's superclasses or superinterfaces, no public or protected member's
 * signature: see {@code ExportedApi.hiddenTypeLeaks()}), and it does not grow unnoticed: its surface
 * stays within the budget docs/api.md states.
 */
class PublicApiTest {

    @Test
    void theInternalsStayHiddenAndTheSurfaceWithinItsBudget() throws Exception {
        ExportedApi.of(EventLoopWheels.class, "io.wheelbeat.netty")
                // 308: 299 + WheelIoEventLoopGroup and its six constructors, LoopWheelOwner and wheel() (issue 23).
                // 326: 308 + the shared builder options of issue 25: HandlerBuilder (6) and JitteredHandlerBuilder (8)
                // with their protected members, PingLimits (6) and MaxConnectionAge (7), less 9 setters they replace.
                // 334: 326 + TimeoutCloses (4) and the timeout handlers' Duration constructors (4).
                // 339: 334 + TcpKeepAlive (5).
                // 340: 339 + WheelIoEventLoopGroup.pendingTimers(), pending timers readable without a cast.
                // 348: 340 + ChannelTimerHandler (8), the one lifecycle of the per-channel handlers.
                // 350: 348 + HeartbeatHandler's typed sendPings and answerPings.
                // 382: 350 + the handlers are timer nodes (TimerNode's isPending, and expire and order where
                // subclassable) and WheelIdleStateHandler and its read-timeout subclass inherit ChannelTimerHandler's
                // protected lifecycle (8 each).
                .assertHiddenAndWithin(30, 382);
    }
}
