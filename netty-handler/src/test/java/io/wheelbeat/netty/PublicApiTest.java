package io.wheelbeat.netty;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.wheelbeat.core.ExportedApi;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * netty-handler's exported API never shows its internal package (no public type extends, implements, takes,
 * returns or exposes a type of {@code io.wheelbeat.netty.internal}), and it does not grow unnoticed:
 * its surface stays within the budget stated in docs/api.md (issue 16).
 */
class PublicApiTest {

    /** docs/api.md states it; raise both together, on purpose. */
    private static final int SURFACE_AT_MOST = 279;

    private final ExportedApi api =
            ExportedApi.of(EventLoopWheels.class, "io.wheelbeat.netty", "io.wheelbeat.netty.internal");

    PublicApiTest() throws Exception {
    }

    @Test
    void noPublicTypeShowsTheInternalPackage() {
        assertTrue(api.types().size() > 30, "found the exported types: " + api.types().size());
        assertEquals(List.of(), api.internalLeaks());
    }

    @Test
    void theSurfaceStaysWithinItsBudget() {
        List<String> surface = api.surface();
        assertTrue(surface.size() <= SURFACE_AT_MOST, "netty-handler's API surface is " + surface.size()
                + " lines (types and members), over its budget of " + SURFACE_AT_MOST + ":\n" + String.join("\n", surface));
    }
}
