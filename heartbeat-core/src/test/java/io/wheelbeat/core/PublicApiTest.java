package io.wheelbeat.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The core's exported API never shows its engine: no public type extends, implements, takes,
 * returns or exposes a type of {@code io.wheelbeat.core.internal} (issue 16).
 */
class PublicApiTest {

    @Test
    void noPublicTypeShowsTheInternalPackage() throws Exception {
        ExportedApi api = ExportedApi.of(WheelSettings.class, "io.wheelbeat.core", "io.wheelbeat.core.internal");
        assertTrue(api.types().size() > 20, "found the exported types: " + api.types().size());
        assertEquals(List.of(), api.internalLeaks());
    }
}
