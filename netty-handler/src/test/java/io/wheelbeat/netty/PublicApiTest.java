package io.wheelbeat.netty;

import io.wheelbeat.core.ExportedApi;
import org.junit.jupiter.api.Test;

/**
 * netty-handler's exported API never shows its internal package (no public handler or builder
 * extends an internal base; no public member takes, returns or exposes an internal type), and it
 * does not grow unnoticed: its surface stays within the budget docs/api.md states.
 */
class PublicApiTest {

    @Test
    void theInternalsStayHiddenAndTheSurfaceWithinItsBudget() throws Exception {
        ExportedApi.of(EventLoopWheels.class, "io.wheelbeat.netty")
                // 308: 299 + WheelIoEventLoopGroup and its six constructors, LoopWheelOwner and wheel() (issue 23).
                .assertHiddenAndWithin(30, 308);
    }
}
