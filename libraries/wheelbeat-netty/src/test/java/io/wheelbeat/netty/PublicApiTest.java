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
                // Each handler is its own timer node, so TimerNode's isPending (and, where subclassable, expire
                // and order) and ChannelTimerHandler's protected lifecycle count on every handler.
                .assertHiddenAndWithin(30, 374);
    }
}
