package io.wheelbeat.netty;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.wheelbeat.core.ExportedApi;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The exported API never shows the internal package: no public type extends or implements an
 * internal type, and no public or protected member takes, returns or exposes one (issue 16).
 */
class PublicApiTest {

    @Test
    void noPublicTypeHasAnInternalTypeInItsHierarchyOrSignatures() throws Exception {
        ExportedApi api = ExportedApi.of(EventLoopWheels.class, "io.wheelbeat.netty", "io.wheelbeat.netty.internal");
        assertTrue(api.types().size() > 30, "found the exported types: " + api.types().size());
        assertEquals(List.of(), api.internalLeaks());
    }
}
